// CompiledProgram: the model files against numpy's float64 references (program_reference.inc,
// from program_reference.py), programs of every op against a naive f64 interpreter built on
// reference.hpp, in f64 and f32; the measured peak never above the predicted one, memory
// reused; compile once, run many; outputs that are views; errors; ProgramBuilder.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "einexpr/codegen/memory_plan.hpp"
#include "einexpr/einexpr.hpp"
#include "model_files.hpp"
#include "reference.hpp"

using namespace einexpr;

namespace {

struct Array {
  Shape shape;
  std::vector<double> values;
};
struct ModelCase {
  std::string file;
  AxisLengths sizes;
  std::vector<std::pair<std::string, Array>> inputs;
  std::vector<std::pair<std::string, Array>> outputs;
};
constexpr double inf_v = std::numeric_limits<double>::infinity();
#include "program_reference.inc"

using Inputs = std::map<std::string, Tensor, std::less<>>;

/// The model file with `outputs` among its outputs (an output line added for those it lacks).
ast::Program with_outputs(const std::string& file, const std::vector<std::string>& outputs) {
  std::string text = test::read_model(file);
  const ast::Program p = parse_program(text, file);
  std::vector<std::string> named;  // by the file's output lines (without one, the last statement is the output)
  for (const ast::Item& item : p.items)
    if (const auto* d = std::get_if<ast::OutputDecl>(&item))
      for (const ast::Identifier& i : d->names) named.push_back(i.name);
  std::string more;
  for (const std::string& o : outputs)
    if (std::find(named.begin(), named.end(), o) == named.end()) more += " " + o;
  return more.empty() ? p : parse_program(text + "\noutput" + more, file);
}

/// Every statement of `plan` evaluated by the naive references, in f64.
std::map<std::string, reference::Result> evaluate(const ProgramPlan& plan, const Inputs& inputs) {
  std::map<std::string, Tensor> env;
  for (const auto& [name, t] : inputs) env[name] = t.to(DType::f64);
  std::map<std::string, reference::Result> out;
  for (const PlannedStatement& st : plan.statements) {
    std::vector<Tensor> xs;
    for (int in : st.inputs) xs.push_back(env.at(plan.tensor(in).name));
    const AxisLengths& l = st.spec.lengths;
    reference::Result r;
    switch (st.spec.op()) {
      case Op::einsum: r = reference::einsum(xs, st.pattern, l); break;
      case Op::rearrange: r = reference::rearrange(xs[0], st.pattern, l); break;
      case Op::reduce: r = reference::reduce(xs[0], st.pattern, st.spec.get_if<ReduceOptions>()->reduction, l); break;
      case Op::repeat: r = reference::repeat(xs[0], st.pattern, l); break;
      case Op::map:
        if (const auto* f = std::get_if<UnaryOp>(&st.spec.get_if<MapOptions>()->function)) {
          r = {xs[0].shape(), xs[0].to_vector<double>()};
          for (double& v : r.values) v = reference::unary(*f, v);
        } else {
          r = reference::binary(xs[0], xs[1], st.pattern, std::get<BinaryOp>(st.spec.get_if<MapOptions>()->function), l);
        }
        break;
      case Op::normalize: {  // "B S [D]": the bracketed axes are normalized along, the others kept
        std::string dims, kept;
        bool inside = false;
        for (const char ch : st.pattern) {
          if (ch == '[' || ch == ']') {
            inside = ch == '[';
            continue;
          }
          dims += ch;
          if (!inside) kept += ch;
        }
        const auto* n = st.spec.get_if<NormalizeOptions>();
        r = reference::normalize(xs[0], dims, kept, n->kind, n->eps, l);
        break;
      }
      case Op::get_at: case Op::add_at: case Op::cross_entropy: case Op::pack: case Op::unpack: case Op::dropout:
        FAIL("no f64 reference for " << name(st.spec.op()) << " here: test_indexed.cpp checks it against torch");
        break;
    }
    env[st.name] = Tensor::from_vector(r.values, r.shape);
    out[st.name] = r;
  }
  return out;
}

Inputs random_inputs(const ProgramPlan& plan, DType dtype, std::uint64_t seed) {
  Inputs in;
  for (const ProgramTensor& t : plan.tensors)
    if (t.role == TensorRole::input || t.role == TensorRole::param) in[t.name] = Tensor::randn(t.shape, dtype, seed++);
  return in;
}

const std::string views_program =
    "axes A=3 B=4 Q=2 R=2\n"
    "param w: A B\ninput v: B\ninput m: A A\ninput n: A Q\n"
    "t = rearrange(w, \"A B -> B A\")\n"         // a view of a param
    "u = einsum(t, v, \"B A, B -> A\")\n"        // on the view's strides
    "d = einsum(m, \"A A -> A\")\n"              // a diagonal: a view of an input
    "e = map(u, d, \"A, A -> A\", \"maximum\")\n"
    "r = repeat(e, \"A -> A R\")\n"
    "s = reduce(r, \"A R -> R\", \"prod\")\n"
    "z = einsum(w, v, n, \"A B, B, A Q -> Q\")\n"  // three operands
    "mx = reduce(w, \"A B ->\", \"max\")\n"        // 0-d
    "g = map(z, s, \"Q, R -> Q R\", \"sub\")\n"
    "output t s z mx d g\n";

// Every normalization, along one axis, two, a leading one, and after a transposing view.
const std::string norm_program =
    "axes B=2 S=3 T=4 D=5\n"
    "input x: B S D\ninput s: B S T\nparam g: D\n"
    "ln = layer_norm(x, \"B S [D]\")\n"
    "lg = map(ln, g, \"B S D, D -> B S D\", \"mul\")\n"
    "rn = rms_norm(x, \"B [S D]\")\n"
    "p = softmax(s, \"B S [T]\")\n"
    "st = rearrange(s, \"B S T -> B T S\")\n"
    "lp = log_softmax(st, \"B T [S]\")\n"
    "q = softmax(lg, \"[B] S D\")\n"
    "output lg rn p lp q\n";

}  // namespace

