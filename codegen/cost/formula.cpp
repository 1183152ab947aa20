// Formula: polynomials in axis names with exact, signed terms (see cost.hpp).
#include <algorithm>
#include <map>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

using Factors = std::vector<std::string>;

// A signed magnitude: Count is unsigned, a formula's terms are not.
struct Signed {
  Count magnitude;
  bool negative = false;
};

Signed add(Signed a, Signed b) {
  if (a.negative == b.negative) return {a.magnitude + b.magnitude, a.negative};
  if (a.magnitude >= b.magnitude) return {a.magnitude - b.magnitude, a.negative};
  return {b.magnitude - a.magnitude, b.negative};
}

bool is_number(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Count parse_number(const std::string& s) {
  Count n;
  for (char c : s) n = n * Count(10) + Count(static_cast<std::uint64_t>(c - '0'));
  return n;
}

// Higher degree first, then the factors in lexicographic order: deterministic text.
bool term_before(const Formula::Term& a, const Formula::Term& b) {
  if (a.factors.size() != b.factors.size()) return a.factors.size() > b.factors.size();
  return a.factors < b.factors;
}

// Combines like terms, drops zeros, orders the rest.
Formula normalized(const std::vector<Formula::Term>& terms) {
  std::map<Factors, Signed> combined;
  for (const Formula::Term& t : terms) {
    auto [it, inserted] = combined.try_emplace(t.factors, Signed{t.coefficient, t.negative});
    if (!inserted) it->second = add(it->second, Signed{t.coefficient, t.negative});
  }
  Formula out;
  for (const auto& [factors, value] : combined)
    if (value.magnitude != Count(0)) out.terms.push_back({value.magnitude, factors, value.negative});
  std::sort(out.terms.begin(), out.terms.end(), term_before);
  return out;
}

// Whether terms are as normalized() leaves them: strictly in term_before's order (so like
// terms are combined) and none zero. Formulas built through this file's operations are; one
// whose terms were written by hand need not be.
bool is_normal(const std::vector<Formula::Term>& terms) {
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].coefficient == Count(0)) return false;
    if (i > 0 && !term_before(terms[i - 1], terms[i])) return false;
  }
  return true;
}

// a + b (a - b when `negate`), both normal: one merge of the two ordered lists, like terms
// combined where they meet, instead of normalized()'s map and sort. The accumulations in
// cost() add one step's formula at a time (backward_cost() costs every gradient so), so
// this is their inner loop: a 64-operand einsum's 63 steps, then each gradient's.
void merge_into(std::vector<Formula::Term>& a, const std::vector<Formula::Term>& b, bool negate) {
  std::vector<Formula::Term> out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && term_before(a[i], b[j]))) {
      out.push_back(std::move(a[i++]));
      continue;
    }
    const Formula::Term& t = b[j++];
    const bool t_negative = negate ? !t.negative : t.negative;
    if (i == a.size() || term_before(t, a[i])) {
      out.push_back({t.coefficient, t.factors, t_negative});
      continue;
    }
    const Signed sum = add(Signed{a[i].coefficient, a[i].negative}, Signed{t.coefficient, t_negative});
    if (sum.magnitude != Count(0)) out.push_back({sum.magnitude, std::move(a[i].factors), sum.negative});
    ++i;
  }
  a = std::move(out);
}

Count gcd(Count a, Count b) {
  Count::u128 x = a.raw(), y = b.raw();
  while (y != 0) {
    const Count::u128 r = x % y;
    x = y;
    y = r;
  }
  return Count::from_u128(x);
}

std::string term_text(Count coefficient, const Factors& factors) {
  std::string s;
  if (factors.empty() || coefficient != Count(1)) s = coefficient.str();
  for (const std::string& f : factors) s += (s.empty() ? "" : "·") + f;
  return s;
}

}  // namespace

Formula Formula::constant(Count c) { return product(c, {}); }

Formula Formula::product(Count coefficient, std::vector<std::string> factors) {
  Factors names;
  for (std::string& f : factors) {
    if (is_number(f))
      coefficient *= parse_number(f);
    else
      names.push_back(std::move(f));
  }
  std::sort(names.begin(), names.end());
  Formula out;  // one term: normal unless zero
  if (coefficient != Count(0)) out.terms.push_back({coefficient, std::move(names), false});
  return out;
}

Formula& Formula::operator+=(const Formula& other) {
  if (&other == this) {  // f += f: the fallback below moves terms away first
    const Formula copy = other;
    return *this += copy;
  }
  if (is_normal(terms) && is_normal(other.terms)) {
    merge_into(terms, other.terms, false);
  } else {
    std::vector<Term> all = std::move(terms);
    all.insert(all.end(), other.terms.begin(), other.terms.end());
    *this = normalized(all);
  }
  return *this;
}

Formula& Formula::operator-=(const Formula& other) {
  if (&other == this) {  // f -= f: the fallback below moves terms away first
    const Formula copy = other;
    return *this -= copy;
  }
  if (is_normal(terms) && is_normal(other.terms)) {
    merge_into(terms, other.terms, true);
  } else {
    std::vector<Term> all = std::move(terms);
    for (Term t : other.terms) {
      t.negative = !t.negative;
      all.push_back(std::move(t));
    }
    *this = normalized(all);
  }
  return *this;
}

Formula Formula::operator+(const Formula& other) const {
  Formula sum = *this;
  return sum += other;
}

Formula Formula::operator-(const Formula& other) const {
  Formula difference = *this;
  return difference -= other;
}

Formula Formula::operator*(Count c) const {
  std::vector<Term> all = terms;
  for (Term& t : all) t.coefficient *= c;
  return normalized(all);
}

Count Formula::evaluate(const std::map<std::string, std::int64_t, std::less<>>& lengths) const {
  Count positive, negative;
  for (const Term& t : terms) {
    Count value = t.coefficient;
    for (const std::string& f : t.factors) {
      if (auto it = lengths.find(f); it != lengths.end())
        value *= Count::from_int64(it->second);
      else if (is_number(f))
        value *= parse_number(f);
      else
        throw Error("formula " + str() + ": no length given for axis '" + f + "'");
    }
    (t.negative ? negative : positive) += value;
  }
  if (negative > positive)
    throw ShapeError("formula " + str() + " is negative for the given lengths");
  return positive - negative;
}

std::string Formula::str() const {
  if (terms.empty()) return "0";
  Count common = terms.front().coefficient;
  for (const Term& t : terms) common = gcd(common, t.coefficient);
  if (terms.size() == 1) {
    const Term& t = terms.front();
    return (t.negative ? "-" : "") + term_text(t.coefficient, t.factors);
  }
  std::string sum;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    const Count c = Count::from_u128(t.coefficient.raw() / common.raw());
    if (i == 0)
      sum += t.negative ? "-" : "";
    else
      sum += t.negative ? " - " : " + ";
    sum += term_text(c, t.factors);
  }
  if (common == Count(1)) return sum;
  return common.str() + "·(" + sum + ")";
}

}  // namespace einexpr
