// rearrange and repeat against the reference, and which results are views.
#include "check_op.hpp"

using namespace einexpr;
using testing_support::check_against_reference;

namespace {

struct Row {
  const char* pattern;
  Shape shape;
  AxisLengths lengths;
};

// einops' documented examples, the seeds' examples, and the cases around them.
const std::vector<Row> rearrange_rows = {
    {"b h w c -> b (h w) c", {2, 3, 4, 5}, {}},
    {"b h w c -> (b h) w c", {2, 3, 4, 5}, {}},
    {"b h w c -> h (b w) c", {2, 3, 4, 5}, {}},
    {"b h w c -> b c h w", {2, 3, 4, 5}, {}},
    {"b h w c -> (b h w c)", {2, 3, 4, 5}, {}},
    {"b h w c -> w h c b", {2, 3, 4, 5}, {}},
    {"b h w c -> (b w) (h c)", {2, 3, 4, 5}, {}},
    {"b (h1 h2) (w1 w2) c -> (b h1 w1) h2 w2 c", {2, 4, 6, 3}, {{"h2", 2}, {"w2", 2}}},
    {"b (h h1) (w w1) c -> b h w (c h1 w1)", {2, 4, 6, 3}, {{"h1", 2}, {"w1", 2}}},
    {"b h (w w2) c -> (h w2) (b w) c", {2, 3, 4, 5}, {{"w2", 2}}},
    {"(b1 b2) h w c -> (b1 h) (b2 w) c", {4, 3, 2, 1}, {{"b1", 2}}},
    {"c h w -> c w h", {4, 6, 5}, {}},
    {"... (heads hidden1) -> ... heads hidden1", {2, 3, 8}, {{"heads", 2}}},
    {"... heads hidden2 -> ... (heads hidden2)", {2, 3, 2, 4}, {}},
    {"b ... -> b (...)", {2, 3, 4}, {}},
    {"... -> ...", {3, 4}, {}},
    {"b c h w -> b h w c", {2, 3, 4, 5}, {}},
    {"b (h d) s -> b h s d", {2, 8, 5}, {{"h", 4}}},
    {"b s (h d) -> b h s d", {2, 3, 8}, {{"h", 2}}},
    {"a b c -> c b a", {2, 3, 4}, {}},
    {"a 1 b -> a b", {3, 1, 4}, {}},
    {"a b -> a 1 b", {3, 4}, {}},
    {"a b -> a () b", {3, 4}, {}},
    {"a () b -> b a", {3, 1, 4}, {}},
    {"a b c -> (a b c)", {2, 3, 4}, {}},
    {"(a b c) -> a b c", {24}, {{"a", 2}, {"b", 3}}},
    {"a b c d e -> (a b) c d e", {2, 3, 2, 2, 3}, {}},
    {"a b ... -> (a b) ...", {2, 3, 2, 2, 3}, {}},
    {"... c -> c ...", {2, 3, 4}, {}},
    {"x -> x", {5}, {}},
    {"x y -> y x", {1, 5}, {}},
    {"a b -> b a", {0, 3}, {}},
    {"b (h w) -> b h w", {2, 12}, {{"h", 3}}},
    {"h (w w2) -> (h w2) w", {3, 8}, {{"w2", 2}}},
    {"a (b c) d -> (a c) (b d)", {2, 6, 3}, {{"b", 2}}},
    {"a b c -> a (c b)", {2, 3, 4}, {}},
    {"a b c -> (c a) b", {2, 3, 4}, {}},
    {"a b c d -> d (c b a)", {2, 3, 2, 3}, {}},
    {"a b c d -> (a c) (b d)", {2, 3, 2, 3}, {}},
    {"(a b) (c d) -> (a c) (b d)", {6, 4}, {{"a", 2}, {"c", 2}}},
    {"... a b -> ... b a", {2, 2, 3, 4}, {}},
    {"a ... b -> b ... a", {2, 3, 4, 5}, {}},
    {"a ... -> ... a", {2}, {}},
    {"(a 1) b -> a b", {3, 4}, {}},
    {"a b -> (a 1) (1 b)", {3, 4}, {}},
    {"() a () -> a", {1, 3, 1}, {}},
    {"batch seq (heads dim) -> (batch heads) seq dim", {2, 3, 8}, {{"heads", 4}}},
    {"(batch heads) seq dim -> batch seq (heads dim)", {8, 3, 2}, {{"heads", 4}}},
};

const std::vector<Row> repeat_rows = {
    {"h w -> c h w", {3, 4}, {{"c", 3}}},
    {"h w -> h w c", {3, 4}, {{"c", 3}}},
    {"h w -> (c h) w", {3, 4}, {{"c", 2}}},
    {"h w -> h (w c)", {3, 4}, {{"c", 2}}},
    {"h w -> (h 2) (w 2)", {3, 4}, {}},
    {"b h w -> b (h h2) (w w2)", {2, 3, 4}, {{"h2", 2}, {"w2", 2}}},
    {"a -> a 3", {4}, {}},
    {"a b -> b a c", {3, 4}, {{"c", 2}}},
    {"... -> ... c", {2, 3}, {{"c", 2}}},
    {"a () -> a c", {3, 1}, {{"c", 3}}},
    {"a -> (c a)", {4}, {{"c", 2}}},
    {"a b -> a 2 b 3", {2, 3}, {}},
    {"a b -> (a b c)", {2, 3}, {{"c", 2}}},
    {"(a b) -> a c b", {6}, {{"a", 2}, {"c", 2}}},
    {"b h -> b c h", {2, 5}, {{"c", 4}}},
};

}  // namespace

