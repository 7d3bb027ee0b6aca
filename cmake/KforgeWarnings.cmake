# Warning flags shared by every kforge target: the tree builds clean with these.
# Every target passes here, so it also takes the precompiled headers where
# they are on (cmake/KforgePrecompiledHeaders.cmake).
include(KforgePrecompiledHeaders)
function(kforge_set_warnings target)
  kforge_precompile_headers(${target})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
  # GCC 12 reports -Wrestrict false positives inside libstdc++ for ordinary
  # std::string concatenation at -O2 (GCC bug 105329); keep it a warning only.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-error=restrict)
  endif()
  if(KFORGE_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
