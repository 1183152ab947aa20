// cost(ProgramPlan): the lecture's two-layer model counted by hand (forward, backward of
// exactly the gradients toward the params, memory through forward and backward event by
// event, optimizers, 6·N·P), accumulation, programs without params, and the GPT-2 block.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/codegen/program_cost.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/parser/program.hpp"
#include "model_files.hpp"

using namespace einexpr;

namespace {

ProgramCost cost_text(const std::string& text, const AxisLengths& axes = {}, const ProgramCostOptions& o = {},
                      DType dtype = DType::f32) {
  ProgramOptions po;
  po.axes = axes;
  po.dtype = dtype;
  return cost(plan_program(parse_program(text, "m.ein"), po), o);
}

const StatementCost& statement(const ProgramCost& c, const std::string& name) {
  const auto it = std::find_if(c.statements.begin(), c.statements.end(), [&](const StatementCost& s) { return s.name == name; });
  REQUIRE(it != c.statements.end());
  return *it;
}

std::vector<std::string> gradient_tensors(const StatementCost& s) {
  std::vector<std::string> names;
  for (const StatementGradient& g : s.gradients) names.push_back(g.tensor);
  return names;
}

struct Sizes {
  std::uint64_t B, D, E, K;
};

}  // namespace

TEST_CASE("program cost: the lecture's model, statement by statement, at two sets of sizes", "[program][cost]") {
  const std::string text = test::read_model("lecture2.ein");
  for (const Sizes z : {Sizes{1024, 256, 256, 64}, Sizes{64, 32, 48, 16}}) {
    const auto [B, D, E, K] = z;
    CAPTURE(B, D, E, K);
    const ProgramCost c = cost_text(text, {{"B", B}, {"D", D}, {"E", E}, {"K", K}});
    struct Row {
      std::string name;
      std::uint64_t forward, backward;
      std::vector<std::string> gradients;
    };
    const Row rows[] = {
        {"h1", 2 * B * D * E, 2 * B * D * E, {"w1"}},         // dw1 only: x is an input, not 4·B·D·E
        {"h2", 2 * B * E * K, 4 * B * E * K, {"h1", "w2"}},   // dh1 and dw2
        {"sq", B * K, 2 * B * K, {"h2"}},                     // x·x; dY · 2·X
        {"loss", B * K, 1, {"sq"}},                           // B·K-1 adds + 1 divide; dY / n on the scalar,
                                                              // broadcast as a view
    };
    std::uint64_t forward = 0, backward = 0;
    for (const Row& r : rows) {
      CAPTURE(r.name);
      const StatementCost& s = statement(c, r.name);
      CHECK(s.forward.flops == Count(r.forward));
      CHECK(s.backward_flops == Count(r.backward));
      CHECK(gradient_tensors(s) == r.gradients);
      forward += r.forward;
      backward += r.backward;
    }
    CHECK(c.forward_flops == Count(forward));
    CHECK(c.backward_flops == Count(backward));
    CHECK(c.accumulate_flops == Count(0));
    const std::uint64_t P = D * E + E * K;
    CHECK(c.params == Count(P));
    CHECK(c.optimizer_flops == Count(2 * P));  // sgd
    CHECK(c.step_flops == Count(forward + backward + 2 * P));
    CHECK(statement(c, "h1").gradients[0].expression == "einsum(dh1, x, 'B E, B D -> D E')");

    // 6·N·P: N = B, and the difference is dX of the first layer plus the ops without params.
    const SixNP& e = c.estimate;
    CHECK(e.n == Approx(static_cast<double>(B)));
    CHECK(e.n_exact);
    CHECK(e.p == Count(P));
    CHECK(e.rule == Count(6 * B * P));
    CHECK(e.exact == Count(forward + backward));
    CHECK(e.skipped == Count(2 * B * D * E));
    REQUIRE(e.parts.size() == 2);
    CHECK(e.parts[0].what == "contractions that read a param");
    CHECK(e.parts[0].exact == Count(6 * B * P - 2 * B * D * E));
    CHECK(e.parts[0].rule == Count(6 * B * P));
    CHECK(e.parts[1].what == "statements that read no param");
    CHECK(e.parts[1].exact == Count(B * K + 2 * B * K + B * K + 1));

    // Memory (f32, sgd), event by event. Forward: h1 [0..], h2 [1..], sq [2, 3], loss [3, end];
    // backward: 4 dsq (and the seed dloss), 5 dh2, 6 dh1, 7 dw2, 8 dw1; h1 is kept for dw2
    // (event 7) and h2 for dh2 (event 5); a gradient lives until its statement's backward
    // has read it, a param's to the end.
    const std::uint64_t live[] = {
        B * E, B * E + B * K, B * E + 2 * B * K, B * E + 2 * B * K + 1,  // forward 0..3
        B * E + 2 * B * K + 2,                                            // 4: h1 h2 loss dloss dsq
        B * E + 3 * B * K + 1,                                            // 5: h1 h2 loss dsq dh2
        2 * B * E + B * K + 1,                                            // 6: h1 loss dh2 dh1
        2 * B * E + B * K + E * K + 1,                                    // 7: + dw2
        B * E + E * K + D * E + 1,                                        // 8: loss dh1 dw2 dw1
    };
    const std::uint64_t peak = *std::max_element(std::begin(live), std::end(live));
    const ProgramMemory& m = c.memory;
    CHECK(m.params_bytes == Count(4 * P));
    CHECK(m.grads_bytes == Count(4 * P));
    CHECK(m.optimizer_bytes == Count(0));
    CHECK(m.inputs_bytes == Count(4 * B * D));
    CHECK(m.activations_bytes == Count(4 * (B * E + B * K)));
    // what is kept, and why: h1 for dw2, h2 for the square's derivative (x is an input)
    REQUIRE(m.kept.size() == 2);
    CHECK(m.kept[0].tensor == "h1");
    CHECK(m.kept[0].shape == "[B=" + std::to_string(B) + ", E=" + std::to_string(E) + "] f32");
    CHECK(m.kept[0].bytes == Count(4 * B * E));
    CHECK(m.kept[0].needed_by == std::vector<std::string>{"einsum(dh2, h1, 'B K, B E -> E K')"});
    CHECK(m.kept[1].tensor == "h2");
    CHECK(m.kept[1].bytes == Count(4 * B * K));
    CHECK(m.kept[1].needed_by == std::vector<std::string>{"dsq · square'(h2)"});
    CHECK(m.forward_peak_bytes == Count(4 * (B * E + B * K)));
    CHECK(m.peak_bytes == Count(4 * peak + 4 * P + 4 * B * D));
  }
}

