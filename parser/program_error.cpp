// ProgramError (the message: file:line:col, the line, a caret; maybe a note the same way)
// and SourceMap, which turns byte offsets into lines and columns.
#include <algorithm>
#include <string>
#include <utility>

#include "einexpr/parser/program.hpp"
#include "program_source.hpp"

namespace einexpr {

SourceMap::SourceMap(std::string_view text) : text_(text) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') line_starts_.push_back(i + 1);
}

ast::Source SourceMap::source(std::size_t begin, std::size_t end) const {
  begin = std::min(begin, text_.size());
  const auto next = std::upper_bound(line_starts_.begin(), line_starts_.end(), begin);
  const std::size_t line = static_cast<std::size_t>(next - line_starts_.begin());
  // Count code points from the line's start, or from the last place asked for on this line
  // (the parser asks in text order, so a long line is counted once, not once per token).
  std::size_t from = line_starts_[line - 1], column = 1;
  if (memo_.line == line && memo_.offset <= begin) from = memo_.offset, column = memo_.column;
  for (std::size_t i = from; i < begin; ++i)
    if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++column;  // UTF-8 lead bytes
  memo_ = {begin, line, column};
  return {{begin, std::max(begin, std::min(end, text_.size()))}, line, column};
}

std::size_t SourceMap::line_start(std::size_t line) const {
  return line == 0 || line > line_starts_.size() ? text_.size() : line_starts_[line - 1];
}

std::string_view SourceMap::line_text(std::size_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  const std::size_t begin = line_starts_[line - 1];
  std::size_t end = line < line_starts_.size() ? line_starts_[line] - 1 : text_.size();
  if (end > begin && text_[end - 1] == '\r') --end;
  return text_.substr(begin, end - begin);
}

namespace {

/// "file:line:col: text", then the line with a caret under the place.
std::string located(std::string_view file, const SourceMap& map, const ProgramError::Place& at,
                    std::string_view text) {
  std::string line(map.line_text(at.line));
  std::replace(line.begin(), line.end(), '\t', ' ');  // one column each, as the caret counts
  return std::string(file) + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
         ": " + std::string(text) + "\n" + caret_line(line, at.offset - map.line_start(at.line));
}

ProgramError::Place place_of(const SourceMap& map, std::size_t offset) {
  const ast::Source s = map.source(offset, offset);
  return {s.span.begin, s.line, s.column};
}

}  // namespace

ProgramError::ProgramError(std::string reason, std::string_view file, std::string_view text,
                           std::size_t offset)
    : Error(reason), file_(file.empty() ? "<program>" : std::string(file)) {
  const SourceMap map(text);
  place_ = place_of(map, offset);
  set_message(located(file_, map, place_, reason));
}

ProgramError::ProgramError(std::string reason, std::string_view file, std::string_view text,
                           std::size_t offset, std::string note, std::size_t note_offset)
    : ProgramError(std::move(reason), file, text, offset) {
  const SourceMap map(text);
  note_ = std::move(note);
  note_place_ = place_of(map, note_offset);
  set_message(std::string(what()) + "\n" + located(file_, map, *note_place_, "note: " + note_));
}

ProgramError::ProgramError(std::string reason, const ast::Program& program, const ast::Source& at)
    : ProgramError(std::move(reason), program.file, program.text, at.span.begin) {}

ProgramError::ProgramError(std::string reason, const ast::Program& program, const ast::Source& at,
                           std::string note, const ast::Source& note_at)
    : ProgramError(std::move(reason), program.file, program.text, at.span.begin, std::move(note),
                   note_at.span.begin) {}

}  // namespace einexpr
