// plan_program(): one axis environment for the whole program (overrides and given tensors'
// shapes bind it), each tensor's shape, dtype and buffer, each statement's plan on its
// inputs' real layouts, liveness; and every semantic error with its line:col, caret and a
// note at the other place, as a table.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "einexpr/codegen/program_plan.hpp"
#include "einexpr/parser/program.hpp"
#include "model_files.hpp"

using namespace einexpr;

namespace {

ProgramPlan plan_text(const std::string& text, const ProgramOptions& options = {}) {
  return plan_program(parse_program(text, "m.ein"), options);
}

const ProgramTensor& tensor(const ProgramPlan& p, const std::string& name) {
  const int id = p.tensor(name);
  REQUIRE(id >= 0);
  return p.tensor(id);
}

}  // namespace

TEST_CASE("program plan: the lecture's two-layer model", "[program]") {
  const ProgramPlan p = plan_text(test::read_model("lecture2.ein"));
  CHECK(p.axes_text() == "B=1024 D=256 E=256 K=64");
  struct Row {
    std::string name;
    TensorRole role;
    Shape shape;
    std::vector<std::string> dims;
    bool requires_grad;
  };
  const Row rows[] = {
      {"x", TensorRole::input, {1024, 256}, {"B", "D"}, false},
      {"w1", TensorRole::param, {256, 256}, {"D", "E"}, true},
      {"w2", TensorRole::param, {256, 64}, {"E", "K"}, true},
      {"h1", TensorRole::statement, {1024, 256}, {"B", "E"}, true},
      {"h2", TensorRole::statement, {1024, 64}, {"B", "K"}, true},
      {"sq", TensorRole::statement, {1024, 64}, {"B", "K"}, true},
      {"loss", TensorRole::statement, {}, {}, true},
  };
  REQUIRE(p.tensors.size() == std::size(rows));
  for (const Row& r : rows) {
    CAPTURE(r.name);
    const ProgramTensor& t = tensor(p, r.name);
    CHECK(t.role == r.role);
    CHECK(t.shape == r.shape);
    CHECK(t.dims == r.dims);
    CHECK(t.dtype == DType::f32);
    CHECK(t.requires_grad == r.requires_grad);
    CHECK(t.layout == Layout::contiguous(r.shape));
  }
  REQUIRE(p.statements.size() == 4);
  CHECK(p.statements[0].spec.str() == "einsum");
  CHECK(p.statements[2].spec.str() == "map square");
  CHECK(p.statements[3].spec.str() == "reduce mean");
  CHECK(p.statements[0].pattern == "B D, D E -> B E");
  CHECK(p.outputs == std::vector<int>{p.tensor("loss")});
  CHECK(p.describe(p.tensor("h1")) == "'h1' [B=1024, E=256] f32");
  // Liveness: each result from the statement that makes it to the last that reads it; the
  // output to the end (statement 4 = after the last); inputs and params are external.
  struct Life {
    std::string tensor;
    bool external;
    int first, last;
    std::int64_t bytes;
  };
  const Life lives[] = {{"x", true, -1, 0, 1024 * 256 * 4}, {"w2", true, -1, 1, 256 * 64 * 4},
                        {"h1", false, 0, 1, 1024 * 256 * 4}, {"h2", false, 1, 2, 1024 * 64 * 4},
                        {"sq", false, 2, 3, 1024 * 64 * 4},  {"loss", false, 3, 4, 4}};
  for (const Life& l : lives) {
    CAPTURE(l.tensor);
    const ProgramBuffer& b = p.buffers.at(static_cast<std::size_t>(tensor(p, l.tensor).buffer));
    CHECK(b.external == l.external);
    CHECK(b.first_use == l.first);
    CHECK(b.last_use == l.last);
    CHECK(b.bytes == l.bytes);
  }
}

TEST_CASE("program plan: overrides and given tensors set the lengths of the one environment", "[program]") {
  const std::string text = test::read_model("lecture2.ein");
  ProgramOptions o;
  o.axes = {{"B", 8}, {"K", 3}};
  const ProgramPlan a = plan_text(text, o);
  CHECK(a.axes_text() == "B=8 D=256 E=256 K=3");
  CHECK(tensor(a, "h2").shape == Shape{8, 3});
  // A given tensor's shape binds its single-axis dims; its dtype is the tensor's.
  o.axes = {{"K", 3}};
  o.given = {{"x", {5, 7}, DType::f64, "x.npy"}, {"w1", {7, 2}, DType::f64, "w1.npy"}};
  o.dtype = DType::f64;  // w2, not given: the default
  const ProgramPlan b = plan_text(text, o);
  CHECK(b.axes_text() == "B=5 D=7 E=2 K=3");
  CHECK(tensor(b, "x").dtype == DType::f64);
  CHECK(tensor(b, "w2").shape == Shape{2, 3});
  // --dtype: tensors declared without one.
  o = {};
  o.dtype = DType::bf16;
  CHECK(tensor(plan_text(text, o), "loss").dtype == DType::bf16);
}

