# Warning flags for the project's own targets; -Werror with RH_WARNINGS_AS_ERRORS (CI).
function(rh_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
    if(RH_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
  endif()
  # nvcc only warns when device code calls a host-only function (#20011, #20014), and the call then misbehaves on
  # the GPU: a host-only scratch-size helper called in a kernel once gave the CUDA line search garbage team scratch
  # while every host test passed (docs/evidence/h200.md). Always an error here: CI builds no CUDA,
  # so the CUDA build is the only place this is caught.
  if("cuda" IN_LIST RH_SPACES)
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-Xcudafe --diag_error=20011>"
                                             "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-Xcudafe --diag_error=20014>")
  endif()
endfunction()
