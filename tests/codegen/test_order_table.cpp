// codegen/order against committed numbers (order_table.inc, from make_order_table.py):
// the optimum over every tree up to 10 operands, numpy.einsum_path's counts up to 64; and
// matrix chains of 3 to 64 matrices against the textbook program (order_problems.hpp).
#include <catch2/catch.hpp>

#include <random>
#include <sstream>

#include "order/order.hpp"
#include "order_problems.hpp"

using namespace einexpr::order;

namespace {

struct Row {
  const char* label;
  const char* operands;  // "0 5 7,3 4,..."
  const char* output;
  const char* lengths;
  const char* optimum;   // "" when not known
  const char* numpy_greedy, *numpy_greedy_default, *numpy_optimal_default, *numpy_optimal;
};

const Row rows[] = {
#include "order_table.inc"
};

std::vector<int> ints(const std::string& s) {
  std::vector<int> v;
  std::istringstream in(s);
  for (int x = 0; in >> x;) v.push_back(x);
  return v;
}

Problem problem_of(const Row& r) {
  Problem p;
  std::istringstream ops(r.operands);
  for (std::string op; std::getline(ops, op, ',');) p.operands.push_back(ints(op));
  p.output = ints(r.output);
  for (int l : ints(r.lengths)) p.lengths.push_back(l);
  return p;
}

/// numpy's count without its k-ary marker ("123+" -> "123").
std::string count_of(const char* s) {
  std::string c = s;
  if (!c.empty() && c.back() == '+') c.pop_back();
  return c;
}

bool at_most(SatCount a, const std::string& digits) {  // a <= digits, exactly
  const std::string s = a.str();
  return s.size() != digits.size() ? s.size() < digits.size() : s <= digits;
}

}  // namespace

TEST_CASE("the committed table: the optimum up to 30 operands, never above numpy's greedy", "[order]") {
  const Options options = order_testing::unhurried();
  int exact = 0, rows_seen = 0;
  for (const Row& r : rows) {
    CAPTURE(r.label);
    const Problem p = problem_of(r);
    const Path path = find_path(p, options);
    CHECK_FALSE(path.flops.saturated());
    CHECK(at_most(path.flops, count_of(r.numpy_greedy)));
    if (*r.optimum) CHECK(path.flops.str() == r.optimum);
    if (*r.numpy_optimal) CHECK(path.flops.str() == count_of(r.numpy_optimal));  // no limit: every tree
    if (*r.numpy_optimal_default) CHECK(at_most(path.flops, count_of(r.numpy_optimal_default)));
    if (p.operands.size() <= 30) CHECK(path.exact);
    exact += path.exact;
    ++rows_seen;
  }
  CHECK(rows_seen == 46);
  CHECK(exact >= 42);
}

TEST_CASE("matrix chains of 3 to 64 matrices cost what the textbook program says", "[order]") {
  std::mt19937_64 rng(2024);
  for (int n = 3; n <= 64; ++n) {
    std::vector<std::int64_t> d;
    for (int i = 0; i <= n; ++i) d.push_back(2 + static_cast<std::int64_t>(rng() % 63));
    std::vector<int> perm(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
    std::shuffle(perm.begin(), perm.end(), rng);  // the operands in any order
    for (const Problem& p : {order_testing::matrix_chain(d), order_testing::matrix_chain(d, perm)}) {
      CAPTURE(n);
      const Path path = find_path(p);
      CHECK(path.method == "matrix chain");
      CHECK(path.exact);
      CHECK(path.flops == order_testing::textbook_chain(d));
      CHECK(path.flops == evaluate(p, path.steps).flops);
    }
  }
}

TEST_CASE("a matrix chain is the optimum over every tree, outer products included", "[order]") {
  std::mt19937_64 rng(7);
  for (int n = 3; n <= 9; ++n)
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<std::int64_t> d;
      for (int i = 0; i <= n; ++i) d.push_back(2 + static_cast<std::int64_t>(rng() % 30));
      const Problem p = order_testing::matrix_chain(d);
      CAPTURE(n, trial);
      CHECK(find_path(p).flops == *order_testing::exhaustive(p));
    }
}
