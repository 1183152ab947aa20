// plan_backward(): needs_grad from the outputs back, then each running statement's
// gradients, selected from gradients(plan) by whether their input requires a gradient.
#include "program/backward_plan.hpp"

#include <cctype>

#include "einexpr/parser/program.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::program_detail {

namespace {

// A gradient's expression with its sources' names (dY, Y, X, A, B, ...) replaced by the
// tensors': "einsum(dY, B, 'b k, d k -> b d')" -> "einsum(dh, w, 'b k, d k -> b d')",
// "dY · square'(X)" -> "dY · square'(h2)" with dY named dsq. A pattern ('...' after a space,
// a comma or a parenthesis) and an axis list ([...]) are left as they are.
std::string with_names(const std::string& expression, const Gradient& g, const ProgramPlan& plan,
                       const PlannedStatement& st) {
  auto renamed = [&](const std::string& token) {
    for (const GradientSource& s : g.sources) {
      if (s.name != token) continue;
      const std::string& y = plan.tensor(st.output).name;
      if (s.kind == GradientSource::Kind::output_gradient) return "d" + y;
      if (s.kind == GradientSource::Kind::output) return y;
      return plan.tensor(st.inputs.at(static_cast<std::size_t>(s.input))).name;
    }
    return token;
  };
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  bool quoted = false;
  int bracket = 0;
  for (std::size_t i = 0; i < expression.size();) {
    const char c = expression[i];
    if (c == '\'' && (quoted || i == 0 || expression[i - 1] == ' ' || expression[i - 1] == '(' || expression[i - 1] == ',')) {
      quoted = !quoted;
    } else if (!quoted && (c == '[' || c == ']')) {
      bracket += c == '[' ? 1 : -1;
    } else if (!quoted && bracket == 0 && ident(c) && (i == 0 || !ident(expression[i - 1]))) {
      std::size_t j = i;
      while (j < expression.size() && ident(expression[j])) ++j;
      out += renamed(expression.substr(i, j - i));
      i = j;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
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
  for (std::size_t t = 0; t < plan.tensors.size(); ++t)  // a layer's slice: its gradient is part of the stack's
    if (b.needs_grad[t] && plan.tensors[t].stacked >= 0) b.needs_grad[static_cast<std::size_t>(plan.tensors[t].stacked)] = true;
  for (int o : plan.outputs)  // an output read by later statements: its seed is one more gradient
    if (b.needs_grad[static_cast<std::size_t>(o)] && b.contributions[static_cast<std::size_t>(o)] > 0)
      ++b.contributions[static_cast<std::size_t>(o)];
  return b;
}

}  // namespace einexpr::program_detail
