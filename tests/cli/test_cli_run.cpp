// rearrange, reduce, repeat, einsum, map through the tool: inputs written with write_npy, the
// output read back and compared byte for byte with what the C++ API computes on the same
// inputs (same dtype, shape and values: exactly np.save's bytes).
#include <catch2/catch.hpp>

#include "cli_run.hpp"

using namespace einexpr;
using test::npy_text;
using test::Sandbox;

namespace {

struct RunRow {
  std::vector<std::string> args;  // the command line; inputs are x.npy, w.npy
  std::vector<Shape> shapes;      // of x.npy (and w.npy)
  DType dtype;
  std::function<Tensor(const std::vector<Tensor>&)> expected;
};

}  // namespace

TEST_CASE("rearrange, reduce, repeat, einsum, map and the normalizations write what the C++ API computes") {
  const std::vector<RunRow> rows = {
      {{"rearrange", "c h w -> c w h", "x.npy"},
       {{3, 4, 5}},
       DType::f32,
       [](const auto& in) { return rearrange(in[0], "c h w -> c w h"); }},
      {{"rearrange", "b (heads hidden1) -> b heads hidden1", "x.npy", "heads=2"},
       {{3, 8}},
       DType::f64,
       [](const auto& in) {
         return rearrange(in[0], "b (heads hidden1) -> b heads hidden1", {{"heads", 2}});
       }},
      {{"reduce", "c (h h2) (w w2) -> c h w", "mean", "x.npy", "h2=20", "w2=20"},
       {{3, 40, 60}},
       DType::f32,
       [](const auto& in) {
         return reduce(in[0], "c (h h2) (w w2) -> c h w", "mean", {{"h2", 20}, {"w2", 20}});
       }},
      {{"reduce", "batch seq hidden -> batch hidden", "sum", "x.npy"},
       {{2, 3, 4}},
       DType::i64,
       [](const auto& in) { return reduce(in[0], "batch seq hidden -> batch hidden", "sum"); }},
      {{"reduce", "... hidden -> ...", "max", "x.npy"},
       {{2, 3, 4}},
       DType::f16,
       [](const auto& in) { return reduce(in[0], "... hidden -> ...", "max"); }},
      {{"repeat", "h w -> c h w", "x.npy", "c=4"},
       {{5, 6}},
       DType::i32,
       [](const auto& in) {
         return repeat(in[0], "h w -> c h w", {{"c", 4}});
       }},
      {{"einsum", "b d, d k -> b k", "x.npy", "w.npy"},
       {{16, 32}, {32, 8}},
       DType::f32,
       [](const auto& in) { return einsum(in[0], in[1], "b d, d k -> b k"); }},
      {{"einsum", "batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2", "x.npy", "w.npy"},
       {{2, 5, 8}, {2, 7, 8}},
       DType::f64,
       [](const auto& in) { return einsum(in[0], in[1], "batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2"); }},
      {{"einsum", "i i -> i", "x.npy"},
       {{6, 6}},
       DType::f32,
       [](const auto& in) { return einsum(std::span<const Tensor>(in), "i i -> i"); }},
      {{"einsum", "a b, b c, c d -> a d", "x.npy", "w.npy", "v.npy"},
       {{3, 4}, {4, 5}, {5, 2}},
       DType::f32,
       [](const auto& in) { return einsum(std::span<const Tensor>(in), "a b, b c, c d -> a d"); }},
      {{"reduce", "b s h -> b h", "var", "x.npy"},
       {{2, 5, 3}},
       DType::f32,
       [](const auto& in) { return reduce(in[0], "b s h -> b h", "var"); }},
      {{"reduce", "b s h -> b h", "std", "x.npy", "--correction", "0"},
       {{2, 5, 3}},
       DType::f64,
       [](const auto& in) { return reduce(in[0], "b s h -> b h", "std", {}, 0); }},
      {{"reduce", "b s h -> b", "logsumexp", "x.npy"},
       {{2, 5, 3}},
       DType::bf16,
       [](const auto& in) { return reduce(in[0], "b s h -> b", "logsumexp"); }},
      {{"map", "b s h -> b s h", "gelu", "x.npy"},
       {{2, 5, 3}},
       DType::f32,
       [](const auto& in) { return map(in[0], "b s h -> b s h", "gelu"); }},
      {{"map", "b s (h d) -> b h s d", "gelu_erf", "x.npy", "h=2"},
       {{2, 5, 6}},
       DType::f64,
       [](const auto& in) { return map(in[0], "b s (h d) -> b h s d", "gelu_erf", {{"h", 2}}); }},
      {{"map", "b s h, h -> b s h", "add", "x.npy", "w.npy"},
       {{2, 5, 3}, {3}},
       DType::f32,
       [](const auto& in) { return map(in[0], in[1], "b s h, h -> b s h", "add"); }},
      {{"softmax", "b h q [k]", "x.npy"},
       {{2, 3, 4, 5}},
       DType::f32,
       [](const auto& in) { return softmax(in[0], "b h q [k]"); }},
      {{"log_softmax", "[b] s", "x.npy"},
       {{4, 3}},
       DType::f64,
       [](const auto& in) { return log_softmax(in[0], "[b] s"); }},
      {{"layer_norm", "b s [d]", "x.npy", "--eps", "0.01"},
       {{2, 5, 6}},
       DType::bf16,
       [](const auto& in) { return layer_norm(in[0], "b s [d]", 0.01); }},
      {{"rms_norm", "b [(h d)]", "x.npy", "h=2"},
       {{3, 8}},
       DType::f32,
       [](const auto& in) { return rms_norm(in[0], "b [(h d)]", 1e-6, {{"h", 2}}); }},
  };
  const std::vector<std::string> names = {"x.npy", "w.npy", "v.npy"};
  for (const RunRow& row : rows) {
    CAPTURE(row.args);
    Sandbox box;
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < row.shapes.size(); ++i) {
      inputs.push_back(Tensor::randn(row.shapes[i], row.dtype, 7 + i));
      box.write_npy(names[i], inputs.back());
    }
    std::vector<std::string> args = row.args;
    args.insert(args.end(), {"-o", "out.npy"});
    const test::CliResult r = box.run(args);
    INFO(r);
    REQUIRE(r.status == 0);
    CHECK(r.out.empty());
    CHECK(r.err.empty());
    const Tensor expected = row.expected(inputs);
    CHECK(box.read_npy("out.npy").dtype() == row.dtype);
    CHECK(box.read_bytes("out.npy") == npy_text(expected));
  }
}

