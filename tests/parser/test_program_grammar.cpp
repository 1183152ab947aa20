// The private PEGTL grammar of model programs: analyze() finds no rule that can loop
// forever, and every rule, run alone (no actions), matches, fails or raises as its comment
// says (PEGTL's verify_rule style: input, outcome, bytes consumed or the error's position).
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze.hpp>

#include "einexpr/parser/program_ast.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "program_grammar.hpp"
#include "program_messages.hpp"

namespace pegtl = tao::pegtl;
namespace g = einexpr::grammar;
namespace m = einexpr::grammar::model;

namespace {

enum class Kind { match, no_match, raise };

struct Outcome {
  Kind kind;
  std::size_t at;  // bytes consumed for a match, the error's position for a raise
  std::string message;
};

template <typename Rule>
Outcome run_rule(std::string_view text) {
  pegtl::memory_input in(text.data(), text.size(), "rule");
  try {
    if (pegtl::parse<Rule, pegtl::nothing, g::control>(in))
      return {Kind::match, static_cast<std::size_t>(in.current() - text.data()), ""};
    return {Kind::no_match, 0, ""};
  } catch (const pegtl::parse_error& e) {
    return {Kind::raise, e.positions().front().byte, std::string(e.message())};
  }
}

struct Row {
  const char* rule;
  Outcome (*run)(std::string_view);
  std::string_view input;
  Kind kind;
  std::size_t at = 0;
};

constexpr Kind match = Kind::match;
constexpr Kind no_match = Kind::no_match;
constexpr Kind raise = Kind::raise;

#define RULE(r) #r, &run_rule<m::r>

// clang-format off
const std::vector<Row> rows = {
    // layout
    {RULE(sp), " \t x", match, 3},                  {RULE(sp), "\nx", match, 0},
    {RULE(newline), "\n", match, 1},                {RULE(newline), "\r\n", match, 2},
    {RULE(newline), "\r", no_match},
    {RULE(comment), "# a b\nx", match, 5},          {RULE(comment), "x", no_match},
    {RULE(line_end), "\nx", match, 0},              {RULE(line_end), "", match, 0},
    {RULE(line_end), "x", no_match},
    // words
    {RULE(word_end), " ", match, 0},                {RULE(word_end), "a", no_match},
    {RULE(kw_axes), "axes B", match, 4},            {RULE(kw_axes), "axesB", no_match},
    {RULE(kw_input), "input x", match, 5},          {RULE(kw_input), "inputs", no_match},
    {RULE(kw_param), "param w", match, 5},          {RULE(kw_param), "params", no_match},
    {RULE(kw_output), "output y", match, 6},        {RULE(kw_output), "output_", no_match},
    {RULE(keyword), "param:", match, 5},            {RULE(keyword), "x", no_match},
    {RULE(dtype), "bf16 ", match, 4},               {RULE(dtype), "f8_e4m3", match, 7},
    {RULE(dtype), "bf16x", no_match},               {RULE(dtype), "f8", no_match},
    {RULE(name), "w_1 ", match, 3},                 {RULE(name), "1w", no_match},
    {RULE(tensor_name), "h1=", match, 2},           {RULE(axis_name), "B=", match, 1},
    {RULE(dim_axis), "D)", match, 1},               {RULE(output_name), "y ", match, 1},
    {RULE(op_name), "einsum(", match, 6},           {RULE(arg_tensor), "x,", match, 1},
    {RULE(length), "1024 ", match, 4},              {RULE(length), "x", no_match},
    {RULE(length_end), " ", match, 0},              {RULE(length_end), "x", no_match},
    {RULE(length_token), "64 D", match, 2},         {RULE(length_token), "64D", raise, 2},
    {RULE(equals), "=", match, 1},                  {RULE(assign), "=", match, 1},
    {RULE(colon), ":", match, 1},
    {RULE(group_open), "(", match, 1},              {RULE(group_close), ")", match, 1},
    {RULE(call_open), "(", match, 1},               {RULE(call_close), ")", match, 1},
    {RULE(comma), ",", match, 1},                   {RULE(quote), "\"", match, 1},
    {RULE(string_body), "a b -> b\"", match, 8},    {RULE(string_body), "a\nb", match, 1},
    {RULE(string_arg), "\"a -> a\")", match, 8},    {RULE(string_arg), "\"a\n\"", no_match},
    {RULE(string_arg), "\"\"", match, 2},
    // mistakes
    {RULE(keyword_as_name), "input = map", match, 7}, {RULE(keyword_as_name), "input x", no_match},
    {RULE(bad_line_start), "3x", match, 1},         {RULE(bad_line_start), "#", no_match},
    {RULE(bad_line_start), "\n", no_match},         {RULE(bad_line_start), "", no_match},
    {RULE(dtype_as_axis), "f32=", match, 3},        {RULE(axes_comma), ",", match, 1},
    {RULE(dim_number), "3", match, 1},              {RULE(after_dtype), "B", match, 1},
    {RULE(after_dtype), "(", match, 1},             {RULE(after_dtype), "#", no_match},
    {RULE(nested_paren), "(", match, 1},
    {RULE(unterminated_string), "\"a -> a\n", match, 7},
    {RULE(unterminated_string), "\"a\"", no_match},
    {RULE(number_arg), "3", match, 1},
    // axes and declarations
    {RULE(axis_def), "B = 1024 D", match, 8},       {RULE(axis_def), "B 1024", raise, 2},
    {RULE(axis_def), "B=", raise, 2},               {RULE(axis_def), "B=x", raise, 2},
    {RULE(axis_def), "f32=3", raise, 0},            {RULE(axis_def), "=3", no_match},
    {RULE(axes_decl), "axes B=1 D=2 # c", match, 12}, {RULE(axes_decl), "axes", raise, 4},
    {RULE(axes_decl), "axes B=1, D=2", raise, 8},   {RULE(axes_decl), "axes B=1D=2", raise, 8},
    {RULE(group_axis), "h d)", match, 1},           {RULE(group_axis), "((", raise, 0},
    {RULE(group_axis), ")", no_match},
    {RULE(dim_group), "(H K) x", match, 5},         {RULE(dim_group), "( H )", match, 5},
    {RULE(dim_group), "()", raise, 1},              {RULE(dim_group), "(H K", raise, 4},
    {RULE(dim_group), "(H (K))", raise, 3},
    {RULE(dim), "D E", match, 1},                   {RULE(dim), "(D E)", match, 5},
    {RULE(dim), "f32", no_match},                   {RULE(dim), "3", raise, 0},
    {RULE(dims), "B (H K) bf16 # c", match, 13},    {RULE(dims), "", match, 0},
    {RULE(dims), "i32", match, 3},                  {RULE(dims), "B f32 D", raise, 6},
    {RULE(dims), "B D,", match, 3},
    {RULE(input_decl), "input x: B D", match, 12},  {RULE(input_decl), "input x:", match, 8},
    {RULE(input_decl), "input : B", raise, 6},      {RULE(input_decl), "input x B", raise, 8},
    {RULE(param_decl), "param w:D E f16", match, 15}, {RULE(param_decl), "param", raise, 5},
    {RULE(output_decl), "output y z", match, 10},   {RULE(output_decl), "output", raise, 6},
    {RULE(output_decl), "output y, z", match, 8},
    // statements
    {RULE(length_arg), "c=4)", match, 3},           {RULE(length_arg), "c)", no_match},
    {RULE(length_arg), "c=)", raise, 2},
    {RULE(argument), "x, y", match, 1},             {RULE(argument), "\"a -> a\"", match, 8},
    {RULE(argument), "c = 4", match, 5},            {RULE(argument), "\"a", raise, 0},
    {RULE(argument), "3", match, 1},                {RULE(argument), ")", no_match},
    {RULE(argument), "3x", raise, 0},               {RULE(argument), "-0.125e-3", match, 9},
    {RULE(scalar_arg), "1.", match, 2},             {RULE(scalar_arg), "1.5.2", no_match},
    {RULE(next_argument), ", y", match, 3},         {RULE(next_argument), ", )", raise, 2},
    {RULE(arguments), ")", match, 0},               {RULE(arguments), "x , \"p\")", match, 7},
    {RULE(arguments), ", x)", raise, 0},
    {RULE(statement), "h = f(x, \"a -> a\")", match, 18},
    {RULE(statement), "h=f()", match, 5},           {RULE(statement), "h f()", raise, 2},
    {RULE(statement), "h = (x)", raise, 4},         {RULE(statement), "h = f x", raise, 6},
    {RULE(statement), "h = f(x \"a\")", raise, 8},  {RULE(statement), "h = f(x,", raise, 8},
    {RULE(statement), "1 = f()", no_match},
    // lines and the program
    {RULE(item), "axes B=1", match, 8},             {RULE(item), "h = f()", match, 7},
    {RULE(item), "output = f()", raise, 0},         {RULE(item), "!", raise, 0},
    {RULE(item), "# c", no_match},
    {RULE(line), "  input x: B  # c\nz", match, 17}, {RULE(line), "", match, 0},
    {RULE(line), "input x: B, D", raise, 10},       {RULE(line), "h = f() g", raise, 8},
    {RULE(program), "axes B=1\r\n\ninput x: B\nh = f(x, \"B -> B\")", match, 40},
    {RULE(program), "", match, 0},                  {RULE(program), "\n\n", match, 2},
    {RULE(program), "axes B=1\n\xc3\xa9", raise, 9},
};
// clang-format on

#undef RULE

}  // namespace