TEST_CASE("rearrange matches the reference in every dtype and layout", "[rearrange]") {
  for (const Row& row : rearrange_rows) {
    CAPTURE(row.pattern, shape_str(row.shape));
    check_against_reference(
        {row.shape}, testing_support::all_numeric, 0,
        [&](const auto& in) { return rearrange(in[0], row.pattern, row.lengths); },
        [&](const auto& in) { return reference::rearrange(in[0], row.pattern, row.lengths); });
  }
}

TEST_CASE("rearrange with Copy::always gives a new contiguous tensor", "[rearrange]") {
  for (const Row& row : rearrange_rows) {
    CAPTURE(row.pattern);
    const Tensor x = reference::make_input(row.shape, DType::f32, reference::Layout::sliced, 7);
    const Tensor y = rearrange(x, row.pattern, row.lengths, Copy::always);
    CHECK_FALSE(y.same_storage(x));
    CHECK(y.is_contiguous());
    CHECK(reference::max_rel_error(y, reference::rearrange(x, row.pattern, row.lengths)) == 0);
  }
}

TEST_CASE("repeat matches the reference in every dtype and layout", "[repeat]") {
  for (const Row& row : repeat_rows) {
    CAPTURE(row.pattern, shape_str(row.shape));
    check_against_reference(
        {row.shape}, testing_support::all_numeric, 0,
        [&](const auto& in) { return repeat(in[0], row.pattern, row.lengths); },
        [&](const auto& in) { return reference::repeat(in[0], row.pattern, row.lengths); });
    const Tensor x = Tensor::randn(row.shape, DType::f32, 3);
    const Tensor copied = repeat(x, row.pattern, row.lengths, Copy::always);
    CHECK(copied.is_contiguous());
    CHECK(reference::max_rel_error(copied, reference::repeat(x, row.pattern, row.lengths)) == 0);
  }
}

TEST_CASE("rearranges that only permute, split or merge are views", "[rearrange][views]") {
  const Tensor x = Tensor::randn({2, 3, 4, 5}, DType::f32, 1);
  struct ViewRow {
    const char* pattern;
    bool view;
  };
  const std::vector<ViewRow> rows = {
      {"b h w c -> b c h w", true},   {"b h w c -> b (h w) c", true}, {"b h w c -> (b h w c)", true},
      {"b h w c -> w h c b", true},   {"b h w c -> b (w h) c", false}, {"b h w c -> (c b) h w", false},
      {"b h w c -> b h w c", true},   {"b h w c -> (b h) (w c)", true}, {"b h w c -> (h b) w c", false},
  };
  for (const ViewRow& r : rows) {
    CAPTURE(r.pattern);
    const Tensor y = rearrange(x, r.pattern);
    CHECK(y.same_storage(x) == r.view);
    if (r.view) {
      CHECK(rearrange(x, r.pattern, {}, Copy::never).same_storage(x));
    } else {
      CHECK_THROWS_AS(rearrange(x, r.pattern, {}, Copy::never), ShapeError);
    }
  }
  // A transposed input merges differently: what was a view becomes a copy, and back.
  const Tensor t = Tensor::randn({5, 4, 3, 2}, DType::f32, 2).permute({3, 2, 1, 0});
  CHECK_FALSE(rearrange(t, "b h w c -> b (h w) c").same_storage(t));
  CHECK(rearrange(t, "b h w c -> b (w h) c").same_storage(t));
}

