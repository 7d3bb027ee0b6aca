# Install rules and the CMake package: `cmake --install build --prefix P`
# gives P/lib/cmake/kforge/kforgeConfig.cmake, so another project can
#   find_package(kforge REQUIRED)
#   target_link_libraries(app PRIVATE kforge::runtime)   # C++: #include <kforge/runtime/lookup/lookup.hpp>
#   target_link_libraries(capp PRIVATE kforge::c)        # C:   #include <kforge/bindings/c/kforge.h>
# The public headers go into P/include/kforge in the source tree's folders;
# they include each other from that root ("core/result.hpp"), so
# P/include/kforge is on the include path beside P/include. tests/consumer is
# such a project, built against an installed tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_kforge_exported kforge_core kforge_generator kforge_templates kforge_db kforge_runtime kforge_tuner kforge_c)
set(_kforge_export_names core generator templates db runtime tuner c)
foreach(target name IN ZIP_LISTS _kforge_exported _kforge_export_names)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/kforge>)
endforeach()

install(TARGETS ${_kforge_exported} EXPORT kforgeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS kforge RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The public headers only (KforgePublicHeaders.cmake says which and why).
include(KforgePublicHeaders)
foreach(header IN LISTS KFORGE_PUBLIC_HEADERS)
  get_filename_component(folder ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kforge/${folder})
endforeach()

set(_kforge_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kforge)
install(EXPORT kforgeTargets NAMESPACE kforge:: DESTINATION ${_kforge_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kforgeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kforgeConfig.cmake INSTALL_DESTINATION ${_kforge_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kforgeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kforgeConfig.cmake ${PROJECT_BINARY_DIR}/kforgeConfigVersion.cmake
  DESTINATION ${_kforge_cmake_dir})
