// Formula: polynomials in axis names, their text and their values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"

using namespace einexpr;

namespace {
Formula p(Count c, std::vector<std::string> factors) { return Formula::product(c, std::move(factors)); }
}  // namespace

TEST_CASE("formula text: sorted factors, ordered terms, a common coefficient factored out", "[formula]") {
  struct Row {
    const char* what;
    Formula formula;
    const char* text;
  };
  const Row rows[] = {
      {"einsum FLOPs", p(2, {"s2", "b", "h", "s1"}), "2·b·h·s1·s2"},
      {"ideal bf16 bytes", (p(1, {"b", "s1", "h"}) + p(1, {"b", "s2", "h"}) + p(1, {"b", "s1", "s2"})) * 2,
       "2·(b·h·s1 + b·h·s2 + b·s1·s2)"},
      {"like terms combine", p(1, {"a", "b"}) + p(1, {"b", "a"}), "2·a·b"},
      {"numbers fold into the coefficient", p(1, {"3", "h", "2"}), "6·h"},
      {"no common coefficient", p(1, {"a"}) + p(2, {"b"}), "a + 2·b"},
      {"higher degree first", p(2, {"n"}) + p(1, {"n", "n"}), "n·n + 2·n"},
      {"dot-product bytes", (p(2, {"n"}) + p(1, {})) * 2, "2·(2·n + 1)"},
      {"a reduction's fold", p(1, {"b", "s", "h"}) - p(1, {"b", "h"}), "b·h·s - b·h"},
      {"a negative first term", p(0, {"x"}) - p(3, {"b"}), "-3·b"},
      {"constant", Formula::constant(4), "4"},
      {"zero", Formula::constant(0), "0"},
      {"zero from cancelling", p(2, {"a"}) - p(2, {"a"}), "0"},
      {"unit coefficient", p(1, {"i"}), "i"},
      {"ellipsis dims", p(2, {"…1", "…0", "k"}), "2·k·…0·…1"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    CHECK(r.formula.str() == r.text);
  }
  CHECK((p(0, {"a"}) + p(0, {"b"})).terms.empty());
}

TEST_CASE("formulas evaluate exactly, with numbers standing for themselves", "[formula]") {
  const std::map<std::string, std::int64_t, std::less<>> lengths = {
      {"b", 16384}, {"d", 32768}, {"e", 32768}, {"k", 8192}, {"s", 4}, {"h", 3}};
  CHECK((p(2, {"b", "d", "e"}) + p(2, {"b", "e", "k"})).evaluate(lengths) == Count(43980465111040ULL));
  CHECK((p(1, {"b", "s", "h"}) - p(1, {"b", "h"})).evaluate(lengths) == Count(16384 * 3 * 3));
  Formula with_number;
  with_number.terms.push_back({Count(2), {"5", "h"}, false});  // built by hand: "5" is a number
  CHECK(with_number.evaluate(lengths) == Count(30));
  CHECK(p(2, {"b", "d", "e", "k", "b", "d"}).evaluate(lengths).str() == "154742504910672534362390528");
}

TEST_CASE("formula errors name the axis or the problem", "[formula]") {
  const std::map<std::string, std::int64_t, std::less<>> lengths = {{"a", 2}, {"neg", -1}};
  CHECK_THROWS_WITH(p(2, {"a", "z"}).evaluate(lengths), Catch::Contains("no length given for axis 'z'"));
  CHECK_THROWS_AS(p(1, {"neg"}).evaluate(lengths), ShapeError);
  CHECK_THROWS_WITH((p(1, {"a"}) - p(3, {})).evaluate(lengths), Catch::Contains("is negative"));
}

TEST_CASE("sums and differences merge like terms exactly as one normalization of all the terms does", "[formula]") {
  // a+b and a-b merge two ordered term lists (cost()'s accumulation); a formula whose terms were
  // written by hand, out of order or with like terms apart, takes the normalizing path. Both
  // must give one formula: each side's terms summed at once, then the other's.
  std::mt19937 rng(2026);
  const std::vector<std::string> names = {"a", "b", "c", "s1", "s2"};
  auto random_terms = [&](std::size_t n) {
    std::vector<Formula::Term> ts;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::string> f;
      for (std::size_t k = rng() % 4; k-- > 0;) f.push_back(names[rng() % names.size()]);
      std::sort(f.begin(), f.end());
      ts.push_back({Count(1 + rng() % 5), f, rng() % 3 == 0});
    }
    return ts;
  };
  const std::map<std::string, std::int64_t, std::less<>> lengths = {{"a", 7}, {"b", 11}, {"c", 13}, {"s1", 17}, {"s2", 19}};
  auto signed_value = [&](const std::vector<Formula::Term>& ts) {  // in i64: small enough here
    std::int64_t v = 0;
    for (const Formula::Term& t : ts) {
      std::int64_t x = static_cast<std::int64_t>(t.coefficient.u64());
      for (const std::string& f : t.factors) x *= lengths.at(f);
      v += t.negative ? -x : x;
    }
    return v;
  };
  for (int round = 0; round < 500; ++round) {
    const std::vector<Formula::Term> ta = random_terms(rng() % 8), tb = random_terms(rng() % 8);
    Formula raw_a, raw_b;  // as written: unordered, like terms apart
    raw_a.terms = ta;
    raw_b.terms = tb;
    const Formula a = raw_a + Formula{}, b = raw_b + Formula{};  // normalized through the fallback
    CAPTURE(round, a.str(), b.str());
    for (const bool minus : {false, true}) {
      std::vector<Formula::Term> all = ta;
      for (Formula::Term t : tb) {
        if (minus) t.negative = !t.negative;
        all.push_back(t);
      }
      Formula whole;
      whole.terms = all;
      const Formula once = whole + Formula{};       // every term normalized together
      const Formula merged = minus ? a - b : a + b;  // two normal lists merged
      const Formula unmerged = minus ? raw_a - raw_b : raw_a + raw_b;
      CHECK(merged == once);
      CHECK(unmerged == once);
      Formula acc = a;
      if (minus) acc -= b;
      else acc += b;
      CHECK(acc == once);
      Formula self = minus ? raw_a : a;  // a formula added to itself, normal or as written
      Formula& alias = self;  // through a reference: clang's -Wself-assign-overloaded rejects `self -= self`
      if (minus) self -= alias;
      else self += alias;
      CHECK(self == (minus ? Formula{} : a * Count(2)));
      const std::int64_t want = signed_value(all);
      if (want >= 0) CHECK(merged.evaluate(lengths) == Count(static_cast<std::uint64_t>(want)));
    }
  }
}
