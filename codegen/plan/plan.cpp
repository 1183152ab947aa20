#include "einexpr/codegen/plan.hpp"

#include <cstdio>
#include <sstream>

#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

template <class E, std::size_t N>
E parse_enum(std::string_view text, const char* (*namer)(E) noexcept, const E (&all)[N], const char* what) {
  for (E e : all)
    if (text == namer(e)) return e;
  std::string list;
  for (std::size_t i = 0; i < N; ++i) list += (i ? ", " : "") + std::string(namer(all[i]));
  throw Error("unknown " + std::string(what) + " '" + std::string(text) + "' (expected one of " + list + ")");
}

constexpr Reduction all_reductions[] = {Reduction::sum, Reduction::mean, Reduction::max,
                                        Reduction::min, Reduction::prod, Reduction::any,
                                        Reduction::all, Reduction::var,  Reduction::std,
                                        Reduction::logsumexp};
constexpr BinaryOp all_binary[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul,
                                   BinaryOp::div, BinaryOp::maximum, BinaryOp::minimum};

}  // namespace

const char* name(Reduction r) noexcept {
  switch (r) {
    case Reduction::sum: return "sum";
    case Reduction::mean: return "mean";
    case Reduction::max: return "max";
    case Reduction::min: return "min";
    case Reduction::prod: return "prod";
    case Reduction::any: return "any";
    case Reduction::all: return "all";
    case Reduction::var: return "var";
    case Reduction::std: return "std";
    case Reduction::logsumexp: return "logsumexp";
  }
  return "?";
}

const char* name(UnaryOp op) noexcept {
  switch (op) {
    case UnaryOp::relu: return "relu";
    case UnaryOp::gelu: return "gelu";
    case UnaryOp::exp: return "exp";
    case UnaryOp::log: return "log";
    case UnaryOp::square: return "square";
    case UnaryOp::sqrt: return "sqrt";
    case UnaryOp::rsqrt: return "rsqrt";
    case UnaryOp::neg: return "neg";
    case UnaryOp::abs: return "abs";
    case UnaryOp::sigmoid: return "sigmoid";
    case UnaryOp::tanh: return "tanh";
    case UnaryOp::silu: return "silu";
    case UnaryOp::reciprocal: return "reciprocal";
    case UnaryOp::gelu_erf: return "gelu_erf";
    case UnaryOp::erf: return "erf";
    case UnaryOp::softplus: return "softplus";
  }
  return "?";
}

const char* name(BinaryOp op) noexcept {
  switch (op) {
    case BinaryOp::add: return "add";
    case BinaryOp::sub: return "sub";
    case BinaryOp::mul: return "mul";
    case BinaryOp::div: return "div";
    case BinaryOp::maximum: return "maximum";
    case BinaryOp::minimum: return "minimum";
  }
  return "?";
}

Reduction parse_reduction(std::string_view text) { return parse_enum(text, name, all_reductions, "reduction"); }

const char* name(Normalization n) noexcept {
  switch (n) {
    case Normalization::softmax: return "softmax";
    case Normalization::log_softmax: return "log_softmax";
    case Normalization::layer_norm: return "layer_norm";
    case Normalization::rms_norm: return "rms_norm";
  }
  return "?";
}

Normalization parse_normalization(std::string_view text) {
  constexpr Normalization all[] = {Normalization::softmax, Normalization::log_softmax, Normalization::layer_norm,
                                   Normalization::rms_norm};
  return parse_enum(text, name, all, "normalization");
}

std::variant<UnaryOp, BinaryOp> parse_map_function(std::string_view text, std::size_t operands) {
  auto list = [](const auto& all) {
    std::string s;
    for (auto f : all) s += (s.empty() ? "" : ", ") + std::string(name(f));
    return s;
  };
  for (UnaryOp f : all_unary_ops)
    if (text == name(f)) {
      if (operands != 1)
        throw Error("map function '" + std::string(text) + "' takes one operand, but " + std::to_string(operands) +
                    " are given (functions of two: " + list(all_binary) + ")");
      return f;
    }
  for (BinaryOp f : all_binary)
    if (text == name(f)) {
      if (operands != 2)
        throw Error("map function '" + std::string(text) + "' takes two operands, but " + std::to_string(operands) +
                    (operands == 1 ? " is" : " are") + " given");
      return f;
    }
  throw Error("unknown function '" + std::string(text) + "' (of one operand: " + list(all_unary_ops) +
              "; of two: " + list(all_binary) + ")");
}
UnaryOp parse_unary_op(std::string_view text) { return parse_enum(text, name, all_unary_ops, "function"); }
BinaryOp parse_binary_op(std::string_view text) { return parse_enum(text, name, all_binary, "function"); }

