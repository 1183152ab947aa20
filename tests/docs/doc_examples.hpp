#pragma once
// The API reference's C++ examples (docs/*.md), as doc_extract writes them: each runs with
// std::cout captured, and what it printed must be its page's "```output" block exactly.
#include <dlpack/dlpack.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/dlpack.hpp"
#include "einexpr/einexpr.hpp"

struct DocExample {
  const char* page;  // "tensors.md"
  int line;          // of the example's first code line
  void (*run)();
  const char* output;
};

extern const std::vector<DocExample> doc_examples;
