# RH_SANITIZE: a -fsanitize list applied to everything this project compiles and links (tools/rh test --sanitize,
# tools/rh fuzz). Kokkos itself stays as built (not instrumented): its own memory is then not checked, ours is.
set(RH_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined or thread (empty: none)")
if(RH_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "RH_SANITIZE needs GCC or Clang")
  endif()
  # Any report is a failure: UBSan would otherwise print and carry on, and the test would pass.
  add_compile_options(-fsanitize=${RH_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${RH_SANITIZE})
  message(STATUS "renewable-huber: sanitizers ${RH_SANITIZE}")
endif()
