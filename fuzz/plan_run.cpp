// fuzz_plan's and fuzz_order's execution of small cases: lower_cpu + run on random data,
// with offsets and the case's strides. Invariants (a violation aborts):
//   - the run leaves every input's storage byte-for-byte as it was;
//   - the result has the plan's output shape and, for a consistent case, equals the naive
//     reference loop (tests/lib/reference.cpp): exactly for copies and integers, within the
//     dtype's tolerance for float arithmetic;
//   - the public op (rearrange, reduce, ... with the engine's caches; called twice, the
//     second time from the program cache) and a Compiled expression give the same bytes;
//   - run_into a fresh tensor (contiguous or transposed) gives the same values;
//   - with the k-th allocation failing, the run throws AllocationError and the inputs stay;
//   - pack and unpack (no reference) undo each other: pack's result unpacks to its inputs,
//     unpack's outputs pack back to its input, byte for byte;
//   - an einsum's gradients (derived from its plan, backward.hpp) run and equal the naive
//     f64 gradient (tests/lib/reference.cpp), diagonals, 0-d and broadcast operands included.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/codegen/lower.hpp"
#include "einexpr/einexpr.hpp"
#include "fuzz_support.hpp"
#include "plan_case.hpp"
#include "reference.hpp"

using namespace einexpr;

