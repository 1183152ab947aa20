// einsum against the reference; plans: GEMM classes, copies avoided, contraction order.
#include <algorithm>
#include <map>

#include "check_op.hpp"
#include "einexpr/codegen/backward.hpp"
#include "data/int_wrap_numpy_values.hpp"

using namespace einexpr;
using testing_support::check_against_reference;

namespace {

struct Row {
  const char* pattern;
  std::vector<Shape> shapes;
  std::int64_t terms;  // products summed into each output element
  AxisLengths lengths = {};
};

const std::vector<Row> rows = {
    {"i j, j k -> i k", {{4, 5}, {5, 6}}, 5},
    {"batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2", {{2, 3, 4}, {2, 5, 4}}, 4},
    {"b h i d, b h j d -> b h i j", {{2, 2, 3, 4}, {2, 2, 5, 4}}, 4},
    {"i j -> j i", {{3, 4}}, 1},
    {"i i -> i", {{4, 4}}, 1},
    {"i i ->", {{4, 4}}, 4},
    {"i j ->", {{3, 4}}, 12},
    {"i j -> i", {{3, 4}}, 4},
    {"i, i ->", {{7}, {7}}, 7},
    {"i, j -> i j", {{3}, {4}}, 1},
    {"i, i -> i", {{5}, {5}}, 1},
    {"b i j, b j k -> b i k", {{2, 3, 4}, {2, 4, 5}}, 4},
    {"i j, j k, k l -> i l", {{3, 4}, {4, 5}, {5, 2}}, 20},
    {"a b, b c, c d, d e -> a e", {{2, 3}, {3, 4}, {4, 2}, {2, 3}}, 24},
    {"... hidden1, hidden1 hidden2 -> ... hidden2", {{2, 3, 4}, {4, 5}}, 4},
    {"... i j, ... j k -> ... i k", {{1, 3, 4}, {2, 4, 5}}, 4},
    {"b (h d), h d k -> b k", {{2, 6}, {2, 3, 4}}, 6},
    {"b (h d) -> b h d", {{2, 6}}, 1, {{"h", 2}}},
    {"i j k, j k -> i", {{3, 4, 5}, {4, 5}}, 20},
    {"a b c, c b -> a", {{2, 3, 4}, {4, 3}}, 12},
    {"i j, i j -> i j", {{3, 4}, {3, 4}}, 1},
    {"b i, b -> b i", {{3, 4}, {3}}, 1},
    {"i j k -> k j i", {{2, 3, 4}}, 1},
    {"i i j -> j i", {{3, 3, 4}}, 1},
    {"i j, j -> i", {{3, 4}, {4}}, 4},
    {"j, j k -> k", {{4}, {4, 5}}, 4},
    {"b s h, h -> b s h", {{2, 3, 4}, {4}}, 1},
    {"x y z, z y -> x", {{2, 3, 4}, {4, 3}}, 12},
    {"p q r, q r s, s t -> p t", {{2, 3, 2}, {3, 2, 4}, {4, 3}}, 24},
    {"a b c d, d c e -> a b e", {{2, 2, 3, 4}, {4, 3, 2}}, 12},
    {"i j, k l -> i j k l", {{2, 3}, {2, 2}}, 1},
    {"b k, b k -> b", {{5, 6}, {5, 6}}, 6},
    {"i j, j i -> i", {{3, 4}, {4, 3}}, 4},
    {"i j, i k -> j k", {{4, 3}, {4, 5}}, 4},
    {"i j, k j -> i k", {{3, 4}, {5, 4}}, 4},
    {"i j, j k -> k i", {{3, 4}, {4, 5}}, 4},
    {"b i j, b k j -> b i k", {{2, 3, 4}, {2, 5, 4}}, 4},
    {"b i j, j k -> i b k", {{2, 3, 4}, {4, 5}}, 4},
    {"i b j, b j k -> b k i", {{3, 2, 4}, {2, 4, 5}}, 4},
    {"... i, ... i -> ...", {{2, 3, 4}, {3, 4}}, 4},
    {"i, i, i ->", {{6}, {6}, {6}}, 6},
    {"a b, a c, a d -> b c d", {{3, 2}, {3, 2}, {3, 2}}, 3},
    {"i j k l, j l -> i k", {{2, 3, 2, 3}, {3, 3}}, 9},
    {"(i j), j k -> i k", {{12}, {4, 5}}, 4},
    {"i j, (j k) -> i k", {{3, 4}, {8}}, 4},
    {"a a b, b c -> a c", {{3, 3, 4}, {4, 2}}, 4},
    {"b h i d, b h j d, b h j e -> b h i e", {{1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 2}}, 12},
};

}  // namespace

