// cost(Plan) on plans built by hand: FLOPs, exact FLOPs, ideal and planned bytes,
// formulas, temporaries, and the seeds' figures (CS336 lecture 2).
#include <catch2/catch.hpp>

#include "einexpr/codegen/cost.hpp"
#include "named_plan_builder.hpp"

using namespace einexpr;
using cost_test::PlanBuilder;

namespace {

// "i j, j k -> i k": one GEMM.
Plan gemm(std::int64_t i, std::int64_t j, std::int64_t k, DType dtype) {
  PlanBuilder b("einsum", "i j, j k -> i k", dtype, {{"i", i}, {"j", j}, {"k", k}});
  const int x = b.input("i j"), w = b.input("j k");
  return b.finish(b.contract(x, w, "", "i", "j", "k"));
}

// The seeds' batched contraction "b s1 h, b s2 h -> b s1 s2".
Plan attention_scores(DType dtype) {
  PlanBuilder b("einsum", "b s1 h, b s2 h -> b s1 s2", dtype, {{"b", 128}, {"s1", 100}, {"s2", 200}, {"h", 128}});
  const int x = b.input("b s1 h"), y = b.input("b s2 h");
  return b.finish(b.contract(x, y, "b", "s1", "h", "s2"));
}

// The seeds' two-layer model: h1 = x @ w1 (D x D), h2 = h1 @ w2 (D x K).
Plan two_layer(DType dtype) {
  PlanBuilder b("einsum", "b d, d e, e k -> b k", dtype, {{"b", 16384}, {"d", 32768}, {"e", 32768}, {"k", 8192}});
  const int x = b.input("b d"), w1 = b.input("d e"), w2 = b.input("e k");
  const int h1 = b.contract(x, w1, "", "b", "d", "e");
  return b.finish(b.contract(h1, w2, "", "b", "e", "k"));
}

Plan unary(UnaryOp op, std::int64_t n, DType dtype) {
  PlanBuilder b("map", "", dtype, {{"n", n}});
  return b.finish(b.map(op, b.input("n")));
}

}  // namespace

