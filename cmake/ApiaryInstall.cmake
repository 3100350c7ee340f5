# Installs apiary::runtime (and the header-only building blocks) with an exported CMake
# package, so that `find_package(apiary)` works for out-of-tree projects.
include(CMakePackageConfigHelpers)

install(TARGETS apiary_runtime EXPORT apiaryTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(dir runtime/include schedulers/include tasks/balance/include tasks/synthetic/include)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${dir})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()
foreach(extra_target apiary_balance)
  if(TARGET ${extra_target})
    install(TARGETS ${extra_target} EXPORT apiaryTargets)
  endif()
endforeach()

set(APIARY_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/apiary)
install(EXPORT apiaryTargets NAMESPACE apiary:: DESTINATION ${APIARY_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/apiaryConfig.cmake.in
  ${PROJECT_BINARY_DIR}/apiaryConfig.cmake INSTALL_DESTINATION ${APIARY_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/apiaryConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/apiaryConfig.cmake ${PROJECT_BINARY_DIR}/apiaryConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/ApiaryCudaStandard.cmake
  ${PROJECT_SOURCE_DIR}/cmake/ApiaryDeviceController.cmake
  DESTINATION ${APIARY_CMAKE_DIR})
