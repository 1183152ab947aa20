// A program on a device mesh (codegen/mesh.hpp), against the published formulas on gpt2.ein:
// Megatron's tensor parallelism (Narayanan et al. 2021; Korthikanti et al. 2022) with H and F
// split over tp: two all-reduces of b·s·h a layer forward and two backward, 2(t−1)/t of the
// bytes sent each, and the activations sbh(10 + 24/t + 5as/(ht)) a layer; data parallelism's
// gradient all-reduce, 2(n−1)/n·Ψ; and the layout's errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "einexpr/codegen/mesh.hpp"
#include "einexpr/codegen/program_cost.hpp"
#include "einexpr/codegen/program_plan.hpp"
#include "einexpr/parser/program.hpp"
#include "model_files.hpp"

using namespace einexpr;

namespace {

struct Costed {
  ProgramPlan plan;
  ProgramCost cost;
};

// gpt2.ein at small sizes, in bf16 (the formulas' 2-byte activations, 1-byte masks)
Costed gpt2(const AxisLengths& axes) {
  const ast::Program p = parse_program(test::read_model("gpt2.ein"), "gpt2.ein");
  ProgramOptions o{.axes = axes, .dtype = DType::bf16};
  Costed c{plan_program(p, o), {}};
  c.cost = cost(c.plan, {.device = "", .optimizer = Optimizer::adam, .mixed_precision = true});
  return c;
}

const AxisLengths sizes = {{"L", 2}, {"B", 2}, {"S", 8}, {"T", 8}, {"D", 16}, {"H", 4}, {"K", 4}, {"F", 64}, {"V", 32}};

}  // namespace

TEST_CASE("mesh: Megatron's tensor parallelism, two all-reduces of b·s·h a layer each way") {
  const Costed g = gpt2(sizes);
  const std::uint64_t L = 2, b = 2, s = 8, h = 16, a = 4;
  for (const std::int64_t t : {2, 4}) {
    CAPTURE(t);
    const MeshCost m = shard(g.plan, g.cost, parse_mesh("tp=" + std::to_string(t) + "@nvlink", "H:tp F:tp"));
    std::map<std::string, int> count;
    for (const Collective& c : m.collectives) {
      CAPTURE(c.tensor, c.phase, c.why);
      CHECK(c.kind == CollectiveKind::all_reduce);
      CHECK(c.mesh_dim == "tp");
      CHECK(c.elements == Count(b * s * h));
      CHECK(c.bus_bytes == Count(2 * (t - 1) * b * s * h * 2 / t));  // 2(t−1)/t of b·s·h bf16 values
      CHECK(c.layer >= 0);
      ++count[c.phase];
    }
    CHECK(count["forward"] == static_cast<int>(2 * L));   // after attention's projection and the MLP's second product
    CHECK(count["backward"] == static_cast<int>(2 * L));  // the gradients of ln1 (q, k, v summed first) and ln2
    // activations: Korthikanti et al.'s sbh(10 + 24/t + 5as/(ht)) a layer, averaged over the block's layers
    Count in_layers;
    for (std::size_t i = 0; i < m.kept.size(); ++i)
      if (g.cost.memory.kept[i].layer >= 0) in_layers += m.kept[i].second;
    CHECK(in_layers.u64() == L * (s * b * h * 10 + s * b * h * 24 / t + 5 * a * s * s * b / t));
    // the layers' matrices are split, their vectors and norms over D replicated
    CHECK(m.params_bytes < g.cost.memory.params_bytes);
    CHECK(m.forward_flops < g.cost.forward_flops);
  }
}