namespace fuzz {

namespace {

constexpr std::int64_t max_elements = 4096;       // every buffer of the plan together
constexpr std::int64_t max_reference_work = 1 << 15;

/// Elements of every buffer the run touches, saturating at INT64_MAX (an input of INT64_MAX
/// elements, from a pattern's own number, planned without the "huge" flag: the sum wrapped).
std::int64_t footprint(const Case& c, const Plan& plan) {
  std::int64_t total = 0;
  auto add = [&](std::int64_t n) {
    if (__builtin_add_overflow(total, n, &total)) total = std::numeric_limits<std::int64_t>::max();
  };
  add(checked_numel(plan.output_value().layout.shape));
  for (const Layout& l : c.inputs) {
    add(l.extent());
    add(3);  // the offset run_case gives it
  }
  for (const PlanBuffer& b : plan.buffers) add(b.input < 0 ? b.elements : 0);
  return total;
}

/// The reference's loop count: the product of every axis's length (names, "...", numbers).
std::int64_t reference_work(const Case& c) {
  double work = 1;
  for (const auto& [n, len] : c.sizes) work *= static_cast<double>(std::max<std::int64_t>(len, 1));
  for (std::int64_t len : c.out_ellipsis) work *= static_cast<double>(std::max<std::int64_t>(len, 1));
  auto anonymous = [&](const ast::Operand& o) {
    for (const ast::Term& t : o.terms) {
      if (const auto* a = std::get_if<ast::Anonymous>(&t)) work *= static_cast<double>(a->length);
      if (const auto* g = std::get_if<ast::Group>(&t))
        for (const ast::Atom& x : g->atoms)
          if (const auto* a = std::get_if<ast::Anonymous>(&x)) work *= static_cast<double>(a->length);
    }
  };
  for (const ast::Operand& o : c.pattern.operands) anonymous(o);
  anonymous(c.pattern.output);
  // the reference reads each input whole, element by element: a broadcast view (stride 0) of
  // few elements in memory may still hold many (an input's "..." of 2^29, found by fuzz_plan
  // on 2026-11-28: a 4.35 GB vector for a 100-byte case)
  for (const Layout& l : c.inputs) {
    double n = 1;
    for (std::int64_t len : l.shape) n *= static_cast<double>(std::max<std::int64_t>(len, 1));
    work = std::max(work, n);
  }
  return work > static_cast<double>(max_reference_work) ? max_reference_work + 1 : static_cast<std::int64_t>(work);
}

std::vector<Tensor> make_inputs(const Case& c) {
  std::vector<Tensor> xs;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const Layout& l = c.inputs[i];
    const std::int64_t n = std::max<std::int64_t>(l.extent() + c.offsets[i], 1);
    const Tensor storage = Tensor::randn({n}, c.dtype, c.seed * 31u + i);
    xs.push_back(storage.as_strided(l.shape, l.strides, c.offsets[i]));
  }
  return xs;
}

std::vector<std::vector<std::byte>> snapshot(const std::vector<Tensor>& xs) {
  std::vector<std::vector<std::byte>> s;
  for (const Tensor& x : xs) s.emplace_back(x.storage()->data(), x.storage()->data() + x.storage()->nbytes());
  return s;
}

void check_untouched(const std::vector<Tensor>& xs, const std::vector<std::vector<std::byte>>& before,
                     const std::string& what) {
  for (std::size_t i = 0; i < xs.size(); ++i)
    FUZZ_CHECK(std::memcmp(xs[i].storage()->data(), before[i].data(), before[i].size()) == 0,
               "input " + std::to_string(i) + " changed by " + what);
}

std::vector<std::byte> bytes_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const std::byte*>(c.data_ptr());
  return std::vector<std::byte>(p, p + c.nbytes());
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

bool comparable(const Case& c) {
  if (!c.consistent || c.kind == Kind::pack || c.kind == Kind::unpack) return false;  // check_pack_round_trip
  if (c.kind == Kind::rearrange && !c.pattern.more_outputs.empty()) return false;     // check_split
  if (c.kind == Kind::rearrange || c.kind == Kind::repeat) return true;  // copies: exact in every dtype
  if (c.dtype == DType::f64 || c.dtype == DType::f32 || is_integer(c.dtype)) return true;
  return c.dtype == DType::boolean && c.kind == Kind::reduce;
}

/// The reference gets every axis's length: in a consistent case all are known, and its own
/// inference is weaker than the planner's (a group of length 0 leaves an atom undecided).
reference::Result reference_of(const Case& c, const std::vector<Tensor>& xs) {
  AxisLengths all;
  for (const std::string& n : c.names) all.emplace_back(n, c.sizes.at(n));
  switch (c.kind) {
    case Kind::rearrange: return reference::rearrange(xs[0], c.text, all);
    case Kind::reduce: return reference::reduce(xs[0], c.text, c.reduction, all);
    case Kind::repeat: return reference::repeat(xs[0], c.text, all);
    case Kind::einsum: return reference::einsum(xs, c.text, all);
    case Kind::binary: return reference::binary(xs[0], xs[1], c.text, c.binary, all);
    case Kind::unary: break;
    case Kind::get_at: case Kind::add_at: case Kind::cross_entropy:  // not run (plan_case.hpp)
    case Kind::pack: case Kind::unpack:                                // check_pack_round_trip
      throw InternalError("fuzz: an indexed kind, pack or unpack reached the reference", __FILE__, __LINE__);
  }
  reference::Result r{xs[0].shape(), xs[0].to_vector<double>()};
  for (double& v : r.values) v = reference::unary(c.unary, v);
  return r;
}

/// Whether a prod's f32 or f64 result depends on the order of its factors: some partial
/// product may leave the dtype's normal range (overflow to inf, or underflow into subnormals
/// and 0) though the f64 reference's does not, or the other way round. numpy and torch
/// multiply in the dtype too, each in its own order. Bounded from the input's largest and
/// smallest nonzero magnitudes and the factors an output takes (a prod of 3,240 factors of
/// -1.23 is 9.6e96 in the f64 reference, inf in f32; one of 3,360 factors of -1.8 and smaller
/// ones gave inf where the reference's product is 0, and 1.6e30 where it is inf).
bool prod_leaves_range(const Case& c, const Tensor& x, std::int64_t n_out) {
  if (c.kind != Kind::reduce || c.reduction != Reduction::prod || !is_floating(c.dtype)) return false;
  const bool f32 = c.dtype != DType::f64;
  const double max_exp = f32 ? std::numeric_limits<float>::max_exponent : std::numeric_limits<double>::max_exponent;
  const double min_exp = f32 ? std::numeric_limits<float>::min_exponent : std::numeric_limits<double>::min_exponent;
  double big = 1, small = 1;
  for (double v : x.to_vector<double>()) {
    const double a = std::fabs(v);
    if (!std::isfinite(a)) return true;
    if (a > big) big = a;
    if (a != 0 && a < small) small = a;
  }
  const double factors = std::ceil(static_cast<double>(checked_numel(x.shape())) / static_cast<double>(n_out));
  return factors * std::log2(big) >= max_exp - 1 || factors * std::log2(small) <= min_exp;
}

void compare_with_reference(const Case& c, const Plan& plan, const std::vector<Tensor>& xs, const Tensor& out) {
  reference::Result want = reference_of(c, xs);
  if (c.dtype == DType::i32) {  // the engine wraps to 32 bits, the reference to 64 (in a double)
    for (double v : want.values)
      if (std::fabs(v) >= 9007199254740992.0) return;  // 2^53: the double lost the low bits
    for (double& v : want.values) v = static_cast<double>(static_cast<std::int32_t>(static_cast<std::int64_t>(v)));
  }
  if (c.kind == Kind::unary && !is_floating(c.dtype))
    return;  // integer relu/abs/... round differently through double; covered by tests
  const std::int64_t n_out = std::max<std::int64_t>(checked_numel(out.shape()), 1);
  if (prod_leaves_range(c, xs[0], n_out)) return;
  const std::int64_t terms = std::max<std::int64_t>(reference_work(c) / n_out, 1);
  const bool copy = c.kind == Kind::rearrange || c.kind == Kind::repeat;
  const double tol = copy ? 0 : reference::tolerance(c.dtype, terms) * 4;
  const double err = reference::max_rel_error(out, want);
  FUZZ_CHECK(err <= tol, "wrong result: relative error " + number(err) + " (tolerance " + number(tol) + ") for " +
                             name(c.kind) + " '" + c.text + "' " + std::string(name(c.dtype)) + "\n" + to_string(plan));
}

void check_einsum_gradients(const Case& c, const Plan& plan, const std::vector<Gradient>* grads,
                            const std::vector<Tensor>& xs, const Tensor& out) {
  if (c.kind != Kind::einsum || !is_floating(c.dtype) || (c.dtype != DType::f64 && c.dtype != DType::f32)) return;
  AxisLengths all;
  for (const std::string& n : c.names) all.emplace_back(n, c.sizes.at(n));
  const Tensor dy = Tensor::randn(out.shape(), c.dtype, c.seed + 1u);
  std::vector<Tensor> got;
  try {
    got = grads != nullptr ? run_gradients(plan, *grads, xs, out, dy) : run_gradients(plan, xs, out, dy);
  } catch (const Error& e) {
    FUZZ_CHECK(false, std::string("an einsum's gradients fail to run: ") + e.what() + "\n" + to_string(plan));
  }
  const std::vector<reference::Result> want = reference::einsum_gradients(xs, c.text, dy.to_vector<double>(), all);
  FUZZ_CHECK(got.size() == want.size(), "one gradient per operand");
  const std::int64_t terms = std::max<std::int64_t>(reference_work(c), 1);
  const double tol = reference::tolerance(c.dtype, terms) * 4;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = reference::max_rel_error(got[i], want[i]);
    FUZZ_CHECK(err <= tol, "wrong gradient of operand " + std::to_string(i + 1) + ": relative error " + number(err) +
                               " for einsum '" + c.text + "' " + std::string(name(c.dtype)) + "\n" + to_string(plan));
  }
}

