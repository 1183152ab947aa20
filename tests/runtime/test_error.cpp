// caret_line and abbreviate: long patterns are shown as a window around the caret, so a
// 40 KB pattern's message stays a few hundred bytes; short ones are shown whole.
#include <catch2/catch.hpp>

#include <string>

#include "einexpr/runtime/error.hpp"

using namespace einexpr;

namespace {

/// The caret's column in a caret_line (after the two-space indent).
std::size_t caret_column(const std::string& line) {
  const std::size_t nl = line.find('\n');
  return line.find('^', nl) - nl - 1 - 2;
}

}  // namespace

TEST_CASE("caret_line shows short patterns whole and long ones as a window", "[errors]") {
  CHECK(caret_line("b (h d -> b h d", 2) == "  b (h d -> b h d\n    ^");
  const std::string exact(caret_window, 'a');
  CHECK(caret_line(exact, 5) == "  " + exact + "\n       ^");

  struct Row {
    std::size_t size;
    std::size_t position;
    bool cut_front;
    bool cut_back;
  };
  const Row rows[] = {
      {40000, 20000, true, true}, {40000, 3, false, true}, {40000, 39999, true, false},
      {40000, 40000, true, false}, {201, 100, false, true}, {4101, 4096, true, false},
  };
  for (const Row& r : rows) {
    CAPTURE(r.size, r.position);
    std::string pattern;  // "0 1 2 3 ...": every 20 bytes of it occur once
    for (int i = 0; pattern.size() < r.size; ++i) pattern += std::to_string(i) + " ";
    pattern.resize(r.size);
    const std::string line = caret_line(pattern, r.position);
    const std::string first = line.substr(0, line.find('\n'));
    CHECK(first.size() <= 2 + 3 + caret_window + 3);
    CHECK(first.substr(2, 3) == (r.cut_front ? "..." : first.substr(2, 3)));
    CHECK((first.substr(2, 3) == "...") == r.cut_front);
    CHECK((first.substr(first.size() - 3) == "...") == r.cut_back);
    // The caret sits under the byte it blames.
    const std::size_t column = caret_column(line);
    const std::size_t shown_from = r.cut_front ? pattern.find(first.substr(5, 20)) : 0;
    CHECK(column - (r.cut_front ? 3 : 0) + shown_from == r.position);
  }
}

TEST_CASE("caret_line cuts long UTF-8 patterns at code points", "[errors]") {
  std::string pattern;
  for (int i = 0; i < 300; ++i) pattern += "\xc3\xa9";  // é, two bytes each
  const std::string line = caret_line(pattern, 300);  // the 151st é
  const std::string first = line.substr(0, line.find('\n'));
  CHECK(first.substr(0, 5) == "  ...");
  CHECK(first.substr(first.size() - 3) == "...");
  const std::string shown = first.substr(5, first.size() - 8);
  CHECK(shown.size() % 2 == 0);
  CHECK(shown.substr(0, 2) == "\xc3\xa9");  // starts on a whole code point
  CHECK(caret_column(line) == 3 + 50);      // 100 bytes before the fault: 50 é
}

TEST_CASE("abbreviate keeps short text and cuts long text at a code point", "[errors]") {
  CHECK(abbreviate("i j -> j i") == "i j -> j i");
  const std::string long_text = std::string(199, 'a') + "\xc3\xa9" + std::string(1000, 'b');
  CHECK(abbreviate(long_text) == std::string(199, 'a') + "... (1201 bytes)");
  CHECK(abbreviate("abcdef", 3) == "abc... (6 bytes)");
  const std::string e = PatternError("bad", std::string(40000, 'x'), 20000).what();
  CHECK(e.size() < 500);
}