TEST_CASE("einsum matches the reference in every dtype and layout", "[einsum]") {
  for (const Row& row : rows) {
    CAPTURE(row.pattern);
    check_against_reference(
        row.shapes, testing_support::all_numeric, row.terms,
        [&](const auto& in) { return einsum(std::span<const Tensor>(in), row.pattern, row.lengths); },
        [&](const auto& in) { return reference::einsum(in, row.pattern, row.lengths); });
  }
}

TEST_CASE("einsum in f16 and i32 too", "[einsum]") {
  for (const Row& row : rows) {
    CAPTURE(row.pattern);
    check_against_reference(
        row.shapes, {DType::f16, DType::i32}, row.terms,
        [&](const auto& in) { return einsum(std::span<const Tensor>(in), row.pattern, row.lengths); },
        [&](const auto& in) { return reference::einsum(in, row.pattern, row.lengths); });
  }
}

TEST_CASE("the seeds' einsum equals x @ y.transpose(-2, -1)", "[einsum][seeds]") {
  const Tensor x = Tensor::randn({4, 10, 16}, DType::f32, 1);
  const Tensor y = Tensor::randn({4, 20, 16}, DType::f32, 2);
  const Tensor z = einsum(x, y, "batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2");
  CHECK(z.shape() == Shape{4, 10, 20});
  const Tensor z2 = einsum(x, y.transpose(-2, -1), "b i k, b k j -> b i j");
  CHECK(z.to_vector<float>() == z2.to_vector<float>());
  // torch.einsum("ik,kj->ij") on the seeds' integers: [[58, 64], [139, 154]]
  const Tensor a = Tensor::from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = Tensor::from_vector<std::int64_t>({7, 8, 9, 10, 11, 12}, {3, 2});
  CHECK(einsum(a, b, "i k, k j -> i j").to_vector<std::int64_t>() == std::vector<std::int64_t>{58, 64, 139, 154});
}

TEST_CASE("einsum plans: GEMM classes, no copy of operands that fit", "[einsum][plan]") {
  const Tensor x = Tensor::randn({8, 16, 32}, DType::f32, 1);
  const Tensor y = Tensor::randn({8, 24, 32}, DType::f32, 2);
  const Compiled f = compile_einsum("b s1 h, b s2 h -> b s1 s2");
  const std::array<Tensor, 2> in{x, y};
  const Plan& plan = f.plan(in);
  int copies = 0, contracts = 0;
  for (const Step& s : plan.steps) {
    copies += std::holds_alternative<CopyStep>(s);
    if (const auto* c = std::get_if<ContractStep>(&s)) {
      ++contracts;
      CHECK(c->kind == ContractStep::Kind::batched_gemm);
    }
  }
  CHECK(copies == 0);
  CHECK(contracts == 1);
  // A transposed operand is read in place (a column-major matrix), not copied.
  const Tensor w = Tensor::randn({64, 32}, DType::f32, 3).transpose(0, 1);
  const std::array<Tensor, 2> in2{Tensor::randn({16, 32}, DType::f32, 4), w};
  const Compiled g = compile_einsum("i j, j k -> i k");
  const Plan& p2 = g.plan(in2);
  CHECK(std::none_of(p2.steps.begin(), p2.steps.end(), [](const Step& s) { return std::holds_alternative<CopyStep>(s); }));
}

