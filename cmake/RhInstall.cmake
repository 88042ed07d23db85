# Install rules and the exported package: find_package(RenewableHuber) gives RenewableHuber::rh (C++ API) and,
# when built, RenewableHuber::rh_c (the C ABI shared library).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(FILES ${RH_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rh)  # the API only: no rh/detail
install(TARGETS rh EXPORT RenewableHuberTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(RH_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/RenewableHuber)
install(EXPORT RenewableHuberTargets NAMESPACE RenewableHuber:: DESTINATION ${RH_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/RenewableHuberConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/RenewableHuberConfig.cmake INSTALL_DESTINATION ${RH_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/RenewableHuberConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/RenewableHuberConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/RenewableHuberConfigVersion.cmake
        DESTINATION ${RH_INSTALL_CMAKEDIR})
