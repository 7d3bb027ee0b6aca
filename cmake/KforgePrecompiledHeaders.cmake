# Precompiled headers for builds that do not optimize (the sanitized builds of
# tools/sanitize.sh): at -O0 most of a file's compile time is parsing the
# standard library, JSON and Catch headers that nearly every file includes.
option(KFORGE_PRECOMPILE_HEADERS "Precompile the common standard, JSON and Catch headers of every target" OFF)

set(KFORGE_COMMON_HEADERS
  <algorithm> <cmath> <cstddef> <cstdint> <cstdlib> <cstring> <filesystem> <fstream> <map> <memory>
  <optional> <set> <sstream> <string> <string_view> <vector> <nlohmann/json.hpp>)

# kforge_precompile_headers(target): the common headers, where the option is on.
function(kforge_precompile_headers target)
  if(KFORGE_PRECOMPILE_HEADERS)
    target_precompile_headers(${target} PRIVATE ${KFORGE_COMMON_HEADERS})
  endif()
endfunction()

# kforge_precompile_test_headers(target): Catch's header too, for a test.
function(kforge_precompile_test_headers target)
  if(KFORGE_PRECOMPILE_HEADERS)
    target_precompile_headers(${target} PRIVATE <catch2/catch.hpp>)
  endif()
endfunction()
