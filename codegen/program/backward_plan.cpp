// plan_backward(): needs_grad from the outputs back, then each running statement's
// gradients, selected from gradients(plan) by whether their input requires a gradient.
#include "program/backward_plan.hpp"

#include "einexpr/parser/program.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::program_detail {

namespace {

// "einsum(dY, B, 'b k, d k -> b d')" with the sources' names replaced by the tensors'.
std::string with_names(const std::string& expression, const Gradient& g, const ProgramPlan& plan,
                       const PlannedStatement& st) {
  const std::size_t open = expression.find('(');
  const std::size_t quote = expression.find('\'');
  const std::size_t end = quote == std::string::npos ? expression.rfind(')') : quote;
  if (open == std::string::npos || end == std::string::npos || end < open) return expression;
  std::string out = expression.substr(0, open + 1);
  std::string args = expression.substr(open + 1, end - open - 1);
  std::size_t at = 0;
  while (at <= args.size()) {
    const std::size_t comma = args.find(", ", at);
    const std::string token = args.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    std::string renamed = token;
    for (const GradientSource& s : g.sources) {
      if (s.name != token) continue;
      const std::string& y = plan.tensor(st.output).name;
      if (s.kind == GradientSource::Kind::output_gradient) renamed = "d" + y;
      if (s.kind == GradientSource::Kind::output) renamed = y;
      if (s.kind == GradientSource::Kind::input) renamed = plan.tensor(st.inputs.at(static_cast<std::size_t>(s.input))).name;
    }
    out += renamed;
    if (comma == std::string::npos) break;
    out += ", ";
    at = comma + 2;
  }
  return out + expression.substr(end);
}

std::vector<Gradient> derive(const ProgramPlan& plan, const PlannedStatement& st) {
  try {
    return gradients(st.plan);
  } catch (const InternalError&) {
    throw;
  } catch (const Error& e) {
    throw ProgramError("no gradient: " + std::string(e.what()), plan.program, st.source);
  }
}

}  // namespace

BackwardPlan plan_backward(const ProgramPlan& plan) {
  const std::size_t n = plan.statements.size();
  BackwardPlan b;
  b.needs_grad.assign(plan.tensors.size(), false);
  b.runs.assign(n, false);
  b.gradients.resize(n);
  b.skipped_flops.assign(n, Count{});
  b.contributions.assign(plan.tensors.size(), 0);
  for (int o : plan.outputs) b.needs_grad[static_cast<std::size_t>(o)] = plan.tensor(o).requires_grad;
  for (std::size_t s = n; s-- > 0;) {
    const PlannedStatement& st = plan.statements[s];
    if (!b.needs_grad[static_cast<std::size_t>(st.output)]) continue;
    b.runs[s] = true;
    for (Gradient& g : derive(plan, st)) {
      const int tensor = st.inputs.at(static_cast<std::size_t>(g.input));
      if (!plan.tensor(tensor).requires_grad) {
        b.skipped_flops[s] += cost(g.plan).flops;
        continue;
      }
      b.needs_grad[static_cast<std::size_t>(tensor)] = true;
      ++b.contributions[static_cast<std::size_t>(tensor)];
      std::string expression = with_names(g.expression, g, plan, st);
      b.gradients[s].push_back({g.input, tensor, std::move(g), std::move(expression)});
    }
  }
  for (int o : plan.outputs)  // an output read by later statements: its seed is one more gradient
    if (b.needs_grad[static_cast<std::size_t>(o)] && b.contributions[static_cast<std::size_t>(o)] > 0)
      ++b.contributions[static_cast<std::size_t>(o)];
  return b;
}

}  // namespace einexpr::program_detail