/// The same case through the public op (parse and plan caches, context on errors).
Tensor public_op(const Case& c, const std::vector<Tensor>& xs) {
  switch (c.kind) {
    case Kind::rearrange: return rearrange(xs[0], c.text, c.lengths, c.copy);
    case Kind::reduce: return reduce(xs[0], c.text, c.reduction, c.lengths);
    case Kind::repeat: return repeat(xs[0], c.text, c.lengths, c.copy);
    case Kind::einsum: return einsum(xs, c.text, c.lengths);
    case Kind::binary: return map(xs[0], xs[1], c.text, c.binary);
    case Kind::unary: return map(xs[0], c.unary);
    case Kind::pack: return pack(xs, c.text).first;
    case Kind::unpack: return unpack(xs[0], c.unpack_shapes, c.text).at(static_cast<std::size_t>(c.unpack_output));
    case Kind::get_at: case Kind::add_at: case Kind::cross_entropy: break;
  }
  return {};
}

void compare_with_public_op(const Case& c, const std::vector<Tensor>& xs, const Tensor& out) {
  if (c.kind == Kind::einsum && c.order != ContractionOrder::optimal) return;  // another order rounds differently
  if (c.kind == Kind::binary && !c.lengths.empty()) return;                  // map() takes no lengths
  Tensor got;
  try {
    got = public_op(c, xs);
  } catch (const Error& e) {
    FUZZ_CHECK(false, std::string("the public op fails where the plan ran: ") + e.what());
  }
  FUZZ_CHECK(got.shape() == out.shape() && bytes_of(got) == bytes_of(out),
             std::string("the public op differs from the plan's run for '") + c.text + "'");
  try {
    got = public_op(c, xs);  // again: now from the program cache
  } catch (const Error& e) {
    FUZZ_CHECK(false, std::string("the public op fails from its cache where it ran: ") + e.what());
  }
  FUZZ_CHECK(got.shape() == out.shape() && bytes_of(got) == bytes_of(out),
             std::string("the public op from its cache differs from the plan's run for '") + c.text + "'");
  if (c.kind == Kind::binary || c.kind == Kind::unary || c.kind == Kind::pack || c.kind == Kind::unpack) return;
  static constexpr Op ops[] = {Op::rearrange, Op::reduce, Op::repeat, Op::einsum};
  try {
    const Compiled f(ops[static_cast<int>(c.kind)], c.text, c.lengths, c.reduction, c.copy);
    got = f.run(xs);
  } catch (const Error& e) {
    FUZZ_CHECK(false, std::string("the compiled expression fails where the plan ran: ") + e.what());
  }
  FUZZ_CHECK(bytes_of(got) == bytes_of(out), std::string("the compiled expression differs for '") + c.text + "'");
}

