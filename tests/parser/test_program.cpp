// parse_program(): the lecture's file verbatim and the GPT-2 block of examples/models parse
// to the AST they spell out; every form of the language parses to its canonical text
// (to_string), which parses back to the same program up to positions; Sources carry the
// right line and column; ProgramError prints file:line:col, the line and a caret.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "ast_strip.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/parser/program.hpp"

using namespace einexpr;

namespace {

// The issue's text, byte for byte.
const char* const lecture = R"(# CS336 lecture 2: x --w1--> h1 --w2--> h2 -> loss
axes B=1024 D=256 E=256 K=64
input x: B D
param w1: D E
param w2: E K
h1 = einsum(x, w1, "B D, D E -> B E")
h2 = einsum(h1, w2, "B E, E K -> B K")
sq = map(h2, "B K -> B K", "square")
loss = reduce(sq, "B K ->", "mean")
)";

std::string read_model(const std::string& name) {
  std::ifstream in(std::string(EINEXPR_MODELS_DIR) + "/" + name, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

template <typename T>
const T& item(const ast::Program& p, std::size_t i) {
  REQUIRE(i < p.items.size());
  REQUIRE(std::holds_alternative<T>(p.items[i]));
  return std::get<T>(p.items[i]);
}

std::string at(const ast::Source& s) { return std::to_string(s.line) + ":" + std::to_string(s.column); }

/// parse(to_string(p)) is p up to positions, and to_string is a fixed point.
void check_round_trip(const ast::Program& p) {
  const std::string canonical = ast::to_string(p);
  CAPTURE(canonical);
  const ast::Program q = parse_program(canonical, "canonical.ein");
  CHECK(test::stripped(q) == test::stripped(p));
  CHECK(ast::to_string(q) == canonical);
}

}  // namespace

TEST_CASE("program: the lecture's two-layer model, verbatim", "[program]") {
  CHECK(read_model("lecture2.ein") == lecture);
  const ast::Program p = parse_program(lecture, "lecture2.ein");
  CHECK(p.file == "lecture2.ein");
  CHECK(p.text == lecture);
  REQUIRE(p.items.size() == 8);

  const auto& axes = item<ast::AxesDecl>(p, 0);
  REQUIRE(axes.axes.size() == 4);
  CHECK(axes.axes[3].name.name == "K");
  CHECK(axes.axes[3].length == 64);
  CHECK(at(axes.axes[3].source) == "2:25");
  CHECK(at(axes.source) == "2:1");

  const auto& x = item<ast::TensorDecl>(p, 1);
  CHECK(x.kind == ast::TensorKind::input);
  CHECK(x.name.name == "x");
  REQUIRE(x.dims.size() == 2);
  CHECK(x.dims[1].axes.size() == 1);
  CHECK(x.dims[1].axes[0].name == "D");
  CHECK(at(x.dims[1].source) == "3:12");
  CHECK_FALSE(x.dtype);
  CHECK(item<ast::TensorDecl>(p, 3).kind == ast::TensorKind::param);

  const auto& h1 = item<ast::Statement>(p, 4);
  CHECK(h1.name.name == "h1");
  CHECK(h1.op == Op::einsum);
  CHECK(at(h1.op_name.source) == "6:6");
  REQUIRE(h1.inputs.size() == 2);
  CHECK(h1.inputs[1].name == "w1");
  CHECK(at(h1.inputs[1].source) == "6:16");
  CHECK(h1.pattern.pattern.text == "B D, D E -> B E");
  CHECK(at(h1.pattern.source) == "6:20");
  CHECK(h1.pattern.pattern.operands.size() == 2);
  // a pattern offset maps to the byte of the file: "E" of the output
  const ast::Span e_out = ast::span_of(h1.pattern.pattern.output.terms[1]);
  CHECK(p.text.substr(ast::file_offset(h1.pattern, e_out.begin), 3) == "E\")");
  CHECK_FALSE(h1.function);
  CHECK(h1.lengths.empty());

  const auto& sq = item<ast::Statement>(p, 6);
  CHECK(sq.op == Op::map);
  REQUIRE(sq.function);
  CHECK(sq.function->text == "square");
  CHECK(at(sq.function->source) == "8:28");
  const auto& loss = item<ast::Statement>(p, 7);
  CHECK(loss.op == Op::reduce);
  CHECK(loss.function->text == "mean");
  CHECK(loss.pattern.pattern.output.terms.empty());

  REQUIRE(p.outputs.size() == 1);
  CHECK(p.outputs[0].name == "loss");
  CHECK(at(p.outputs[0].source) == "9:1");

  CHECK(ast::to_string(p) ==
        "axes B=1024 D=256 E=256 K=64\n"
        "input x: B D\n"
        "param w1: D E\n"
        "param w2: E K\n"
        "h1 = einsum(x, w1, \"B D, D E -> B E\")\n"
        "h2 = einsum(h1, w2, \"B E, E K -> B K\")\n"
        "sq = map(h2, \"B K -> B K\", \"square\")\n"
        "loss = reduce(sq, \"B K ->\", \"mean\")\n");
  check_round_trip(p);
}

TEST_CASE("program: look-ups by name", "[program]") {
  const ast::Program p = parse_program("axes B=2 D=3\ninput x: B D\nr = repeat(x, \"B d -> B d c\", d=3, c=4)\n"
                                       "axes e=3\n");
  const ast::Item* x = ast::find_tensor(p, "x");
  REQUIRE(x);
  CHECK(std::get<ast::TensorDecl>(*x).name.name == "x");
  const ast::Item* r = ast::find_tensor(p, "r");
  REQUIRE(r);
  CHECK(std::get<ast::Statement>(*r).op == Op::repeat);
  CHECK(ast::find_tensor(p, "B") == nullptr);  // an axis, not a tensor
  REQUIRE(ast::find_axis(p, "c"));
  CHECK(ast::find_axis(p, "c")->length == 4);
  CHECK(at(ast::find_axis(p, "c")->source) == "3:36");
  CHECK(ast::find_axis(p, "x") == nullptr);
  std::vector<std::string> names;
  for (const ast::AxisDef* d : ast::axis_definitions(p)) names.push_back(d->name.name);
  CHECK(names == std::vector<std::string>{"B", "D", "d", "c", "e"});
}

TEST_CASE("program: the GPT-2 block of examples/models", "[program]") {
  const std::string text = read_model("gpt2_block.ein");
  const ast::Program p = parse_program(text, "gpt2_block.ein");
  std::size_t inputs = 0, params = 0, statements = 0;
  std::vector<Op> ops;
  for (const ast::Item& i : p.items) {
    if (const auto* t = std::get_if<ast::TensorDecl>(&i)) (t->kind == ast::TensorKind::param ? params : inputs)++;
    if (const auto* s = std::get_if<ast::Statement>(&i)) {
      ++statements;
      ops.push_back(s->op);
    }
  }
  CHECK(inputs == 3);
  CHECK(params == 16);
  CHECK(statements == 45);
  CHECK(std::count(ops.begin(), ops.end(), Op::einsum) == 8);
  CHECK(std::count(ops.begin(), ops.end(), Op::rearrange) == 4);
  CHECK(std::count(ops.begin(), ops.end(), Op::reduce) == 6);
  CHECK(std::count(ops.begin(), ops.end(), Op::map) == 27);
  REQUIRE(p.outputs.size() == 1);
  CHECK(p.outputs[0].name == "y");
  const auto& w_q = std::get<ast::TensorDecl>(*ast::find_tensor(p, "w_q"));
  REQUIRE(w_q.dims.size() == 2);
  CHECK(w_q.dims[1].axes.size() == 2);  // (H K)
  CHECK(ast::find_axis(p, "F")->length == 3072);
  check_round_trip(p);
}

TEST_CASE("program: each form of the language, as canonical text", "[program]") {
  struct Row {
    std::string text;
    std::string canonical;
  };
  // clang-format off
  const std::vector<Row> rows = {
      // layout: comments, blank lines, blanks, CRLF, no final newline
      {"# only\n\n  axes   B=2 # c\ninput x : B\nh=map(x,\"B->B\",\"exp\")",
       "axes B=2\ninput x: B\nh = map(x, \"B -> B\", \"exp\")\n"},
      {"axes B=2\r\ninput x: B\r\nh = map(x, \"B -> B\", \"exp\")\r\n",
       "axes B=2\ninput x: B\nh = map(x, \"B -> B\", \"exp\")\n"},
      {"\taxes B = 2\t\ninput\tx:\tB\nh = map( x , \"B -> B\" , \"exp\" )\n",
       "axes B=2\ninput x: B\nh = map(x, \"B -> B\", \"exp\")\n"},
      // declarations: dtypes, compositions, scalars, several axes lines
      {"axes H=2\naxes K=3 N=9223372036854775807\nparam w: (H K) N bf16\ninput s:\ninput t: f8_e5m2\n"
       "h = einsum(w, \"(H K) N -> H K\")\nr = rearrange(s, \"-> 1\")\nu = reduce(t, \"->\", \"sum\")\n",
       "axes H=2\naxes K=3 N=9223372036854775807\nparam w: (H K) N bf16\ninput s:\ninput t: f8_e5m2\n"
       "h = einsum(w, \"(H K) N -> H K\")\nr = rearrange(s, \" -> 1\")\nu = reduce(t, \" ->\", \"sum\")\n"},
      {"axes A=1 C=1\ninput x: ( A ) C bool\nh = rearrange(x, \"A C -> C A\")\n",
       "axes A=1 C=1\ninput x: A C bool\nh = rearrange(x, \"A C -> C A\")\n"},
      // statements: every op, lengths, outputs
      {"axes B=2 D=4\ninput x: B D\n"
       "r = rearrange(x, \"B (h d) -> B h d\", h=2, d=2)\n"
       "s = repeat(x, \"B D -> B D c\", c = 3)\n"
       "m = reduce(s, \"B D c -> B\", \"max\")\n"
       "p = map(x, m, \"B D, B -> B D\", \"mul\")\n"
       "output r p\noutput m\n",
       "axes B=2 D=4\ninput x: B D\n"
       "r = rearrange(x, \"B (h d) -> B h d\", h=2, d=2)\n"
       "s = repeat(x, \"B D -> B D c\", c=3)\n"
       "m = reduce(s, \"B D c -> B\", \"max\")\n"
       "p = map(x, m, \"B D, B -> B D\", \"mul\")\n"
       "output r p\noutput m\n"},
      // checkpoint lines: names separated by ',' (or blanks), anywhere in the file
      {"axes B=2\ncheckpoint  h ,g\ninput x: B\nh = map(x, \"B -> B\", \"exp\")\ng = map(h, \"B -> B\", \"exp\")\n"
       "checkpoint k\nk = map(g, \"B -> B\", \"exp\")\n",
       "axes B=2\ncheckpoint h, g\ninput x: B\nh = map(x, \"B -> B\", \"exp\")\ng = map(h, \"B -> B\", \"exp\")\n"
       "checkpoint k\nk = map(g, \"B -> B\", \"exp\")\n"},
      // an output line may come first, and name an input
      {"output x y\naxes B=2\ninput x: B\ny = einsum(x, \"B ->\")\n",
       "output x y\naxes B=2\ninput x: B\ny = einsum(x, \"B ->\")\n"},
      // names that are keywords or dtypes elsewhere: fine as tensors, ops' arguments, axes of patterns
      {"axes f=2\ninput inputs: f\nparam f32x: f\naxes_ = map(inputs, f32x, \"f, f -> f\", \"add\")\n",
       "axes f=2\ninput inputs: f\nparam f32x: f\naxes_ = map(inputs, f32x, \"f, f -> f\", \"add\")\n"},
      // patterns: canonical spacing, ellipsis, anonymous and unit axes
      {"axes B=2\ninput x: B\nh = rearrange(x,\"  ...  ->  ...  1 ()\")\n",
       "axes B=2\ninput x: B\nh = rearrange(x, \"... -> ... 1 ()\")\n"},
  };
  // clang-format on
  for (const Row& row : rows) {
    CAPTURE(row.text);
    const ast::Program p = parse_program(row.text);
    CHECK(ast::to_string(p) == row.canonical);
    check_round_trip(p);
  }
}

TEST_CASE("program: outputs default to the last statement, else the output lines in order", "[program]") {
  const ast::Program a = parse_program("axes B=2\ninput x: B\nh = map(x, \"B -> B\", \"exp\")\n# end\n\n");
  REQUIRE(a.outputs.size() == 1);
  CHECK(a.outputs[0].name == "h");
  CHECK(at(a.outputs[0].source) == "3:1");
  const ast::Program b = parse_program("axes B=2\ninput x: B\noutput h\nh = map(x, \"B -> B\", \"exp\")\n"
                                       "g = map(h, \"B -> B\", \"exp\")\noutput x\n");
  REQUIRE(b.outputs.size() == 2);
  CHECK(b.outputs[0].name == "h");
  CHECK(at(b.outputs[0].source) == "3:8");
  CHECK(b.outputs[1].name == "x");
}

TEST_CASE("program: checkpoint lines collect their names in order, with their places", "[program]") {
  const ast::Program p = parse_program("axes B=2\ninput x: B\nh = map(x, \"B -> B\", \"exp\")\ncheckpoint g h\n"
                                       "g = map(h, \"B -> B\", \"exp\")\nk = map(g, \"B -> B\", \"exp\")\n");
  REQUIRE(p.checkpoints.size() == 2);
  CHECK(p.checkpoints[0].name == "g");
  CHECK(at(p.checkpoints[0].source) == "4:12");
  CHECK(p.checkpoints[1].name == "h");
  CHECK(p.outputs.size() == 1);  // a checkpoint line is no output line
  CHECK(p.outputs[0].name == "k");
  CHECK(parse_program("axes B=2\ninput x: B\nh = map(x, \"B -> B\", \"exp\")\n").checkpoints.empty());
}

TEST_CASE("program: a tab is one column, and comments may hold any UTF-8", "[program]") {
  const ast::Program p = parse_program("# \xc3\xa9t\xc3\xa9\naxes B=2 # caf\xc3\xa9\n\tinput x: B\n"
                                       "h = map(x, \"B -> B\", \"exp\")  # \xe2\x86\x92\n");
  CHECK(at(item<ast::AxesDecl>(p, 0).source) == "2:1");
  CHECK(at(item<ast::TensorDecl>(p, 1).source) == "3:2");
  CHECK(at(item<ast::TensorDecl>(p, 1).dims[0].source) == "3:11");
  CHECK(at(item<ast::Statement>(p, 2).source) == "4:1");
}

TEST_CASE("program: ProgramError's message, place and note", "[program]") {
  const std::string text = "axes B=2\n\tinput x: B\ny = map(x, \"B -> B\", \"exp\")\n";
  const ProgramError plain("a fault", "m.ein", text, 20);
  CHECK(plain.reason() == "a fault");
  CHECK(plain.file() == "m.ein");
  CHECK(plain.place().line == 2);
  CHECK(plain.place().column == 12);
  CHECK_FALSE(plain.note_place());
  CHECK(std::string(plain.what()) == "m.ein:2:12: a fault\n   input x: B\n             ^");

  const ProgramError noted("twice", "", text, 22, "first here", 0);
  CHECK(noted.file() == "<program>");
  REQUIRE(noted.note_place());
  CHECK(noted.note() == "first here");
  CHECK(noted.note_place()->line == 1);
  CHECK(noted.note_place()->column == 1);
  CHECK(std::string(noted.what()) ==
        "<program>:3:2: twice\n  y = map(x, \"B -> B\", \"exp\")\n   ^\n"
        "<program>:1:1: note: first here\n  axes B=2\n  ^");

  // the same from a parsed program's nodes
  const ast::Program p = parse_program(text, "m.ein");
  const auto& y = std::get<ast::Statement>(p.items[2]);
  const ProgramError at_node("bad op", p, y.op_name.source, "x is here", y.inputs[0].source);
  CHECK(std::string(at_node.what()) ==
        "m.ein:3:5: bad op\n  y = map(x, \"B -> B\", \"exp\")\n      ^\n"
        "m.ein:3:9: note: x is here\n  y = map(x, \"B -> B\", \"exp\")\n          ^");
  // past the end: the caret goes after the last line
  const ProgramError at_end("end", "m.ein", "a\nbc", 4);
  CHECK(std::string(at_end.what()) == "m.ein:2:3: end\n  bc\n    ^");
}

TEST_CASE("program: a program built in code is checked the same way", "[program]") {
  auto id = [](const char* name) { return ast::Identifier{name, {}}; };
  ast::Program p;
  p.items.push_back(ast::AxesDecl{{{id("B"), 2, {}}, {id("D"), 3, {}}}, {}});
  p.items.push_back(ast::TensorDecl{ast::TensorKind::input, id("x"), {{{id("B")}, {}}, {{id("D")}, {}}}, {}, {}});
  ast::Statement s;
  s.name = id("h");
  s.op = Op::reduce;
  s.op_name = id("reduce");
  s.inputs = {id("x")};
  s.pattern.pattern = parse("B D -> B");
  s.function = ast::StringArg{"sum", {}};
  p.items.push_back(s);
  check_program(p);
  REQUIRE(p.outputs.size() == 1);
  CHECK(p.outputs[0].name == "h");
  CHECK(ast::to_string(p) == "axes B=2 D=3\ninput x: B D\nh = reduce(x, \"B D -> B\", \"sum\")\n");

  std::get<ast::Statement>(p.items[2]).inputs = {id("y")};
  try {
    check_program(p);
    FAIL("no error");
  } catch (const ProgramError& e) {
    CHECK(e.reason() == "unknown tensor 'y': declare it with input or param");
    CHECK(std::string(e.what()) == "<program>:1:1: unknown tensor 'y': declare it with input or param\n  \n  ^");
  }
}

TEST_CASE("program: a block and its calls, as the AST holds them and as canonical text", "[program][block]") {
  const ast::Program p = parse_program(
      "axes L=3 B=2 D=4 E=4\n"
      "input x: B D\n"
      "param w: L D E   # each layer's D E\n"
      "param s: D\n"
      "block layer(h, scale) over L   # a scan over L\n"
      "\n"
      "  a = einsum(h, w, \"B D, D E -> B E\")\n"
      "  y = map(a, scale, \"B E, E -> B E\", \"mul\")\n"
      "  checkpoint a\n"
      "end\n"
      "h1 = layer(x, s)\n"
      "h2 = layer(h1, s)\n"
      "loss = reduce(h2, \"B D ->\", \"sum\")\n",
      "blocks.ein");
  const auto& b = item<ast::BlockDecl>(p, 4);
  CHECK(b.name.name == "layer");
  REQUIRE(b.params.size() == 2);
  CHECK(b.params[1].name == "scale");
  CHECK(b.axis.name == "L");
  CHECK(at(b.axis.source) == "5:28");
  REQUIRE(b.statements.size() == 2);
  CHECK(b.statements[1].name.name == "y");
  CHECK(at(b.statements[1].source) == "8:3");
  REQUIRE(b.checkpoints.size() == 1);
  CHECK(b.checkpoints[0].names[0].name == "a");
  CHECK(at(b.end) == "10:1");
  const auto& c = item<ast::BlockCall>(p, 5);
  CHECK(c.name.name == "h1");
  CHECK(c.block.name == "layer");
  REQUIRE(c.inputs.size() == 2);
  CHECK(c.inputs[0].name == "x");
  CHECK(at(c.source) == "11:1");
  CHECK(ast::find_block(p, "layer") == &b);
  CHECK(ast::find_block(p, "h1") == nullptr);
  CHECK(ast::find_tensor(p, "h2") == &p.items[6]);
  CHECK(ast::find_tensor(p, "a") == nullptr);  // a block's names are its own
  CHECK(p.checkpoints.empty());                // the block's checkpoint lines are its own
  CHECK(p.outputs.at(0).name == "loss");
  CHECK(ast::to_string(p) ==
        "axes L=3 B=2 D=4 E=4\ninput x: B D\nparam w: L D E\nparam s: D\n"
        "block layer(h, scale) over L\n  a = einsum(h, w, \"B D, D E -> B E\")\n"
        "  y = map(a, scale, \"B E, E -> B E\", \"mul\")\n  checkpoint a\nend\n"
        "h1 = layer(x, s)\nh2 = layer(h1, s)\nloss = reduce(h2, \"B D ->\", \"sum\")\n");
  check_round_trip(p);
}

TEST_CASE("program: mesh and shard lines as the AST holds them and as canonical text, and 'mesh' still names a tensor",
          "[program]") {
  const std::string text =
      "axes B=8 D=4\nmesh  dp=4@ib tp=2\nshard B:dp\tD:tp\ninput x: B D\nmesh = map(x, \"B D -> B D\", \"exp\")\n"
      "shard = map(mesh, \"B D -> B D\", \"exp\")\n";
  const ast::Program p = parse_program(text, "mesh.ein");
  const auto* m = std::get_if<ast::MeshDecl>(&p.items.at(1));
  REQUIRE(m != nullptr);
  REQUIRE(m->dims.size() == 2);
  CHECK(m->dims[0].name.name == "dp");
  CHECK(m->dims[0].size == 4);
  CHECK(m->dims[0].link.name == "ib");
  CHECK(m->dims[1].link.name.empty());
  CHECK(m->dims[1].name.source.column == 15);
  const auto* s = std::get_if<ast::ShardDecl>(&p.items.at(2));
  REQUIRE(s != nullptr);
  REQUIRE(s->rules.size() == 2);
  CHECK(s->rules[1].axis.name == "D");
  CHECK(s->rules[1].dim.name == "tp");
  CHECK(std::holds_alternative<ast::Statement>(p.items.at(4)));  // "mesh = ..." is a statement
  const std::string canonical = ast::to_string(p);
  CHECK(canonical.find("mesh dp=4@ib tp=2\nshard B:dp D:tp\n") != std::string::npos);
  CHECK(ast::to_string(parse_program(canonical, "again.ein")) == canonical);
}

TEST_CASE("program: a shard rule for some statements' results only, 'S:tp@ln1+h' (sequence parallelism)", "[program]") {
  const std::string text =
      "axes S=8 D=4\nmesh tp=2\nshard D:tp S:tp@y+z\ninput x: S D\ny = map(x, \"S D -> S D\", \"exp\")\n"
      "z = map(y, \"S D -> S D\", \"exp\")\n";
  const ast::Program p = parse_program(text, "sp.ein");
  const auto* s = std::get_if<ast::ShardDecl>(&p.items.at(2));
  REQUIRE(s != nullptr);
  REQUIRE(s->rules.size() == 2);
  CHECK(s->rules[0].at.empty());
  CHECK(s->rules[1].axis.name == "S");
  REQUIRE(s->rules[1].at.size() == 2);
  CHECK(s->rules[1].at[0].name == "y");
  CHECK(s->rules[1].at[1].name == "z");
  CHECK(s->rules[1].at[1].source.column == 19);  // "shard D:tp S:tp@y+z": z is the 19th character
  const std::string canonical = ast::to_string(p);
  CHECK(canonical.find("shard D:tp S:tp@y+z\n") != std::string::npos);
  CHECK(ast::to_string(parse_program(canonical, "again.ein")) == canonical);
  // '@' without a statement's name
  CHECK_THROWS_WITH(parse_program("axes S=8\nmesh tp=2\nshard S:tp@ 1\n", "bad.ein"),
                    Catch::Contains("expected a statement's name after '@'"));
}
