# The tool version and the git revision of the source tree, recorded with
# every sweep: kforge_add_build_version(TARGET) adds a source generated at
# every build (cmake/WriteBuildVersion.cmake) that defines
# kforge::tool_version() and kforge::git_revision() (tuner/build_version.hpp).
find_package(Git QUIET)

function(kforge_add_build_version target)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/generated/build_version.cpp)
  set(write ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DVERSION=${PROJECT_VERSION} -DOUT=${out}
            -DGIT=${GIT_EXECUTABLE} -P ${PROJECT_SOURCE_DIR}/cmake/WriteBuildVersion.cmake)
  add_custom_target(${target}_build_version COMMAND ${write} BYPRODUCTS ${out}
    COMMENT "Recording the source revision" VERBATIM)
  # The target needs the file before its first compile; a configure-time
  # copy makes it exist for the generator as well.
  execute_process(COMMAND ${write})
  target_sources(${target} PRIVATE ${out})
  add_dependencies(${target} ${target}_build_version)
endfunction()