/// A split's outputs from the public op (copied in one pass over the input where they are all
/// rows of it) against each output's own program: the same shapes and bytes, output 0 the
/// one run here; with Copy::always none of them shares the input's storage. With Copy::never
/// an output that cannot be a view is refused alone and by split alike.
void check_split(const Case& c, const std::vector<Tensor>& xs, const Tensor& out) {
  if (c.kind != Kind::rearrange || c.pattern.more_outputs.empty()) return;
  std::vector<Tensor> wants{out};
  bool refused = false;
  for (std::size_t j = 1; j <= c.pattern.more_outputs.size() && !refused; ++j) {
    try {
      wants.push_back(apply(OpSpec::rearrange(c.lengths, c.copy, static_cast<int>(j)), xs, c.text));
    } catch (const Error& e) {
      FUZZ_CHECK(c.copy == Copy::never, "output " + std::to_string(j) + " of a split fails alone: " + e.what());
      refused = true;
    }
  }
  std::vector<Tensor> parts;
  try {
    parts = split(xs[0], c.text, c.lengths, c.copy);
  } catch (const Error& e) {
    FUZZ_CHECK(refused, std::string("split fails where each of its outputs ran: ") + e.what());
    return;
  }
  FUZZ_CHECK(!refused, "split ran where one of its outputs alone was refused");
  FUZZ_CHECK(parts.size() == wants.size(), "split gave another number of outputs than the pattern has");
  for (std::size_t j = 0; j < parts.size(); ++j) {
    FUZZ_CHECK(parts[j].shape() == wants[j].shape() && bytes_of(parts[j]) == bytes_of(wants[j]),
               "output " + std::to_string(j) + " of split differs from its own program's for '" + c.text + "'");
    FUZZ_CHECK(c.copy != Copy::always || !parts[j].same_storage(xs[0]),
               "output " + std::to_string(j) + " of a split with Copy::always views its input");
  }
}

