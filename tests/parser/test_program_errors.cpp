// parse_program(): every error, syntactic or semantic, is a ProgramError with its reason,
// line:col, the offending line and a caret under the fault (and, where a second place
// matters, a note with its own line and caret). One row per error.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "einexpr/parser/program.hpp"

using namespace einexpr;

namespace {

struct Row {
  std::string text;
  std::size_t line;
  std::size_t column;
  std::string reason;
  std::string shown;  // the offending line as printed (a tab shows as a space)
  std::size_t note_line = 0;
  std::size_t note_column = 0;
  std::string note = "";
  std::string note_shown = "";
};

// Lines 1 and 2 of most rows.
const std::string P = "axes B=2 D=3\ninput x: B D\n";
const std::string line1 = "axes B=2 D=3";
const std::string line2 = "input x: B D";

/// The line and a caret under `column` (code points), as ProgramError prints them.
std::string with_caret(const std::string& shown, std::size_t column) {
  return "  " + shown + "\n  " + std::string(column - 1, ' ') + "^";
}

// clang-format off
const std::vector<Row> rows = {
    // ---- lines
    {P + "input y: B, D", 3, 11, "unexpected ',': expected the end of the line (or a '#' comment)", "input y: B, D"},
    {P + "3y = map(x)", 3, 1, "unexpected '3': a line is a declaration (axes, input, param, output, checkpoint), a block (block, end), "
                              "a statement 'name = op(...)' or a '#' comment", "3y = map(x)"},
    {P + "input = map(x, \"B D -> B D\", \"exp\")", 3, 1, "a keyword (axes, input, param, output, checkpoint, block, end) cannot name a tensor",
     "input = map(x, \"B D -> B D\", \"exp\")"},
    // ---- axes
    {P + "axes", 3, 5, "expected NAME=LEN after 'axes': 'axes B=1024 D=256'", "axes"},
    {P + "axes K 3", 3, 8, "expected '=' after the axis name: NAME=LEN", "axes K 3"},
    {P + "axes K=x", 3, 8, "expected the axis length, a positive integer: NAME=LEN", "axes K=x"},
    {P + "axes K=3L=4", 3, 9, "expected a space after the length: axis definitions are separated by spaces", "axes K=3L=4"},
    {P + "axes K=3, L=4", 3, 9, "',' between axis definitions: they are separated by spaces, 'axes B=1024 D=256'", "axes K=3, L=4"},
    {P + "axes bf16=3", 3, 6, "a dtype name (f64 f32 f16 bf16 f8_e4m3 f8_e5m2 i64 i32 bool) cannot name an axis", "axes bf16=3"},
    {P + "axes K=0", 3, 8, "an axis length is positive, not 0", "axes K=0"},
    {P + "axes K=9223372036854775808", 3, 8, "axis length too large: at most 9223372036854775807", "axes K=9223372036854775808"},
    {P + "axes _E=2", 3, 6, "axis name should not start or end with underscore: '_E'", "axes _E=2"},
    // ---- declarations
    {P + "input : B", 3, 7, "expected a tensor name: 'input x: B D', 'param w: D E'", "input : B"},
    {P + "input y B", 3, 9, "expected ':' after the tensor name: 'input x: B D'", "input y B"},
    {P + "input y: ()", 3, 11, "expected an axis name in the composition: '(h d)'", "input y: ()"},
    {P + "input y: (B D", 3, 14, "expected ')' to close the composition: '(h d)'", "input y: (B D"},
    {P + "input y: (B (D))", 3, 13, "nested parenthesis: a composition is one level deep, '(h d)'", "input y: (B (D))"},
    {P + "input y: B 3", 3, 12, "a declared dim is an axis name, not a number: give it a name and a length on the axes line",
     "input y: B 3"},
    {P + "input y: f32 B", 3, 14, "the dtype comes last: 'input x: B D bf16'", "input y: f32 B"},
    {P + "output", 3, 7, "expected a tensor name after 'output'", "output"},
    // ---- statements: syntax
    {P + "h map(x)", 3, 3, "expected '=' after the tensor name: 'name = op(...)'", "h map(x)"},
    {P + "h = (x)", 3, 5, "expected an op after '=': 'name = einsum(...)'", "h = (x)"},
    {P + "h = map x", 3, 9, "expected '(' after the op", "h = map x"},
    {P + "h = map(x, )", 3, 12, "expected an argument: a tensor name, a number, a \"string\" or axis=length", "h = map(x, )"},
    {P + "h = map(x \"B D -> B D\")", 3, 11, "expected ',' or ')' after the argument", "h = map(x \"B D -> B D\")"},
    {P + "h = map(x, \"B D -> B D)", 3, 12, "unterminated string: '\"' is not closed on its line", "h = map(x, \"B D -> B D)"},
    {P + "h = repeat(x, \"B D -> B D c\", 3)", 3, 31, "number 3 after the pattern: the operands come first, 'op(x, 0.5, \"pattern\")'; an axis length is axis=length",
     "h = repeat(x, \"B D -> B D c\", 3)"},
    {P + "h = gelu(x, \"B D -> B D\")", 3, 5,
     "unknown op 'gelu': the ops are einsum, rearrange, reduce, repeat, map, softmax, log_softmax, layer_norm, "
     "rms_norm, get_at, add_at, cross_entropy, pack, unpack, dropout",
     "h = gelu(x, \"B D -> B D\")"},
    {P + "h = map(\"B D -> B D\", x, \"exp\")", 3, 23,
     "tensor argument 'x' after the pattern: the tensors come first, 'op(x, y, \"pattern\")'", "h = map(\"B D -> B D\", x, \"exp\")"},
    {P + "h = repeat(c=2, x, \"B D -> B D c\")", 3, 17,
     "tensor argument 'x' after axis=length: the tensors come first, the lengths last", "h = repeat(c=2, x, \"B D -> B D c\")"},
    {P + "h = repeat(x, c=2, \"B D -> B D c\")", 3, 20, "a string after axis=length: the lengths come last",
     "h = repeat(x, c=2, \"B D -> B D c\")"},
    {P + "h = map(x, \"B D -> B D\", \"exp\", \"log\")", 3, 33,
     "a third string: a call takes its pattern and at most one more string", "h = map(x, \"B D -> B D\", \"exp\", \"log\")"},
    {P + "h = map(x)", 3, 10, "expected a pattern string: 'name = map(tensors, \"pattern\")'", "h = map(x)"},
    {P + "h = einsum(x, \"B (D -> B D\")", 3, 18, "unbalanced parenthesis: '(' is never closed", "h = einsum(x, \"B (D -> B D\")"},
    // ---- names defined twice, unknown, used too early
    {P + "input x: D", 3, 7, "tensor 'x' is defined twice", "input x: D", 2, 7, "first defined here", line2},
    {P + "x = map(x, \"B D -> B D\", \"exp\")", 3, 1, "tensor 'x' is defined twice", "x = map(x, \"B D -> B D\", \"exp\")",
     2, 7, "first defined here", line2},
    {P + "axes D=4", 3, 6, "axis 'D' is defined twice", "axes D=4", 1, 10, "first defined here", line1},
    {P + "h = rearrange(x, \"B (D e) -> B D e\", D=3)", 3, 38, "axis 'D' is defined twice",
     "h = rearrange(x, \"B (D e) -> B D e\", D=3)", 1, 10, "first defined here", line1},
    {P + "h = map(y, \"B D -> B D\", \"exp\")", 3, 9, "unknown tensor 'y': declare it with input or param",
     "h = map(y, \"B D -> B D\", \"exp\")"},
    {P + "input y: B Q", 3, 12, "unknown axis 'Q': give it a length on an axes line", "input y: B Q"},
    {P + "h = map(x, \"B Q -> B Q\", \"exp\")", 3, 15, "unknown axis 'Q': give it a length on an axes line",
     "h = map(x, \"B Q -> B Q\", \"exp\")"},
    {P + "h = map(g, \"B D -> B D\", \"exp\")\ng = map(x, \"B D -> B D\", \"exp\")", 3, 9,
     "tensor 'g' is used before its definition: a name is defined before it is used", "h = map(g, \"B D -> B D\", \"exp\")",
     4, 1, "defined here", "g = map(x, \"B D -> B D\", \"exp\")"},
    {P + "input y: B Q\naxes Q=2", 3, 12, "axis 'Q' is used before its definition: a name is defined before it is used",
     "input y: B Q", 4, 6, "defined here", "axes Q=2"},
    {P + "h = map(h, \"B D -> B D\", \"exp\")", 3, 9, "tensor 'h' is used in its own definition", "h = map(h, \"B D -> B D\", \"exp\")"},
    // ---- tensors, pattern and function of a call
    {P + "h = rearrange(x, x, \"B D -> B D\")", 3, 18, "the pattern has 1 operand but 2 tensors are given",
     "h = rearrange(x, x, \"B D -> B D\")"},
    {P + "h = einsum(\"B D -> B D\")", 3, 12, "einsum takes 1 to 64 tensors before its pattern, not 0", "h = einsum(\"B D -> B D\")"},
    {P + "h = map(x, x, x, \"B D, B D, B D -> B D\", \"add\")", 3, 15, "map takes 1 or 2 tensors before its pattern, not 3",
     "h = map(x, x, x, \"B D, B D, B D -> B D\", \"add\")"},
    {P + "h = einsum(x, \"B D, D B -> B\")", 3, 21, "the pattern has 2 operands but 1 tensor is given", "h = einsum(x, \"B D, D B -> B\")"},
    {P + "h = einsum(x, x, \"B D -> B\")", 3, 15, "the pattern has 1 operand but 2 tensors are given", "h = einsum(x, x, \"B D -> B\")"},
    {P + "h = rearrange(x, \"B D -> B\")", 3, 21, "Identifiers only on one side of expression (should be on both): 'D'",
     "h = rearrange(x, \"B D -> B\")"},
    {P + "h = map(x, \"B D -> D B\", \"exp\")", 3, 20,
     "a map of one tensor moves no axis: its output is its input, 'B D -> B D' (rearrange moves axes)",
     "h = map(x, \"B D -> D B\", \"exp\")"},
    {P + "h = einsum(x, \"B D -> B\", \"sum\")", 3, 27, "einsum takes no string after its pattern", "h = einsum(x, \"B D -> B\", \"sum\")"},
    {P + "h = reduce(x, \"B D -> B\")", 3, 25, "reduce needs a reduction after its pattern: reduce(x, \"b h -> b\", \"sum\")",
     "h = reduce(x, \"B D -> B\")"},
    {P + "h = map(x, \"B D -> B D\")", 3, 24, "map needs a function after its pattern: map(x, \"b h -> b h\", \"gelu\")",
     "h = map(x, \"B D -> B D\")"},
    {P + "h = reduce(x, \"B D -> B\", \"a\tv\x01g\")", 3, 28, "unknown reduction 'a\\x09v\\x01g': sum, mean, max, min, prod, any, all, var, std, logsumexp",
     "h = reduce(x, \"B D -> B\", \"a v?g\")"},
    {P + "h = reduce(x, \"B D -> B\", \"avg\")", 3, 28, "unknown reduction 'avg': sum, mean, max, min, prod, any, all, var, std, logsumexp",
     "h = reduce(x, \"B D -> B\", \"avg\")"},
    {P + "h = map(x, \"B D -> B D\", \"add\")", 3, 27,
     "unknown function of one tensor 'add': relu, gelu, exp, log, square, sqrt, rsqrt, neg, abs, sigmoid, tanh, silu, reciprocal, gelu_erf, erf, softplus",
     "h = map(x, \"B D -> B D\", \"add\")"},
    {P + "h = map(x, x, \"B D, B D -> B D\", \"gelu\")", 3, 35,
     "unknown function of two tensors 'gelu': add, sub, mul, div, maximum, minimum", "h = map(x, x, \"B D, B D -> B D\", \"gelu\")"},
    {P + "h = repeat(x, \"B D -> B D c\", c=2, e=3)", 3, 36,
     "axis 'e' is not in the pattern: a call's axis=length is for an axis of its pattern", "h = repeat(x, \"B D -> B D c\", c=2, e=3)"},
    // ---- outputs and the program as a whole
    {P + "output z", 3, 8, "output 'z' names no tensor", "output z"},
    {P + "h = map(x, \"B D -> B D\", \"exp\")\noutput h x h", 4, 12, "tensor 'h' is an output twice", "output h x h",
     4, 8, "first named here", "output h x h"},
    // ---- checkpoints
    {P + "h = map(x, \"B D -> B D\", \"exp\")\ncheckpoint", 4, 11,
     "expected a statement's result after 'checkpoint' (names separated by ',')", "checkpoint"},
    {P + "h = map(x, \"B D -> B D\", \"exp\")\ncheckpoint h,", 4, 14,
     "expected a statement's result after 'checkpoint' (names separated by ',')", "checkpoint h,"},
    {P + "h = map(x, \"B D -> B D\", \"exp\")\ncheckpoint g", 4, 12, "checkpoint 'g' names no tensor", "checkpoint g"},
    {P + "h = map(x, \"B D -> B D\", \"exp\")\ncheckpoint h, x", 4, 15,
     "checkpoint 'x' is an input or param: only a statement's result is kept for the backward or made again",
     "checkpoint h, x", 2, 7, "declared here", line2},
    {P + "h = map(x, \"B D -> B D\", \"exp\")\ncheckpoint h\ncheckpoint h", 5, 12, "tensor 'h' is a checkpoint twice",
     "checkpoint h", 4, 12, "first named here", "checkpoint h"},
    {P + "checkpoint = map(x, \"B D -> B D\", \"exp\")", 3, 1,
     "a keyword (axes, input, param, output, checkpoint, block, end) cannot name a tensor", "checkpoint = map(x, \"B D -> B D\", \"exp\")"},
    // the device mesh and its layout
    {"axes B=2 D=3\nmesh dp", 2, 8, "expected '=' after the mesh dimension's name: NAME=SIZE, 'tp=8'", "mesh dp"},
    {"axes B=2 D=3\nmesh dp=0", 2, 9, "a mesh dimension's size is positive, not 0", "mesh dp=0"},
    {"axes B=2 D=3\nmesh dp=2@", 2, 11, "expected the link's name after '@': 'tp=8@nvlink', 'dp=64@ib'", "mesh dp=2@"},
    {"axes B=2 D=3\nmesh dp=2 dp=4", 2, 11, "mesh dimension 'dp' is named twice", "mesh dp=2 dp=4", 2, 6,
     "first named here", "mesh dp=2 dp=4"},
    {"axes B=2 D=3\nmesh dp=2\nmesh tp=2", 3, 1, "a second mesh line: a program has one mesh", "mesh tp=2", 2, 1,
     "the first is here", "mesh dp=2"},
    {"axes B=2 D=3\nshard B:dp", 2, 1, "a shard line without a mesh line above it: 'mesh dp=8 tp=8', then 'shard B:dp H:tp'",
     "shard B:dp"},
    {"axes B=2 D=3\nmesh dp=2\nshard B:tp", 3, 9, "the mesh has no dimension 'tp' (its dimensions: dp)", "shard B:tp", 2, 1,
     "the mesh is here", "mesh dp=2"},
    {"axes B=2 D=3\nmesh dp=2\nshard Q:dp", 3, 7, "unknown axis 'Q': give it a length on an axes line", "shard Q:dp"},
    {"axes B=2 D=3\nmesh dp=2\nshard B:dp B:dp", 3, 12, "axis 'B' is laid out twice", "shard B:dp B:dp", 3, 7,
     "first laid out here", "shard B:dp B:dp"},
    {"axes B=2 D=3\nmesh dp=2\nshard B", 3, 8, "expected ':' after the axis: AXIS:MESHDIM, 'H:tp'", "shard B"},
    {"axes L=2 B=2\ninput x: B\nblock f(h) over L\n  mesh dp=2\n  y = map(h, \"B -> B\", \"exp\")\nend", 4, 3,
     "a mesh or shard line inside block 'f' (its body holds statements and checkpoint lines): the layout is the whole "
     "program's, given outside the block", "  mesh dp=2"},
    // dropout: a tensor and a probability, no pattern
    {P + "h = dropout(x, 1.5)", 3, 16,
     "dropout's probability 1.5 is outside [0, 1): it is the chance that an element is zeroed", "h = dropout(x, 1.5)"},
    {P + "h = dropout(x, -0.1)", 3, 16,
     "dropout's probability -0.1 is outside [0, 1): it is the chance that an element is zeroed", "h = dropout(x, -0.1)"},
    {P + "h = dropout(x)", 3, 5,
     "dropout takes a tensor and the probability of zeroing each element: 'y = dropout(x, 0.1)'", "h = dropout(x)"},
    {P + "h = dropout(x, x)", 3, 16,
     "dropout takes a tensor and the probability of zeroing each element: 'y = dropout(x, 0.1)'; the probability is a "
     "number", "h = dropout(x, x)"},
    {P + "h = dropout(0.5, 0.1)", 3, 13,
     "dropout takes a tensor and the probability of zeroing each element: 'y = dropout(x, 0.1)'", "h = dropout(0.5, 0.1)"},
    {P + "h = dropout(x, 0.1, \"B D, -> B D\")", 3, 21,
     "dropout takes no pattern in a model file (its output is its input): 'y = dropout(x, 0.1)'",
     "h = dropout(x, 0.1, \"B D, -> B D\")"},
    {P, 3, 1, "the program has no statement: nothing to compute", ""},
    {"", 1, 1, "the program has no statement: nothing to compute", ""},
    // ---- carets after UTF-8 and tabs, and CRLF lines
    {P + "h = map(x, \"B D -> B D\", \"\xc3\xa9\" y)", 3, 30, "expected ',' or ')' after the argument",
     "h = map(x, \"B D -> B D\", \"\xc3\xa9\" y)"},
    {P + "\th = map(y, \"B D -> B D\", \"exp\")", 3, 10, "unknown tensor 'y': declare it with input or param",
     " h = map(y, \"B D -> B D\", \"exp\")"},
    {"axes B=2\r\ninput x: Q\r\n", 2, 10, "unknown axis 'Q': give it a length on an axes line", "input x: Q"},
};
// clang-format on

}  // namespace

