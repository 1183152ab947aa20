// plan(): the one planning entry (planner.hpp). Every caller plans through it with an
// OpSpec; each op's planner is an overload of the visit below, so an Op without a planner
// fails to compile. OpSpec's printing and cache key are visits too.
#include <cstdio>
#include <cstring>

#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

template <class... Fs>
struct overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
overloaded(Fs...) -> overloaded<Fs...>;

const ast::Pattern& need(const ast::Pattern* pattern, Op op) {
  if (pattern == nullptr) throw Error(std::string(name(op)) + " needs a pattern");
  return *pattern;
}

const Layout& one(std::span<const Layout> inputs, Op op) {
  if (inputs.size() != 1)
    throw ShapeError(std::string(name(op)) + " takes one tensor, got " + std::to_string(inputs.size()));
  return inputs[0];
}

template <class T>
void append_pod(std::string& key, const T& v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  key.append(buf, sizeof(T));
}

bool corrected(Reduction r) { return r == Reduction::var || r == Reduction::std; }

const char* copy_name(Copy c) {
  switch (c) {
    case Copy::if_needed: return "if_needed";
    case Copy::never: return "never";
    case Copy::always: return "always";
  }
  return "?";
}

bool concatenates(const ast::Pattern& p) {
  if (p.operands.size() > 1 || !p.more_outputs.empty()) return true;
  auto has = [](const ast::Operand& o) {
    for (const auto& t : o.terms)
      if (const auto* g = std::get_if<ast::Group>(&t); g != nullptr && g->concat) return true;
    return false;
  };
  return has(p.operands[0]) || has(p.output);
}

/// The dtype of the data (every input but the index operand) and of the indices.
struct Dtypes {
  DType data = DType::f32;
  DType index = DType::i64;
};
Dtypes split_dtypes(Op op, std::span<const DType> dtypes, std::size_t inputs) {
  if (dtypes.size() != inputs && dtypes.size() != 1)
    throw Error(std::string(name(op)) + ": " + std::to_string(dtypes.size()) + " dtypes for " +
                std::to_string(inputs) + " inputs");
  Dtypes d;
  const int index_operand = op == Op::get_at || op == Op::add_at || op == Op::cross_entropy || op == Op::dropout ? 1 : -1;
  d.data = dtypes.empty() ? DType::f32 : dtypes[0];
  if (index_operand >= 0 && dtypes.size() > static_cast<std::size_t>(index_operand))
    d.index = dtypes[static_cast<std::size_t>(index_operand)];
  for (std::size_t i = 1; i < dtypes.size(); ++i) {
    if (static_cast<int>(i) == index_operand) continue;
    if (dtypes[i] != d.data)
      throw DTypeError(std::string(name(op)) + " operands have different dtypes: " + std::string(name(d.data)) +
                       " (operand 1) and " + std::string(name(dtypes[i])) + " (operand " + std::to_string(i + 1) + ")");
  }
  return d;
}

}  // namespace

