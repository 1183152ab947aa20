// The einexpr command-line tool (placeholder until the CLI lands).
#include <iostream>

#include "einexpr/einexpr.hpp"

int main() {
  std::cout << "einexpr " << einexpr::version << '\n';
  return 0;
}