TEST_CASE("Fortran-order inputs are read as numpy reads them") {
  Sandbox box;
  const Tensor x = Tensor::randn({4, 6}, DType::f32, 3);
  NpyWriteOptions fortran;
  fortran.fortran_order = true;
  box.write_npy("x.npy", x, fortran);
  const test::CliResult r = box.run({"rearrange", "a b -> b a", "x.npy", "-o", "out.npy", "--threads", "1"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK(box.read_bytes("out.npy") == npy_text(rearrange(x, "a b -> b a").contiguous()));
}

TEST_CASE("bf16 is read and written as '<V2' by default and as '<u2' with --bf16-u2") {
  Sandbox box;
  const Tensor x = Tensor::randn({4, 8}, DType::bf16, 11);
  const Tensor w = Tensor::randn({8, 3}, DType::bf16, 12);
  const Tensor y = einsum(x, w, "b d, d k -> b k");
  box.write_npy("x.npy", x);
  box.write_npy("w.npy", w);
  test::CliResult r = box.run({"einsum", "b d, d k -> b k", "x.npy", "w.npy", "-o", "y.npy"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK(box.read_bytes("y.npy") == npy_text(y));
  CHECK(box.read_bytes("y.npy").find("'descr': '<V2'") != std::string::npos);

  NpyWriteOptions u2;
  u2.bf16_as_u2 = true;
  box.write_npy("xu.npy", x, u2);
  box.write_npy("wu.npy", w, u2);
  r = box.run({"einsum", "b d, d k -> b k", "xu.npy", "wu.npy", "-o", "yu.npy", "--bf16-u2"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK(box.read_bytes("yu.npy") == npy_text(y, u2));

  r = box.run({"einsum", "b d, d k -> b k", "xu.npy", "wu.npy", "-o", "yu2.npy"});
  CHECK(r.status == 1);
  CHECK(r.err.find("xu.npy") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(box.path("yu2.npy")));
}

TEST_CASE("an output may replace an existing file and may be one of the inputs") {
  Sandbox box;
  const Tensor x = Tensor::randn({3, 4}, DType::f32, 1);
  box.write_npy("x.npy", x);
  box.write_bytes("old.npy", "old contents");
  test::CliResult r = box.run({"rearrange", "a b -> b a", "x.npy", "-o", "old.npy"});
  REQUIRE(r.status == 0);
  CHECK(box.read_bytes("old.npy") == npy_text(rearrange(x, "a b -> b a").contiguous()));
  r = box.run({"rearrange", "a b -> b a", "x.npy", "-o", "x.npy"});
  REQUIRE(r.status == 0);
  CHECK(box.read_bytes("x.npy") == npy_text(rearrange(x, "a b -> b a").contiguous()));
  CHECK(box.files() == std::set<std::string>{"old.npy", "x.npy"});
}

TEST_CASE("commands run on --device cpu, and --device cuda needs a CUDA build and a GPU") {
  Sandbox box;
  box.write_npy("x.npy", Tensor::randn({3, 4}, DType::f32, 1));
  test::CliResult r = box.run({"rearrange", "a b -> b a", "x.npy", "-o", "y.npy", "--device", "cpu"});
  CHECK(r.status == 0);
  if (has_cuda && cuda_device_count() > 0) return;
  r = box.run({"rearrange", "a b -> b a", "x.npy", "-o", "z.npy", "--device", "cuda"});
  INFO(r);
  CHECK(r.status == 1);
  CHECK(r.err.find(has_cuda ? "no CUDA device" : "built without CUDA") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(box.path("z.npy")));
  r = box.run({"bench", "einsum", "a b, b -> a", "a=2", "b=2", "--device", "cuda"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("CUDA"));
}

TEST_CASE("get_at, add_at, cross_entropy, dropout, concatenation and split write what the C++ API computes") {
  Sandbox box;
  const Tensor wte = Tensor::randn({7, 4}, DType::f32, 1);
  const Tensor tok = Tensor::from_vector(std::vector<std::int64_t>{6, 0, 6, 2, 3, 1}, {2, 3});
  const Tensor tok32 = tok.to(DType::i32);
  const Tensor upd = Tensor::randn({2, 3, 4}, DType::f32, 2);
  const Tensor logits = Tensor::randn({2, 3, 7}, DType::f32, 3);
  box.write_npy("wte.npy", wte);
  box.write_npy("tok.npy", tok);
  box.write_npy("tok32.npy", tok32);
  box.write_npy("upd.npy", upd);
  box.write_npy("logits.npy", logits);
  box.write_npy("seed.npy", Tensor::from_vector(std::vector<std::int64_t>{-5}, {}));
  struct Row {
    std::vector<std::string> args;
    Tensor expected;
  };
  const std::vector<Row> rows = {
      {{"get_at", "[v] d, b s -> b s d", "wte.npy", "tok.npy"}, get_at(wte, tok, "[v] d, b s -> b s d")},
      {{"get_at", "[v] d, b s -> b s d", "wte.npy", "tok32.npy"}, get_at(wte, tok32, "[v] d, b s -> b s d")},
      {{"add_at", "[v] d, b s, b s d -> [v] d", "wte.npy", "tok.npy", "upd.npy"},
       add_at(wte, tok, upd, "[v] d, b s, b s d -> [v] d")},
      {{"cross_entropy", "b s [v], b s -> b s", "logits.npy", "tok.npy"},
       cross_entropy(logits, tok, "b s [v], b s -> b s")},
      {{"cross_entropy", "b s [v], b s -> b s", "logits.npy", "tok.npy", "--ignore-index", "6"},
       cross_entropy(logits, tok, "b s [v], b s -> b s", 6)},
      {{"rearrange", "b s d, b s t -> b s (d + t)", "upd.npy", "logits.npy"},
       rearrange({upd, logits}, "b s d, b s t -> b s (d + t)")},
      {{"dropout", "b s d, -> b s d", "upd.npy", "seed.npy", "--p", "0.25"}, dropout(upd, 0.25, -5)},
      {{"dropout", "b s d, -> b s d", "upd.npy", "seed.npy"}, dropout(upd, 0.5, -5)},  // torch's default p
  };
  for (const Row& row : rows) {
    CAPTURE(row.args);
    std::vector<std::string> args = row.args;
    args.insert(args.end(), {"-o", "out.npy"});
    const test::CliResult r = box.run(args);
    INFO(r);
    REQUIRE(r.status == 0);
    CHECK(box.read_bytes("out.npy") == npy_text(row.expected.contiguous()));
  }
  // A split: one -o per output, parts' lengths given but the last.
  const test::CliResult r =
      box.run({"rearrange", "v (p + q) -> v p, q v", "wte.npy", "-o", "p.npy", "-o", "q.npy", "p=1"});
  INFO(r);
  REQUIRE(r.status == 0);
  const std::vector<Tensor> parts = split(wte, "v (p + q) -> v p, q v", {{"p", 1}});
  CHECK(box.read_bytes("p.npy") == npy_text(parts[0].contiguous()));
  CHECK(box.read_bytes("q.npy") == npy_text(parts[1].contiguous()));
  // A bad index: exit 1 naming it, no output written.
  box.write_npy("bad.npy", Tensor::from_vector(std::vector<std::int64_t>{0, 7}, {1, 2}));
  const test::CliResult bad = box.run({"get_at", "[v] d, b s -> b s d", "wte.npy", "bad.npy", "-o", "never.npy"});
  CHECK(bad.status == 1);
  CHECK_THAT(bad.err, Catch::Contains("index 7 at position [0, 1] is out of range [0, 7)"));
  CHECK_FALSE(std::filesystem::exists(box.path("never.npy")));
  // The wrong number of -o files for a split, before anything is written.
  const test::CliResult count = box.run({"rearrange", "v (p + q) -> v p, q v", "wte.npy", "-o", "p2.npy", "p=1"});
  CHECK(count.status == 2);
  CHECK_THAT(count.err, Catch::Contains("has 2 outputs but 1 -o files are given"));
  CHECK_FALSE(std::filesystem::exists(box.path("p2.npy")));
}

TEST_CASE("pack and unpack: every file packed, one -o per unpacked shape, bad shapes refused before any write") {
  Sandbox box;
  const Tensor x = Tensor::randn({2, 3, 4, 5}, DType::f32, 4);
  const Tensor y = Tensor::randn({2, 5}, DType::f32, 5);
  box.write_npy("x.npy", x);
  box.write_npy("y.npy", y);
  const std::vector<Tensor> both = {x, y};
  const auto [packed, shapes] = pack(both, "b * d");
  test::CliResult r = box.run({"pack", "b * d", "x.npy", "y.npy", "-o", "packed.npy"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK(box.read_bytes("packed.npy") == npy_text(packed.contiguous()));
  // Back: x's "*" was 3 4, y's none ("()"); -1 infers.
  r = box.run({"unpack", "b * d", "packed.npy", "-1,4", "()", "-o", "x2.npy", "-o", "y2.npy"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK(box.read_bytes("x2.npy") == npy_text(x));
  CHECK(box.read_bytes("y2.npy") == npy_text(y));
  // A shape that does not add up, a malformed one, and a -o count that differs: no file written.
  r = box.run({"unpack", "b * d", "packed.npy", "3,4", "2", "-o", "n1.npy", "-o", "n2.npy"});
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("the shapes hold 14 elements along '*' but the packed tensor has 13"));
  r = box.run({"unpack", "b * d", "packed.npy", "3,x", "-o", "n1.npy"});
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("bad shape '3,x'"));
  r = box.run({"unpack", "b * d", "packed.npy", "3,4", "()", "-o", "n1.npy"});
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("has 2 outputs but 1 -o files are given"));
  CHECK_FALSE(std::filesystem::exists(box.path("n1.npy")));
  CHECK_FALSE(std::filesystem::exists(box.path("n2.npy")));
}