TEST_CASE("program cost: optimizers and mixed precision", "[program][cost]") {
  const std::string text = test::read_model("lecture2.ein");
  const std::uint64_t P = 256 * 256 + 256 * 64;
  struct Row {
    Optimizer optimizer;
    bool mixed;
    DType dtype;
    std::uint64_t flops_per_param, state_bytes_per_param, update_bytes_per_param;
  };
  const Row rows[] = {
      {Optimizer::sgd, false, DType::f32, 2, 0, 4 + 8},
      {Optimizer::momentum, false, DType::f32, 4, 4, 4 + 8 + 8},
      {Optimizer::adam, false, DType::f32, 14, 8, 4 + 8 + 16},
      {Optimizer::adam, false, DType::bf16, 14, 8, 2 + 4 + 16},
      {Optimizer::adam, true, DType::bf16, 14, 12, 2 + 4 + 16 + 8},  // + f32 master weights
      {Optimizer::adamw, false, DType::f32, 14, 8, 4 + 8 + 16},
      {Optimizer::sgd, true, DType::f32, 2, 0, 4 + 8},                // f32 params have none
  };
  for (const Row& r : rows) {
    CAPTURE(name(r.optimizer), r.mixed, name(r.dtype));
    ProgramCostOptions o;
    o.optimizer = r.optimizer;
    o.mixed_precision = r.mixed;
    const ProgramCost c = cost_text(text, {}, o, r.dtype);
    CHECK(c.optimizer_flops == Count(r.flops_per_param * P));
    CHECK(c.memory.optimizer_bytes == Count(r.state_bytes_per_param * P));
    CHECK(c.optimizer_bytes == Count(r.update_bytes_per_param * P));
    CHECK(c.memory.params_bytes == Count(element_size(r.dtype) * P));
    CHECK(c.memory.grads_bytes == c.memory.params_bytes);
    CHECK(c.timing.optimizer_s > 0);
  }
  CHECK(parse_optimizer("adam") == Optimizer::adam);
  CHECK_THROWS_WITH(parse_optimizer("lion"), "unknown optimizer 'lion' (expected sgd, momentum, adam or adamw)");
}

