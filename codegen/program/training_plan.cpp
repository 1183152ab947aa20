// plan_training(): the forward and backward buffers of one training step as Lifetimes on
// one timeline of events (training_plan.hpp); training_memory() its high-water mark by
// live_peak() (memory_plan.hpp), for program cost.
#include "einexpr/codegen/training_plan.hpp"

#include <algorithm>
#include <set>

#include "einexpr/codegen/memory_plan.hpp"
#include "program/training_memory.hpp"

namespace einexpr {

namespace {

std::int64_t tensor_bytes(const ProgramTensor& t) {
  return checked_mul(checked_numel(t.shape), static_cast<std::int64_t>(element_size(t.dtype)));
}

constexpr int kEnd = -2;  // a lifetime that lasts to the optimizer's event, resolved at the end

class Timeline {
 public:
  /// lean: the events without their gradients' plans and expressions (for a search that
  /// reads only the buffers).
  Timeline(const ProgramPlan& plan, const program_detail::BackwardPlan& backward, const TrainingOptions& options,
           bool lean = false)
      : plan_(plan), bwd_(backward), lean_(lean) {
    kept_.assign(plan.buffers.size(), true);
    if (!options.recompute) return;
    kept_.assign(plan.buffers.size(), false);
    for (int o : plan.outputs) kept_[static_cast<std::size_t>(plan.tensor(o).buffer)] = true;
    for (const std::string& name : options.keep) {
      const int t = plan.tensor(name);
      if (t < 0 || plan.tensor(t).role != TensorRole::statement)
        throw Error("'" + name + "' is no statement's result: only those can be kept for the backward");
      kept_[static_cast<std::size_t>(plan.tensor(t).buffer)] = true;
    }
  }
  TrainingPlan run();

 private:
  int add(std::int64_t bytes, int first, int last, int gradient_of = -1) {
    out_.buffers.push_back({bytes, first, last, -1, gradient_of});
    return static_cast<int>(out_.buffers.size()) - 1;
  }
  void extend(int b, int event) {
    int& last = out_.buffers[static_cast<std::size_t>(b)].last;
    last = last == kEnd || event == kEnd ? kEnd : std::max(last, event);
  }
  /// The buffer a backward event reads a forward tensor from: the forward's where it is kept
  /// (-1: external), else a recomputed copy.
  int source_buffer(int tensor);
  int materialize(int program_buffer);
  /// The timeline buffer of a tensor's forward buffer (-1 for an input's or param's own).
  int forward_buffer(int tensor) const {
    return out_.forward_buffer[static_cast<std::size_t>(plan_.tensor(tensor).buffer)];
  }
  void forward();
  void seeds(int first_backward);
  void gradient(const PlannedStatement& st, const program_detail::NeededGradient& g);

