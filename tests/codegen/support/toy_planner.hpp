#pragma once
// A stand-in for the planners while they are written elsewhere: plans the gradient stages
// backward_cost derives (two-operand einsums, repeats, rearranges, sum reductions, with
// plain names) the way the real planner would cost them, using PlanBuilder.
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "einexpr/codegen/backward.hpp"
#include "named_plan_builder.hpp"

namespace cost_test {

inline std::vector<std::string> words(const std::string& side) {
  std::istringstream in(side);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

inline std::string group(const std::vector<std::string>& names) {
  if (names.empty()) return "()";
  if (names.size() == 1) return names[0];
  std::string s = "(";
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? " " : "") + names[i];
  return s + ")";
}

inline einexpr::Plan toy_plan(const einexpr::GradientStage& stage, einexpr::DType dtype) {
  const std::string& pattern = stage.pattern;
  const std::size_t arrow = pattern.find("->");
  const std::string left = pattern.substr(0, arrow), right = pattern.substr(arrow + 2);
  std::vector<std::vector<std::string>> ins;
  for (std::size_t begin = 0;;) {
    const std::size_t comma = left.find(',', begin);
    ins.push_back(words(left.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin)));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  const std::vector<std::string> out = words(right);
  Sizes sizes;
  for (std::size_t i = 0; i < ins.size(); ++i)
    for (std::size_t d = 0; d < ins[i].size(); ++d) sizes[ins[i][d]] = stage.operands.at(i).shape.at(d);
  for (const auto& [name, length] : stage.lengths) sizes[name] = length;
  PlanBuilder b(stage.op, pattern, dtype, sizes);
  if (stage.op == "einsum" && ins.size() == 2) {
    auto has = [](const std::vector<std::string>& w, const std::string& x) {
      return std::find(w.begin(), w.end(), x) != w.end();
    };
    std::vector<std::string> batch, m, k, n;
    for (const std::string& x : ins[0]) {
      if (has(ins[1], x) && has(out, x)) batch.push_back(x);
      else if (has(out, x)) m.push_back(x);
      else if (has(ins[1], x)) k.push_back(x);
    }
    for (const std::string& x : ins[1])
      if (!has(ins[0], x) && has(out, x)) n.push_back(x);
    std::string batch_dims;
    for (const std::string& x : batch) batch_dims += (batch_dims.empty() ? "" : " ") + x;
    const int a = b.input(left.substr(0, left.find(',')));
    const int c = b.input(left.substr(left.find(',') + 1));
    const int dst = b.contract(a, c, batch_dims, group(m), group(k), group(n));
    return b.finish(b.view(dst, right));
  }
  if (stage.op == "repeat") {  // a copy from a broadcast view (new axes get stride 0)
    const int x = b.input(left);
    einexpr::Strides strides;
    const einexpr::Strides src = b.value(x).layout.strides;
    for (const std::string& w : out) {
      const auto it = std::find(ins[0].begin(), ins[0].end(), w);
      strides.push_back(it == ins[0].end() ? 0 : src[static_cast<std::size_t>(it - ins[0].begin())]);
    }
    return b.finish(b.copy(b.view(x, right, strides)));
  }
  if (stage.op == "rearrange") {
    const int x = b.input(left);
    return b.finish(b.copy(b.view(x, right)));
  }
  if (stage.op == "reduce") {
    const int x = b.input(left);
    std::vector<int> dims;
    for (std::size_t d = 0; d < ins[0].size(); ++d)
      if (std::find(out.begin(), out.end(), ins[0][d]) == out.end()) dims.push_back(static_cast<int>(d));
    return b.finish(b.reduce(x, stage.reduction, dims));
  }
  throw std::runtime_error("toy planner: cannot plan " + stage.op + " '" + pattern + "'");
}

}  // namespace cost_test
