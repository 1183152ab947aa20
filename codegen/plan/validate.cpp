// validate(): the plan invariants every lowering relies on (plan.hpp's contract), checked
// once per lowered plan; a broken one is an InternalError naming it.
#include <string>
#include <variant>
#include <vector>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

void validate(const Plan& plan) {
  const auto nvalues = static_cast<int>(plan.values.size());
  auto value = [&](int v, const char* what) -> const Value& {
    EINEXPR_ASSERT(v >= 0 && v < nvalues, std::string("plan: ") + what + " refers to a missing value");
    return plan.values[static_cast<std::size_t>(v)];
  };
  EINEXPR_ASSERT(plan.num_inputs >= 0 && plan.num_inputs <= nvalues, "plan: bad input count");
  for (int i = 0; i < plan.num_inputs; ++i)
    EINEXPR_ASSERT(plan.buffers.size() > static_cast<std::size_t>(i) && plan.buffers[static_cast<std::size_t>(i)].input == i,
                   "plan: input " + std::to_string(i) + "'s buffer is not buffer " + std::to_string(i));
  for (const Value& v : plan.values) {
    EINEXPR_ASSERT(v.buffer >= 0 && v.buffer < static_cast<int>(plan.buffers.size()), "plan: value without buffer");
    EINEXPR_ASSERT(v.layout.shape.size() == v.layout.strides.size(), "plan: shape and strides differ in rank");
    EINEXPR_ASSERT(v.dims.size() == v.layout.shape.size(), "plan: a value's axis names differ from its rank");
    for (const DimAxes& dim : v.dims)
      for (AxisId id : dim)
        EINEXPR_ASSERT(id >= 0 && static_cast<std::size_t>(id) < plan.axes.size(), "plan: a value names a missing axis");
    std::int64_t numel = 1;
    for (std::int64_t len : v.layout.shape)
      EINEXPR_ASSERT(len >= 0 && !__builtin_mul_overflow(numel, len, &numel), "plan: a value's element count overflows");
    const PlanBuffer& b = plan.buffers[static_cast<std::size_t>(v.buffer)];
    if (b.input < 0) {
      EINEXPR_ASSERT(v.layout.extent() <= b.elements, "plan: a view reaches past its buffer");
    } else {
      EINEXPR_ASSERT(b.input < nvalues && v.layout.extent() <= plan.values[static_cast<std::size_t>(b.input)].layout.extent(),
                     "plan: a view reaches past its input");
    }
  }
  std::vector<bool> made(plan.values.size(), false);
  for (int i = 0; i < plan.num_inputs; ++i) made[static_cast<std::size_t>(i)] = true;
  auto use = [&](int v) {
    value(v, "a step");
    EINEXPR_ASSERT(made[static_cast<std::size_t>(v)], "plan: a step reads a value before it is made");
  };
  // Which temporaries a step has written: a step that writes (not a view) makes a new buffer,
  // except a copy into a slice (a concatenation), a scatter-add into its accumulator, and a
  // join, which views a buffer its parts filled.
  std::vector<bool> written(plan.buffers.size(), false);
  auto buffer_of = [&](int v) { return static_cast<std::size_t>(value(v, "a step").buffer); };
  auto make = [&](int v) {
    value(v, "a step");
    EINEXPR_ASSERT(!made[static_cast<std::size_t>(v)], "plan: a value is made twice");
    made[static_cast<std::size_t>(v)] = true;
  };
  auto write = [&](int v, bool may_exist) {
    make(v);
    const std::size_t b = buffer_of(v);
    EINEXPR_ASSERT(plan.buffers[b].input < 0, "plan: a step writes into an input's buffer");
    EINEXPR_ASSERT(may_exist || !written[b], "plan: a step writes a new value into a buffer an earlier step made");
    written[b] = true;
  };
  auto same_dtype = [&](int v, const char* what) {
    EINEXPR_ASSERT(plan.dtype_of(v) == plan.dtype, std::string("plan: ") + what + " reads or writes a value of dtype " +
                                                       std::string(name(plan.dtype_of(v))) + " in a " +
                                                       std::string(name(plan.dtype)) + " plan");
  };
  auto integer = [&](int v, const char* what) {
    EINEXPR_ASSERT(plan.dtype_of(v) == DType::i64 || plan.dtype_of(v) == DType::i32,
                   std::string("plan: ") + what + "'s indices are not i64 or i32");
  };
  auto part_ok = [&](const AxisPart& p, std::int64_t length, const char* what) {
    EINEXPR_ASSERT(!p.split() || (p.first >= 0 && length <= p.total - p.first),
                   std::string("plan: ") + what + "'s part of its axis lies outside it");
  };
  for (const Step& step : plan.steps) {
    std::visit(
        [&](const auto& s) {
          using S = std::decay_t<decltype(s)>;
          if constexpr (std::is_same_v<S, ViewStep>) {
            use(s.src);
            make(s.dst);
            EINEXPR_ASSERT(value(s.src, "view").buffer == value(s.dst, "view").buffer, "plan: a view changes buffer");
          } else if constexpr (std::is_same_v<S, CopyStep>) {
            use(s.src);
            write(s.dst, true);
            EINEXPR_ASSERT(plan.dtype_of(s.src) == plan.dtype_of(s.dst), "plan: a copy changes dtype");
            EINEXPR_ASSERT(value(s.src, "copy").layout.shape == value(s.dst, "copy").layout.shape,
                           "plan: a copy changes shape");
          } else if constexpr (std::is_same_v<S, ContractStep>) {
            use(s.a);
            use(s.b);
            write(s.dst, false);
            for (int v : {s.a, s.b, s.dst}) same_dtype(v, "a contraction");
            const Shape& a = value(s.a, "contract").layout.shape;
            const Shape& b = value(s.b, "contract").layout.shape;
            const Shape& c = value(s.dst, "contract").layout.shape;
            const auto nb = static_cast<std::size_t>(s.batch_dims);
            EINEXPR_ASSERT(a.size() == nb + 2 && b.size() == nb + 2 && c.size() == nb + 2,
                           "plan: a contraction's operands are not [batch.., m, k] x [batch.., k, n]");
            for (std::size_t d = 0; d < nb; ++d)
              EINEXPR_ASSERT(a[d] == b[d] && a[d] == c[d], "plan: a contraction's batch dims differ");
            EINEXPR_ASSERT(a[nb] == c[nb] && b[nb + 1] == c[nb + 1] && a[nb + 1] == b[nb],
                           "plan: a contraction's m, n, k do not match");
          } else if constexpr (std::is_same_v<S, ReduceStep>) {
            use(s.src);
            write(s.dst, false);
            same_dtype(s.src, "a reduction");
            same_dtype(s.dst, "a reduction");
            const Shape& in = value(s.src, "reduce").layout.shape;
            EINEXPR_ASSERT(value(s.dst, "reduce").layout.shape.size() + s.axes.size() == in.size(),
                           "plan: a reduction's output rank is wrong");
          } else if constexpr (std::is_same_v<S, NormStep>) {
            EINEXPR_ASSERT(s.srcs.size() == (s.backward ? 2u : 1u), "plan: a normalization has the wrong sources");
            for (int v : s.srcs) {
              use(v);
              same_dtype(v, "a normalization");
              EINEXPR_ASSERT(value(v, "normalize").layout.shape == value(s.dst, "normalize").layout.shape,
                             "plan: a normalization's source shape differs from its output");
            }
            for (int a : s.axes)
              EINEXPR_ASSERT(a >= 0 && static_cast<std::size_t>(a) < value(s.dst, "normalize").layout.shape.size(),
                             "plan: a normalization's dim is out of range");
            write(s.dst, false);
          } else if constexpr (std::is_same_v<S, MapStep>) {
            const std::size_t want = std::visit(
                [](const auto& op) -> std::size_t {
                  using O = std::decay_t<decltype(op)>;
                  if constexpr (std::is_same_v<O, UnaryOp>) return 1;
                  else if constexpr (std::is_same_v<O, BinaryOp>) return 2;
                  else return static_cast<std::size_t>(arity(op));
                },
                s.op);
            EINEXPR_ASSERT(s.srcs.size() == want, "plan: a map has the wrong number of operands");
            for (int v : s.srcs) {
              use(v);
              same_dtype(v, "a map");
              EINEXPR_ASSERT(value(v, "map").layout.shape == value(s.dst, "map").layout.shape,
                             "plan: a map's operand shape differs from its output");
            }
            write(s.dst, false);
          } else if constexpr (std::is_same_v<S, EmbedStep>) {
            use(s.src);
            write(s.dst, false);
            const Value& d = value(s.dst, "embed");
            EINEXPR_ASSERT(value(s.src, "embed").layout.shape == s.into.shape, "plan: an embedding's shape differs");
            EINEXPR_ASSERT(s.into.shape.size() == s.into.strides.size() &&
                               plan.buffers.at(static_cast<std::size_t>(d.buffer)).input < 0 &&
                               s.into.extent() <= plan.buffers.at(static_cast<std::size_t>(d.buffer)).elements,
                           "plan: an embedding reaches past its buffer");
          } else if constexpr (std::is_same_v<S, FillStep>) {
            write(s.dst, false);
          } else if constexpr (std::is_same_v<S, GatherStep>) {
            use(s.src);
            use(s.index);
            write(s.dst, false);
            integer(s.index, "a gather");
            EINEXPR_ASSERT(plan.dtype_of(s.src) == plan.dtype_of(s.dst), "plan: a gather changes dtype");
            const Shape& d = value(s.dst, "gather").layout.shape;
            EINEXPR_ASSERT(value(s.src, "gather").layout.shape == d && value(s.index, "gather").layout.shape == d,
                           "plan: a gather's table or indices differ from its output's shape");
            EINEXPR_ASSERT(s.length >= 0, "plan: a gather's indexed axis has a negative length");
            part_ok(s.part, s.length, "a gather");
          } else if constexpr (std::is_same_v<S, ScatterAddStep>) {
            use(s.acc);
            use(s.index);
            use(s.updates);
            integer(s.index, "a scatter-add");
            EINEXPR_ASSERT(value(s.acc, "scatter_add").buffer == value(s.dst, "scatter_add").buffer,
                           "plan: a scatter-add writes another buffer than its accumulator's");
            EINEXPR_ASSERT(written[buffer_of(s.acc)], "plan: a scatter-add into a buffer no step has written");
            write(s.dst, true);
            EINEXPR_ASSERT(plan.dtype_of(s.updates) == plan.dtype_of(s.dst), "plan: a scatter-add changes dtype");
            const Shape& u = value(s.updates, "scatter_add").layout.shape;
            EINEXPR_ASSERT(value(s.acc, "scatter_add").layout.shape == u && value(s.index, "scatter_add").layout.shape == u,
                           "plan: a scatter-add's accumulator or indices differ from its updates' shape");
            part_ok(s.part, s.length, "a scatter-add");
          } else if constexpr (std::is_same_v<S, JoinStep>) {
            EINEXPR_ASSERT(!s.parts.empty(), "plan: a join of no parts");
            for (int v : s.parts) {
              use(v);
              EINEXPR_ASSERT(value(v, "join").buffer == value(s.dst, "join").buffer, "plan: a join's part is in another buffer");
            }
            make(s.dst);
          } else if constexpr (std::is_same_v<S, RandomStep>) {
            use(s.seed);
            write(s.dst, false);
            EINEXPR_ASSERT(plan.dtype_of(s.seed) == DType::i64 && value(s.seed, "random").layout.shape.empty(),
                           "plan: a random mask's seed is not a 0-d i64");
            EINEXPR_ASSERT(plan.dtype_of(s.dst) == DType::boolean, "plan: a random mask is not bool");
            const Layout& d = value(s.dst, "random").layout;
            EINEXPR_ASSERT(d.offset == 0 && d.strides == contiguous_strides(d.shape),
                           "plan: a random mask is not contiguous");
            EINEXPR_ASSERT(s.p >= 0 && s.p < 1, "plan: a random mask's probability is outside [0, 1)");
          } else if constexpr (std::is_same_v<S, MaskStep>) {
            use(s.src);
            use(s.mask);
            write(s.dst, false);
            EINEXPR_ASSERT(plan.dtype_of(s.mask) == DType::boolean, "plan: a mask step's mask is not bool");
            EINEXPR_ASSERT(plan.dtype_of(s.src) == plan.dtype_of(s.dst) && is_floating(plan.dtype_of(s.dst)),
                           "plan: a mask step's source and output are not floats of one dtype");
            const Shape& d = value(s.dst, "mask").layout.shape;
            EINEXPR_ASSERT(value(s.src, "mask").layout.shape == d && value(s.mask, "mask").layout.shape == d,
                           "plan: a mask step's source or mask differs from its output's shape");
          } else {
            static_assert(std::is_same_v<S, CrossEntropyStep>, "validate(): a step kind without its checks");
            // backward: dY, the logits, the targets, and optionally the forward's loss
            EINEXPR_ASSERT(s.backward ? (s.srcs.size() == 3u || s.srcs.size() == 4u) : s.srcs.size() == 2u,
                           "plan: a cross-entropy has the wrong sources");
            for (int v : s.srcs) use(v);
            write(s.dst, false);
            const int logits = s.srcs[s.backward ? 1 : 0], targets = s.srcs[s.backward ? 2 : 1];
            integer(targets, "a cross-entropy");
            const Shape& x = value(logits, "cross_entropy").layout.shape;
            EINEXPR_ASSERT(s.axis >= 0 && static_cast<std::size_t>(s.axis) < x.size(),
                           "plan: a cross-entropy's class dim is out of range");
            Shape rows = x;
            rows.erase(rows.begin() + s.axis);
            for (int v : s.srcs)
              if (v != logits)
                EINEXPR_ASSERT(value(v, "cross_entropy").layout.shape == rows,
                               "plan: a cross-entropy's rows differ from the logits'");
            EINEXPR_ASSERT(value(s.dst, "cross_entropy").layout.shape == (s.backward ? x : rows),
                           "plan: a cross-entropy's output has the wrong shape");
            part_ok(s.part, x[static_cast<std::size_t>(s.axis)], "a cross-entropy");
          }
        },
        step);
  }
  use(plan.output);
}

}  // namespace einexpr