TEST_CASE("program run: the model files against numpy's float64 references", "[program]") {
  for (const ModelCase& mc : model_cases) {
    CAPTURE(mc.file);
    std::vector<std::string> names;
    for (const auto& [name, a] : mc.outputs) names.push_back(name);
    ProgramOptions o;
    o.axes = mc.sizes;
    const CompiledProgram m(with_outputs(mc.file, names), o);
    Inputs in;
    for (const auto& [name, a] : mc.inputs) in[name] = Tensor::from_vector(a.values, a.shape).to(DType::f32);
    const ProgramRun r = m.run(in);
    for (const auto& [name, a] : mc.outputs) {
      CAPTURE(name);
      const Tensor& got = r[name];
      CHECK(got.dtype() == DType::f32);
      CHECK(reference::max_rel_error(got, {a.shape, a.values}) < 1e-5);
    }
    CHECK(r.peak_bytes_measured <= m.peak_bytes_predicted());
    CHECK(r.peak_bytes_measured > 0);
  }
}

TEST_CASE("program run: programs of every op against the naive f64 interpreter", "[program]") {
  struct Row {
    ast::Program program;
    AxisLengths sizes;
  };
  const std::vector<Row> rows = {
      {with_outputs("lecture2.ein", {"h1", "h2", "sq", "loss"}), {{"B", 5}, {"D", 4}, {"E", 3}, {"K", 2}}},
      {with_outputs("gpt2_block.ein", {"y", "p", "ln1", "q", "o1"}),
       {{"B", 2}, {"S", 3}, {"T", 3}, {"D", 8}, {"H", 2}, {"K", 4}, {"F", 6}}},
      {parse_program(views_program, "views.ein"), {}},
      {parse_program(norm_program, "norm.ein"), {}},
      {with_outputs("gpt2_block_norm.ein", {"y", "p", "xn1", "ln2"}),
       {{"B", 2}, {"S", 3}, {"T", 3}, {"D", 8}, {"H", 2}, {"K", 4}, {"F", 6}}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.program.file);
    for (const DType dtype : {DType::f64, DType::f32}) {
      CAPTURE(name(dtype));
      ProgramOptions o;
      o.axes = row.sizes;
      o.dtype = dtype;
      const CompiledProgram m(row.program, o);
      const Inputs in = random_inputs(m.plan(), dtype, 11);
      const std::map<std::string, reference::Result> want = evaluate(m.plan(), in);
      const ProgramRun r = m.run(in);
      REQUIRE(r.outputs.size() == m.plan().outputs.size());
      for (const auto& [name, got] : r.outputs) {
        CAPTURE(name);
        CHECK(reference::max_rel_error(got, want.at(name)) < (dtype == DType::f64 ? 1e-12 : 1e-4));
      }
      CHECK(r.peak_bytes_measured <= m.peak_bytes_predicted());
    }
  }
}

