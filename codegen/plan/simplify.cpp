// Plan -> Plan passes that change no result: fuse view chains, drop identity views, remove
// what nothing uses. Each is a small function; the pipeline (pipeline.cpp's plan_passes())
// lists them and runs them in order.
#include <variant>

#include "plan/builder.hpp"

#include "einexpr/codegen/pipeline.hpp"

namespace einexpr::detail {

namespace {

int& src_of(ViewStep& s) { return s.src; }

}  // namespace

/// A view of a view reads the first view's source directly (layouts are absolute).
Plan fuse_view_chains(Plan plan) {
  std::vector<int> view_src(plan.values.size(), -1);
  for (Step& step : plan.steps) {
    if (auto* v = std::get_if<ViewStep>(&step)) {
      while (view_src[static_cast<std::size_t>(src_of(*v))] >= 0) src_of(*v) = view_src[static_cast<std::size_t>(v->src)];
      view_src[static_cast<std::size_t>(v->dst)] = v->src;
    }
  }
  return plan;
}

namespace {
/// Replaces every use of a value by `replacement[value]`.
void rename_uses(Plan& plan, const std::vector<int>& replacement) {
  auto r = [&](int& v) { v = replacement[static_cast<std::size_t>(v)]; };
  for (Step& step : plan.steps) for_each_value(step, r, false);
  r(plan.output);
}

}  // namespace

/// A view that changes neither layout nor names is its source.
Plan drop_identity_views(Plan plan) {
  std::vector<int> replacement(plan.values.size());
  for (std::size_t i = 0; i < replacement.size(); ++i) replacement[i] = static_cast<int>(i);
  for (const Step& step : plan.steps)
    if (const auto* v = std::get_if<ViewStep>(&step)) {
      const Value& src = plan.values[static_cast<std::size_t>(v->src)];
      const Value& dst = plan.values[static_cast<std::size_t>(v->dst)];
      if (src.layout == dst.layout && src.dims == dst.dims)
        replacement[static_cast<std::size_t>(v->dst)] = replacement[static_cast<std::size_t>(v->src)];
    }
  rename_uses(plan, replacement);
  return plan;
}

/// Removes steps whose value nothing reads, then values and buffers nothing refers to.
Plan remove_unused(Plan plan) {
  const std::size_t nv = plan.values.size();
  std::vector<bool> live(nv, false);
  live[static_cast<std::size_t>(plan.output)] = true;
  for (std::size_t i = plan.steps.size(); i-- > 0;)
    if (live[static_cast<std::size_t>(destination(plan.steps[i]))])
      for (int r : sources(plan.steps[i])) live[static_cast<std::size_t>(r)] = true;
  for (int i = 0; i < plan.num_inputs; ++i) live[static_cast<std::size_t>(i)] = true;

  std::vector<bool> buffer_live(plan.buffers.size(), false);
  for (std::size_t v = 0; v < nv; ++v)
    if (live[v]) buffer_live[static_cast<std::size_t>(plan.values[v].buffer)] = true;
  std::vector<int> new_buffer(plan.buffers.size(), -1);
  std::vector<PlanBuffer> buffers;
  for (std::size_t b = 0; b < plan.buffers.size(); ++b)
    if (buffer_live[b] || static_cast<int>(b) < plan.num_inputs) {
      new_buffer[b] = static_cast<int>(buffers.size());
      buffers.push_back(plan.buffers[b]);
    }
  std::vector<int> new_value(nv, -1);
  std::vector<Value> values;
  for (std::size_t v = 0; v < nv; ++v)
    if (live[v]) {
      new_value[v] = static_cast<int>(values.size());
      Value val = std::move(plan.values[v]);
      val.buffer = new_buffer[static_cast<std::size_t>(val.buffer)];
      values.push_back(std::move(val));
    }
  std::vector<Step> steps;
  for (Step& step : plan.steps)
    if (live[static_cast<std::size_t>(destination(step))]) steps.push_back(std::move(step));
  plan.steps = std::move(steps);
  rename_uses(plan, new_value);
  for (Step& step : plan.steps) std::visit([&](auto& s) { s.dst = new_value[static_cast<std::size_t>(s.dst)]; }, step);
  plan.values = std::move(values);
  plan.buffers = std::move(buffers);
  return plan;
}

}  // namespace einexpr::detail
