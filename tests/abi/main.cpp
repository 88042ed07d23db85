// doctest's main, then rh_finalize: every model of the suites is destroyed by then (else it fails), and on Windows
// the process ends cleanly only after it (docs/windows.md, "Shutdown").
#define DOCTEST_CONFIG_IMPLEMENT
#include <cstdio>

#include "doctest/doctest.h"
#include "rh/rh.h"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int failed = context.run();
  if (context.shouldExit()) return failed;
  if (rh_finalize() != RH_SUCCESS) {
    std::fprintf(stderr, "rh_finalize failed: %s\n", rh_last_error());
    return 1;
  }
  return failed;
}
