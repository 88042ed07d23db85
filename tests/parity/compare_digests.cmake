# Runs rh_stream_digest on Serial and on each host-parallel space (OpenMP or Threads) with 1, 2 and 3 threads, each
# with the host kernels' AVX2 copy (where the CPU has AVX2) and with RH_HOST_ISA=baseline, and fails unless every
# output is identical: the host spaces give bitwise identical results whatever the thread count (fixed row chunks,
# sums in chunk order) and whatever the CPU (rh/detail/host_isa.hpp). Usage: cmake -DDIGEST=<path>
# -DSPACES="serial;openmp" [-DEMULATOR=wine] -P compare_digests.cmake
set(reference "")
foreach(space ${SPACES})
  if(NOT space STREQUAL "serial")  # the host-parallel spaces (OpenMP, Threads)
    set(thread_counts 1 2 3)
  else()
    set(thread_counts 1)
  endif()
  foreach(threads ${thread_counts})
    foreach(isa default baseline)
      execute_process(COMMAND ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=${threads} KOKKOS_NUM_THREADS=${threads}
                              OMP_PROC_BIND=false RH_HOST_ISA=${isa} ${EMULATOR} ${DIGEST} ${space}
                      OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "rh_stream_digest ${space} failed (${rc})")
      endif()
      message(STATUS "${space} with ${threads} thread(s), host ISA ${isa}:\n${out}")
      if(reference STREQUAL "")
        set(reference "${out}")
        set(reference_name "${space}/${threads}/${isa}")
      elseif(NOT out STREQUAL reference)
        message(FATAL_ERROR "${space} with ${threads} thread(s), host ISA ${isa}, differs from ${reference_name}")
      endif()
    endforeach()
  endforeach()
endforeach()
message(STATUS "all host runs are bitwise identical")