TEST_CASE("mesh: a layer recomputed for the backward all-reduces its forward's partial sums again") {
  // Megatron's full recomputation: each layer's input kept, the layer made again before its
  // gradients, its two forward all-reduces with it: four a layer backward, not two
  const ast::Program p = parse_program(test::read_model("gpt2.ein"), "gpt2.ein");
  const ProgramPlan plan = plan_program(p, {.axes = sizes, .dtype = DType::bf16});
  RecomputeOptions layers{.mode = RecomputeMode::checkpoints};
  for (const ProgramBlock& b : plan.blocks)
    for (std::int64_t l = 0; l < b.layers; ++l)
      layers.checkpoints.push_back(plan.statements.at(static_cast<std::size_t>(b.first + (l + 1) * b.per_layer - 1)).name);
  const Costed none = gpt2(sizes);
  const ProgramCost full = cost(plan, {.device = "h100", .optimizer = Optimizer::adam, .mixed_precision = true, .recompute = layers});
  REQUIRE(!full.recomputed.empty());
  const Mesh mesh = parse_mesh("tp=4@nvlink", "H:tp F:tp");
  const MeshCost kept = shard(none.plan, none.cost, mesh), again = shard(plan, full, mesh);
  std::map<std::string, int> count;
  std::multiset<std::string> forward, repeated;
  for (const Collective& c : again.collectives) {
    ++count[c.phase];
    const std::string key = c.tensor + " " + c.elements.str() + " " + c.bus_bytes.str();
    if (c.phase == "forward") forward.insert(key);
    if (c.why.rfind("recomputed for the backward: ", 0) == 0) {
      CHECK(c.phase == "backward");
      CHECK(c.statement >= 0);
      repeated.insert(key);
    }
  }
  const int L = 2;
  CHECK(count["forward"] == 2 * L);
  CHECK(count["backward"] == 4 * L);
  CHECK(repeated == forward);  // each forward all-reduce once more, as large
  CHECK(again.backward_bus_bytes == kept.backward_bus_bytes + kept.forward_bus_bytes);
  CHECK(again.forward_bus_bytes == kept.forward_bus_bytes);
  // and their time: the backward's communication grows by the forward's
  REQUIRE(again.timing.error.empty());
  const MeshCost kept_h100 = shard(plan, cost(plan, {.device = "h100", .optimizer = Optimizer::adam, .mixed_precision = true}), mesh);
  CHECK(again.timing.backward_comm_s == Approx(kept_h100.timing.backward_comm_s + kept_h100.timing.forward_comm_s));
}

TEST_CASE("mesh: data parallelism all-reduces every param's gradient once, 2(n−1)/n·Ψ") {
  const Costed g = gpt2(sizes);
  const MeshCost m = shard(g.plan, g.cost, parse_mesh("dp=2@ib", "B:dp"));
  Count backward_elements;
  int forward = 0;
  for (const Collective& c : m.collectives) {
    CAPTURE(c.tensor, c.why);
    CHECK(c.mesh_dim == "dp");
    if (c.phase == "backward") backward_elements += c.elements;
    if (c.phase == "forward") {
      ++forward;
      CHECK(c.tensor == "loss");  // the mean over B: a 0-d all-reduce
      CHECK(c.elements == Count(1));
    }
  }
  CHECK(forward == 1);
  CHECK(backward_elements == g.cost.params);                   // Ψ elements, each param once
  CHECK(m.backward_bus_bytes == g.cost.params * Count(2));     // 2(n−1)/n·Ψ, n = 2, bf16
  CHECK(m.params_bytes == g.cost.memory.params_bytes);         // replicated
  CHECK(m.activations_bytes * Count(2) == g.cost.memory.activations_bytes);  // every kept tensor has B
  CHECK(m.forward_flops * Count(2) == g.cost.forward_flops);
}