TEST_CASE("program errors: reason, line:col, the line and a caret", "[program]") {
  for (const Row& row : rows) {
    CAPTURE(row.text);
    try {
      (void)parse_program(row.text, "model.ein");
      FAIL("no error");
    } catch (const ProgramError& e) {
      CHECK(e.reason() == row.reason);
      CHECK(e.file() == "model.ein");
      CHECK(e.place().line == row.line);
      CHECK(e.place().column == row.column);
      std::string expected = "model.ein:" + std::to_string(row.line) + ":" + std::to_string(row.column) + ": " +
                             row.reason + "\n" + with_caret(row.shown, row.column);
      if (row.note_line) {
        REQUIRE(e.note_place());
        CHECK(e.note() == row.note);
        expected += "\nmodel.ein:" + std::to_string(row.note_line) + ":" + std::to_string(row.note_column) +
                    ": note: " + row.note + "\n" + with_caret(row.note_shown, row.note_column);
      } else {
        CHECK_FALSE(e.note_place());
      }
      CHECK(std::string(e.what()) == expected);
    }
  }
}

TEST_CASE("program errors: a text over the limit is refused before parsing", "[program]") {
  const std::string text(max_program_length + 1, '#');
  try {
    (void)parse_program(text, "big.ein");
    FAIL("no error");
  } catch (const ProgramError& e) {
    CHECK(e.reason() == "program too long: 1048577 bytes, at most 1048576 are accepted");
    CHECK(e.place().offset == max_program_length);
    CHECK(e.place().line == 1);
  }
}