TEST_CASE("program grammar: analyze finds no rule that can loop forever", "[program]") {
  CHECK(pegtl::analyze<m::program>(1) == 0);
}

TEST_CASE("program grammar: each rule alone", "[program]") {
  for (const auto& row : rows) {
    CAPTURE(row.rule, row.input);
    const Outcome out = row.run(row.input);
    CHECK(out.kind == row.kind);
    CHECK(out.at == row.at);
  }
}

TEST_CASE("program grammar: the dtype rule takes exactly einexpr's dtype names", "[program]") {
  for (std::string_view name : einexpr::ast::dtype_names) {
    CAPTURE(name);
    CHECK(run_rule<m::dtype>(name).kind == match);
    CHECK(run_rule<m::dtype>(name).at == name.size());
    CHECK(einexpr::name(einexpr::dtype_from_name(name)) == name);  // the runtime's spelling
  }
  CHECK(std::size(einexpr::ast::dtype_names) == einexpr::all_dtypes.size());
  for (std::string_view other : {"float32", "int", "f8", "bfloat16", "F32"}) {
    CAPTURE(other);
    CHECK(run_rule<m::dtype>(other).kind == no_match);
  }
}

TEST_CASE("program grammar: the byte at the fault is named in the message", "[program]") {
  struct Named {
    std::string_view input;
    const char* message;
  };
  const std::vector<Named> table = {
      {"input x: B;", "unexpected ';': expected the end of the line (or a '#' comment)"},
      {"input x: B\t\x01", "unexpected 0x01: expected the end of the line (or a '#' comment)"},
      {"\xe2\x86\x92", "unexpected 0xE2: a line is a declaration (axes, input, param, output, checkpoint), a block (block, end), "
                       "a statement 'name = op(...)' or a '#' comment"},
  };
  for (const auto& row : table) {
    CAPTURE(row.input);
    const Outcome out = run_rule<m::line>(row.input);
    CHECK(out.kind == raise);
    CHECK(out.message == row.message);
  }
}