bool unary_gradient_reads_y(UnaryOp fn) noexcept {
  switch (fn) {
    case UnaryOp::exp: case UnaryOp::sqrt: case UnaryOp::rsqrt: case UnaryOp::sigmoid: case UnaryOp::tanh:
    case UnaryOp::reciprocal:
      return true;
    default:
      return false;
  }
}

std::string name(const GradOp& op) {
  switch (op.kind) {
    case GradOp::Kind::scale: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "scale(%.6g)", op.scalar);
      return buf;
    }
    case GradOp::Kind::unary: return std::string("d.") + name(op.fn);
    case GradOp::Kind::select_equal: return "select_equal";
    case GradOp::Kind::prod: return "d.prod";
    case GradOp::Kind::div_rhs: return "d.div.b";
    case GradOp::Kind::select: return std::string("d.") + name(op.of) + (op.operand == 0 ? ".a" : ".b");
    case GradOp::Kind::centered: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "centered(%.6g)", op.scalar);
      return buf;
    }
    case GradOp::Kind::softmax: return "d.logsumexp";
  }
  return "?";
}

int arity(const GradOp& op) noexcept {
  switch (op.kind) {
    case GradOp::Kind::scale: return 1;
    case GradOp::Kind::unary: return op.fn == UnaryOp::neg ? 1 : 2;
    default: return 3;
  }
}

std::vector<int> sources(const Step& step) {
  return std::visit(
      [](const auto& s) -> std::vector<int> {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, ContractStep>) return {s.a, s.b};
        else if constexpr (std::is_same_v<S, MapStep> || std::is_same_v<S, NormStep> ||
                           std::is_same_v<S, CrossEntropyStep>) return s.srcs;
        else if constexpr (std::is_same_v<S, JoinStep>) return s.parts;
        else if constexpr (std::is_same_v<S, FillStep>) return {};
        else if constexpr (std::is_same_v<S, GatherStep>) return {s.src, s.index};
        else if constexpr (std::is_same_v<S, ScatterAddStep>) return {s.acc, s.index, s.updates};
        else if constexpr (std::is_same_v<S, RandomStep>) return {s.seed};
        else if constexpr (std::is_same_v<S, MaskStep>) return {s.src, s.mask};
        else {
          static_assert(std::is_same_v<S, ViewStep> || std::is_same_v<S, CopyStep> || std::is_same_v<S, ReduceStep> ||
                            std::is_same_v<S, EmbedStep>,
                        "sources(): a step kind without its sources");
          return {s.src};
        }
      },
      step);
}

int destination(const Step& step) noexcept {
  return std::visit([](const auto& s) { return s.dst; }, step);
}

void for_each_value(Step& step, const std::function<void(int&)>& f, bool with_dst) {
  std::visit(
      [&](auto& s) {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, ContractStep>) {
          f(s.a);
          f(s.b);
        } else if constexpr (std::is_same_v<S, MapStep> || std::is_same_v<S, NormStep> ||
                             std::is_same_v<S, CrossEntropyStep>) {
          for (int& v : s.srcs) f(v);
        } else if constexpr (std::is_same_v<S, JoinStep>) {
          for (int& v : s.parts) f(v);
        } else if constexpr (std::is_same_v<S, FillStep>) {
        } else if constexpr (std::is_same_v<S, GatherStep>) {
          f(s.src);
          f(s.index);
        } else if constexpr (std::is_same_v<S, ScatterAddStep>) {
          f(s.acc);
          f(s.index);
          f(s.updates);
        } else if constexpr (std::is_same_v<S, RandomStep>) {
          f(s.seed);
        } else if constexpr (std::is_same_v<S, MaskStep>) {
          f(s.src);
          f(s.mask);
        } else {
          static_assert(std::is_same_v<S, ViewStep> || std::is_same_v<S, CopyStep> || std::is_same_v<S, ReduceStep> ||
                            std::is_same_v<S, EmbedStep>,
                        "for_each_value(): a step kind without its values");
          f(s.src);
        }
        if (with_dst) f(s.dst);
      },
      step);
}

