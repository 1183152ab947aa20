// training_memory(): the forward and backward buffers as Lifetimes on one timeline of
// events, their high-water mark by live_peak() (memory_plan.hpp).
#include "program/training_memory.hpp"

#include <algorithm>
#include <set>

#include "einexpr/codegen/memory_plan.hpp"

namespace einexpr::program_detail {

namespace {

std::int64_t tensor_bytes(const ProgramTensor& t) {
  return checked_mul(checked_numel(t.shape), static_cast<std::int64_t>(element_size(t.dtype)));
}

class Timeline {
 public:
  Timeline(const ProgramPlan& plan, const BackwardPlan& backward) : plan_(plan), bwd_(backward) {}
  TrainingMemory run();

 private:
  int add(std::int64_t bytes, int first, int last) {
    sim_.push_back({bytes, first, last});
    return static_cast<int>(sim_.size()) - 1;
  }
  void extend(int s, int event) { sim_[static_cast<std::size_t>(s)].last = std::max(sim_[static_cast<std::size_t>(s)].last, event); }
  /// The sim buffer of a tensor's forward buffer (-1 for an input's or param's own).
  int forward_buffer(int tensor) const { return forward_[static_cast<std::size_t>(plan_.tensor(tensor).buffer)]; }
  void forward();
  void seeds(int first_backward);
  void gradient(const PlannedStatement& st, const NeededGradient& g, int event);

  const ProgramPlan& plan_;
  const BackwardPlan& bwd_;
  std::vector<Lifetime> sim_;
  std::vector<int> forward_;     // per ProgramBuffer: its sim buffer (-1: external)
  std::vector<int> grad_;        // per tensor: the sim buffer of its gradient (-1: none yet)
  std::vector<int> grad_death_;  // per tensor: the last event that reads its gradient
  std::set<int> saved_;          // forward sim buffers the backward reads
  int end_ = 0;                  // the optimizer step's event
};

// Forward buffers: from the statement that makes them to the last that reads them.
void Timeline::forward() {
  const int n = static_cast<int>(plan_.statements.size());
  forward_.assign(plan_.buffers.size(), -1);
  for (std::size_t b = 0; b < plan_.buffers.size(); ++b) {
    const ProgramBuffer& pb = plan_.buffers[b];
    if (pb.external) continue;
    forward_[b] = add(pb.bytes, pb.first_use, pb.last_use >= n ? end_ : pb.last_use);
  }
}

// dY of every output that needs a gradient, made when the backward starts.
void Timeline::seeds(int first_backward) {
  for (int o : plan_.outputs)
    if (bwd_.needs_grad[static_cast<std::size_t>(o)] && grad_[static_cast<std::size_t>(o)] < 0)
      grad_[static_cast<std::size_t>(o)] = add(tensor_bytes(plan_.tensor(o)), first_backward, first_backward);
}

void Timeline::gradient(const PlannedStatement& st, const NeededGradient& g, int event) {
  const Plan& p = g.gradient.plan;
  std::vector<int> source_buffer;  // per plan input: the sim buffer it reads (-1: external)
  for (const GradientSource& s : g.gradient.sources) {
    int b = -1;
    if (s.kind == GradientSource::Kind::output_gradient) b = grad_[static_cast<std::size_t>(st.output)];
    if (s.kind == GradientSource::Kind::output) b = forward_buffer(st.output);
    if (s.kind == GradientSource::Kind::input) b = forward_buffer(st.inputs.at(static_cast<std::size_t>(s.input)));
    if (b >= 0) extend(b, event);
    if (b >= 0 && s.kind != GradientSource::Kind::output_gradient) saved_.insert(b);
    source_buffer.push_back(b);
  }
  const int out_buffer = p.output_value().buffer;
  for (int b = p.num_inputs; b < static_cast<int>(p.buffers.size()); ++b) {
    if (b == out_buffer) continue;
    add(checked_mul(p.buffers[static_cast<std::size_t>(b)].elements, static_cast<std::int64_t>(element_size(p.dtype))),
        event, event);
  }
  int& grad = grad_[static_cast<std::size_t>(g.tensor)];
  const std::int64_t bytes = tensor_bytes(plan_.tensor(g.tensor));
  if (out_buffer < p.num_inputs) {  // a view of a source: no new memory
    const int shared = source_buffer[static_cast<std::size_t>(out_buffer)];
    if (grad < 0) grad = shared >= 0 ? shared : add(bytes, event, event);
    return;
  }
  if (grad < 0) {
    grad = add(bytes, event, event);  // the first contribution becomes the gradient
  } else {
    add(bytes, event, event);         // later ones are added into it, then freed
  }
}

TrainingMemory Timeline::run() {
  const int n = static_cast<int>(plan_.statements.size());
  int events = n;
  for (const auto& gs : bwd_.gradients) events += static_cast<int>(gs.size());
  end_ = events;
  forward();
  TrainingMemory m;
  std::vector<Lifetime> inference = sim_;
  for (Lifetime& l : inference) l.last = std::min(l.last, n - 1);
  m.forward_peak_bytes = Count::from_int64(live_peak(inference));

  grad_.assign(plan_.tensors.size(), -1);
  grad_death_.assign(plan_.tensors.size(), end_);
  seeds(n);
  int event = n;
  for (std::size_t s = plan_.statements.size(); s-- > 0;) {
    const PlannedStatement& st = plan_.statements[s];
    for (const NeededGradient& g : bwd_.gradients[s]) gradient(st, g, event++);
    if (bwd_.runs[s]) grad_death_[static_cast<std::size_t>(st.output)] = event - 1;
  }
  for (std::size_t t = 0; t < plan_.tensors.size(); ++t)
    if (grad_[t] >= 0) extend(grad_[t], grad_death_[t]);
  for (int b : saved_) m.activations_bytes += Count::from_int64(sim_[static_cast<std::size_t>(b)].bytes);
  m.peak_bytes = Count::from_int64(live_peak(sim_));
  return m;
}

}  // namespace

TrainingMemory training_memory(const ProgramPlan& plan, const BackwardPlan& backward) {
  return Timeline(plan, backward).run();
}

}  // namespace einexpr::program_detail
