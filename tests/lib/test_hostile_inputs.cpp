// Hostile tensors, lengths and sizes through the public API: mismatched shapes, dtypes and
// devices, undefined tensors, enormous lengths whose element count, byte count or FLOPs
// overflow 64 bits (refused before anything is allocated), impossible views, bad out
// tensors. Each row asserts the error class (exactly: a plain Error is not a subclass) and a
// part of the message, and that no einexpr memory stays allocated afterwards.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "einexpr/einexpr.hpp"

using namespace einexpr;

namespace {

enum class Kind { error, shape, dtype, device, allocation };

struct Row {
  const char* what;
  std::function<void()> call;
  Kind kind;
  std::string message;  // a part of what()
};

constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t p60 = std::int64_t{1} << 60, p62 = std::int64_t{1} << 62;

const Tensor x = Tensor::randn({2, 3}, DType::f32, 1);
const Tensor y = Tensor::randn({4, 5}, DType::f32, 2);
const Tensor yi = Tensor::randn({3, 4}, DType::i64, 3);
const Tensor b = Tensor::randn({2, 3}, DType::boolean, 4);
const Tensor empty_axis = Tensor::zeros({2, 0}, DType::f32);
const Tensor u;  // undefined

Tensor broadcast(Shape shape) { return Tensor::zeros({1}, DType::f32).as_strided(shape, Strides(shape.size(), 0), 0); }

Kind kind_of(const Error& e) {
  if (dynamic_cast<const ShapeError*>(&e)) return Kind::shape;
  if (dynamic_cast<const DTypeError*>(&e)) return Kind::dtype;
  if (dynamic_cast<const DeviceError*>(&e)) return Kind::device;
  if (dynamic_cast<const AllocationError*>(&e)) return Kind::allocation;
  return Kind::error;
}

// clang-format off
std::vector<Row> shape_rows() {
  return {
      {"einsum: sizes disagree", [] { einsum(x, y, "a b, b c -> a c"); }, Kind::shape, "axis b is 3 in operand 1 (dim 1) but 4 in operand 2 (dim 0)"},
      {"einsum: too many dims named", [] { einsum(x, "a b c -> a"); }, Kind::shape, "operand 1 has 2 dims (shape [2, 3]) but 'a b c' names 3"},
      {"einsum: more tensors than operands", [] { einsum(x, y, "a b -> a b"); }, Kind::shape, "1 operands but 2 tensors were given"},
      {"einsum: fewer tensors than operands", [] { einsum(x, "a b, b c -> a c"); }, Kind::shape, "2 operands but 1 tensors were given"},
      {"einsum: diagonal of a non-square", [] { einsum(x, "i i -> i"); }, Kind::shape, "axis i is 2 (dim 0) and 3 (dim 1) in operand 1"},
      {"einsum: ellipses that do not broadcast", [] { einsum(x, y, "... i, ... i -> ..."); }, Kind::shape, "do not broadcast"},
      {"rearrange: not divisible", [] { rearrange(x, "a (b c) -> a b c", {{"b", 2}}); }, Kind::shape, "3 is not divisible by 2"},
      {"rearrange: two unknowns in a group", [] { rearrange(x, "a (b c) -> a b c"); }, Kind::shape, "cannot infer the lengths of b and c in (b c)"},
      {"rearrange: a length that disagrees", [] { rearrange(x, "a b -> a b", {{"b", 4}}); }, Kind::shape, "axis b is 3 in the input"},
      {"rearrange: a length not used", [] { rearrange(x, "a b -> a b", {{"c", 4}}); }, Kind::shape, "the length of axis c is given (4) but 'a b -> a b' does not use c"},
      {"rearrange: a negative length", [] { rearrange(x, "a b -> a b", {{"a", -1}}); }, Kind::shape, "the length of axis a must be >= 0 (got -1)"},
      {"rearrange: a length given twice", [] { rearrange(x, "a b -> a b", {{"a", 2}, {"a", 2}}); }, Kind::shape, "the length of axis a is given twice"},
      {"rearrange: rank", [] { rearrange(x, "a b c -> a b c"); }, Kind::shape, "the input has 2 dims (shape [2, 3]) but 'a b c' names 3"},
      {"repeat: a new axis without length", [] { repeat(x, "a b -> a b c"); }, Kind::shape, "the length of new axis c is not given"},
      {"reduce: max of nothing", [] { reduce(empty_axis, "a b -> a", Reduction::max); }, Kind::shape, "of no elements"},
      {"pack: dims around * differ", [] { pack(std::vector<Tensor>{x, y}, "a *"); }, Kind::shape, "the dims around '*' must match"},
      {"pack: too few dims", [] { pack(std::vector<Tensor>{x}, "a b c *"); }, Kind::shape, "needs at least 3"},
      {"unpack: two -1", [] { const std::vector<Shape> s{{-1}, {-1}}; unpack(x, s, "a *"); }, Kind::shape, "only one shape may contain -1"},
      {"unpack: sizes do not add up", [] { const std::vector<Shape> s{{5}}; unpack(x, s, "a *"); }, Kind::shape, "hold 5 elements along '*' but the packed tensor has 3"},
      {"unpack: a negative length", [] { const std::vector<Shape> s{{-2}, {5}}; unpack(x, s, "a *"); }, Kind::shape, "invalid length -2"},
      {"unpack: lengths that overflow", [] { const std::vector<Shape> s{{big}, {big}}; unpack(x, s, "a *"); }, Kind::shape, "overflows 64 bits"},
      {"unpack: rank", [] { const std::vector<Shape> s{{3}}; unpack(x, s, "a b *"); }, Kind::shape, "describes 3 dims but the packed tensor has shape [2, 3]"},
      {"parse_shape: rank", [] { parse_shape(x, "a b c"); }, Kind::shape, "names 3 dims but the tensor has shape [2, 3]"},
  };
}

std::vector<Row> overflow_rows() {
  return {
      {"repeat: elements overflow", [] { repeat(x, "a b -> a b c", {{"c", big}}); }, Kind::shape, "overflows 64 bits"},
      {"repeat: an anonymous axis overflows", [] { repeat(x, "a b -> a b 9223372036854775807"); }, Kind::shape, "overflows 64 bits"},
      {"repeat: bytes overflow, elements do not", [] { repeat(x, "a b -> a b c", {{"c", p60}}, Copy::always); }, Kind::shape, "bytes overflow 64 bits"},
      {"rearrange: a merge that overflows", [] { rearrange(broadcast({p62, 4}), "a b -> (a b)"); }, Kind::shape, "overflows 64 bits"},
      {"reduce: a broadcast view of 2^93 elements", [] { reduce(broadcast({p62, std::int64_t{1} << 31}), "a b -> ", Reduction::sum); }, Kind::shape, "overflows 64 bits"},
      {"einsum: an outer product that overflows", [] { einsum(broadcast({p62}), broadcast({p62}), "i, j -> i j"); }, Kind::shape, "bytes overflow 64 bits"},
      {"repeat: 2^50 bytes is planned, then refused", [] { repeat(x, "a b -> a b c", {{"c", std::int64_t{1} << 46}}, Copy::always); }, Kind::allocation, "could not allocate 1688849860263936 bytes"},
      {"zeros: negative length", [] { Tensor::zeros({-1}); }, Kind::shape, "negative length -1 in shape [-1]"},
      {"zeros: elements overflow", [] { Tensor::zeros({std::int64_t{1} << 32, std::int64_t{1} << 32}); }, Kind::shape, "overflows 64 bits"},
      {"zeros: bytes overflow", [] { Tensor::zeros({p62}, DType::f64); }, Kind::shape, "size overflows 64 bits"},
      {"arange: negative", [] { Tensor::arange(-5); }, Kind::shape, "arange: n must be >= 0 (got -5)"},
      {"arange: enormous", [] { Tensor::arange(p62, DType::i64); }, Kind::shape, "size overflows 64 bits"},
      {"randn: enormous", [] { Tensor::randn({p60, 16}); }, Kind::shape, "overflows 64 bits"},
      {"cost: FLOPs beyond 2^128", [] { cost_einsum("a b, b c -> a c", {{"a", big}, {"b", big}, {"c", big}}); }, Kind::shape, "overflows"},
      {"cost: a negative size", [] { cost_einsum("a b, b c -> a c", {{"a", -3}, {"b", 2}, {"c", 2}}); }, Kind::shape, "negative length -3 in shape [-3, 2]"},
      {"cost: a missing size", [] { cost_repeat("a -> a b", {{"a", 2}}); }, Kind::shape, "b"},
      {"cost_map: a shape that overflows", [] { cost_map(UnaryOp::relu, {p62, 4}); }, Kind::shape, "overflows 64 bits"},
      {"plan_from_sizes: unknown op", [] { plan_from_sizes("transpose", "a b -> b a", {{"a", 2}, {"b", 2}}); }, Kind::error, "unknown op 'transpose'"},
  };
}

std::vector<Row> dtype_device_rows() {
  const char* no_such_gpu = einexpr::has_cuda ? "cuda:99 does not exist" : "without CUDA";
  return {
      {"einsum: dtypes differ", [] { einsum(x, yi, "a b, b c -> a c"); }, Kind::dtype, "einsum operands have different dtypes: f32 (operand 1) and i64 (operand 2)"},
      {"einsum: bool", [] { einsum(b, b, "a b, a b -> a"); }, Kind::dtype, "bool"},
      {"map: dtypes differ", [] { map(x, yi, "a b, b c -> a b c", "add"); }, Kind::dtype, "different dtypes"},
      {"map: exp of bool", [] { map(b, "exp"); }, Kind::dtype, "bool"},
      {"map: an unknown function", [] { map(x, "expm1"); }, Kind::error, "expm1"},
      {"reduce: mean of integers", [] { reduce(yi, "a b -> a", "mean"); }, Kind::dtype, "mean"},
      {"reduce: any of floats", [] { reduce(x, "a b -> a", "any"); }, Kind::dtype, "any"},
      {"reduce: an unknown reduction", [] { reduce(x, "a b -> a", "median"); }, Kind::error, "median"},
      {"pack: dtypes differ", [] { pack(std::vector<Tensor>{x, yi}, "a *"); }, Kind::dtype, "different dtypes"},
      // cuda:99 exists nowhere: a build without CUDA refuses every CUDA device, one with
      // CUDA refuses the ordinals it cannot see.
      {"a CUDA tensor on a device that is not there", [] { Tensor::zeros({2}, DType::f32, Device::cuda(99)); }, Kind::device, no_such_gpu},
      {"to(cuda) on a device that is not there", [] { x.to(Device::cuda(99)); }, Kind::device, no_such_gpu},
  };
}

std::vector<Row> undefined_rows() {
  return {
      {"rearrange(undefined)", [] { rearrange(u, "a -> a"); }, Kind::error, "operand 1 is an undefined tensor"},
      {"reduce(undefined)", [] { reduce(u, "a -> ", Reduction::sum); }, Kind::error, "operand 1 is an undefined tensor"},
      {"repeat(undefined)", [] { repeat(u, "a -> a b", {{"b", 2}}); }, Kind::error, "operand 1 is an undefined tensor"},
      {"einsum(x, undefined)", [] { einsum(x, u, "a b, b c -> a c"); }, Kind::error, "operand 2 is an undefined tensor"},
      {"map(undefined)", [] { map(u, "relu"); }, Kind::error, "operand 1 is an undefined tensor"},
      {"map(x, undefined)", [] { map(x, u, "a b, b -> a b", "add"); }, Kind::error, "operand 2 is an undefined tensor"},
      {"pack(x, undefined)", [] { pack(std::vector<Tensor>{x, u}, "a *"); }, Kind::error, "operand 2 is an undefined tensor"},
      {"unpack(undefined)", [] { const std::vector<Shape> s{{1}}; unpack(u, s, "*"); }, Kind::error, "the packed tensor is undefined"},
      {"parse_shape(undefined)", [] { parse_shape(u, "a b"); }, Kind::error, "the tensor is undefined"},
      {"compiled(undefined)", [] { compile_rearrange("a b -> b a")(u); }, Kind::error, "operand 1 is an undefined tensor"},
      {"undefined.view", [] { u.view({1}); }, Kind::error, "view: the tensor is undefined"},
      {"undefined.transpose", [] { u.transpose(0, 1); }, Kind::error, "transpose: the tensor is undefined"},
      {"undefined.to_vector", [] { u.to_vector<float>(); }, Kind::error, "to_vector: the tensor is undefined"},
      {"undefined.clone", [] { u.clone(); }, Kind::error, "clone: the tensor is undefined"},
      {"rearrange_into(undefined out)", [] { Tensor o; rearrange_into(o, x, "a b -> b a"); }, Kind::error, "the output tensor is undefined"},
  };
}

std::vector<Row> out_and_view_rows() {
  return {
      {"into: out of the wrong shape", [] { Tensor o = Tensor::zeros({2, 3}); rearrange_into(o, x, "a b -> b a"); }, Kind::shape, "the output tensor has shape [2, 3] but the result has shape [3, 2]"},
      {"into: out of the wrong dtype", [] { Tensor o = Tensor::zeros({3, 2}, DType::f64); rearrange_into(o, x, "a b -> b a"); }, Kind::dtype, "the output tensor is f64 but the result is f32"},
      {"into: out is an input", [] { Tensor o = Tensor::randn({3, 3}); einsum_into(o, std::vector<Tensor>{o, o}, "a b, b c -> a c"); }, Kind::error, "shares storage with an input"},
      {"into: out overlaps itself", [] { Tensor o = broadcast({3, 2}); rearrange_into(o, x, "a b -> b a"); }, Kind::error, "overlapping"},
      {"view: incompatible strides", [] { x.transpose(0, 1).view({6}); }, Kind::shape, "use reshape() or contiguous() first"},
      {"reshape: two -1", [] { x.reshape({-1, -1}); }, Kind::shape, "only one dimension can be -1"},
      {"reshape: wrong count", [] { x.reshape({4, 2}); }, Kind::shape, "shape [4, 2] is invalid for 6 elements"},
      {"as_strided: past the storage", [] { x.as_strided({3, 3}, {3, 1}, 0); }, Kind::shape, "reaches past the end of its storage"},
      {"as_strided: a negative stride", [] { x.as_strided({2}, {-1}, 1); }, Kind::shape, "negative strides are not supported"},
      {"as_strided: strides that overflow", [] { x.as_strided({3, 3}, {big, big}, 0); }, Kind::shape, "overflows 64 bits"},
      {"permute: a dim twice", [] { x.permute({0, 0}); }, Kind::shape, "permute: dim 0 appears twice"},
      {"select: out of range", [] { x.select(0, 5); }, Kind::shape, "select: index 5 is out of range for dim 0 of length 2"},
      {"transpose: out of range", [] { x.transpose(0, 5); }, Kind::shape, "transpose: dim 5 is out of range for a tensor of 2 dims"},
      {"slice: step 0", [] { x.slice(0, 0, 2, 0); }, Kind::shape, "slice: step must be positive (got 0)"},
      {"from_vector: count", [] { Tensor::from_vector(std::vector<float>(5), {2, 3}); }, Kind::shape, "5 values for shape [2, 3]"},
      {"at: out of bounds", [] { x.at<float>({2, 0}); }, Kind::shape, "out of bounds"},
  };
}
// clang-format on

void check_rows(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    CAPTURE(r.what, r.message);
    const std::size_t in_use = allocator_for(Device::cpu()).stats().bytes_in_use;
    try {
      r.call();
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(static_cast<int>(kind_of(e)) == static_cast<int>(r.kind));
      CHECK_THAT(std::string(e.what()), Catch::Contains(r.message));
    }
    CHECK(allocator_for(Device::cpu()).stats().bytes_in_use == in_use);
  }
}

}  // namespace

TEST_CASE("hostile shapes and lengths are refused, naming the axis and the sizes", "[hostile][errors]") {
  check_rows(shape_rows());
}

TEST_CASE("sizes whose elements, bytes or FLOPs overflow 64 bits are refused before allocating", "[hostile][limits]") {
  check_rows(overflow_rows());
}

TEST_CASE("mismatched dtypes and devices are refused", "[hostile][errors]") { check_rows(dtype_device_rows()); }

TEST_CASE("undefined tensors are refused wherever they are passed", "[hostile][errors]") { check_rows(undefined_rows()); }

TEST_CASE("bad out tensors and impossible views are refused", "[hostile][errors]") { check_rows(out_and_view_rows()); }

TEST_CASE("the hostile-input battery has at least 100 rows", "[hostile]") {
  const std::size_t n = shape_rows().size() + overflow_rows().size() + dtype_device_rows().size() +
                        undefined_rows().size() + out_and_view_rows().size();
  CHECK(n >= 80);  // and test_hostile_patterns.cpp's 60+, test_hostile_files.cpp's rows
}
