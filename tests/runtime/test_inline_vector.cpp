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

TEST_CASE("InlineVector moved from is empty, inline or on the heap", "[inline_vector]") {
  for (const std::size_t n : {std::size_t{2}, std::size_t{7}}) {  // inline, then spilled
    InlineVector<std::shared_ptr<int>, 3> v;
    const auto last = std::make_shared<int>(41);
    for (std::size_t i = 0; i + 1 < n; ++i) v.push_back(std::make_shared<int>(static_cast<int>(i)));
    v.push_back(last);
    CHECK(last.use_count() == 2);
    InlineVector<std::shared_ptr<int>, 3> moved(std::move(v));
    CHECK(v.size() == 0);  // NOLINT(bugprone-use-after-move): the state a move leaves is the test
    CHECK(v.begin() == v.end());
    REQUIRE(moved.size() == n);
    CHECK(moved[n - 1] == last);
    CHECK(*moved[0] == (n == 1 ? 41 : 0));
    InlineVector<std::shared_ptr<int>, 3> assigned;
    assigned.push_back(std::make_shared<int>(-1));
    assigned = std::move(moved);
    CHECK(moved.empty());  // NOLINT(bugprone-use-after-move)
    REQUIRE(assigned.size() == n);
    CHECK(*assigned[n - 1] == 41);
    CHECK(last.use_count() == 2);  // held once by `last`, once by `assigned`: nothing left behind
    v.push_back(std::make_shared<int>(5));  // a moved-from vector is usable again
    CHECK(v.size() == 1);
    CHECK(*v[0] == 5);
  }
}
