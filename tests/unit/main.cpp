#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "rh/regressor.hpp"

int main(int argc, char** argv) {
  rh::initialize_runtime();
  doctest::Context context(argc, argv);
  return context.run();
}