TEST_CASE("program run: the GPT-2 block with normalization statements computes what the composed one does",
          "[program]") {
  ProgramOptions o;
  o.axes = {{"B", 2}, {"S", 5}, {"T", 5}, {"D", 16}, {"H", 2}, {"K", 8}, {"F", 24}};
  o.dtype = DType::f64;
  const CompiledProgram composed(with_outputs("gpt2_block.ein", {"y", "p"}), o);
  const CompiledProgram normed(with_outputs("gpt2_block_norm.ein", {"y", "p"}), o);
  Inputs in = random_inputs(composed.plan(), DType::f64, 21);
  std::vector<double> mask(5 * 5, 0.0);  // causal: -inf above the diagonal
  for (int s = 0; s < 5; ++s)
    for (int t = s + 1; t < 5; ++t)
      mask[static_cast<std::size_t>(s * 5 + t)] = -std::numeric_limits<double>::infinity();
  in["mask"] = Tensor::from_vector(mask, {5, 5});
  in["scale"] = Tensor::from_vector(std::vector<double>(2, 1 / std::sqrt(8.0)), {2});
  const ProgramRun a = composed.run(in);
  const ProgramRun b = normed.run(in);
  // The same up to layer_norm's eps (1e-5 against variances near 1; the composed one has
  // none), which the MLP's random weights amplify: a wrong statement differs by O(1).
  CHECK(reference::max_rel_error(b["p"], {a["p"].shape(), a["p"].to_vector<double>()}) < 1e-4);
  CHECK(reference::max_rel_error(b["y"], {a["y"].shape(), a["y"].to_vector<double>()}) < 1e-3);
  CHECK(reference::max_rel_error(b["y"], {a["y"].shape(), a["y"].to_vector<double>()}) > 0);  // eps is applied
  // Fewer statements, and no row statistics kept between them.
  CHECK(normed.plan().statements.size() + 15 == composed.plan().statements.size());
  CHECK(normed.peak_bytes_predicted() <= composed.peak_bytes_predicted());
}

TEST_CASE("program run: memory is planned by liveness and reused", "[program]") {
  ProgramOptions o;
  o.axes = {{"B", 2}, {"S", 8}, {"T", 8}, {"D", 16}, {"H", 2}, {"K", 8}, {"F", 32}};
  const CompiledProgram m(parse_program(test::read_model("gpt2_block.ein"), "gpt2_block.ein"), o);
  // The arena is far below the sum of its buffers (each statement allocating its own), and no
  // smaller than the most bytes alive at once.
  CHECK(m.arena_bytes() * 3 < m.unshared_bytes());
  const ProgramPlan& p = m.plan();
  std::vector<Lifetime> lives;
  for (const ProgramBuffer& b : p.buffers)
    if (!b.external && b.last_use < static_cast<int>(p.statements.size())) lives.push_back({b.bytes, b.first_use, b.last_use});
  CHECK(m.arena_bytes() >= live_peak(lives));
  // y is the one output: its buffer, 2·8·16 f32, is the rest of the prediction.
  CHECK(m.peak_bytes_predicted() == m.arena_bytes() + 2 * 8 * 16 * 4);
  const Inputs in = random_inputs(p, DType::f32, 3);
  const ProgramRun r = m.run(in);
  CHECK(r.peak_bytes_measured <= m.peak_bytes_predicted());
  CHECK(r.peak_bytes_measured >= m.arena_bytes());
}

TEST_CASE("program run: compile once, run many times", "[program]") {
  ProgramOptions o;
  o.axes = {{"B", 6}, {"D", 5}, {"E", 4}, {"K", 3}};
  const CompiledProgram m(with_outputs("lecture2.ein", {"h2", "loss"}), o);
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const Inputs in = random_inputs(m.plan(), DType::f32, seed * 10);
    const std::map<std::string, reference::Result> want = evaluate(m.plan(), in);
    const ProgramRun r = m.run(in);
    CHECK(reference::max_rel_error(r["h2"], want.at("h2")) < 1e-5);
    CHECK(reference::max_rel_error(r["loss"], want.at("loss")) < 1e-5);
    CHECK(r["loss"].dim() == 0);
    CHECK(r.peak_bytes_measured <= m.peak_bytes_predicted());
  }
  // Non-contiguous inputs are made contiguous first.
  Inputs in = random_inputs(m.plan(), DType::f32, 5);
  in["x"] = Tensor::randn({5, 6}, DType::f32, 9).transpose(0, 1);
  const ProgramRun r = m.run(in);
  CHECK(reference::max_rel_error(r["loss"], evaluate(m.plan(), in).at("loss")) < 1e-5);
}