TEST_CASE("m or n atoms that do not merge: a batched GEMM over the outer ones reads the operand in place",
          "[einsum][plan]") {
  // Each GEMM keeps 64·64·64 = 2^18 multiply-adds (contract.cpp's loop_gemm_work) and the other
  // side's free length is at most 1024 (loop_other_side), so the loop replaces the copy;
  // TCCG's intensli0 is the first row at a smaller size.
  struct Looped {
    const char* pattern;
    std::vector<Shape> shapes;
    std::int64_t terms;
    const char* note;  // what explain says
  };
  const std::vector<Looped> cases = {
      {"a d b, c d -> c b a", {{3, 64, 64}, {64, 64}}, 64, "left [a d b] read in place by 3 GEMMs of 64x64x64, batched over [a]"},
      {"c d, a d b -> a b c", {{64, 64}, {3, 64, 64}}, 64, "right [a d b] read in place by 3 GEMMs of 64x64x64, batched over [a]"},
      {"a k b, c k e -> c e b a", {{2, 64, 64}, {3, 64, 64}}, 64, "batched over [c]"},
      {"z a d b, z c d -> z c b a", {{2, 3, 64, 64}, {2, 64, 64}}, 64, "3 GEMMs of 64x64x64, batched over [a]"},
  };
  for (const Looped& c : cases) {
    CAPTURE(c.pattern);
    std::vector<Tensor> in;
    for (std::size_t i = 0; i < c.shapes.size(); ++i) in.push_back(Tensor::randn(c.shapes[i], DType::f32, 40 + i));
    const Compiled f = compile_einsum(c.pattern);
    const Plan& plan = f.plan(in);
    CHECK(std::none_of(plan.steps.begin(), plan.steps.end(), [](const Step& s) { return std::holds_alternative<CopyStep>(s); }));
    CHECK(std::any_of(plan.notes.begin(), plan.notes.end(), [&](const std::string& n) { return n.find(c.note) != std::string::npos; }));
    // every dtype (bf16 is staged for the GEMM, the stride-0 dims kept) and layout, against the naive loop
    check_against_reference(
        c.shapes, testing_support::all_numeric, c.terms,
        [&](const auto& xs) { return einsum(std::span<const Tensor>(xs), c.pattern); },
        [&](const auto& xs) { return reference::einsum(xs, c.pattern); });
    // into a preallocated output of the pattern's own layout, and its gradients
    const Tensor y = einsum(std::span<const Tensor>(in), c.pattern);
    Tensor out = Tensor::empty(y.shape(), DType::f32);
    einsum_into(out, std::span<const Tensor>(in), c.pattern);
    CHECK(out.to_vector<float>() == y.to_vector<float>());
    std::vector<Tensor> in64;
    for (const Tensor& t : in) in64.push_back(t.to(DType::f64));
    const Plan& p64 = f.plan(in64);
    const std::vector<Gradient> grads = gradients(p64);
    const Tensor y64 = einsum(std::span<const Tensor>(in64), c.pattern);
    const Tensor dy = Tensor::randn(y64.shape(), DType::f64, 99);
    const std::vector<Tensor> dxs = run_gradients(p64, grads, in64, y64, dy);
    const std::vector<reference::Result> want = reference::einsum_gradients(in64, c.pattern, dy.to_vector<double>());
    REQUIRE(dxs.size() == want.size());
    for (std::size_t i = 0; i < dxs.size(); ++i) CHECK(reference::max_rel_error(dxs[i], want[i]) <= 1e-12);
  }
  // Each GEMM below the threshold (16·16·16 multiply-adds), or the other side longer than 1024
  // (a GEMM bound by its arithmetic, where the copy costs little): the operand is copied.
  auto copies = [](const Plan& p) {
    return std::count_if(p.steps.begin(), p.steps.end(), [](const Step& s) { return std::holds_alternative<CopyStep>(s); });
  };
  const std::vector<Tensor> small{Tensor::randn({3, 16, 16}, DType::f32, 1), Tensor::randn({16, 16}, DType::f32, 2)};
  CHECK(copies(compile_einsum("a d b, c d -> c b a").plan(small)) == 1);
  const std::vector<Tensor> wide{Tensor::randn({2, 8, 32}, DType::f32, 3), Tensor::randn({1100, 8}, DType::f32, 4)};
  const Compiled cw = compile_einsum("a d b, c d -> c b a");
  CHECK(copies(cw.plan(wide)) == 1);  // 32·1100·8 multiply-adds a GEMM, but n = 1100
  CHECK(reference::max_rel_error(einsum(std::span<const Tensor>(wide), "a d b, c d -> c b a"),
                                 reference::einsum(wide, "a d b, c d -> c b a")) <= reference::tolerance(DType::f32, 8));
}

