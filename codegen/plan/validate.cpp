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
  auto make = [&](int v) {
    value(v, "a step");
    EINEXPR_ASSERT(!made[static_cast<std::size_t>(v)], "plan: a value is made twice");
    made[static_cast<std::size_t>(v)] = true;
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
            make(s.dst);
            EINEXPR_ASSERT(value(s.src, "copy").layout.shape == value(s.dst, "copy").layout.shape,
                           "plan: a copy changes shape");
          } else if constexpr (std::is_same_v<S, ContractStep>) {
            use(s.a);
            use(s.b);
            make(s.dst);
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
            make(s.dst);
            const Shape& in = value(s.src, "reduce").layout.shape;
            EINEXPR_ASSERT(value(s.dst, "reduce").layout.shape.size() + s.axes.size() == in.size(),
                           "plan: a reduction's output rank is wrong");
          } else if constexpr (std::is_same_v<S, NormStep>) {
            EINEXPR_ASSERT(s.srcs.size() == (s.backward ? 2u : 1u), "plan: a normalization has the wrong sources");
            for (int v : s.srcs) {
              use(v);
              EINEXPR_ASSERT(value(v, "normalize").layout.shape == value(s.dst, "normalize").layout.shape,
                             "plan: a normalization's source shape differs from its output");
            }
            for (int a : s.axes)
              EINEXPR_ASSERT(a >= 0 && static_cast<std::size_t>(a) < value(s.dst, "normalize").layout.shape.size(),
                             "plan: a normalization's dim is out of range");
            make(s.dst);
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
              EINEXPR_ASSERT(value(v, "map").layout.shape == value(s.dst, "map").layout.shape,
                             "plan: a map's operand shape differs from its output");
            }
            make(s.dst);
          } else {
            use(s.src);
            make(s.dst);
            const Value& d = value(s.dst, "embed");
            EINEXPR_ASSERT(value(s.src, "embed").layout.shape == s.into.shape, "plan: an embedding's shape differs");
            EINEXPR_ASSERT(s.into.shape.size() == s.into.strides.size() &&
                               plan.buffers.at(static_cast<std::size_t>(d.buffer)).input < 0 &&
                               s.into.extent() <= plan.buffers.at(static_cast<std::size_t>(d.buffer)).elements,
                           "plan: an embedding reaches past its buffer");
          }
        },
        step);
  }
  use(plan.output);
}

}  // namespace einexpr