namespace {

std::string dim_text(const Plan& plan, const DimAxes& dim) {
  for (AxisId id : dim)
    if (id < 0 || static_cast<std::size_t>(id) >= plan.axes.size()) return "?";
  return to_string(dim, plan.axes);
}

/// ", part [first, first + length) of total" for a device's part of a split axis, else "".
std::string part_text(const AxisPart& p, std::int64_t length) {
  if (!p.split()) return "";
  return ", part [" + std::to_string(p.first) + ", " + std::to_string(p.first + length) + ") of " + std::to_string(p.total);
}

std::string value_text(const Plan& plan, int v) {
  const Value& val = plan.values.at(static_cast<std::size_t>(v));
  std::ostringstream os;
  os << '[';
  for (std::size_t d = 0; d < val.layout.shape.size(); ++d) {
    if (d) os << ", ";
    os << (d < val.dims.size() ? dim_text(plan, val.dims[d]) : "?") << '=' << val.layout.shape[d];
  }
  os << "] strides " << shape_str(val.layout.strides);
  if (val.layout.offset != 0) os << " offset " << val.layout.offset;
  return os.str();
}

const char* kind_name(ContractStep::Kind k) {
  switch (k) {
    case ContractStep::Kind::gemm: return "gemm";
    case ContractStep::Kind::batched_gemm: return "batched_gemm";
    case ContractStep::Kind::generic: return "generic";
  }
  return "?";
}

/// How a step's destination sits in memory: "(new buffer #3, 4096 elements)" where the step
/// makes the buffer, "(into buffer #3)" where it writes one an earlier step made, "(view of
/// ...)" where it moves nothing. A buffer whose dtype is not the plan's says it.
std::string buffer_text(const Plan& plan, int v, bool view, bool existing) {
  const Value& val = plan.values.at(static_cast<std::size_t>(v));
  const PlanBuffer& b = plan.buffers.at(static_cast<std::size_t>(val.buffer));
  const std::string dtype = b.dtype == plan.dtype ? "" : std::string(", ") + std::string(name(b.dtype));
  if (b.input >= 0) return "  (view of input " + std::to_string(b.input) + dtype + ")";
  if (view) return "  (view of buffer #" + std::to_string(val.buffer) + dtype + ")";
  if (existing) return "  (into buffer #" + std::to_string(val.buffer) + dtype + ")";
  return "  (new buffer #" + std::to_string(val.buffer) + ", " + std::to_string(b.elements) +
         (b.elements == 1 ? " element" : " elements") + dtype + ")";
}

}  // namespace

std::string to_string(const Step& step, const Plan& plan) {
  auto ref = [](int v) { return "%" + std::to_string(v); };
  return std::visit(
      [&](const auto& s) -> std::string {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, ViewStep>) {
          return ref(s.dst) + " = view " + ref(s.src) + " : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, CopyStep>) {
          return ref(s.dst) + " = copy " + ref(s.src) + " : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, ContractStep>) {
          return ref(s.dst) + " = contract." + kind_name(s.kind) + " " + ref(s.a) + ", " + ref(s.b) +
                 " (batch dims " + std::to_string(s.batch_dims) + ") : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, EmbedStep>) {
          return ref(s.dst) + " = embed " + ref(s.src) + " into zeros at strides " + shape_str(s.into.strides) +
                 (s.into.offset != 0 ? " offset " + std::to_string(s.into.offset) : "") + " : " +
                 value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, NormStep>) {
          std::string srcs, axes;
          for (int v : s.srcs) srcs += (srcs.empty() ? "" : ", ") + ref(v);
          const Value& dst = plan.values.at(static_cast<std::size_t>(s.dst));
          for (int a : s.axes)
            axes += (axes.empty() ? "" : " ") + (static_cast<std::size_t>(a) < dst.dims.size()
                                                     ? dim_text(plan, dst.dims[static_cast<std::size_t>(a)])
                                                     : std::to_string(a));
          char eps[32] = "";
          if (takes_eps(s.kind))
            std::snprintf(eps, sizeof eps, "(eps=%g)", s.eps);
          return ref(s.dst) + " = " + (s.backward ? "d." : "") + name(s.kind) + eps + " " + srcs + " along [" + axes +
                 "] : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, ReduceStep>) {
          std::string axes;
          const Value& src = plan.values.at(static_cast<std::size_t>(s.src));
          for (int a : s.axes)
            axes += (axes.empty() ? "" : " ") +
                    (static_cast<std::size_t>(a) < src.dims.size() ? dim_text(plan, src.dims[static_cast<std::size_t>(a)])
                                                                     : std::to_string(a));
          const bool corrected = s.op == Reduction::var || s.op == Reduction::std;
          return ref(s.dst) + " = reduce." + name(s.op) +
                 (corrected ? "(correction=" + std::to_string(s.correction) + ")" : std::string()) + " " +
                 ref(s.src) + " over [" + axes + "] : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, MapStep>) {
          std::string srcs;
          for (int v : s.srcs) srcs += (srcs.empty() ? "" : ", ") + ref(v);
          const std::string fn = std::visit([](const auto& op) { return std::string(name(op)); }, s.op);
          return ref(s.dst) + " = map." + fn + " " + srcs + " : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, FillStep>) {
          char v[32];
          std::snprintf(v, sizeof v, "%g", s.value);
          return ref(s.dst) + " = fill " + v + " : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, GatherStep>) {
          return ref(s.dst) + " = gather " + ref(s.src) + " at " + ref(s.index) + " (" + std::to_string(s.length) +
                 " rows" + part_text(s.part, s.length) + ", stride " + std::to_string(s.stride) + ") : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, ScatterAddStep>) {
          return ref(s.dst) + " = scatter_add " + ref(s.updates) + " into " + ref(s.acc) + " at " + ref(s.index) +
                 " (" + std::to_string(s.length) + " rows" + part_text(s.part, s.length) + ", stride " +
                 std::to_string(s.stride) + ") : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, JoinStep>) {
          std::string parts;
          for (int v : s.parts) parts += (parts.empty() ? "" : ", ") + ref(v);
          return ref(s.dst) + " = join " + parts + " : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, RandomStep>) {
          char p[32];
          std::snprintf(p, sizeof p, "%g", s.p);
          return ref(s.dst) + " = random_mask(p=" + p + ") seed " + ref(s.seed) + " : " + value_text(plan, s.dst);
        } else if constexpr (std::is_same_v<S, MaskStep>) {
          char scale[32];
          std::snprintf(scale, sizeof scale, "%.17g", s.scale);
          return ref(s.dst) + " = mask " + ref(s.src) + " by " + ref(s.mask) + " (scale " + scale + ") : " +
                 value_text(plan, s.dst);
        } else {
          static_assert(std::is_same_v<S, CrossEntropyStep>, "to_string(): a step kind it cannot print");
          std::string srcs;
          for (int v : s.srcs) srcs += (srcs.empty() ? "" : ", ") + ref(v);
          const std::string ignore =
              s.ignore_index == -100 ? std::string() : "(ignore_index=" + std::to_string(s.ignore_index) + ")";
          const std::string part =
              s.part.split() ? " (classes" +
                                   part_text(s.part, plan.values.at(static_cast<std::size_t>(s.srcs.at(s.backward ? 1 : 0)))
                                                         .layout.shape.at(static_cast<std::size_t>(s.axis))) +
                                   ")"
                             : std::string();
          return ref(s.dst) + " = " + (s.backward ? "d." : "") + "cross_entropy" + ignore + " " + srcs + " along dim " +
                 std::to_string(s.axis) + part + " : " + value_text(plan, s.dst);
        }
      },
      step);
}