TEST_CASE("program run: an output that is a view shares its input's storage", "[program]") {
  const CompiledProgram m(parse_program(views_program, "views.ein"));
  const Inputs in = random_inputs(m.plan(), DType::f32, 21);
  const ProgramRun r = m.run(in);
  CHECK(r["t"].same_storage(in.at("w")));
  CHECK(r["d"].same_storage(in.at("m")));
  CHECK(r["t"].strides() == Strides{1, 4});
  CHECK(r["mx"].dim() == 0);
  CHECK(r["g"].shape() == Shape{2, 2});
}

TEST_CASE("program run: inputs that do not fit are refused, naming the tensor", "[program][errors]") {
  ProgramOptions o;
  o.axes = {{"B", 4}, {"D", 3}, {"E", 2}, {"K", 2}};
  const CompiledProgram m(parse_program(test::read_model("lecture2.ein"), "lecture2.ein"), o);
  const Inputs good = random_inputs(m.plan(), DType::f32, 1);
  struct Row {
    std::string tensor;
    Tensor value;  // undefined: left out
    std::string message;
  };
  const std::vector<Row> rows = {
      {"w2", {}, "missing param 'w2'"},
      {"x", Tensor::zeros({4, 4}), "input 'x' has shape [4, 4] but the program was compiled for 'x' [B=4, D=3] f32"},
      {"w1", Tensor::zeros({3, 2}, DType::f64), "param 'w1' is f64 but the program was compiled for 'w1' [D=3, E=2] f32"},
      {"h1", Tensor::zeros({4, 2}), "'h1' names no input or param of the program (the program computes it)"},
      {"zz", Tensor::zeros({1}), "'zz' names no input or param of the program"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.message);
    Inputs in = good;
    if (r.value.defined()) in[r.tensor] = r.value;
    else in.erase(r.tensor);
    CHECK_THROWS_WITH(m.run(in), r.message);
  }
  CHECK_THROWS_WITH(m.run(good)["h1"], "'h1' is not an output of the program (outputs: loss)");
}

TEST_CASE("program builder: a program built statement by statement", "[program]") {
  ProgramBuilder b("built.ein");
  b.axes({{"B", 1024}, {"D", 256}, {"E", 256}, {"K", 64}})
      .input("x", "B D")
      .param("w1", "D E")
      .param("w2", "E K")
      .statement("h1", "einsum", {"x", "w1"}, "B D, D E -> B E")
      .statement("h2", "einsum", {"h1", "w2"}, "B E, E K -> B K")
      .statement("sq", "map", {"h2"}, "B K -> B K", "square")
      .statement("loss", "reduce", {"sq"}, "B K ->", "mean");
  const ast::Program built = b.build();
  const ast::Program file = parse_program(test::read_model("lecture2.ein"));
  CHECK(ast::to_string(built) == ast::to_string(file));
  const ProgramCost c = cost(built, {{"B", 32}});
  CHECK(c.forward_flops == cost(file, {{"B", 32}}).forward_flops);
  CHECK(c.forward_flops == Count(2 * 32 * 256 * 256 + 2 * 32 * 256 * 64 + 2 * 32 * 64));
  // A fault points at the line the call wrote.
  ProgramBuilder bad;
  bad.axes({{"B", 2}}).input("x", "B").statement("y", "map", {"z"}, "B -> B", "exp");
  CHECK_THROWS_WITH(bad.build(), Catch::StartsWith("<built>:3:9: unknown tensor 'z'"));
  CHECK_THROWS_WITH(ProgramBuilder().input("x\ny", "B"), "ProgramBuilder: the tensor name 'x\ny' holds a line break");
  CHECK_THROWS_WITH(ProgramBuilder().statement("y", "map", {"x"}, "B\" -> B", "exp"),
                    "ProgramBuilder: the pattern 'B\" -> B' holds a '\"'");
  ProgramBuilder out;
  out.axes({{"B", 2}}).param("w", "B").statement("a", "map", {"w"}, "B -> B", "exp").output({"w", "a"});
  CHECK(CompiledProgram(out.build()).plan().outputs.size() == 2);
}