Plan plan(const OpSpec& spec, const ast::Pattern* pattern, std::span<const Layout> inputs,
          std::span<const DType> dtypes) {
  const Op op = spec.op();
  const Dtypes d = split_dtypes(op, dtypes, inputs.size());
  return std::visit(
      overloaded{
          [&](const EinsumOptions& o) {
            return plan_einsum(need(pattern, op), inputs, d.data, spec.lengths, o.order, o.goal);
          },
          [&](const RearrangeOptions& o) {
            const ast::Pattern& p = need(pattern, op);
            if (concatenates(p)) return plan_concat(p, inputs, d.data, spec.lengths, o.copy, o.output);
            return plan_rearrange(p, one(inputs, op), d.data, spec.lengths, o.copy);
          },
          [&](const ReduceOptions& o) {
            return plan_reduce(need(pattern, op), one(inputs, op), d.data, o.reduction, spec.lengths, o.correction);
          },
          [&](const RepeatOptions& o) {
            return plan_repeat(need(pattern, op), one(inputs, op), d.data, spec.lengths, o.copy);
          },
          [&](const NormalizeOptions& o) {
            return plan_normalize(need(pattern, op), o.kind, inputs, d.data, spec.lengths, o.eps);
          },
          [&](const MapOptions& o) {
            if (pattern == nullptr) {
              const auto* unary = std::get_if<UnaryOp>(&o.function);
              if (unary == nullptr) throw Error("a map of two operands needs a pattern (\"b s h, h -> b s h\")");
              return plan_unary(*unary, one(inputs, op), d.data);
            }
            return plan_map(*pattern, o.function, inputs, d.data, spec.lengths);
          },
          [&](const GetAtOptions&) { return plan_get_at(need(pattern, op), inputs, d.data, d.index, spec.lengths); },
          [&](const AddAtOptions&) { return plan_add_at(need(pattern, op), inputs, d.data, d.index, spec.lengths); },
          [&](const CrossEntropyOptions& o) {
            return plan_cross_entropy(need(pattern, op), inputs, d.data, d.index, o.ignore_index, spec.lengths);
          },
          [&](const PackOptions&) { return plan_pack(need(pattern, op), inputs, d.data); },
          [&](const UnpackOptions& o) {
            return plan_unpack(need(pattern, op), one(inputs, op), d.data, o.shapes, o.output);
          },
          [&](const DropoutOptions& o) { return plan_dropout(pattern, o, inputs, dtypes); },
      },
      spec.options);
}

Plan plan(const OpSpec& spec, const ast::Pattern* pattern, std::span<const Layout> inputs, DType dtype) {
  std::vector<DType> dtypes(inputs.size(), dtype);
  if (const int index = spec.op() == Op::get_at || spec.op() == Op::add_at || spec.op() == Op::cross_entropy ||
                            spec.op() == Op::dropout ? 1 : -1;
      index >= 0 && dtypes.size() > 1) {
    const auto* d = spec.get_if<DropoutOptions>();
    dtypes[static_cast<std::size_t>(index)] = d != nullptr && d->part == DropoutPart::apply ? DType::boolean : DType::i64;
  }
  if (dtypes.empty()) dtypes.push_back(dtype);
  return plan(spec, pattern, inputs, std::span<const DType>(dtypes));
}

OpSpec OpSpec::of(Op op, AxisLengths lengths) {
  OpSpec s;
  s.lengths = std::move(lengths);
  switch (op) {
    case Op::rearrange: s.options = RearrangeOptions{}; break;
    case Op::reduce: s.options = ReduceOptions{}; break;
    case Op::repeat: s.options = RepeatOptions{}; break;
    case Op::einsum: s.options = EinsumOptions{}; break;
    case Op::map: s.options = MapOptions{}; break;
    case Op::normalize: s.options = NormalizeOptions{}; break;
    case Op::get_at: s.options = GetAtOptions{}; break;
    case Op::add_at: s.options = AddAtOptions{}; break;
    case Op::cross_entropy: s.options = CrossEntropyOptions{}; break;
    case Op::pack: s.options = PackOptions{}; break;
    case Op::unpack: s.options = UnpackOptions{}; break;
    case Op::dropout: s.options = DropoutOptions{}; break;
  }
  return s;
}

