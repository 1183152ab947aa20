// check_operand(): a statement's pattern operand against the tensor it reads, in the one
// axis environment. The message names both lengths and where each comes from:
//   model.ein:7:22: axis 'D' is 128 (line 2) but dim 1 of 'h1' is 256 (E, line 6)
#include "program/operands.hpp"

#include <optional>
#include <set>
#include <variant>

#include "einexpr/parser/program.hpp"

namespace einexpr::program_detail {

namespace {

struct Expected {
  std::int64_t length = 0;
  std::string what;  // "axis 'D' is 128 (line 2)", "(H K) is 768 (H=12, line 2; K=64, line 2)"
};

// The length a term gives its dim, or nullopt for a composition holding an ellipsis.
std::optional<Expected> expected(const ast::Term& term, const Environment& env) {
  if (const auto* n = std::get_if<ast::Named>(&term)) {
    const AxisValue& v = env.at(n->name);
    return Expected{v.length, "axis '" + n->name + "' is " + std::to_string(v.length) + " (" + v.origin + ")"};
  }
  if (const auto* a = std::get_if<ast::Anonymous>(&term))
    return Expected{a->length, "the anonymous axis is " + std::to_string(a->length)};
  if (std::holds_alternative<ast::Unit>(term)) return Expected{1, "'()' is 1"};
  const auto* g = std::get_if<ast::Group>(&term);
  if (g == nullptr) return std::nullopt;
  std::int64_t length = g->concat ? 0 : 1;  // a concatenation's parts add up, a composition's multiply
  std::string parts;
  auto combine = [&](std::int64_t part) { length = g->concat ? checked_add(length, part) : checked_mul(length, part); };
  for (const ast::Atom& atom : g->atoms) {
    if (const auto* n = std::get_if<ast::Named>(&atom)) {
      const AxisValue& v = env.at(n->name);
      combine(v.length);
      parts += (parts.empty() ? "" : "; ") + n->name + "=" + std::to_string(v.length) + ", " + v.origin;
    } else if (const auto* a = std::get_if<ast::Anonymous>(&atom)) {
      combine(a->length);
    } else {
      return std::nullopt;
    }
  }
  return Expected{length, ast::to_string(term) + " is " + std::to_string(length) + (parts.empty() ? "" : " (" + parts + ")")};
}

std::string made_or_declared(const ProgramTensor& t) {
  return t.role == TensorRole::statement ? "made here" : t.role == TensorRole::constant ? "written here" : "declared here";
}

}  // namespace

std::vector<std::string> named_axes(const ast::Pattern& pattern) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  auto add = [&](const std::string& n) {
    if (seen.insert(n).second) names.push_back(n);
  };
  auto operand = [&](const ast::Operand& o) {
    for (const ast::Term& t : o.terms) {
      if (const auto* n = std::get_if<ast::Named>(&t)) add(n->name);
      if (const auto* g = std::get_if<ast::Group>(&t))
        for (const ast::Atom& a : g->atoms)
          if (const auto* n = std::get_if<ast::Named>(&a)) add(n->name);
    }
  };
  for (const ast::Operand& o : pattern.operands) operand(o);
  operand(pattern.output);
  for (const ast::Operand& o : pattern.more_outputs) operand(o);
  return names;
}

void check_operand(const ProgramPlan& plan, const Environment& env, const ast::Statement& s, std::size_t i,
                   const ProgramTensor& t) {
  const ast::Operand& op = s.pattern.pattern.operands.at(i);
  auto at = [&](ast::Span span) {
    const std::size_t offset = ast::file_offset(s.pattern, span.begin);
    return ast::Source{{offset, offset}, 0, 0};
  };
  const std::string tensor_line = "'" + t.name + "' is " + made_or_declared(t);
  std::size_t ellipsis = op.terms.size();
  for (std::size_t k = 0; k < op.terms.size(); ++k)
    if (std::holds_alternative<ast::Ellipsis>(op.terms[k])) ellipsis = k;
  const bool has_ellipsis = ellipsis < op.terms.size();
  const std::size_t explicit_dims = op.terms.size() - (has_ellipsis ? 1 : 0);
  const std::size_t rank = t.shape.size();
  if (rank < explicit_dims || (!has_ellipsis && rank != explicit_dims)) {
    std::string dims;
    for (const std::string& d : t.dims) dims += (dims.empty() ? "" : " ") + d;
    throw ProgramError("'" + t.name + "' has " + std::to_string(rank) + (rank == 1 ? " dim" : " dims") +
                           (dims.empty() ? std::string() : " (" + dims + ")") + " but the operand '" +
                           ast::to_string(op) + "' has " + std::to_string(explicit_dims) +
                           (has_ellipsis ? " and '...'" : ""),
                       plan.program, at(op.span), tensor_line, t.source);
  }
  for (std::size_t k = 0; k < op.terms.size(); ++k) {
    if (k == ellipsis) continue;
    const std::size_t dim = k < ellipsis ? k : rank - (op.terms.size() - k);
    const std::optional<Expected> want = expected(op.terms[k], env);
    if (!want || want->length == t.shape[dim]) continue;
    throw ProgramError(want->what + " but dim " + std::to_string(dim) + " of '" + t.name + "' is " +
                           std::to_string(t.shape[dim]) + " (" + t.dims[dim] + ", line " +
                           std::to_string(t.source.line) + ")",
                       plan.program, at(ast::span_of(op.terms[k])), tensor_line, t.source);
  }
}

}  // namespace einexpr::program_detail
