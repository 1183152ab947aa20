#pragma once
// SourceMap: byte offsets of a program's text as lines and columns, and the text of a line,
// for the AST's Sources and ProgramError's caret. A line ends at '\n'; a '\r' before it
// belongs to no line's text. Not thread-safe (it remembers the last place it computed).
#include <cstddef>
#include <string_view>
#include <vector>

#include "einexpr/parser/program_ast.hpp"

namespace einexpr {

class SourceMap {
 public:
  explicit SourceMap(std::string_view text);
  /// The Source of bytes [begin, end): line and column (1-based, code points) of `begin`.
  ast::Source source(std::size_t begin, std::size_t end) const;
  /// The byte offset where line `line` (1-based) begins.
  std::size_t line_start(std::size_t line) const;
  /// Line `line` (1-based) without its line break.
  std::string_view line_text(std::size_t line) const;

 private:
  std::string_view text_;
  std::vector<std::size_t> line_starts_;  // byte offset of each line's first byte
  struct Memo {
    std::size_t offset = 0, line = 1, column = 1;
  };
  mutable Memo memo_;  // the last place source() computed
};

}  // namespace einexpr