TEST_CASE("program plan: a view shares its input's buffer and the next statement plans on its strides",
          "[program]") {
  const ProgramPlan p = plan_text(
      "axes B=2 S=3 H=4 K=5\n"
      "param x: B S (H K)\n"
      "q = rearrange(x, \"B S (H K) -> B H S K\")\n"
      "s = einsum(q, q, \"B H S K, B H T K -> B H S T\", T=3)\n");
  const ProgramTensor& x = tensor(p, "x");
  const ProgramTensor& q = tensor(p, "q");
  CHECK(q.buffer == x.buffer);
  CHECK(q.shape == Shape{2, 4, 3, 5});
  CHECK(q.layout.strides == Strides{60, 5, 20, 1});  // a permuted view of x
  CHECK(q.dims == std::vector<std::string>{"B", "H", "S", "K"});
  const Plan& s = p.statements[1].plan;
  CHECK(s.value(0).layout.strides == q.layout.strides);
  CHECK(p.buffers.at(static_cast<std::size_t>(x.buffer)).last_use == 1);  // read through the view
  CHECK(tensor(p, "s").requires_grad);
}

TEST_CASE("program plan: semantic errors, with line:col, caret and a note at the other place", "[program][errors]") {
  struct Row {
    std::string text;
    std::size_t line, column;
    std::string reason;
    std::size_t note_line = 0, note_column = 0;
    std::string note = "";
  };
  const std::string head = "axes B=4 D=3 E=5\ninput x: B D\nparam w: D E\n";
  // clang-format off
  const std::vector<Row> rows = {
      // a length that disagrees with the statement that made the tensor, naming both lines
      {head + "h = einsum(x, w, \"B D, D E -> B E\")\ng = map(h, \"B D -> B D\", \"exp\")", 5, 15,
       "axis 'D' is 3 (line 1) but dim 1 of 'h' is 5 (E, line 4)", 4, 1, "'h' is made here"},
      {head + "h = map(w, \"E D -> E D\", \"exp\")", 4, 13, "axis 'E' is 5 (line 1) but dim 0 of 'w' is 3 (D, line 3)",
       3, 7, "'w' is declared here"},
      {head + "h = repeat(x, \"B (D E) -> B D E\")", 4, 18, "(D E) is 15 (D=3, line 1; E=5, line 1) but dim 1 of 'x' is 3 (D, line 2)",
       2, 7, "'x' is declared here"},
      {head + "h = reduce(x, \"B 2 -> B\", \"sum\")", 4, 18, "the anonymous axis is 2 but dim 1 of 'x' is 3 (D, line 2)",
       2, 7, "'x' is declared here"},
      {head + "h = rearrange(x, \"B () -> B\")", 4, 21, "'()' is 1 but dim 1 of 'x' is 3 (D, line 2)",
       2, 7, "'x' is declared here"},
      // an operand with as many dims as its tensor (an ellipsis takes the rest)
      {head + "h = einsum(x, w, \"B D E, D E -> B\")", 4, 19, "'x' has 2 dims (B D) but the operand 'B D E' has 3",
       2, 7, "'x' is declared here"},
      {head + "h = reduce(x, \"B D E ... -> B\", \"sum\")", 4, 16, "'x' has 2 dims (B D) but the operand 'B D E ...' has 3 and '...'",
       2, 7, "'x' is declared here"},
      // one dtype per statement; a param is a float
      {"axes B=4\ninput x: B bf16\nparam w: B\nh = map(x, w, \"B, B -> B\", \"mul\")", 4, 12,
       "'w' is f32 but 'x' is bf16: the tensors of a statement have one dtype"},
      {"axes B=4\nparam w: B i64\nh = map(w, \"B -> B\", \"exp\")", 2, 12,
       "param 'w' is i64: a param is trained, so its dtype is a float (f64 f32 f16 bf16 f8_e4m3 f8_e5m2)"},
      // the planner's own rules, at the op
      {head + "h = reduce(x, \"B D -> B\", \"any\")", 4, 5,
       "reduce 'any' on f32: any and all take bool tensors (compare first, or use max/min)"},
      {"axes B=4\ninput x: B i32\nh = map(x, \"B -> B\", \"exp\")", 3, 5, "map 'exp' needs a floating dtype, not i32"},
      // a normalization's gain over other dims than the bracketed ones
      {head + "param g: B\nh = layer_norm(x, g, \"B [D]\")", 5, 5,
       "layer_norm's gain (tensor 2) has shape [4] but the bracketed dims of x are [3]: one element per position along them"},
  };
  // clang-format on
  for (const Row& r : rows) {
    CAPTURE(r.text);
    try {
      plan_text(r.text);
      FAIL("no error");
    } catch (const ProgramError& e) {
      CAPTURE(e.what());
      CHECK_THAT(e.reason(), Catch::StartsWith(r.reason));
      CHECK(e.place().line == r.line);
      CHECK(e.place().column == r.column);
      CHECK_THAT(std::string(e.what()), Catch::StartsWith("m.ein:" + std::to_string(r.line) + ":" +
                                                          std::to_string(r.column) + ": "));
      CHECK(e.note() == r.note);
      if (r.note_line == 0) continue;
      REQUIRE(e.note_place().has_value());
      CHECK(e.note_place()->line == r.note_line);
      CHECK(e.note_place()->column == r.note_column);
    }
  }
}

