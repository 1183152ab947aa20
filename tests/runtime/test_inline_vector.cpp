// InlineVector<T, N>: the first N elements inline, then all of them on the heap, in order;
// at() checks its index. Used for a run's buffers and temporaries (program.cpp).
#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <string>

#include "einexpr/runtime/inline_vector.hpp"

using namespace einexpr;

TEST_CASE("InlineVector keeps its order across the move to the heap", "[inline_vector]") {
  InlineVector<int, 3> v;
  CHECK(v.empty());
  for (int i = 0; i < 10; ++i) {
    v.push_back(i * i);
    REQUIRE(v.size() == static_cast<std::size_t>(i + 1));
    for (int j = 0; j <= i; ++j) CHECK(v[static_cast<std::size_t>(j)] == j * j);
  }
  int sum = 0;
  for (int x : v) sum += x;
  CHECK(sum == 285);
  CHECK(v.at(9) == 81);
  CHECK_THROWS_AS(v.at(10), std::out_of_range);
  const InlineVector<int, 3> copy = v;
  CHECK(copy.size() == 10);
  CHECK(copy[4] == 16);
}

TEST_CASE("InlineVector resize, reserve and owning elements", "[inline_vector]") {
  InlineVector<std::shared_ptr<std::string>, 2> v;
  v.resize(2);
  CHECK(v.size() == 2);
  CHECK(v[0] == nullptr);
  v[1] = std::make_shared<std::string>("kept");
  v.reserve(16);  // moves to the heap; the elements move with it
  CHECK(v.size() == 2);
  REQUIRE(v[1] != nullptr);
  CHECK(*v[1] == "kept");
  v.resize(5);
  CHECK(v.size() == 5);
  CHECK(v[4] == nullptr);
  CHECK(*v.at(1) == "kept");
  InlineVector<int, 4> small{1, 2, 3};
  small.reserve(2);  // within the inline part: nothing changes
  CHECK(small.size() == 3);
  CHECK(small[2] == 3);
  CHECK_THROWS_WITH(small.at(3), "InlineVector::at: index 3 of 3");
}