TEST_CASE("Copy::never names the axes that cannot merge", "[rearrange][errors]") {
  const Tensor x = Tensor::randn({2, 3, 4}, DType::f32, 1);
  CHECK_THROWS_WITH(rearrange(x, "a b c -> a (c b)", {}, Copy::never),
                    Catch::Contains("cannot be a view of this input") && Catch::Contains("merging c (stride 1) with b") &&
                        Catch::Contains("Copy::never"));
}

TEST_CASE("a repeat that only adds axes is a stride-0 view", "[repeat][views]") {
  const Tensor x = Tensor::randn({3, 4}, DType::f32, 1);
  const Tensor y = repeat(x, "h w -> c h w", {{"c", 5}});
  CHECK(y.same_storage(x));
  CHECK(y.strides() == Strides{0, 4, 1});
  const Tensor z = repeat(x, "h w -> (c h) w", {{"c", 2}});  // cannot merge a stride-0 axis
  CHECK_FALSE(z.same_storage(x));
  CHECK(z.is_contiguous());
}

TEST_CASE("the seeds' rearrange walk-through: split heads, transform, merge back", "[rearrange][seeds]") {
  const Tensor x = Tensor::randn({2, 3, 8}, DType::f32, 11);
  const Tensor w = Tensor::randn({4, 2}, DType::f32, 12);
  const Tensor split = rearrange(x, "... (heads hidden1) -> ... heads hidden1", {{"heads", 2}});
  CHECK(split.shape() == Shape{2, 3, 2, 4});
  CHECK(split.same_storage(x));
  const Tensor t = einsum(split, w, "... hidden1, hidden1 hidden2 -> ... hidden2");
  CHECK(t.shape() == Shape{2, 3, 2, 2});
  const Tensor merged = rearrange(t, "... heads hidden2 -> ... (heads hidden2)");
  CHECK(merged.shape() == Shape{2, 3, 4});
  CHECK(reference::max_rel_error(t, reference::einsum({split, w}, "... hidden1, hidden1 hidden2 -> ... hidden2")) <= 1e-5);
}

TEST_CASE("einops' identity patterns return the input unchanged", "[rearrange]") {
  const Tensor x = Tensor::randn({2, 3, 4, 5, 6}, DType::f32, 21);
  for (const char* p : {"... -> ...", "a b c d e -> a b c d e", "a b c d e ... -> ... a b c d e",
                        "a b c d e ... -> a ... b c d e", "... a b c d e -> ... a b c d e", "a ... e -> a ... e",
                        "a ... -> a ...", "a ... c d e -> a (...) c d e"}) {
    CAPTURE(p);
    const Tensor y = rearrange(x, p);
    CHECK(y.shape() == x.shape());
    CHECK(y.to_vector<float>() == x.to_vector<float>());
    CHECK(y.same_storage(x));
  }
}

TEST_CASE("einops' equivalent pattern pairs give the same result", "[rearrange]") {
  const std::vector<std::pair<const char*, const char*>> pairs = {
      {"a b c d e -> (a b) c d e", "a b ... -> (a b) ..."},
      {"a b c d e -> a b (c d) e", "... c d e -> ... (c d) e"},
      {"a b c d e -> a b c d e", "... -> ..."},
      {"a b c d e -> (a b c d e)", "... -> (...)"},
      {"a b c d e -> b (c d e) a", "a b ... -> b (...) a"},
      {"a b c d e -> b (a c d) e", "a b ... e -> b (a ...) e"},
  };
  for (reference::Layout layout : testing_support::all_layouts) {
    const Tensor x = reference::make_input({2, 3, 4, 5, 6}, DType::f32, layout, 22);
    for (const auto& [p, q] : pairs) {
      CAPTURE(p, q, reference::name(layout));
      const Tensor a = rearrange(x, p), b = rearrange(x, q);
      CHECK(a.shape() == b.shape());
      CHECK(a.to_vector<float>() == b.to_vector<float>());
      CHECK(reference::max_rel_error(a, reference::rearrange(x, p)) == 0);
    }
  }
}