TEST_CASE("a three-operand chain contracts in the cheap order", "[einsum][plan]") {
  // (A B) C costs 2·i·j·k + 2·i·k·l; A (B C) costs 2·j·k·l + 2·i·j·l.
  const Tensor a = Tensor::randn({64, 4}, DType::f32, 1);
  const Tensor b = Tensor::randn({4, 64}, DType::f32, 2);
  const Tensor c = Tensor::randn({64, 4}, DType::f32, 3);
  const std::array<Tensor, 3> in{a, b, c};
  const Compiled chain = compile_einsum("i j, j k, k l -> i l");
  const Plan& plan = chain.plan(in);
  REQUIRE(plan.notes.size() == 1);
  CHECK(plan.notes[0].find("contraction order (1 (2 3))") == 0);
  const Tensor got = einsum(a, b, c, "i j, j k, k l -> i l");
  CHECK(reference::max_rel_error(got, reference::einsum({a, b, c}, "i j, j k, k l -> i l")) <= 1e-4);
  // With the sizes the other way round the other order is the cheap one.
  const std::array<Tensor, 3> in2{Tensor::randn({4, 64}, DType::f32, 1), Tensor::randn({64, 4}, DType::f32, 2),
                                  Tensor::randn({4, 64}, DType::f32, 3)};
  const Plan& plan2 = chain.plan(in2);
  REQUIRE(plan2.notes.size() == 1);
  CHECK(plan2.notes[0].find("contraction order ((1 2) 3)") == 0);  // the note also names left to right
}

TEST_CASE("an OrderGoal through Compiled: a memory limit changes the order, the result stays right", "[einsum][plan]") {
  // Dims 4, 32, 8, 2, 16: the fewest FLOPs (1792) need a 64-element intermediate; within 32
  // elements the best order costs 2432; none stays within 31 (every tree enumerated apart).
  const std::array<Tensor, 4> in{Tensor::randn({4, 32}, DType::f32, 1), Tensor::randn({32, 8}, DType::f32, 2),
                                 Tensor::randn({8, 2}, DType::f32, 3), Tensor::randn({2, 16}, DType::f32, 4)};
  const char* pattern = "a b, b c, c d, d e -> a e";
  const auto want = reference::einsum({in[0], in[1], in[2], in[3]}, pattern);
  const Compiled fewest(OpSpec::einsum(), pattern);
  CHECK_THAT(fewest.plan(in).notes.at(0), Catch::Contains(": 1792 FLOPs (optimal: "));
  CHECK(reference::max_rel_error(fewest.run(in), want) <= 1e-4);
  const Compiled within(OpSpec::einsum({}, OrderGoal{OrderObjective::flops, 0, 32}), pattern);
  CHECK_THAT(within.plan(in).notes.at(0), Catch::Contains(": 2432 FLOPs (optimal: "));
  CHECK(reference::max_rel_error(within.run(in), want) <= 1e-4);
  const Compiled too_small(OpSpec::einsum({}, OrderGoal{OrderObjective::flops, 0, 31}), pattern);
  CHECK_THROWS_AS(too_small.run(in), ShapeError);
  CHECK_THROWS_WITH(too_small.run(in), Catch::Contains("within 31 elements: the smallest largest intermediate is 32"));
}

TEST_CASE("i32 contractions wrap on overflow in every kernel, as numpy does", "[einsum][limits]") {
  // Found by the fuzz replay's blind mutations: a batched GEMM in i32 computes in int64 and
  // converted back with convert(), which saturates, while the generic contraction and the
  // reductions wrap. Each element here is 2 * 50000 * 50000 = 5e9, which wraps to 705032704.
  const Tensor x = Tensor::full({2, 2}, 50000, DType::i32), y = Tensor::full({2, 3}, 50000, DType::i32);
  const std::vector<std::int64_t> gemm = einsum(x, y, "i j, j k -> i k").to_vector<std::int64_t>();
  CHECK(gemm == std::vector<std::int64_t>(6, 705032704));
  const std::vector<std::int64_t> transposed = einsum(x, y, "i j, j k -> k i").to_vector<std::int64_t>();
  CHECK(transposed == std::vector<std::int64_t>(6, 705032704));
  const Tensor v = Tensor::full({2}, 50000, DType::i32);  // a Hadamard product: the generic kernel
  CHECK(einsum(v, v, "i, i -> i").to_vector<std::int64_t>() == std::vector<std::int64_t>(2, -1794967296));
  CHECK(reduce(einsum(v, v, "i, i -> i"), "i -> ", Reduction::sum).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{705032704});
}