/// pack and unpack undo each other: a consistent pack's result unpacks (its "*" shapes) to
/// its inputs, byte for byte; a consistent unpack's outputs (one of them planned and run
/// here, compared with the public op above) pack back to its input.
void check_pack_round_trip(const Case& c, const std::vector<Tensor>& xs, const Tensor& out) {
  if (!c.consistent || (c.kind != Kind::pack && c.kind != Kind::unpack)) return;
  try {
    if (c.kind == Kind::pack) {
      const std::vector<Tensor> back = unpack(out, c.ellipsis, c.text);
      FUZZ_CHECK(back.size() == xs.size(), "unpack gave another number of tensors than pack took");
      for (std::size_t i = 0; i < xs.size(); ++i)
        FUZZ_CHECK(back[i].shape() == xs[i].shape() && bytes_of(back[i]) == bytes_of(xs[i]),
                   "pack then unpack does not give back tensor " + std::to_string(i + 1) + " for '" + c.text + "'");
    } else {
      const std::vector<Tensor> parts = unpack(xs[0], c.unpack_shapes, c.text);
      const Tensor again = pack(parts, c.text).first;
      FUZZ_CHECK(again.shape() == xs[0].shape() && bytes_of(again) == bytes_of(xs[0]),
                 "unpack then pack does not give back the packed tensor for '" + c.text + "'");
    }
  } catch (const Error& e) {
    FUZZ_CHECK(false, std::string("a round trip through pack and unpack fails: ") + e.what());
  }
}

/// run_into a fresh tensor, contiguous or stored transposed, pre-filled with 7s.
void check_run_into(const Case& c, const Program& program, const std::vector<Tensor>& xs, const Tensor& out) {
  const Shape& shape = out.shape();
  Tensor dst;
  if (c.seed % 2 == 0 || shape.size() < 2) {
    dst = Tensor::full(shape, 7.0, c.dtype);
  } else {
    std::vector<int> perm;
    for (int d = static_cast<int>(shape.size()); d-- > 0;) perm.push_back(d);
    dst = Tensor::full(Shape(shape.rbegin(), shape.rend()), 7.0, c.dtype).permute(perm);
  }
  program.run_into(xs, dst);
  FUZZ_CHECK(bytes_of(dst) == bytes_of(out), std::string("run_into differs from run for '") + c.text + "'");
}

/// With the k-th CPU allocation failing: AllocationError, and the inputs untouched.
void check_failed_allocation(const Case& c, const Program& program, const std::vector<Tensor>& xs,
                             const std::vector<std::vector<std::byte>>& before) {
  const long k = static_cast<long>(c.fail_at % (program.temp_bytes.size() + 1));
  testing::fail_cpu_allocation_after(k);
  try {
    (void)program.run(xs);
  } catch (const AllocationError&) {
  }
  testing::fail_cpu_allocation_after(-1);
  check_untouched(xs, before, "a run whose allocation failed");
}

}  // namespace

void run_case(const Case& c, const Plan& plan, const std::vector<Gradient>* grads) {
  if (footprint(c, plan) > max_elements || reference_work(c) > max_reference_work) return;
  const Program program = lower_cpu(plan);
  const std::vector<Tensor> xs = make_inputs(c);
  const auto before = snapshot(xs);
  Tensor out;
  try {
    out = program.run(xs);
  } catch (const Error& e) {
    FUZZ_CHECK(false, std::string("a planned case fails to run: ") + e.what() + "\n" + to_string(plan));
  }
  check_untouched(xs, before, "the run");
  FUZZ_CHECK(out.shape() == plan.output_value().layout.shape, "the run's shape is not the plan's");
  if (comparable(c)) {
    compare_with_reference(c, plan, xs, out);
    check_einsum_gradients(c, plan, grads, xs, out);
  }
  compare_with_public_op(c, xs, out);
  check_untouched(xs, before, "the public op");
  check_split(c, xs, out);
  check_untouched(xs, before, "split");
  check_pack_round_trip(c, xs, out);
  check_untouched(xs, before, "pack and unpack");
  check_run_into(c, program, xs, out);
  check_failed_allocation(c, program, xs, before);
}

}  // namespace fuzz
