# ctest consumer_install: installs the build tree into a fresh prefix, checks
# that it holds exactly the public headers, then configures, builds and runs
# tests/consumer against that prefix alone (every header compiled on its own
# there too).
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P run_consumer.cmake
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_consumer.cmake: ${v} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()

step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The installed headers are exactly the public ones (cmake/KforgePublicHeaders.cmake).
include(${SOURCE_DIR}/cmake/KforgePublicHeaders.cmake)
set(expected ${KFORGE_PUBLIC_HEADERS})
file(GLOB_RECURSE installed RELATIVE ${prefix}/include/kforge ${prefix}/include/kforge/*)
set(extra ${installed})
list(REMOVE_ITEM extra ${expected})
set(missing ${expected})
list(REMOVE_ITEM missing ${installed})
if(extra OR missing)
  message(FATAL_ERROR "${prefix}/include/kforge: not public but installed: '${extra}'; "
                      "public but not installed: '${missing}' (cmake/KforgePublicHeaders.cmake)")
endif()
list(LENGTH installed count)
message(STATUS "${count} public headers installed")
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2)
step(${WORK_DIR}/build/consumer_cpp)
step(${WORK_DIR}/build/consumer_c)