TEST_CASE("mesh: the layout's errors name the tensor, the axis and the sizes") {
  const Costed g = gpt2(sizes);
  auto fails = [&](const std::string& dims, const std::string& shard_text) {
    try {
      (void)shard(g.plan, g.cost, parse_mesh(dims, shard_text));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(fails("tp=3", "H:tp"), Catch::Contains("axis H is 4, which does not split over tp=3"));
  CHECK_THAT(fails("tp=2", "Q:tp"), Catch::Contains("the program has no axis Q"));
  CHECK_THAT(fails("tp=2", "K:tp"), Catch::Contains("has K inside (H K) after H"));
  CHECK_THAT(fails("tp=2", "B:tp S:tp"), Catch::Contains("splits both B and S over tp"));
  CHECK_THAT(fails("tp=2", "D:tp"), Catch::Contains("runs layer_norm along D, which is split over tp"));
  CHECK_THROWS_WITH(parse_mesh("tp=0", ""), Catch::Contains("at least 1"));
  CHECK_THROWS_WITH(parse_mesh("tp", ""), Catch::Contains("is not NAME=SIZE"));
  CHECK_THROWS_WITH(parse_mesh("tp=2 tp=4", ""), Catch::Contains("given twice"));
  CHECK_THROWS_WITH(parse_mesh("tp=2", "H:dp"), Catch::Contains("which the mesh has not"));
  CHECK_THROWS_WITH(parse_mesh("tp=2", "H:tp H:tp"), Catch::Contains("laid out twice"));
  CHECK(parse_mesh("dp=2@ib tp=4@nvlink", "B:dp H:tp").devices() == 8);
}

TEST_CASE("mesh: ZeRO's stages, per device (2+2+K)Ψ, 4Ψ + KΨ/N, 2Ψ + (2+K)Ψ/N, (2+2+K)Ψ/N, and 3Ψ moved at stage 3") {
  // the ZeRO paper's example (Rajbhandari et al. 2020, Figure 1): Ψ = 7.5 B params, N = 64, mixed-precision
  // Adam (K = 12): 120 GB, 31.4 GB, 16.6 GB, 1.9 GB a device
  const ast::Program p = parse_program("axes N=64 A=75000 E=100000\ninput x: N A\nparam w: A E\n"
                                       "y = einsum(x, w, \"N A, A E -> N\")\nloss = reduce(y, \"N ->\", \"sum\")\n",
                                       "zero.ein");
  const ProgramPlan plan = plan_program(p, {.dtype = DType::bf16});
  const ProgramCost c = cost(plan, {.device = "", .optimizer = Optimizer::adam, .mixed_precision = true});
  REQUIRE(c.params == Count(7500000000ULL));
  const std::uint64_t want[] = {120000000000ULL, 31406250000ULL, 16640625000ULL, 1875000000ULL};
  Count moved[4];
  for (int stage = 0; stage < 4; ++stage) {
    CAPTURE(stage);
    const MeshCost m = shard(plan, c, parse_mesh("dp=64@ib", "N:dp", stage));
    CHECK((m.params_bytes + m.grads_bytes + m.optimizer_bytes).u64() == want[stage]);
    for (const Collective& col : m.collectives)
      if (col.tensor != "loss") moved[stage] += col.bus_bytes;
  }
  // 2(N−1)/N·2Ψ bytes at stages 0 to 2 (an all-reduce, or a reduce-scatter and an all-gather), 3(N−1)/N·2Ψ at 3
  CHECK(moved[0] == Count(2u * 63u * 15000000000ULL / 64u));
  CHECK(moved[1] == moved[0]);
  CHECK(moved[2] == moved[0]);
  CHECK(moved[3] == Count(3u * 63u * 15000000000ULL / 64u));
  CHECK_THROWS_WITH(parse_mesh("dp=2", "", 4), Catch::Contains("0, 1, 2 or 3"));
}

TEST_CASE("mesh: each collective's α-β time from its link, and the step per device, added and overlapped") {
  const ast::Program p = parse_program(test::read_model("gpt2.ein"), "gpt2.ein");
  AxisLengths axes = sizes;
  axes[1].second = 8;  // B
  const ProgramPlan plan = plan_program(p, ProgramOptions{.axes = axes, .dtype = DType::bf16});
  const ProgramCost c = cost(plan, {.device = "h100", .optimizer = Optimizer::adam, .mixed_precision = true});
  REQUIRE(c.timing.error.empty());
  const MeshCost m = shard(plan, c, parse_mesh("dp=4@ib tp=2@nvlink", "B:dp H:tp F:tp"));
  REQUIRE(m.timing.error.empty());
  CHECK(m.timing.device == "h100");
  // NCCL's ring: 8.4 µs + steps · α + bus bytes / β, β and α the cited link figures
  const std::map<std::string, std::pair<double, double>> link = {{"dp", {50e9, 9.6e-6}}, {"tp", {450e9, 3.4e-6}}};
  double forward = 0, backward = 0, optimizer = 0;
  for (const Collective& x : m.collectives) {
    CAPTURE(x.tensor, x.phase, x.mesh_dim);
    const auto [beta, alpha] = link.at(x.mesh_dim);
    const double steps = x.kind == CollectiveKind::all_reduce ? 2.0 * static_cast<double>(x.ranks - 1) : static_cast<double>(x.ranks - 1);
    CHECK(x.time_s == Approx(8.4e-6 + steps * alpha + x.bus_bytes.to_double() / beta).epsilon(1e-12));
    (x.phase == "forward" ? forward : x.phase == "backward" ? backward : optimizer) += x.time_s;
  }
  CHECK(m.timing.forward_comm_s == Approx(forward).epsilon(1e-12));
  CHECK(m.timing.backward_comm_s == Approx(backward).epsilon(1e-12));
  CHECK(m.timing.step_s == Approx(m.timing.compute_s + forward + backward + optimizer).epsilon(1e-12));
  CHECK(m.timing.overlapped_s == Approx(std::max(m.timing.compute_s, forward + backward + optimizer)).epsilon(1e-12));

  // data parallelism alone: every statement and gradient has B, so each device's compute is the
  // forward's and backward's bound over n; the optimizer updates whole (replicated) params, and
  // a param read twice (wte) adds its two gradients whole on each device
  const MeshCost d = shard(plan, c, parse_mesh("dp=4@ib", "B:dp"));
  double gradients_s = 0;
  for (const StatementCost& sc : c.statements) gradients_s += sc.backward_time_s;
  const double added_s = c.timing.backward_s - gradients_s;  // the single device's accumulation
  REQUIRE(added_s > 0);
  CHECK(d.timing.compute_s > (c.timing.forward_s + gradients_s + added_s) / 4 + c.timing.optimizer_s);
  CHECK(d.timing.compute_s < (c.timing.forward_s + gradients_s) / 4 + added_s + c.timing.optimizer_s);
  {  // the lecture's model reads no tensor twice: exactly the bounds over n, and the update
    const ast::Program lp = parse_program(test::read_model("lecture2.ein"), "lecture2.ein");
    const ProgramPlan lplan = plan_program(lp);
    const ProgramCost lc = cost(lplan, {.device = "h100", .optimizer = Optimizer::adam});
    const MeshCost ld = shard(lplan, lc, parse_mesh("dp=4@ib", "B:dp"));
    CHECK(ld.timing.compute_s == Approx((lc.timing.forward_s + lc.timing.backward_s) / 4 + lc.timing.optimizer_s).epsilon(1e-12));
  }

  // a dimension of more than one device without a link has no time (the counts stand)
  const MeshCost none = shard(plan, c, parse_mesh("dp=4", "B:dp"));
  CHECK(none.timing.error.find("mesh dimension 'dp' has no link: give one as dp=4@nvlink") != std::string::npos);
  CHECK(none.backward_bus_bytes == d.backward_bus_bytes);
  const MeshCost odd = shard(plan, c, parse_mesh("dp=4@carrier_pigeon", "B:dp"));
  CHECK(odd.timing.error.find("no link kind 'carrier_pigeon' (known: nvlink, ib, pcie)") != std::string::npos);
}

TEST_CASE("mesh: --search tries every mesh size, ZeRO stage, micro-batch count and recomputation, the fastest that fit first") {
  const ast::Program p = parse_program(test::read_model("gpt2.ein"), "gpt2.ein");
  AxisLengths axes = sizes;
  axes[1].second = 8;  // B
  const ProgramOptions o{.axes = axes, .dtype = DType::bf16};
  const ProgramCostOptions co{.device = "h100", .optimizer = Optimizer::adam, .mixed_precision = true};
  const Mesh shape = parse_mesh("dp=1@ib tp=1@nvlink", "B:dp H:tp F:tp");
  const LayoutSearch s = search_layouts(p, o, co, shape, {.devices = 8, .node = 4, .top = 100});
  // dp × tp = 8 with tp (nvlink) within a node of 4 and H = 4: (8, 1), (4, 2), (2, 4); B = 8 cut
  // into m = 1, 2, ... B/dp micro-batches; ZeRO 0-3; recompute none or layers
  // m: dp=8 {1}, dp=4 {1, 2}, dp=2 {1, 2, 4}: 6, each with 4 stages and 2 recomputations
  CHECK(s.tried == 6 * 4 * 2);
  CHECK(s.fit == s.tried);  // a tiny model fits anywhere
  REQUIRE(!s.fastest.empty());
  for (std::size_t i = 0; i < s.fastest.size(); ++i) {
    const LayoutChoice& c = s.fastest[i];
    CAPTURE(i, c.mesh.str(), c.micro_batches, c.recompute);
    if (i > 0) CHECK(s.fastest[i - 1].step_s <= c.step_s);
    CHECK(c.memory_bytes.to_double() <= s.device_memory);
    CHECK(c.mesh.devices() == 8);
    CHECK(c.mesh.dims[1].size <= 4);  // tp within the node
    // the terms add up: m micro-batches' compute and collectives, the once-a-step ones once
    const double m = c.micro_batches;
    CHECK(c.compute_s == Approx(m * (c.micro.timing.compute_s - c.micro.timing.optimizer_compute_s) +
                                c.micro.timing.optimizer_compute_s));
    CHECK(c.step_s == Approx(c.compute_s + m * c.micro_comm_s + c.step_comm_s));
    CHECK(c.memory_bytes == c.micro.params_bytes + c.micro.grads_bytes + c.micro.optimizer_bytes + c.micro.activations_bytes);
  }
  // a choice is the cost of its layout: the first one again, by plan, cost and shard
  const LayoutChoice& first = s.fastest.front();
  AxisLengths at = axes;
  at[1].second = 8 / first.micro_batches;
  const ProgramPlan plan = plan_program(p, ProgramOptions{.axes = at, .dtype = DType::bf16});
  ProgramCostOptions again = co;
  if (first.recompute == "none") again.recompute = RecomputeOptions{};
  else {
    again.recompute = RecomputeOptions{.mode = RecomputeMode::checkpoints};
    for (std::int64_t l = 0; l < plan.blocks[0].layers; ++l)
      again.recompute->checkpoints.push_back(
          plan.statements.at(static_cast<std::size_t>(plan.blocks[0].first + (l + 1) * plan.blocks[0].per_layer - 1)).name);
  }
  const MeshCost direct = shard(plan, cost(plan, again), first.mesh);
  CHECK(direct.backward_bus_bytes == first.micro.backward_bus_bytes);
  CHECK(direct.activations_bytes == first.micro.activations_bytes);
  CHECK(direct.timing.compute_s == Approx(first.micro.timing.compute_s));

  // H = 4 does not split over 8: that mesh is refused, and said so
  const LayoutSearch wide = search_layouts(p, o, co, shape, {.devices = 8, .node = 8});
  CHECK(std::any_of(wide.refused.begin(), wide.refused.end(),
                    [](const std::string& r) { return r.find("axis H is 4, which does not split over tp=8") != std::string::npos; }));
  CHECK_THROWS_WITH(search_layouts(p, o, {.device = "cpu"}, shape, {.devices = 8}), Catch::Contains("has none for 'cpu'"));
}

TEST_CASE("mesh: sequence parallelism (S over tp between the tensor-parallel regions), Korthikanti et al.'s sbh(34/t + 5as/(ht))") {
  const Costed g = gpt2(sizes);
  const std::uint64_t L = 2, b = 2, s = 8, h = 16, a = 4;
  // S over tp in the results outside attention's and the MLP's tensor-parallel regions: the
  // embeddings, the norms, the projections' results, the biases, dropouts and residuals
  const std::string sp = "S:tp@x0+x+ln1+a0+a1+ad+h+ln2+m0+m1+md+y";
  for (const std::int64_t t : {2, 4}) {
    CAPTURE(t);
    const MeshCost m = shard(g.plan, g.cost, parse_mesh("tp=" + std::to_string(t) + "@nvlink", "H:tp F:tp " + sp));
    std::map<std::string, int> per_layer;  // "phase kind" in the layers, of b·s·h elements
    for (const Collective& c : m.collectives) {
      if (c.layer < 0 || c.elements != Count(b * s * h)) continue;
      CAPTURE(c.tensor, c.phase, c.why);
      CHECK(c.mesh_dim == "tp");
      CHECK(c.bus_bytes == Count((t - 1) * b * s * h * 2 / t));  // (t−1)/t of b·s·h bf16 values
      ++per_layer[c.phase + " " + name(c.kind)];
    }
    // the all-reduces' place: an all-gather into each region and a reduce-scatter out of it,
    // forward; backward the reverse, and the norms' outputs gathered again for the weights'
    // gradients (Megatron keeps them split)
    CHECK(per_layer["forward all-gather"] == static_cast<int>(2 * L));
    CHECK(per_layer["forward reduce-scatter"] == static_cast<int>(2 * L));
    CHECK(per_layer["forward all-reduce"] == 0);
    CHECK(per_layer["backward reduce-scatter"] == static_cast<int>(2 * L));
    CHECK(per_layer["backward all-gather"] == static_cast<int>(4 * L));
    CHECK(per_layer["backward all-reduce"] == 0);
    Count in_layers;
    for (std::size_t i = 0; i < m.kept.size(); ++i)
      if (g.cost.memory.kept[i].layer >= 0) in_layers += m.kept[i].second;
    CHECK(in_layers.u64() == L * (s * b * h * 34 / t + 5 * a * s * s * b / t));
  }
  // a statement-level layout names statements of the program, and does not repeat a global rule
  CHECK_THROWS_WITH(shard(g.plan, g.cost, parse_mesh("tp=2@nvlink", "H:tp S:tp@nonesuch")), Catch::Contains("names no statement"));
  CHECK_THROWS_WITH(parse_mesh("tp=2", "S:tp S:tp@ln1"), Catch::Contains("everywhere and over tp in some statements"));
  CHECK(parse_mesh("tp=2", "H:tp S:tp@ln1+h").str() == "tp=2; H:tp S:tp@ln1+h");
  // the same layout from a model file's shard line
  std::string text = test::read_model("gpt2.ein");
  const std::size_t axes_end = text.find('\n', text.find("\naxes ") + 1);
  text.insert(axes_end + 1, "mesh tp=2@nvlink\nshard H:tp F:tp " + sp + "\n");
  const std::optional<Mesh> from_file = program_mesh(parse_program(text, "gpt2_sp.ein"));
  REQUIRE(from_file.has_value());
  CHECK(from_file->str() == parse_mesh("tp=2@nvlink", "H:tp F:tp " + sp).str());
  CHECK(shard(g.plan, g.cost, *from_file).activations_bytes ==
        shard(g.plan, g.cost, parse_mesh("tp=2@nvlink", "H:tp F:tp " + sp)).activations_bytes);
}

TEST_CASE("mesh: Megatron's vocabulary parallelism (V over tp): the embedding's all-reduce, the loss's three row all-reduces, the head's input gradient") {
  // Megatron-LM's VocabParallelEmbedding (each device's rows, zeros for the others', then an
  // all-reduce of b·s·h) and vocab_parallel_cross_entropy (all-reduces of each row's max, its
  // target's logit and its sum of exps, f32); backward, where Megatron keeps its softmax, the
  // max and the sum again for these bf16 logits (f32 ones: the target logit again, below); the
  // tied head's einsum needs nothing forward and its input's gradient sums over V (an
  // all-reduce of b·s·h backward)
  const Costed g = gpt2(sizes);
  const std::uint64_t b = 2, s = 8, h = 16, V = 32;
  auto statement = [&](const std::string& name) {
    for (std::size_t i = 0; i < g.plan.statements.size(); ++i)
      if (g.plan.statements[i].name == name) return i;
    FAIL("no statement " << name);
    return std::size_t{0};
  };
  auto key = [](const Collective& c) {
    return c.phase + " " + name(c.kind) + " " + c.mesh_dim + " " + c.tensor + " " + c.elements.str() + " " + c.bus_bytes.str() +
           " " + c.reduce + " " + c.step;
  };
  for (const std::int64_t t : {2, 4}) {
    CAPTURE(t);
    const std::string mesh = "tp=" + std::to_string(t) + "@nvlink";
    const MeshCost base = shard(g.plan, g.cost, parse_mesh(mesh, "H:tp F:tp"));
    const MeshCost m = shard(g.plan, g.cost, parse_mesh(mesh, "H:tp F:tp V:tp"));
    std::multiset<std::string> added;
    for (const Collective& c : m.collectives) added.insert(key(c));
    for (const Collective& c : base.collectives) {
      const auto it = added.find(key(c));
      CHECK(it != added.end());  // every collective of Megatron's tp stays
      if (it != added.end()) added.erase(it);
    }
    const auto u = static_cast<std::uint64_t>(t);
    const Count rows_sent(2 * (u - 1) * b * s * 4 / u);  // an all-reduce of b·s f32 values
    const std::multiset<std::string> expected = {
        "forward all-reduce tp te " + std::to_string(b * s * h) + " " + std::to_string(2 * (u - 1) * b * s * h * 2 / u) + " sum get_at",
        "forward all-reduce tp ce " + std::to_string(b * s) + " " + rows_sent.str() + " max cross_entropy",
        "forward all-reduce tp ce " + std::to_string(b * s) + " " + rows_sent.str() + " sum cross_entropy",
        "forward all-reduce tp ce " + std::to_string(b * s) + " " + rows_sent.str() + " sum cross_entropy",
        "backward all-reduce tp ce " + std::to_string(b * s) + " " + rows_sent.str() + " max cross_entropy",
        "backward all-reduce tp ce " + std::to_string(b * s) + " " + rows_sent.str() + " sum cross_entropy",
        "backward all-reduce tp dlnf " + std::to_string(b * s * h) + " " + std::to_string(2 * (u - 1) * b * s * h * 2 / u) + " sum "};
    CHECK(added == expected);
    for (const Collective& c : m.collectives)
      if (c.tensor == "dlnf" && c.mesh_dim == "tp") CHECK_THAT(c.why, Catch::Contains("sums over V (split over tp)"));
    // the table (tied head) split: its bf16 values and gradient a t-th on each device
    CHECK((base.params_bytes - m.params_bytes).u64() == V * h * 2 * (u - 1) / u);
    CHECK((base.grads_bytes - m.grads_bytes).u64() == V * h * 2 * (u - 1) / u);
    // the head's product and the loss run on a t-th of the classes; the lookup's work is whole
    const Count head = g.cost.statements[statement("logits")].forward.flops, loss = g.cost.statements[statement("ce")].forward.flops;
    CHECK(head == Count(2 * b * s * h * V));
    CHECK(base.forward_flops - m.forward_flops == (head - Count(head.u64() / u)) + (loss - Count(loss.u64() / u)));
    for (std::size_t i = 0; i < m.kept.size(); ++i)
      if (m.kept[i].first == "logits") CHECK(m.kept[i].second == Count(base.kept[i].second.u64() / u));
  }
  // f32 logits: the loss holds each row's log-sum-exp, so backward only the target logit again
  {
    const ast::Program p = parse_program(test::read_model("gpt2.ein"), "gpt2.ein");
    ProgramOptions o{.axes = sizes, .dtype = DType::f32};
    const ProgramPlan plan = plan_program(p, o);
    const ProgramCost c = cost(plan, {.device = "", .optimizer = Optimizer::adam});
    std::vector<std::string> ce;
    for (const Collective& x : shard(plan, c, parse_mesh("tp=2", "V:tp")).collectives)
      if (x.step == "cross_entropy") ce.push_back(x.phase + " " + x.reduce + " " + x.bytes.str());
    const std::string row_bytes = std::to_string(b * s * 4);
    CHECK(ce == std::vector<std::string>{"forward max " + row_bytes, "forward sum " + row_bytes, "forward sum " + row_bytes,
                                         "backward sum " + row_bytes});
  }
  // what it still refuses: a normalization along a split axis
  CHECK_THROWS_WITH(shard(g.plan, g.cost, parse_mesh("tp=2", "D:tp")), Catch::Contains("runs layer_norm along D"));
}