TEST_CASE("program errors: columns stay right on one long line of many tokens", "[program]") {
  // 40000 axis definitions on one line: columns are counted once, not once per token
  std::string text = "axes";
  for (int i = 0; i < 40000; ++i) text += " a" + std::to_string(i) + "=1";
  text += "\ninput x: a0\ny = map(x, \"a0 -> a0\", \"exp\")\n";
  const ast::Program p = parse_program(text);
  CHECK(std::get<ast::AxesDecl>(p.items[0]).axes.size() == 40000);
  CHECK(std::get<ast::AxesDecl>(p.items[0]).axes[39999].source.column == text.find(" a39999=") + 2);
}

namespace {

struct BlockRow {
  std::string text;
  std::size_t line;
  std::size_t column;
  std::string reason;  // contained in the reason
  std::size_t note_line = 0;
  std::size_t note_column = 0;
};

// lines 1-6: a block f over L with one parameter h, reading w's layer
const std::string BL = "axes L=2 B=2 D=3\ninput x: B D\nparam w: L D\nblock f(h) over L\n"
                       "  y = map(h, w, \"B D, D -> B D\", \"mul\")\nend\n";
const std::string H = "axes L=2 B=2 D=3\ninput x: B D\n";

}  // namespace

TEST_CASE("program errors: blocks, their calls and their bodies, at line:col with a caret", "[program][block]") {
  // clang-format off
  const std::vector<BlockRow> block_rows = {
      {BL + "h = g(x)", 7, 5, "unknown op 'g': the ops are einsum"},
      {BL + "h = g(x)", 7, 5, ", and the blocks defined above"},
      {BL + "h = f(x, x)", 7, 10, "block 'f' takes 1 tensor (h), not 2", 4, 1},
      {BL + "h = f()", 7, 5, "block 'f' takes 1 tensor (h), not 0", 4, 1},
      {BL + "h = f(x, \"B D\")", 7, 10, "a string in a call of block 'f': a block takes tensors only"},
      {BL + "h = f(x, 0.5)", 7, 10, "number 0.5 in a call of block 'f'"},
      {BL + "h = f(x, c=4)", 7, 10, "axis=length in a call of block 'f'"},
      {BL + "h, k = f(x)", 7, 4, "block 'f' gives one tensor"},
      {BL + "h = f(v)", 7, 7, "unknown tensor 'v'"},
      {BL + "h = f(x)\nz = map(y, \"B D -> B D\", \"exp\")", 8, 9, "unknown tensor 'y'"},
      {BL + "h = f(x)\nh2 = f(h)\nf = map(h2, \"B D -> B D\", \"exp\")", 9, 1, ""},  // a tensor may share a block's name
      {H + "block f(h) over L\n  y = map(h, \"B D -> B D\", \"tanh\")\n", 3, 1,
       "block 'f' is not closed: end its body with a line 'end'"},
      {H + "end", 3, 1, "'end' without a block to end"},
      {H + "block f(h) over L\nblock g(h) over L", 4, 1, "a block inside block 'f': blocks do not nest"},
      {H + "block f(h) over L\n  param v: D\nend", 4, 3, "a declaration inside block 'f'"},
      {H + "block f(h) over L\n  axes E=2\nend", 4, 3, "an axes line inside block 'f'"},
      {H + "block f(h) over L\n  output h\nend", 4, 3, "an output line inside block 'f'"},
      {H + "block f(h) over L\n  y = repeat(h, \"B D -> B D c\", c=2)\nend", 4, 33, "axis=length inside block 'f'"},
      {H + "block f(h) over L\nend", 4, 1, "block 'f' has no statement"},
      {H + "block f(h) over Q\n  y = map(h, \"B D -> B D\", \"tanh\")\nend", 3, 17, "unknown axis 'Q'"},
      {H + "block f(x) over L\n  y = map(x, \"B D -> B D\", \"tanh\")\nend", 3, 9,
       "block parameter 'x' is also a tensor of the program", 2, 7},
      {H + "block f(h, h) over L\n  y = map(h, \"B D -> B D\", \"tanh\")\nend", 3, 12, "block parameter 'h' is named twice", 3, 9},
      {H + "block f(h) over L\n  y = map(h, \"B D -> B D\", \"tanh\")\n  checkpoint z\nend", 5, 14,
       "checkpoint 'z' in block 'f' names none of its statements"},
      {H + "block f(h) over L\n  y = map(z, \"B D -> B D\", \"tanh\")\n  z = map(h, \"B D -> B D\", \"exp\")\nend", 4, 11,
       "tensor 'z' is used before its definition", 5, 3},
      {H + "block f(h) over L\n  a, b = rearrange(h, \"B (D + E) -> B D, B E\", E=1)\nend", 4, 48, "axis=length inside block 'f'"},
      {H + "block einsum(h) over L", 3, 7, "block 'einsum' has the name of an op"},
      {H + "block f(h)", 3, 11, "expected 'over' and the layer axis after the parameters"},
      {H + "block f over L", 3, 9, "expected '(' and the block's parameters"},
      {H + "block f() over L", 3, 9, "expected a parameter name"},
      {H + "block = map(x, \"B D -> B D\", \"exp\")", 3, 1, "a keyword (axes, input, param, output, checkpoint, block, end)"},
  };
  // clang-format on
  for (const BlockRow& row : block_rows) {
    CAPTURE(row.text);
    if (row.reason.empty()) {  // accepted
      CHECK_NOTHROW(parse_program(row.text, "model.ein"));
      continue;
    }
    try {
      (void)parse_program(row.text, "model.ein");
      FAIL("no error");
    } catch (const ProgramError& e) {
      CAPTURE(e.what());
      CHECK(e.reason().find(row.reason) != std::string::npos);
      CHECK(e.place().line == row.line);
      CHECK(e.place().column == row.column);
      CHECK(std::string(e.what()).find("\n  ") != std::string::npos);  // the line, then the caret
      if (row.note_line) {
        REQUIRE(e.note_place());
        CHECK(e.note_place()->line == row.note_line);
        CHECK(e.note_place()->column == row.note_column);
      } else {
        CHECK_FALSE(e.note_place());
      }
    }
  }
}