TEST_CASE("program plan: the caret of a length error is under the pattern's term", "[program][errors]") {
  try {
    plan_text("axes B=4 D=3 E=5\ninput x: B D\nparam w: D E\nh = einsum(x, w, \"B D, D E -> B E\")\n"
              "g = map(h, \"B D -> B D\", \"exp\")\n");
    FAIL("no error");
  } catch (const ProgramError& e) {
    CHECK(std::string(e.what()) ==
          "m.ein:5:15: axis 'D' is 3 (line 1) but dim 1 of 'h' is 5 (E, line 4)\n"
          "  g = map(h, \"B D -> B D\", \"exp\")\n"
          "                ^\n"
          "m.ein:4:1: note: 'h' is made here\n"
          "  h = einsum(x, w, \"B D, D E -> B E\")\n"
          "  ^");
  }
}

TEST_CASE("program plan: lengths from outside that disagree name both sources", "[program][errors]") {
  const std::string text = "axes B=4 D=3 H=2 K=2\ninput x: B D\nparam w: D (H K)\nh = einsum(x, w, \"B D, D (H K) -> B H K\")\n";
  struct Row {
    AxisLengths axes;
    std::vector<GivenTensor> given;
    std::string message;  // what() starts with it
  };
  const std::vector<Row> rows = {
      {{{"Q", 3}}, {}, "unknown axis 'Q' in Q=3: the program's axes are B, D, H, K"},
      {{{"B", 0}}, {}, "axis 'B' given as B=0: an axis length is positive"},
      {{{"B", 5}}, {{"x", {4, 3}, DType::f32, "x.npy"}},
       "m.ein:2:10: x.npy gives axis 'B' length 4 (dim 0 of input x: B D) but it is 5 (given as B=5)"},
      {{}, {{"x", {4, 3}, DType::f32, "x.npy"}, {"w", {6, 4}, DType::f32, "w.npy"}},
       "m.ein:3:10: w.npy gives axis 'D' length 6 (dim 0 of param w: D (H K)) but it is 3 (from x.npy)"},
      {{}, {{"w", {3, 5}, DType::f32, "w.npy"}},
       "m.ein:3:12: dim 1 of w.npy is 5 but it is (H K) = 4: H=2 (line 1), K=2 (line 1)"},
      {{}, {{"x", {4, 3, 1}, DType::f32, "x.npy"}},
       "m.ein:2:7: x.npy has 3 dims [4, 3, 1] but input 'x' is declared with 2 (B D)"},
      {{}, {{"x", {0, 3}, DType::f32, "x.npy"}},
       "m.ein:2:10: x.npy gives axis 'B' length 0 (dim 0 of input x: B D): an axis length is positive"},
      {{}, {{"h", {4, 2, 2}, DType::f32, "h.npy"}},
       "'h' names no input or param of the program: the program computes it (inputs: x; params: w)"},
      {{}, {{"x", {4, 3}, DType::f32, "a.npy"}, {"x", {4, 3}, DType::f32, "b.npy"}}, "tensor 'x' is given twice"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.message);
    ProgramOptions o;
    o.axes = r.axes;
    o.given = r.given;
    CHECK_THROWS_WITH(plan_text(text, o), Catch::StartsWith(r.message));
  }
  // A declared dtype must match the given tensor's.
  ProgramOptions o;
  o.given = {{"x", {4, 3}, DType::f64, "x.npy"}};
  CHECK_THROWS_WITH(plan_text("axes B=4 D=3\ninput x: B D f32\ny = map(x, \"B D -> B D\", \"exp\")\n", o),
                    Catch::StartsWith("m.ein:2:14: x.npy is f64 but input 'x' is declared f32"));
}