TEST_CASE("i64 and i32 contractions wrap on overflow as numpy's einsum does", "[einsum][limits]") {
  // numpy's values (tests/lib/data/make_int_wrap_numpy.py, checked there against exact
  // integers mod 2^64 / 2^32) for random operands over the whole range, so that products and
  // sums overflow: GEMMs in every layout (int64 goes through Eigen, computed in uint64),
  // batched, GEMV, dot, outer, trace, chains of 3 and 4 operands, Hadamard. Each case runs
  // with its operands as given and again with every matrix operand column-major (a transposed
  // view of its transpose's contiguous copy), which the GEMM reads in place.
  std::map<DType, int> gemms;  // GEMM steps among the plans, per dtype
  for (const numpy_values::IntWrapCase& c : numpy_values::int_wrap_cases) {
    INFO(c.pattern << " (numpy " << c.numpy << ") in " << einexpr::name(c.dtype));
    for (const bool column_major : {false, true}) {
      INFO((column_major ? "matrix operands column-major" : "operands row-major"));
      std::vector<Tensor> in;
      for (std::size_t i = 0; i < c.operands.size(); ++i) {
        const std::vector<std::int64_t>& v = c.operands[i];
        const Tensor t = c.dtype == DType::i64
                             ? Tensor::from_vector<std::int64_t>(v, c.shapes[i])
                             : Tensor::from_vector<std::int32_t>(std::vector<std::int32_t>(v.begin(), v.end()), c.shapes[i]);
        const bool transpose = column_major && c.shapes[i].size() == 2;
        in.push_back(transpose ? t.transpose(0, 1).contiguous().transpose(0, 1) : t);
      }
      const Compiled f = compile_einsum(c.pattern);
      for (const Step& s : f.plan(in).steps)
        if (const auto* k = std::get_if<ContractStep>(&s)) gemms[c.dtype] += k->kind != ContractStep::Kind::generic;
      const Tensor out = f.run(in);
      CHECK(out.dtype() == c.dtype);
      CHECK(out.shape() == c.out_shape);
      CHECK(out.to_vector<std::int64_t>() == c.expected);
      CHECK(einsum(std::span<const Tensor>(in), c.pattern).to_vector<std::int64_t>() == c.expected);
    }
  }
  CHECK(gemms[DType::i64] >= 8);  // the GEMM kernels were among those checked, in both dtypes
  CHECK(gemms[DType::i32] >= 8);
}

TEST_CASE("an empty broadcast batch dim is not staged as one element", "[einsum][limits]") {
  // Found by fuzz_plan (ASan: heap-buffer-overflow in convert_strided): a batched GEMM stages
  // a stride-0 batch dim as length 1 (copied once). One of length 0 became length 1 too, and
  // the staging read elements of x that do not exist (x views one element; its empty dim …2
  // has stride 0). Caught by the sanitizer build of this test.
  const Tensor x = Tensor::zeros({1}, DType::i32).as_strided({3, 1, 0, 4}, {17, 17, 0, 0}, 0);
  const Tensor y = Tensor::randn({3, 1, 1, 2}, DType::i32, 2);
  const Tensor z = einsum(x, y, "... i, ... j -> ... i j");
  CHECK(z.shape() == Shape{3, 1, 0, 4, 2});
  const Tensor xd = Tensor::zeros({1}, DType::f64).as_strided({3, 1, 0, 4}, {9, 9, 0, 0}, 0);
  const Tensor w = einsum(xd, y.to(DType::f64), "... i, ... j -> ... j i");
  CHECK(w.shape() == Shape{3, 1, 0, 2, 4});
}
