// Pattern text as token lists (backward_text.hpp), and the two public text derivations,
// einsum_gradient_pattern and swap_sides.
#include "backward/backward_text.hpp"

#include <algorithm>
#include <cctype>

#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace detail {

namespace {

Tokens tokens_of(std::string_view side, std::string_view pattern) {
  Tokens out;
  std::size_t i = 0;
  auto space = [&](std::size_t k) { return std::isspace(static_cast<unsigned char>(side[k])) != 0; };
  while (i < side.size()) {
    if (space(i)) {
      ++i;
    } else if (side[i] == '(') {
      const std::size_t close = side.find(')', i);
      if (close == std::string_view::npos) throw Error("pattern '" + std::string(pattern) + "': unbalanced '('");
      out.push_back("(" + join(tokens_of(side.substr(i + 1, close - i - 1), pattern)) + ")");
      i = close + 1;
    } else {
      std::size_t j = i;
      while (j < side.size() && !space(j) && side[j] != '(' && side[j] != ')') ++j;
      if (j == i) throw Error("pattern '" + std::string(pattern) + "': unbalanced ')'");
      out.emplace_back(side.substr(i, j - i));
      i = j;
    }
  }
  return out;
}

bool is_number(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

PatternText split_pattern(std::string_view pattern) {
  const std::size_t arrow = pattern.find("->");
  if (arrow == std::string_view::npos) throw Error("pattern '" + std::string(pattern) + "' has no '->'");
  PatternText t;
  const std::string_view left = pattern.substr(0, arrow);
  for (std::size_t begin = 0;;) {
    const std::size_t comma = left.find(',', begin);
    t.inputs.push_back(tokens_of(left.substr(begin, comma == std::string_view::npos ? left.npos : comma - begin), pattern));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  t.output = tokens_of(pattern.substr(arrow + 2), pattern);
  return t;
}

std::string join(const Tokens& tokens) {
  std::string s;
  for (const std::string& t : tokens) s += (s.empty() ? "" : " ") + t;
  return s;
}

std::string text(const PatternText& pattern) {
  std::string s;
  for (std::size_t i = 0; i < pattern.inputs.size(); ++i) s += (i ? ", " : "") + join(pattern.inputs[i]);
  return s + " -> " + join(pattern.output);
}

Tokens names_of(const std::string& token) {
  if (token.size() >= 2 && token.front() == '(') {
    Tokens names;
    for (const std::string& t : tokens_of(std::string_view(token).substr(1, token.size() - 2), token))
      if (!is_number(t)) names.push_back(t);
    return names;
  }
  if (is_number(token)) return {};
  return {token};
}

GradientTensor select(const GradientTensor& t, const Tokens& tokens, const Tokens& keep, std::string name) {
  const auto rank = static_cast<std::ptrdiff_t>(t.shape.size());
  const bool ellipsis = std::find(tokens.begin(), tokens.end(), "...") != tokens.end();
  const std::ptrdiff_t spread = ellipsis ? rank - static_cast<std::ptrdiff_t>(tokens.size()) + 1 : 1;
  if ((!ellipsis && static_cast<std::ptrdiff_t>(tokens.size()) != rank) || spread < 0)
    throw Error("backward: '" + join(tokens) + "' does not describe a tensor of rank " + std::to_string(rank));
  GradientTensor out{std::move(name), {}, {}};
  for (const std::string& k : keep) {
    std::ptrdiff_t dim = 0;
    for (const std::string& tok : tokens) {
      const std::ptrdiff_t width = tok == "..." ? spread : 1;
      if (tok == k) {
        for (std::ptrdiff_t d = dim; d < dim + width; ++d) {
          out.shape.push_back(t.shape[static_cast<std::size_t>(d)]);
          if (static_cast<std::size_t>(d) < t.axes.size()) out.axes.push_back(t.axes[static_cast<std::size_t>(d)]);
        }
        break;
      }
      dim += width;
    }
  }
  return out;
}

}  // namespace detail

std::string einsum_gradient_pattern(std::string_view pattern, std::size_t operand) {
  const detail::PatternText t = detail::split_pattern(pattern);
  if (operand >= t.inputs.size())
    throw Error("einsum '" + std::string(pattern) + "' has no operand " + std::to_string(operand));
  detail::PatternText g{{t.output}, t.inputs[operand]};
  for (std::size_t j = 0; j < t.inputs.size(); ++j)
    if (j != operand) g.inputs.push_back(t.inputs[j]);
  return detail::text(g);
}

std::string swap_sides(std::string_view pattern) {
  const detail::PatternText t = detail::split_pattern(pattern);
  if (t.inputs.size() != 1)
    throw Error("pattern '" + std::string(pattern) + "' has " + std::to_string(t.inputs.size()) +
                " operands; only a one-operand pattern can be inverted");
  return detail::join(t.output) + " -> " + detail::join(t.inputs[0]);
}

}  // namespace einexpr