  const ProgramPlan& plan_;
  const program_detail::BackwardPlan& bwd_;
  bool lean_ = false;
  TrainingPlan out_;
  std::vector<int> grad_death_;  // per tensor: the last event that reads its gradient
  std::set<int> saved_;          // forward timeline buffers the backward reads
  std::set<int> by_slices_;      // stacked tensors whose gradient buffer a slice's gradient made
  std::vector<bool> kept_;       // per ProgramBuffer: kept for the backward (else recomputed)
  std::vector<int> recomputed_;  // per ProgramBuffer: its recomputed copy, -1 until made
  std::vector<TrainingRecompute> pending_;  // made for the next backward event
  int next_event_ = 0;
};

int Timeline::source_buffer(int tensor) {
  const int pb = plan_.tensor(tensor).buffer;
  if (plan_.buffers[static_cast<std::size_t>(pb)].external) return -1;
  if (kept_[static_cast<std::size_t>(pb)]) {
    const int b = out_.forward_buffer[static_cast<std::size_t>(pb)];
    saved_.insert(b);
    return b;
  }
  return materialize(pb);
}

// The statement that makes `program_buffer` run again (after whatever it reads that is
// neither kept nor made again yet), its buffers new from its event on.
int Timeline::materialize(int program_buffer) {
  if (recomputed_[static_cast<std::size_t>(program_buffer)] >= 0) return recomputed_[static_cast<std::size_t>(program_buffer)];
  const int s = plan_.buffers[static_cast<std::size_t>(program_buffer)].statement;
  const PlannedStatement& st = plan_.statements.at(static_cast<std::size_t>(s));
  TrainingRecompute r;
  r.statement = s;
  for (int in : st.inputs) r.inputs.push_back(source_buffer(in));
  r.event = next_event_++;
  for (int b : r.inputs)
    if (b >= 0) extend(b, r.event);
  for (std::size_t j = static_cast<std::size_t>(st.plan.num_inputs); j < st.buffers.size(); ++j) {
    const int pb = st.buffers[j];
    const int id = add(plan_.buffers[static_cast<std::size_t>(pb)].bytes, r.event, r.event);
    r.buffers.push_back(id);
    recomputed_[static_cast<std::size_t>(pb)] = id;
  }
  pending_.push_back(std::move(r));
  const int made = recomputed_[static_cast<std::size_t>(program_buffer)];
  EINEXPR_ASSERT(made >= 0, "recompute: the statement did not make the buffer");
  return made;
}

// Forward buffers: from the statement that makes them to the last that reads them.
void Timeline::forward() {
  const int n = static_cast<int>(plan_.statements.size());
  out_.forward_buffer.assign(plan_.buffers.size(), -1);
  for (std::size_t b = 0; b < plan_.buffers.size(); ++b) {
    const ProgramBuffer& pb = plan_.buffers[b];
    if (pb.external) continue;
    const int id = add(pb.bytes, pb.first_use, pb.last_use >= n ? kEnd : pb.last_use);
    out_.buffers[static_cast<std::size_t>(id)].program_buffer = static_cast<int>(b);
    out_.forward_buffer[b] = id;
  }
}

// dY of every output that needs a gradient, made when the backward starts.
void Timeline::seeds(int first_backward) {
  for (int o : plan_.outputs) {
    const auto t = static_cast<std::size_t>(o);
    if (!bwd_.needs_grad[t] || out_.gradient_buffer[t] >= 0) continue;
    out_.gradient_buffer[t] = add(tensor_bytes(plan_.tensor(o)), first_backward, first_backward, o);
    out_.gradient_layout[t] = Layout::contiguous(plan_.tensor(o).shape);
    out_.seeds.push_back(o);
  }
}

void Timeline::gradient(const PlannedStatement& st, const program_detail::NeededGradient& g) {
  const Plan& p = g.gradient.plan;
  TrainingGradient e;
  e.statement = static_cast<int>(&st - plan_.statements.data());
  e.operand = g.operand;
  e.tensor = g.tensor;
  for (const GradientSource& s : g.gradient.sources) {
    int b = -1, tensor = -1;
    if (s.kind == GradientSource::Kind::output_gradient) b = out_.gradient_buffer[static_cast<std::size_t>(st.output)];
    if (s.kind == GradientSource::Kind::output) tensor = st.output;
    if (s.kind == GradientSource::Kind::input) tensor = st.inputs.at(static_cast<std::size_t>(s.input));
    if (tensor >= 0) b = source_buffer(tensor);
    e.source_buffers.push_back(b);
    e.source_tensors.push_back(tensor);
  }
  const int event = next_event_++;
  e.event = event;
  e.recompute = std::move(pending_);
  pending_.clear();
  for (int b : e.source_buffers)
    if (b >= 0) extend(b, event);
  const auto t = static_cast<std::size_t>(g.tensor);
  int& grad = out_.gradient_buffer[t];
  const std::int64_t bytes = tensor_bytes(plan_.tensor(g.tensor));
  const int out_buffer = p.output_value().buffer;
  const int stacked = plan_.tensor(g.tensor).stacked;
  // a layer's slice: into its part of the stack's gradient, made at the first slice's gradient
  // (copied in, unless the stack is also read whole and that gradient came first: added)
  auto in_stack = [&]() -> bool {
    const auto whole = static_cast<std::size_t>(stacked);
    if (out_.gradient_buffer[whole] < 0) {
      out_.gradient_buffer[whole] = add(tensor_bytes(plan_.tensor(stacked)), event, event, stacked);
      out_.gradient_layout[whole] = Layout::contiguous(plan_.tensor(stacked).shape);
      by_slices_.insert(stacked);
    }
    grad = out_.gradient_buffer[whole];
    const ProgramTensor& x = plan_.tensor(g.tensor);
    out_.gradient_layout[t] = Layout::contiguous(x.shape);
    out_.gradient_layout[t].offset = static_cast<std::int64_t>(x.layer) * checked_numel(x.shape);
    return by_slices_.count(stacked) > 0;
  };
  for (int b = p.num_inputs; b < static_cast<int>(p.buffers.size()); ++b) {
    if (b == out_buffer) {
      e.temp_buffers.push_back(-1);  // below
      continue;
    }
    const PlanBuffer& pb = p.buffers[static_cast<std::size_t>(b)];
    e.temp_buffers.push_back(add(checked_mul(pb.elements, static_cast<std::int64_t>(element_size(pb.dtype))), event, event));
  }
  if (out_buffer < p.num_inputs) {  // a view of a source: no new memory where it is dY's, contiguous
    const GradientSource& s = g.gradient.sources.at(static_cast<std::size_t>(out_buffer));
    Layout layout = p.output_value().layout;
    const bool of_dy = s.kind == GradientSource::Kind::output_gradient;
    if (of_dy) layout.offset += out_.gradient_layout[static_cast<std::size_t>(st.output)].offset;
    if (grad >= 0) {
      e.into = GradientInto::add_view;
    } else if (stacked >= 0) {
      e.into = in_stack() ? GradientInto::copy : GradientInto::add_view;
    } else if (of_dy && layout.is_contiguous()) {
      e.into = GradientInto::view;
      grad = e.source_buffers[static_cast<std::size_t>(out_buffer)];
      out_.gradient_layout[t] = layout;
    } else {
      e.into = GradientInto::copy;
      grad = add(bytes, event, event, g.tensor);
      out_.gradient_layout[t] = Layout::contiguous(plan_.tensor(g.tensor).shape);
    }
  } else {
    const std::size_t out_temp = static_cast<std::size_t>(out_buffer - p.num_inputs);
    const PlanBuffer& pb = p.buffers[static_cast<std::size_t>(out_buffer)];
    const std::int64_t temp_bytes = checked_mul(pb.elements, static_cast<std::int64_t>(element_size(pb.dtype)));
    const Layout& layout = p.output_value().layout;
    if (grad < 0 && stacked >= 0) {
      e.temp_buffers[out_temp] = add(temp_bytes, event, event);
      if (in_stack()) {
        e.into = GradientInto::copy;
      } else {
        e.into = GradientInto::add;
        e.contribution = e.temp_buffers[out_temp];
      }
    } else if (grad < 0 && layout.is_contiguous()) {  // the first contribution becomes the gradient
      e.into = GradientInto::fresh;
      grad = add(std::max(bytes, temp_bytes), event, event, g.tensor);
      e.temp_buffers[out_temp] = grad;
      out_.gradient_layout[t] = layout;
    } else if (grad < 0) {  // a broadcast (mean's dY / n along the reduced axes): laid out whole
      e.into = GradientInto::copy;
      e.temp_buffers[out_temp] = add(temp_bytes, event, event);
      grad = add(bytes, event, event, g.tensor);
      out_.gradient_layout[t] = Layout::contiguous(plan_.tensor(g.tensor).shape);
    } else {  // later ones are added into it, then freed
      e.into = GradientInto::add;
      e.contribution = add(temp_bytes, event, event);
      e.temp_buffers[out_temp] = e.contribution;
    }
  }
  if (!lean_) {
    e.gradient = g.gradient;
    e.expression = g.expression;
  }
  out_.backward.push_back(std::move(e));
}

TrainingPlan Timeline::run() {
  const int n = static_cast<int>(plan_.statements.size());
  out_.needs_grad = bwd_.needs_grad;
  forward();
  recomputed_.assign(plan_.buffers.size(), -1);
  out_.gradient_buffer.assign(plan_.tensors.size(), -1);
  out_.gradient_layout.assign(plan_.tensors.size(), Layout{});
  grad_death_.assign(plan_.tensors.size(), kEnd);
  seeds(n);
  next_event_ = n;
  for (std::size_t s = plan_.statements.size(); s-- > 0;) {
    const PlannedStatement& st = plan_.statements[s];
    for (const program_detail::NeededGradient& g : bwd_.gradients[s]) gradient(st, g);
    if (bwd_.runs[s]) grad_death_[static_cast<std::size_t>(st.output)] = next_event_ - 1;
  }
  for (std::size_t t = 0; t < plan_.tensors.size(); ++t)
    if (out_.gradient_buffer[t] >= 0) extend(out_.gradient_buffer[t], grad_death_[t]);
  std::vector<int> slices(plan_.tensors.size(), 0), written(plan_.tensors.size(), 0);
  for (std::size_t t = 0; t < plan_.tensors.size(); ++t) {
    const int s = plan_.tensors[t].stacked;
    if (s < 0) continue;
    ++slices[static_cast<std::size_t>(s)];
    if (out_.gradient_buffer[t] >= 0) ++written[static_cast<std::size_t>(s)];
  }
  for (std::size_t t = 0; t < plan_.tensors.size(); ++t) {
    if (written[t] == 0) continue;
    // every element of the stack's gradient is a slice's, or the stack is read whole too
    const std::int64_t layers = plan_.tensors[t].shape.front();
    if (written[t] == layers && out_.gradient_buffer[t] >= 0 && slices[t] == layers) continue;
    out_.zeroed.push_back(static_cast<int>(t));
    out_.buffers[static_cast<std::size_t>(out_.gradient_buffer[t])].first = n;
  }
  out_.events = next_event_ + 1;  // the optimizer's
  for (TrainingBuffer& b : out_.buffers)
    if (b.last == kEnd) b.last = out_.events - 1;
  out_.activations.assign(saved_.begin(), saved_.end());
  return std::move(out_);
}

std::vector<Lifetime> lifetimes(const TrainingPlan& t) {
  std::vector<Lifetime> out;
  for (const TrainingBuffer& b : t.buffers) out.push_back({b.bytes, b.first, b.last});
  return out;
}

}  // namespace

std::int64_t TrainingPlan::peak_bytes() const { return live_peak(lifetimes(*this)); }

std::int64_t TrainingPlan::forward_peak_bytes(const ProgramPlan& plan) const {
  const int n = static_cast<int>(plan.statements.size());
  std::vector<Lifetime> inference;  // the forward's own lifetimes: nothing kept for a backward
  for (const TrainingBuffer& b : buffers)
    if (b.program_buffer >= 0)
      inference.push_back({b.bytes, b.first, std::min(plan.buffers[static_cast<std::size_t>(b.program_buffer)].last_use, n - 1)});
  return live_peak(inference);
}

std::vector<int> TrainingPlan::recomputed_statements() const {
  std::vector<int> out;
  for (const TrainingGradient& g : backward)
    for (const TrainingRecompute& r : g.recompute) out.push_back(r.statement);
  return out;
}

std::int64_t TrainingPlan::activations_bytes() const {
  std::int64_t sum = 0;
  for (int b : activations) sum = checked_add(sum, buffers[static_cast<std::size_t>(b)].bytes);
  return sum;
}

namespace program_detail {

TrainingPlan plan_training(const ProgramPlan& plan, const BackwardPlan& backward, const TrainingOptions& options,
                           bool lean) {
  return Timeline(plan, backward, options, lean).run();
}

TrainingMemory training_memory(const ProgramPlan& plan, const BackwardPlan& backward, const TrainingOptions& options) {
  const TrainingPlan t = plan_training(plan, backward, options);
  TrainingMemory m;
  m.activations_bytes = Count::from_int64(t.activations_bytes());
  for (int b : t.activations) {  // activations come in timeline order: the forward's
    const TrainingBuffer& tb = t.buffers[static_cast<std::size_t>(b)];
    const ProgramBuffer& pb = plan.buffers[static_cast<std::size_t>(tb.program_buffer)];
    KeptActivation k;
    const int owner = pb.tensor >= 0 ? pb.tensor : -1;
    std::vector<std::string> read;
    for (const TrainingGradient& g : t.backward) {
      bool reads = false;
      for (std::size_t i = 0; i < g.source_buffers.size(); ++i) {
        if (g.source_buffers[i] != b || g.source_tensors[i] < 0) continue;
        reads = true;
        const std::string& n = plan.tensor(g.source_tensors[i]).name;
        if (std::find(read.begin(), read.end(), n) == read.end()) read.push_back(n);
      }
      if (reads) k.needed_by.push_back(g.expression);
      for (const TrainingRecompute& r : g.recompute)  // a checkpoint a statement made again reads
        if (std::find(r.inputs.begin(), r.inputs.end(), b) != r.inputs.end())
          k.needed_by.push_back("recompute " + plan.statements[static_cast<std::size_t>(r.statement)].name);
    }
    const int shown = owner >= 0 ? owner : plan.tensor(read.empty() ? std::string() : read.front());
    if (pb.statement >= 0 && plan.statements[static_cast<std::size_t>(pb.statement)].call >= 0) {
      const PlannedStatement& made = plan.statements[static_cast<std::size_t>(pb.statement)];
      k.call = plan.blocks[static_cast<std::size_t>(made.call)].name;
      k.layer = made.layer;
    }
    k.tensor = shown >= 0 ? plan.tensor(shown).name : "?";
    for (const std::string& n : read) k.read_as += (k.read_as.empty() ? "" : ", ") + n;
    if (shown >= 0) {
      const ProgramTensor& pt = plan.tensor(shown);
      std::string dims;
      for (std::size_t d = 0; d < pt.shape.size(); ++d)
        dims += (d ? ", " : "") + (d < pt.dims.size() ? pt.dims[d] + "=" : std::string()) + std::to_string(pt.shape[d]);
      k.shape = "[" + dims + "] " + std::string(name(pt.dtype));
    }
    k.bytes = Count::from_int64(tb.bytes);
    m.kept.push_back(std::move(k));
  }
  std::stable_sort(m.kept.begin(), m.kept.end(), [&](const KeptActivation& a, const KeptActivation& b) {
    return plan.tensor(a.tensor) < plan.tensor(b.tensor);
  });
  m.peak_bytes = Count::from_int64(t.peak_bytes());
  m.forward_peak_bytes = Count::from_int64(t.forward_peak_bytes(plan));
  m.recomputed = t.recomputed_statements();
  return m;
}

}  // namespace program_detail

TrainingPlan plan_training(const ProgramPlan& plan, const TrainingOptions& options) {
  return program_detail::plan_training(plan, program_detail::plan_backward(plan), options);
}

}  // namespace einexpr
