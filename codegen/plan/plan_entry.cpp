// plan(): the one planning entry (planner.hpp). Every caller plans through it with an
// OpSpec; the planners per op below it are the steps of a switch, not separate entries.
#include <cstdio>
#include <cstring>

#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

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

}  // namespace

Plan plan(const OpSpec& spec, const ast::Pattern* pattern, std::span<const Layout> inputs, DType dtype) {
  switch (spec.op) {
    case Op::einsum: return plan_einsum(need(pattern, spec.op), inputs, dtype, spec.lengths, spec.order, spec.goal);
    case Op::rearrange: return plan_rearrange(need(pattern, spec.op), one(inputs, spec.op), dtype, spec.lengths, spec.copy);
    case Op::reduce:
      return plan_reduce(need(pattern, spec.op), one(inputs, spec.op), dtype, spec.reduction, spec.lengths,
                         spec.correction);
    case Op::repeat: return plan_repeat(need(pattern, spec.op), one(inputs, spec.op), dtype, spec.lengths, spec.copy);
    case Op::normalize:
      return plan_normalize(need(pattern, spec.op), spec.normalization, one(inputs, spec.op), dtype, spec.lengths,
                            spec.eps);
    case Op::map:
      if (pattern == nullptr) {
        const auto* unary = std::get_if<UnaryOp>(&spec.function);
        if (unary == nullptr) throw Error("a map of two operands needs a pattern (\"b s h, h -> b s h\")");
        return plan_unary(*unary, one(inputs, spec.op), dtype);
      }
      return plan_map(*pattern, spec.function, inputs, dtype, spec.lengths);
  }
  throw Error("plan: unknown op");
}

std::string OpSpec::str() const {
  std::string s = name(op);
  if (op == Op::reduce) s += std::string(" ") + name(reduction);
  if (op == Op::reduce && corrected(reduction)) s += " (correction " + std::to_string(correction) + ")";
  if (op == Op::map) s += " " + std::visit([](auto f) { return std::string(name(f)); }, function);
  if (op == Op::normalize) {
    s += std::string(" ") + name(normalization);
    if (takes_eps(normalization)) {
      char text[40];
      std::snprintf(text, sizeof text, " (eps %g)", eps);
      s += text;
    }
  }
  if ((op == Op::rearrange || op == Op::repeat) && copy != Copy::if_needed) s += std::string(" (copy ") + copy_name(copy) + ")";
  if (op == Op::einsum && order != ContractionOrder::optimal)
    s += order == ContractionOrder::greedy ? " (greedy order)" : " (left to right)";
  if (op == Op::einsum && goal.objective != OrderObjective::flops) {
    char alpha[32];
    std::snprintf(alpha, sizeof alpha, "%g", goal.alpha);
    s += goal.objective == OrderObjective::largest_intermediate ? std::string(" (order by largest intermediate)")
                                                               : " (order by FLOPs + " + std::string(alpha) + " per byte)";
  }
  if (op == Op::einsum && goal.memory_limit) s += " (intermediates <= " + std::to_string(*goal.memory_limit) + " elements)";
  return s;
}

void OpSpec::append_key(std::string& key) const {
  append_pod(key, op);  // then only the fields this op reads
  switch (op) {
    case Op::einsum:
      append_pod(key, order);
      append_pod(key, goal.objective);
      append_pod(key, goal.alpha);
      append_pod(key, goal.memory_limit.value_or(-1));
      break;
    case Op::reduce:
      append_pod(key, reduction);
      if (corrected(reduction)) append_pod(key, correction);
      break;
    case Op::rearrange: case Op::repeat: append_pod(key, copy); break;
    case Op::normalize:
      append_pod(key, normalization);
      append_pod(key, eps);
      break;
    case Op::map:
      append_pod(key, static_cast<unsigned char>(function.index()));
      std::visit([&](auto f) { append_pod(key, f); }, function);
      break;
  }
  for (const auto& [axis, length] : lengths) {
    key.append(axis);
    key.push_back('=');
    append_pod(key, length);
  }
  key.push_back('|');
}

}  // namespace einexpr
