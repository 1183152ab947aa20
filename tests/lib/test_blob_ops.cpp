// The ops on memory the caller owns: read-only inputs compute like any other (against the
// reference), views of them stay read-only, and a read-only tensor (or a view of one) as an
// *_into output is refused with nothing written. Also einsum's convenience forms: lengths
// after the pattern, braced operand lists, einsum_into with a braced list.
#include <cstring>

#include "check_op.hpp"
#include "matchers.hpp"

using namespace einexpr;
using testing_support::MessageHas;

namespace {

/// A read-only tensor over a copy of `t`'s values that `keep` owns.
Tensor read_only_copy(const Tensor& t, std::vector<std::byte>& keep) {
  const Tensor c = t.contiguous();
  keep.resize(c.nbytes() + 64);
  std::byte* p = keep.data();
  while (reinterpret_cast<std::uintptr_t>(p) % 64 != 0) ++p;
  std::memcpy(p, c.data_ptr(), c.nbytes());
  return Tensor::from_blob(static_cast<const void*>(p), c.shape(), {}, c.dtype());
}

}  // namespace

TEST_CASE("read-only inputs compute like any other", "[from_blob][read-only]") {
  std::vector<std::byte> ka, kb;
  const Tensor a = read_only_copy(Tensor::randn({3, 4, 5}, DType::f32, 1), ka);
  const Tensor b = read_only_copy(Tensor::randn({5, 2}, DType::f32, 2), kb);
  REQUIRE(a.is_read_only());
  const Tensor z = einsum(a, b, "i j k, k l -> i j l");
  CHECK_FALSE(z.is_read_only());
  CHECK(reference::max_rel_error(z, reference::einsum({a, b}, "i j k, k l -> i j l")) <=
        reference::tolerance(DType::f32, 5));
  const Tensor m = reduce(a.transpose(0, 2), "k j i -> i", "mean");
  CHECK(reference::max_rel_error(m, reference::reduce(a.transpose(0, 2), "k j i -> i", Reduction::mean)) <=
        reference::tolerance(DType::f32, 20));
  // A view of a read-only tensor is read-only; a copy is not.
  const Tensor v = rearrange(a, "i j k -> k i j");
  CHECK(v.same_storage(a));
  CHECK(v.is_read_only());
  const Tensor c = rearrange(a, "i j k -> k i j", {}, Copy::always);
  CHECK_FALSE(c.is_read_only());
  CHECK(c.to_vector<float>() == v.to_vector<float>());
  CHECK(repeat(a, "i j k -> i j k r", {{"r", 2}}).is_read_only());  // a stride-0 view
  CHECK_FALSE(map(a, "relu").is_read_only());
}

TEST_CASE("a read-only tensor, or a view of one, is refused as an *_into output", "[from_blob][read-only][errors]") {
  const Tensor x = Tensor::randn({4, 3}, DType::f32, 3);
  std::vector<float> memory(12, 7.0f);
  const Tensor ro = Tensor::from_blob(static_cast<const float*>(memory.data()), {3, 4}, {}, DType::f32);
  Tensor out = ro;
  Tensor view = ro.transpose(0, 1).transpose(0, 1);
  Tensor column = Tensor::from_blob(static_cast<const float*>(memory.data()), {4}, {3}, DType::f32);
  const std::string read_only = "the output tensor is read-only";
  CHECK_THROWS_MATCHES(rearrange_into(out, x, "a b -> b a"), Error, MessageHas({read_only, "in rearrange('a b -> b a')"}));
  CHECK_THROWS_MATCHES(rearrange_into(view, x, "a b -> b a"), Error, MessageHas(read_only));
  CHECK_THROWS_MATCHES(einsum_into(out, {x.transpose(0, 1)}, "a b -> a b"), Error, MessageHas(read_only));
  CHECK_THROWS_MATCHES(reduce_into(column, x, "a b -> a", Reduction::sum), Error, MessageHas(read_only));
  CHECK_THROWS_MATCHES(map_into(out, x.transpose(0, 1).contiguous(), UnaryOp::relu), Error, MessageHas(read_only));
  CHECK(memory == std::vector<float>(12, 7.0f));  // nothing was written
}

TEST_CASE("einsum takes lengths after the pattern, and operands as a braced list", "[einsum]") {
  const Tensor x = Tensor::randn({2, 6}, DType::f64, 4);
  const Tensor y = Tensor::randn({3, 5}, DType::f64, 5);
  const Tensor w = Tensor::randn({5, 4}, DType::f64, 6);
  const AxisLengths h2 = {{"h", 2}};
  const reference::Result one = reference::einsum({x}, "b (h d) -> b d h", h2);
  const reference::Result two = reference::einsum({x, y}, "b (h d), d k -> b h k", h2);
  const reference::Result three = reference::einsum({x, y, w}, "b (h d), d k, k l -> h b l", h2);
  const double tol = reference::tolerance(DType::f64, 15);
  CHECK(reference::max_rel_error(einsum(x, "b (h d) -> b d h", {{"h", 2}}), one) <= tol);
  CHECK(reference::max_rel_error(einsum(x, y, "b (h d), d k -> b h k", {{"h", 2}}), two) <= tol);
  CHECK(reference::max_rel_error(einsum(x, y, w, "b (h d), d k, k l -> h b l", {{"h", 2}}), three) <= tol);
  CHECK(reference::max_rel_error(einsum(x, y, w, "b (h d), d k, k l -> h b l", h2), three) <= tol);
  CHECK(reference::max_rel_error(einsum({x, y}, "b (h d), d k -> b h k", {{"h", 2}}), two) <= tol);
  CHECK(reference::max_rel_error(einsum({x}, "b (h d) -> b d h", h2), one) <= tol);
  const std::vector<Tensor> operands = {x, y, w};
  CHECK(reference::max_rel_error(einsum(operands, "b (h d), d k, k l -> h b l", h2), three) <= tol);
  CHECK(reference::max_rel_error(einsum(x, y, std::string("b (h d), d k -> b h k"), h2), two) <= tol);
  Tensor out = Tensor::zeros({2, 2, 5}, DType::f64);
  einsum_into(out, {x, y}, "b (h d), d k -> b h k", {{"h", 2}});
  CHECK(reference::max_rel_error(out, two) <= tol);
  const auto [packed, shapes] = pack({x, x}, "b *");
  CHECK(packed.shape() == Shape{2, 12});
  CHECK(shapes.size() == 2);
  CHECK_THROWS_WITH(einsum(x, y, "b (h d), d k -> b h k", {{"h", 4}}),
                    Catch::Contains("with h=4"));  // the lengths reach the engine
}
