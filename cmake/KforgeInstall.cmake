# Install rules and the CMake package: `cmake --install build --prefix P`
# gives P/lib/cmake/kforge/kforgeConfig.cmake, so another project can
#   find_package(kforge REQUIRED)
#   target_link_libraries(app PRIVATE kforge::runtime)   # C++: #include <kforge/lookup.hpp>
#   target_link_libraries(capp PRIVATE kforge::c)        # C:   #include <kforge/kforge.h>
# The public headers go flat into P/include/kforge (they include each other
# by file name). tests/consumer is such a project, built against an
# installed tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_kforge_exported kforge_generator kforge_templates kforge_db kforge_runtime kforge_tuner kforge_c)
set(_kforge_export_names generator templates db runtime tuner c)
foreach(target name IN ZIP_LISTS _kforge_exported _kforge_export_names)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

install(TARGETS ${_kforge_exported} EXPORT kforgeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS kforge RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The public headers only (KforgePublicHeaders.cmake says which and why).
include(KforgePublicHeaders)
list(TRANSFORM KFORGE_PUBLIC_HEADERS PREPEND ${PROJECT_SOURCE_DIR}/ OUTPUT_VARIABLE _kforge_headers)
install(FILES ${_kforge_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kforge)

set(_kforge_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kforge)
install(EXPORT kforgeTargets NAMESPACE kforge:: DESTINATION ${_kforge_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kforgeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kforgeConfig.cmake INSTALL_DESTINATION ${_kforge_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kforgeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kforgeConfig.cmake ${PROJECT_BINARY_DIR}/kforgeConfigVersion.cmake
  DESTINATION ${_kforge_cmake_dir})
