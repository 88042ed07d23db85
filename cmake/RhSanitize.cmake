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

# A test that loads our library into an uninstrumented interpreter (Python's ctypes) needs the sanitizer runtimes
# loaded first, or ASan refuses to start. RH_SANITIZER_TEST_ENV is the environment such a test sets; leaks of the
# interpreter itself are not ours, so leak detection is off there.
set(RH_SANITIZER_TEST_ENV "")
if(RH_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(rh_preload "")
  foreach(rh_runtime IN ITEMS address:libasan.so undefined:libubsan.so thread:libtsan.so)
    string(REPLACE ":" ";" rh_pair "${rh_runtime}")
    list(GET rh_pair 0 rh_sanitizer)
    list(GET rh_pair 1 rh_library)
    if(RH_SANITIZE MATCHES "(^|,)${rh_sanitizer}(,|$)")
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${rh_library}
                      OUTPUT_VARIABLE rh_path OUTPUT_STRIP_TRAILING_WHITESPACE)
      list(APPEND rh_preload "${rh_path}")
    endif()
  endforeach()
  string(REPLACE ";" ":" rh_preload "${rh_preload}")
  set(RH_SANITIZER_TEST_ENV "LD_PRELOAD=${rh_preload}" "ASAN_OPTIONS=detect_leaks=0")
endif()
