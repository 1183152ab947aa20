// numpy_pattern_hint(): numpy's one-letter einsum patterns, rewritten in einexpr's names.
#include "einexpr/parser/numpy_hint.hpp"

#include <cctype>

namespace einexpr {

namespace {

bool is_letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::string numpy_pattern_hint(std::string_view pattern) {
  std::string spaced;
  bool separated = false, run = false;
  int letters_in_a_row = 0;
  for (std::size_t i = 0; i < pattern.size();) {
    const std::string_view rest = pattern.substr(i);
    if (is_letter(pattern[i])) {
      if (letters_in_a_row > 0) spaced += ' ';
      spaced += pattern[i];
      ++letters_in_a_row;
      run = run || letters_in_a_row >= 2;
      ++i;
      continue;
    }
    const bool after_letter = letters_in_a_row > 0;
    letters_in_a_row = 0;
    if (rest.starts_with("->")) {
      spaced += spaced.empty() ? "-> " : " -> ";
      separated = true;
      i += 2;
    } else if (pattern[i] == ',') {
      spaced += ", ";
      separated = true;
      ++i;
    } else if (rest.starts_with("...")) {
      if (!spaced.empty() && spaced.back() != ' ') spaced += ' ';
      spaced += "...";
      run = run || after_letter;  // "i...": numpy's, einexpr would want "i ..."
      letters_in_a_row = 1;       // a letter after it is a new axis too
      i += 3;
    } else {
      return "";  // a space, a digit, a parenthesis: not numpy's form
    }
  }
  if (!separated || !run) return "";
  while (!spaced.empty() && spaced.back() == ' ') spaced.pop_back();
  return "einexpr's axes are names separated by spaces: numpy's '" + std::string(pattern) + "' is '" + spaced +
         "' here";
}

}  // namespace einexpr
