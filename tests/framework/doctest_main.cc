// doctest's implementation and main, compiled once into a static library.
// Hosted test binaries accept every doctest flag, plus --reporters=unity.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "test_env.h"

int main(int argc, char** argv) {
  tatest::announce_environment();
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