std::string OpSpec::str() const {
  std::string s = name(op());
  std::visit(overloaded{
                 [&](const EinsumOptions& o) {
                   if (o.order != ContractionOrder::optimal)
                     s += o.order == ContractionOrder::greedy ? " (greedy order)" : " (left to right)";
                   if (o.goal.objective != OrderObjective::flops) {
                     char alpha[32];
                     std::snprintf(alpha, sizeof alpha, "%g", o.goal.alpha);
                     s += o.goal.objective == OrderObjective::largest_intermediate
                              ? std::string(" (order by largest intermediate)")
                              : " (order by FLOPs + " + std::string(alpha) + " per byte)";
                   }
                   if (o.goal.memory_limit)
                     s += " (intermediates <= " + std::to_string(*o.goal.memory_limit) + " elements)";
                 },
                 [&](const RearrangeOptions& o) {
                   if (o.copy != Copy::if_needed) s += std::string(" (copy ") + copy_name(o.copy) + ")";
                   if (o.output != 0) s += " (output " + std::to_string(o.output + 1) + ")";
                 },
                 [&](const ReduceOptions& o) {
                   s += std::string(" ") + name(o.reduction);
                   if (corrected(o.reduction)) s += " (correction " + std::to_string(o.correction) + ")";
                 },
                 [&](const RepeatOptions& o) {
                   if (o.copy != Copy::if_needed) s += std::string(" (copy ") + copy_name(o.copy) + ")";
                 },
                 [&](const MapOptions& o) {
                   s += " " + std::visit([](auto f) { return std::string(name(f)); }, o.function);
                 },
                 [&](const NormalizeOptions& o) {
                   s += std::string(" ") + name(o.kind);
                   if (takes_eps(o.kind)) {
                     char text[40];
                     std::snprintf(text, sizeof text, " (eps %g)", o.eps);
                     s += text;
                   }
                 },
                 [&](const GetAtOptions&) {},
                 [&](const AddAtOptions&) {},
                 [&](const CrossEntropyOptions& o) {
                   if (o.ignore_index != -100) s += " (ignore_index " + std::to_string(o.ignore_index) + ")";
                 },
                 [&](const PackOptions&) {},
                 [&](const UnpackOptions& o) {
                   s += " (output " + std::to_string(o.output + 1) + " of " + std::to_string(o.shapes.size()) + ")";
                 },
                 [&](const DropoutOptions& o) {
                   char p[32];
                   std::snprintf(p, sizeof p, " p=%g", o.p);
                   s += p;
                   if (o.part == DropoutPart::mask) s += " (mask)";
                   if (o.part == DropoutPart::apply) s += " (apply)";
                 },
             },
             options);
  return s;
}

void OpSpec::append_key(std::string& key) const {
  append_pod(key, static_cast<unsigned char>(options.index()));  // the op, then only its fields
  std::visit(overloaded{
                 [&](const EinsumOptions& o) {
                   append_pod(key, o.order);
                   append_pod(key, o.goal.objective);
                   append_pod(key, o.goal.alpha);
                   append_pod(key, o.goal.memory_limit.value_or(-1));
                 },
                 [&](const RearrangeOptions& o) {
                   append_pod(key, o.copy);
                   append_pod(key, o.output);
                 },
                 [&](const ReduceOptions& o) {
                   append_pod(key, o.reduction);
                   if (corrected(o.reduction)) append_pod(key, o.correction);
                 },
                 [&](const RepeatOptions& o) { append_pod(key, o.copy); },
                 [&](const MapOptions& o) {
                   append_pod(key, static_cast<unsigned char>(o.function.index()));
                   std::visit([&](auto f) { append_pod(key, f); }, o.function);
                 },
                 [&](const NormalizeOptions& o) {
                   append_pod(key, o.kind);
                   append_pod(key, o.eps);
                 },
                 [&](const GetAtOptions&) {},
                 [&](const AddAtOptions&) {},
                 [&](const CrossEntropyOptions& o) { append_pod(key, o.ignore_index); },
                 [&](const PackOptions&) {},
                 [&](const DropoutOptions& o) {
                   append_pod(key, o.p);
                   append_pod(key, o.part);
                 },
                 [&](const UnpackOptions& o) {
                   append_pod(key, o.output);
                   for (const Shape& shape : o.shapes) {
                     append_pod(key, shape.size());
                     for (std::int64_t len : shape) append_pod(key, len);
                   }
                 },
             },
             options);
  for (const auto& [axis, length] : lengths) {
    key.append(axis);
    key.push_back('=');
    append_pod(key, length);
  }
  key.push_back('|');
}

}  // namespace einexpr
