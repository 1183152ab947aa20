// parse_program(): run the model grammar (program_grammar.hpp) with its actions
// (program_actions.hpp), turn PEGTL's parse_error into ProgramError, then check the names
// (program_check.cpp).
#include <string>

#include <tao/pegtl.hpp>

#include "einexpr/parser/program.hpp"
#include "program_actions.hpp"
#include "program_grammar.hpp"
#include "program_messages.hpp"

namespace einexpr {

ast::Program parse_program(std::string_view text, std::string_view file_name) {
  namespace pegtl = tao::pegtl;
  if (text.size() > max_program_length)
    throw ProgramError("program too long: " + std::to_string(text.size()) + " bytes, at most " +
                           std::to_string(max_program_length) + " are accepted",
                       file_name, text, max_program_length);
  grammar::model::ProgramBuilder b(text, file_name);
  pegtl::memory_input in(text.data(), text.size(), std::string(file_name));
  try {
    const bool matched =
        pegtl::parse<grammar::model::program, grammar::model::action, grammar::control>(in, b);
    EINEXPR_ASSERT(matched, "the program grammar failed without raising an error");
  } catch (const pegtl::parse_error& e) {
    const std::size_t at = e.positions().empty() ? 0 : e.positions().front().byte;
    throw ProgramError(std::string(e.message()), file_name, text, at);
  }
  ast::Program program{std::string(file_name), std::string(text), std::move(b.items), {}, {}};
  check_program(program);
  return program;
}

}  // namespace einexpr