TEST_CASE("FLOPs and bytes of contractions: the seeds' sizes, exactly", "[cost]") {
  struct Row {
    const char* what;
    Plan plan;
    const char* flops;
    const char* flops_exact;
    const char* bytes_read;
    const char* bytes_written;
    const char* flops_formula;
    const char* bytes_formula;
  };
  const Row rows[] = {
      {"GEMM, the seeds' CPU sizes (f32)", gemm(1024, 256, 64, DType::f32), "33554432", "33488896", "1114112", "262144",
       "2·i·j·k", "4·(i·j + i·k + j·k)"},
      {"GEMM, the seeds' GPU sizes (f32)", gemm(16384, 32768, 8192, DType::f32), "8796093022208", "8795958804480",
       "3221225472", "536870912", "2·i·j·k", "4·(i·j + i·k + j·k)"},
      {"batched b s1 h, b s2 h -> b s1 s2 (bf16)", attention_scores(DType::bf16), "655360000", "652800000",
       "9830400", "5120000", "2·b·h·s1·s2", "2·(b·h·s1 + b·h·s2 + b·s1·s2)"},
      {"two-layer model (f32)", two_layer(DType::f32), "43980465111040", "43979794022400", "7516192768",
       "536870912", "2·(b·d·e + b·e·k)", "4·(b·d + b·k + d·e + e·k)"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    validate(r.plan);
    const Cost c = cost(r.plan);
    CHECK(c.flops.str() == r.flops);
    CHECK(c.flops_exact.str() == r.flops_exact);
    CHECK(c.bytes_read.str() == r.bytes_read);
    CHECK(c.bytes_written.str() == r.bytes_written);
    CHECK(c.flops_formula.str() == r.flops_formula);
    CHECK(c.bytes_formula.str() == r.bytes_formula);
  }
}

TEST_CASE("the two-layer model: 4.398e13 FLOPs, naive one-nest FLOPs, two temporaries", "[cost]") {
  const Cost c = cost(two_layer(DType::f32));
  CHECK(c.flops == Count(2) * Count(16384) * Count(32768) * Count(32768) + Count(8796093022208ULL));
  CHECK(c.flops.to_double() == Approx(4.398e13).epsilon(1e-4));
  CHECK(c.naive_flops == c.flops);  // built by hand: no contraction order to compare with
  REQUIRE(c.steps.size() == 2);
  CHECK(c.steps[1].flops.str() == "8796093022208");  // 2·16384·32768·8192, exactly
  // h1 (b·e) and h2 (b·k) are alive together while h2 is made: 2 GiB + 512 MiB in f32.
  CHECK(c.peak_extra_bytes.str() == "2684354560");
  CHECK(c.bytes_planned == c.steps[0].bytes_read + c.steps[0].bytes_written + c.steps[1].bytes_read +
                               c.steps[1].bytes_written);
  const Cost single = cost(gemm(1024, 256, 64, DType::f32));
  CHECK(single.naive_flops == single.flops);
}

TEST_CASE("peak temporary memory follows each temporary's last use", "[cost]") {
  // t1 = copy(x); t2 = relu(t1); t3 = neg(t2): t1 dies when t2 is made, t2 when t3 is.
  PlanBuilder b("map", "", DType::f32, {{"n", 1000}});
  const int t1 = b.copy(b.input("n"));
  const int t2 = b.map(UnaryOp::relu, t1);
  const Plan plan = b.finish(b.map(UnaryOp::neg, t2));
  const Cost c = cost(plan);
  CHECK(c.peak_extra_bytes == Count(8000));  // two 4000-byte temporaries at a time, never three
  CHECK(c.steps[0].bytes_allocated == Count(4000));
  CHECK(c.bytes_planned == Count(3 * 8000));
}

TEST_CASE("views move nothing, a materializing copy moves the tensor twice", "[cost]") {
  const cost_test::Sizes sizes = {{"b", 8}, {"h", 30}, {"w", 40}};
  PlanBuilder view_only("rearrange", "b h w -> b w h", DType::f32, sizes);
  const Plan v = view_only.finish(view_only.view(view_only.input("b h w"), "b w h", {1200, 1, 40}));
  validate(v);
  const Cost cv = cost(v);
  CHECK(cv.bytes_planned == Count(0));
  CHECK(cv.bytes_written == Count(0));  // the output is a view of the input
  CHECK(cv.bytes_read == Count(8 * 30 * 40 * 4));
  CHECK(cv.peak_extra_bytes == Count(0));
  CHECK(cv.steps.at(0).is_view);

  PlanBuilder copying("rearrange", "b h w -> b (w h)", DType::f32, sizes);
  const int t = copying.view(copying.input("b h w"), "b w h", {1200, 1, 40});
  const Plan m = copying.finish(copying.view(copying.copy(t), "b (w h)"));
  validate(m);
  const Cost cm = cost(m);
  CHECK(cm.bytes_planned == Count(2 * 8 * 30 * 40 * 4));
  CHECK(cm.ideal_bytes() == Count(2 * 8 * 30 * 40 * 4));
  CHECK(cm.flops == Count(0));
  CHECK(cm.peak_extra_bytes == Count(8 * 30 * 40 * 4));
}

TEST_CASE("a broadcast source is read once: repeat and broadcast inputs", "[cost]") {
  // repeat "h w -> c h w": a copy from a stride-0 view reads h·w elements, writes c·h·w.
  PlanBuilder b("repeat", "h w -> c h w", DType::f32, {{"c", 4}, {"h", 3}, {"w", 5}});
  const Plan plan = b.finish(b.copy(b.view(b.input("h w"), "c h w", {0, 5, 1})));
  validate(plan);
  const Cost c = cost(plan);
  CHECK(c.steps.at(1).bytes_read == Count(15 * 4));
  CHECK(c.steps.at(1).bytes_written == Count(60 * 4));
  CHECK(c.steps.at(1).bytes_formula.str() == "4·(c·h·w + h·w)");
  CHECK(c.bytes_formula.str() == "4·(c·h·w + h·w)");

  // An input that is itself broadcast (stride 0) counts its distinct elements.
  PlanBuilder e("map", "", DType::bf16, {{"b", 10}, {"h", 7}});
  const Plan m = e.finish(e.map(UnaryOp::relu, e.input("b h", {0, 1})));
  const Cost cm = cost(m);
  CHECK(cm.bytes_read == Count(7 * 2));
  CHECK(cm.bytes_written == Count(70 * 2));
  CHECK(cm.flops == Count(70));
}

TEST_CASE("reductions fold n_in - n_out elements, mean adds n_out", "[cost]") {
  struct Row {
    Reduction op;
    const char* flops;
    const char* formula;
  };
  const Row rows[] = {{Reduction::sum, "360", "b·h·s - b·h"},
                      {Reduction::mean, "480", "b·h·s"},
                      {Reduction::max, "360", "b·h·s - b·h"}};
  for (const Row& r : rows) {
    CAPTURE(name(r.op));
    PlanBuilder b("reduce", "b s h -> b h", DType::f32, {{"b", 10}, {"s", 4}, {"h", 12}});
    const Plan plan = b.finish(b.reduce(b.input("b s h"), r.op, {1}));
    validate(plan);
    const Cost c = cost(plan);
    CHECK(c.flops.str() == r.flops);
    CHECK(c.flops_exact == c.flops);
    CHECK(c.flops_formula.str() == r.formula);
    CHECK(c.bytes_read == Count(480 * 4));
    CHECK(c.bytes_written == Count(120 * 4));
  }
}

TEST_CASE("the seeds' arithmetic intensities in bf16", "[cost]") {
  const std::int64_t n = 1024 * 1024;
  const Cost relu = cost(unary(UnaryOp::relu, n, DType::bf16));
  CHECK(relu.flops == Count(static_cast<std::uint64_t>(n)));
  CHECK(relu.intensity() == 0.25);  // exactly 1/4
  CHECK(cost(unary(UnaryOp::gelu, n, DType::bf16)).intensity() == 5.0);

  PlanBuilder dot_b("einsum", "i, i ->", DType::bf16, {{"i", n}});
  const int x = dot_b.input("i"), w = dot_b.input("i");
  const Cost dot = cost(dot_b.finish(dot_b.view(dot_b.contract(x, w, "", "()", "i", "()"), "")));
  CHECK(dot.flops_exact == Count(2 * n - 1));
  CHECK(dot.ideal_bytes() == Count(4 * n + 2));
  CHECK(dot.intensity_exact() == Approx(double(2 * n - 1) / double(4 * n + 2)));
  CHECK(dot.intensity_exact() == Approx(0.5).epsilon(1e-5));

  const std::int64_t m = 1024;
  PlanBuilder mv_b("einsum", "j, j k -> k", DType::bf16, {{"j", m}, {"k", m}});
  const int v = mv_b.input("j"), mat = mv_b.input("j k");
  const Cost mv = cost(mv_b.finish(mv_b.view(mv_b.contract(v, mat, "", "()", "j", "k"), "k")));
  CHECK(mv.flops_exact == Count(m * (2 * m - 1)));
  CHECK(mv.intensity_exact() == Approx(double(m * (2 * m - 1)) / double(2 * m + 2 * m * m + 2 * m)));
  CHECK(mv.intensity_exact() == Approx(1.0).epsilon(0.01));

  const Cost mm = cost(gemm(m, m, m, DType::bf16));
  CHECK(mm.flops_exact == Count(m * m * (2 * m - 1)));
  CHECK(mm.intensity_exact() == Approx(341.1667).epsilon(1e-6));  // 1024·1024·2047 / (3·2·1024²)
  CHECK(mm.intensity() == Approx(1024.0 / 3));
  CHECK(mm.intensity_exact() > 295.37);
}

TEST_CASE("a contraction over an empty axis has no exact FLOPs", "[cost]") {
  const Cost c = cost(gemm(4, 0, 5, DType::f32));
  CHECK(c.flops == Count(0));
  CHECK(c.flops_exact == Count(0));
  CHECK(c.bytes_written == Count(80));
}

TEST_CASE("FLOPs past 2^64 stay exact through cost()", "[cost]") {
  const std::int64_t big = std::int64_t(1) << 22;  // 2·(2^22)^3 = 2^67
  const Cost c = cost(gemm(big, big, big, DType::f32));
  CHECK(c.flops.str() == "147573952589676412928");
  CHECK(c.flops_formula.evaluate({{"i", big}, {"j", big}, {"k", big}}) == c.flops);
}

TEST_CASE("Cost::str is a table with SI units, steps and formulas", "[cost]") {
  const std::string text = cost(attention_scores(DType::bf16)).str();
  CAPTURE(text);
  for (const char* piece : {"einsum 'b s1 h, b s2 h -> b s1 s2' (bf16)", "contract", "MFLOP", "MiB", "FLOP/B",
                            "2·b·h·s1·s2", "2·(b·h·s1 + b·h·s2 + b·s1·s2)", "655360000", "ideal", "planned"})
    CHECK_THAT(text, Catch::Contains(piece));
}