TEST_CASE("program cost: a tensor read twice has its gradients added", "[program][cost]") {
  const std::uint64_t B = 4, D = 3;
  const ProgramCost c = cost_text(
      "axes B=4 D=3\ninput x: B D\nparam w: D\n"
      "a = map(x, w, \"B D, D -> B D\", \"mul\")\n"
      "b = map(a, a, \"B D, B D -> B D\", \"add\")\n"
      "loss = reduce(b, \"B D ->\", \"sum\")\n");
  // loss: dB is dY broadcast (a view); b: dA = dY twice (views), added: B·D; a: dw = sum over
  // B of dY · x: B·D multiplies and B·D - D adds. x gets nothing.
  CHECK(statement(c, "loss").backward_flops == Count(0));
  CHECK(gradient_tensors(statement(c, "b")) == std::vector<std::string>{"a", "a"});
  CHECK(statement(c, "b").backward_flops == Count(0));
  CHECK(gradient_tensors(statement(c, "a")) == std::vector<std::string>{"w"});
  CHECK(statement(c, "a").backward_flops == Count(2 * B * D - D));
  CHECK(c.accumulate_flops == Count(B * D));
  CHECK(c.backward_flops == Count(2 * B * D - D + B * D));
  CHECK(c.forward_flops == Count(B * D + B * D + B * D - 1));
}

TEST_CASE("program cost: an output that a later statement reads adds that gradient to its seed", "[program][cost]") {
  const ProgramCost c = cost_text("axes D=3\nparam w: D\na = map(w, \"D -> D\", \"exp\")\n"
                                  "b = map(a, \"D -> D\", \"neg\")\noutput a b\n");
  // b: da = -dY (3); a's dY is its seed plus that: 3 adds; a: dw = dY · Y (3).
  CHECK(statement(c, "b").backward_flops == Count(3));
  CHECK(statement(c, "a").backward_flops == Count(3));
  CHECK(c.accumulate_flops == Count(3));
  CHECK(c.backward_flops == Count(9));
}

TEST_CASE("program cost: gradients flow only from the outputs toward the params", "[program][cost]") {
  SECTION("no param: no backward, no gradients, no optimizer") {
    const ProgramCost c = cost_text("axes B=4 D=3\ninput x: B D\ny = reduce(x, \"B D -> B\", \"max\")\n");
    CHECK(c.backward_flops == Count(0));
    CHECK(c.statements[0].gradients.empty());
    CHECK(c.params == Count(0));
    CHECK(c.memory.grads_bytes == Count(0));
    CHECK(c.memory.activations_bytes == Count(0));
    CHECK(c.estimate.rule == Count(0));
    CHECK(c.estimate.n == 0);
  }
  SECTION("a param no output depends on gets no gradient") {
    const ProgramCost c = cost_text(
        "axes D=3\ninput x: D\nparam w: D\nparam u: D\n"
        "dead = map(u, \"D -> D\", \"exp\")\n"
        "y = map(x, w, \"D, D -> D\", \"mul\")\n"
        "output y\n");
    CHECK(statement(c, "dead").gradients.empty());
    CHECK(gradient_tensors(statement(c, "y")) == std::vector<std::string>{"w"});
    CHECK(c.params == Count(6));
  }
}

TEST_CASE("program cost: a normalization statement costs what the op costs alone", "[program][cost]") {
  const ProgramCost c = cost_text(
      "axes B=4 D=3 E=5\ninput x: B D\nparam w: D E\n"
      "h = einsum(x, w, \"B D, D E -> B E\")\n"
      "n = layer_norm(h, \"B [E]\")\n"
      "p = softmax(n, \"[B] E\")\n"
      "r = rms_norm(p, \"B [E]\")\n"
      "l = log_softmax(r, \"B [E]\")\n"
      "loss = reduce(l, \"B E ->\", \"sum\")\n");
  const Layout be{{4, 5}, {5, 1}, 0};
  const struct {
    const char* name;
    Normalization kind;
    const char* pattern;
    const char* input;
  } rows[] = {{"n", Normalization::layer_norm, "B [E]", "h"},
              {"p", Normalization::softmax, "[B] E", "n"},
              {"r", Normalization::rms_norm, "B [E]", "p"},
              {"l", Normalization::log_softmax, "B [E]", "r"}};
  for (const auto& row : rows) {
    CAPTURE(row.name);
    const StatementCost& st = statement(c, row.name);
    // eps: torch's default where the normalization takes one
    const ast::Pattern pattern = parse_bracketed(row.pattern);
    const Plan alone =
        plan(OpSpec::normalize(row.kind, default_eps(row.kind)), &pattern, std::span<const Layout>(&be, 1), DType::f32);
    CHECK(st.forward.flops == cost(alone).flops);
    CHECK(st.forward.flops > Count(0));
    CHECK(st.forward.bytes_read == Count(4 * 5 * 4));
    // the gradient flows back toward w through every normalization
    CHECK(gradient_tensors(st) == std::vector<std::string>{row.input});
    CHECK(st.backward_flops == backward_cost(alone).flops);
    CHECK(st.backward_flops > Count(0));
  }
}