/// "einsum", "map.gelu", "reduce", "normalize.softmax": the plan's op, with a map's function
/// or a normalization's kind.
std::string title(const Plan& plan) {
  std::string t = name(plan.op);
  if (plan.op == Op::normalize)
    for (const Step& step : plan.steps)
      if (const auto* n = std::get_if<NormStep>(&step)) return t + "." + (n->backward ? "d." : "") + name(n->kind);
  if (plan.op == Op::map)
    for (const Step& step : plan.steps)
      if (const auto* m = std::get_if<MapStep>(&step))
        return t + "." + std::visit([](const auto& op) { return std::string(name(op)); }, m->op);
  return t;
}

std::string to_string(const Plan& plan) {
  std::ostringstream os;
  os << title(plan);
  if (!plan.pattern.empty()) os << " '" << plan.pattern << "'";
  os << " (" << name(plan.dtype) << ")\n";
  for (int i = 0; i < plan.num_inputs; ++i) {
    os << "  %" << i << " = input " << i << " : " << value_text(plan, i);
    if (plan.dtype_of(i) != plan.dtype) os << " (" << name(plan.dtype_of(i)) << ")";
    os << '\n';
  }
  std::vector<bool> written(plan.buffers.size(), false);
  for (const Step& step : plan.steps) {
    const int dst = destination(step);
    const auto b = static_cast<std::size_t>(plan.values.at(static_cast<std::size_t>(dst)).buffer);
    const bool moves_nothing = std::holds_alternative<ViewStep>(step) || std::holds_alternative<JoinStep>(step);
    os << "  " << to_string(step, plan) << buffer_text(plan, dst, moves_nothing, b < written.size() && written[b])
       << '\n';
    if (b < written.size()) written[b] = true;
  }
  os << "  output %" << plan.output << (plan.output_is_view() ? " (a view: no data moved)" : "") << '\n';
  for (const std::string& note : plan.notes) os << "  # " << note << '\n';
  return os.str();
}

std::string Plan::str() const { return to_string(*this); }

bool Plan::output_is_view() const {
  const Value& v = output_value();
  return buffers.at(static_cast<std::size_t>(v.buffer)).input >= 0;
}

}  // namespace einexpr
