# Install rules and the exported package: find_package(RenewableHuber) gives RenewableHuber::rh (C++ API) and,
# when built, RenewableHuber::rh_c (the C ABI shared library) and the MPI libraries.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(FILES ${RH_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rh)  # the API only: no rh/detail
install(TARGETS rh EXPORT RenewableHuberTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# With RH_ENABLE_MPI: RenewableHuber::rh_mpi (rh/mpi.hpp) and RenewableHuber::rh_mpi_c (rh/rh_mpi.h,
# librenewable_huber_mpi); the package then finds MPI for them (docs/scale-out.md).
set(RH_PACKAGE_MPI OFF)
if(TARGET rh_mpi)
  set(RH_PACKAGE_MPI ON)
  install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/core/include/rh/mpi.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rh)
  install(TARGETS rh_mpi EXPORT RenewableHuberTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  if(TARGET rh_mpi_c)
    install(TARGETS rh_mpi_c EXPORT RenewableHuberTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/abi/include/rh/rh_mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rh)
  endif()
endif()
set(RH_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/RenewableHuber)
install(EXPORT RenewableHuberTargets NAMESPACE RenewableHuber:: DESTINATION ${RH_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/RenewableHuberConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/RenewableHuberConfig.cmake INSTALL_DESTINATION ${RH_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/RenewableHuberConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/RenewableHuberConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/RenewableHuberConfigVersion.cmake
        DESTINATION ${RH_INSTALL_CMAKEDIR})