TEST_CASE("program cost: the GPT-2 block at GPT-2 small's sizes", "[program][cost]") {
  const ProgramCost c = cost_text(test::read_model("gpt2_block.ein"));
  const std::uint64_t B = 8, S = 1024, T = 1024, D = 768, H = 12, K = 64, F = 3072;
  struct Row {
    std::string name;
    std::uint64_t forward, backward;
  };
  const Row rows[] = {
      {"q0", 2 * B * S * D * H * K, 4 * B * S * D * H * K},  // dln1 and dw_q
      {"s0", 2 * B * H * S * T * K, 4 * B * H * S * T * K},  // dq and dk
      {"o", 2 * B * H * S * T * K, 4 * B * H * S * T * K},   // dp and dv
      {"f0", 2 * B * S * D * F, 4 * B * S * D * F},
      {"xc1", B * S * D, 0},  // layer norm 1 before its gain reads only the input
      {"q", 0, 0},            // a view
  };
  for (const Row& r : rows) {
    CAPTURE(r.name);
    CHECK(statement(c, r.name).forward.flops == Count(r.forward));
    CHECK(statement(c, r.name).backward_flops == Count(r.backward));
  }
  CHECK(statement(c, "q").is_view);  // moves nothing: no time, no bytes in the totals
  CHECK(statement(c, "q").roofline->time_s == 0);
  CHECK_FALSE(statement(c, "q1").is_view);
  const std::uint64_t P = 4 * D * H * K + 2 * D * F + 3 * H * K + F + 6 * D;
  CHECK(c.params == Count(P));
  CHECK(c.estimate.n == Approx(static_cast<double>(B * S)));
  CHECK(c.estimate.n_exact);
  CHECK(c.estimate.rule == Count(6 * B * S * P));
  Count forward, backward;
  for (const StatementCost& s : c.statements) forward += s.forward.flops, backward += s.backward_flops;
  CHECK(c.forward_flops == forward);
  CHECK(c.backward_flops == backward + c.accumulate_flops);
  Count parts_exact, parts_rule;
  for (const SixNP::Part& p : c.estimate.parts) parts_exact += p.exact, parts_rule += p.rule;
  CHECK(parts_exact == c.estimate.exact);
  CHECK(parts_rule == c.estimate.rule);
  // x (an input) has no gradient; ln1 is read by three projections: 2·B·S·D of adds among others.
  CHECK(c.accumulate_flops >= Count(2 * B * S * D));
  CHECK(c.memory.peak_bytes > c.memory.params_bytes + c.memory.inputs_bytes + c.memory.activations_bytes);
  // every kept activation says which gradients read it, and they add up to the total
  Count kept;
  for (const KeptActivation& k : c.memory.kept) {
    CAPTURE(k.tensor);
    CHECK_FALSE(k.needed_by.empty());
    kept += k.bytes;
  }
  CHECK(kept == c.memory.activations_bytes);
  const auto q = std::find_if(c.memory.kept.begin(), c.memory.kept.end(), [](const KeptActivation& k) { return k.tensor == "q1"; });
  REQUIRE(q != c.memory.kept.end());
  CHECK(q->read_as == "q");  // the view the attention's gradients read
  CHECK(q->bytes == Count(4 * B * S * H * K));
  CHECK(c.timing.error.empty());
  CHECK(c.timing.step_s == Approx(c.timing.forward_s + c.timing.backward_s + c.timing.optimizer_s));
  double forward_s = 0;
  for (const StatementCost& s : c.statements) forward_s += s.roofline->time_s;
  CHECK(c.timing.forward_s == Approx(forward_s));
}

TEST_CASE("program cost: no roofline where the device lists no peak for a dtype", "[program][cost]") {
  const ProgramCost c = cost_text("axes B=4\ninput x: B i32\ny = reduce(x, \"B ->\", \"sum\")\n");
  CHECK_FALSE(c.statements[0].roofline.has_value());
  CHECK_THAT(c.statements[0].roofline_error, Catch::Contains("i32"));
  CHECK_THAT(c.timing.error, Catch::StartsWith("statement 'y': "));
  CHECK(c.forward_flops == Count(3));
  ProgramCostOptions none;
  none.device = "";
  CHECK(cost_text("axes B=4\ninput x: B\ny = reduce(x, \"B ->\", \"sum\")\n", {}, none).timing.device.empty());
}
