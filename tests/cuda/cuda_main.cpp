// Runs the GPU tests, or exits 77 (ctest reports "skipped") when no GPU is visible.
// Listing the tests (catch_discover_tests does, at build time) works without a GPU.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstring>
#include <iostream>

#include "einexpr/config.hpp"
#include "einexpr/runtime/device.hpp"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0) listing = true;
  if (!listing) {
    if (!einexpr::has_cuda) {
      std::cout << "[SKIP] einexpr was built without CUDA\n";
      return 77;
    }
    if (einexpr::cuda_device_count() == 0) {
      std::cout << "[SKIP] no CUDA GPU is visible\n";
      return 77;
    }
  }
  return Catch::Session().run(argc, argv);
}
