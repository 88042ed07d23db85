# ctest -P script: install the build tree into a fresh prefix, then build and run the consumer project against
# that installation twice — with find_package(RenewableHuber), and with a bare compiler driven by pkg-config.
#   -DBUILD_DIR -DWORK_DIR -DSOURCE_DIR -DGENERATOR -DBUILD_TYPE -DC_COMPILER -DCXX_COMPILER -DPKG_CONFIG
#   -DKokkos_DIR -DEXPECTED_VERSION
cmake_minimum_required(VERSION 3.19)

function(run_step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: ${name} failed (${rc})\n${out}\n${err}")
  endif()
  message(STATUS "consumer test: ${name}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "consumer test: pkg-config was not found when the project was configured")
endif()
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

run_step("install into ${prefix}" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --config ${BUILD_TYPE})
foreach(installed include/rh/rh.h include/rh/regressor.hpp include/rh/checkpoint.hpp include/rh/version.hpp)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "consumer test: ${installed} was not installed")
  endif()
endforeach()
# The public surface is the API: the headers that pull in Kokkos (rh/detail/) are not installed.
if(EXISTS ${prefix}/include/rh/detail)
  message(FATAL_ERROR "consumer test: the internal headers of include/rh/detail were installed")
endif()
file(GLOB_RECURSE soname_links ${prefix}/*/librenewable_huber.so.[0-9])
file(GLOB_RECURSE pc_files ${prefix}/*/renewable-huber.pc)
if(NOT soname_links OR NOT pc_files)
  message(FATAL_ERROR "consumer test: the shared library (SONAME link) or renewable-huber.pc was not installed")
endif()

# 1. CMake package: RenewableHuber::rh (C++) and RenewableHuber::rh_c (C).
run_step("configure with find_package(RenewableHuber)"
  ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/cmake-build -G ${GENERATOR} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
  -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix}
  -DKokkos_DIR=${Kokkos_DIR})
run_step("build" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
foreach(program consumer_cxx consumer_c)
  run_step("run ${program}" ${WORK_DIR}/cmake-build/${program})
  if(NOT step_output MATCHES "${program} ok")
    message(FATAL_ERROR "consumer test: ${program} printed: ${step_output}")
  endif()
  message(STATUS "  ${step_output}")
endforeach()

# 2. pkg-config and a plain C compiler; the .pc file must resolve to wherever the package was installed.
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
set(pkg ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} ${PKG_CONFIG})
run_step("pkg-config --modversion" ${pkg} --modversion renewable-huber)
string(STRIP "${step_output}" version)
if(NOT version STREQUAL EXPECTED_VERSION)
  message(FATAL_ERROR "consumer test: pkg-config reports version ${version}, expected ${EXPECTED_VERSION}")
endif()
run_step("pkg-config --cflags --libs" ${pkg} --cflags --libs renewable-huber)
separate_arguments(pc_flags UNIX_COMMAND "${step_output}")
run_step("pkg-config --variable=libdir" ${pkg} --variable=libdir renewable-huber)
string(STRIP "${step_output}" libdir)
file(REAL_PATH ${libdir} libdir)
file(REAL_PATH ${prefix} real_prefix)
if(NOT libdir MATCHES "^${real_prefix}/")
  message(FATAL_ERROR "consumer test: pkg-config libdir ${libdir} is outside the install prefix ${real_prefix}")
endif()
run_step("compile consumer.c with pkg-config flags"
  ${C_COMPILER} -std=c99 -Wall -Wextra -pedantic -Werror ${SOURCE_DIR}/consumer.c ${pc_flags}
  -Wl,-rpath,${libdir} -o ${WORK_DIR}/consumer_pkg_config)
run_step("run consumer_pkg_config" ${WORK_DIR}/consumer_pkg_config)
if(NOT step_output MATCHES "consumer_c ok")
  message(FATAL_ERROR "consumer test: consumer_pkg_config printed: ${step_output}")
endif()
message(STATUS "  ${step_output}")
