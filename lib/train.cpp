// compile_training / Trainer (train.hpp): plan_training's timeline lowered for the CPU and
// placed in one arena; step() runs its events in order, then the optimizer.
//
// Buffers: every TrainingBuffer gets an arena offset from plan_memory over its lifetime,
// together with the staging buffers each lowered plan adds beyond its plan's temporaries
// (alive at their event only). A plan's workspace is bound per event: its sources (a forward
// tensor in its buffer at its layout's offset, or the gradient dY of the statement's output),
// then its temporaries. Where the result goes is the event's GradientInto.
#include "einexpr/train.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/lower.hpp"
#include "einexpr/codegen/memory_plan.hpp"
#include "einexpr/codegen/random.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/parallel.hpp"
#include "einexpr/runtime/storage.hpp"
#include "einexpr/runtime/strided.hpp"
#include "einexpr/step_hooks.hpp"
#include "narrow_float.hpp"
#include "program_bind.hpp"

namespace einexpr {

namespace {

std::byte* at(std::byte* base, std::int64_t elements, DType dtype) {
  return base + elements * static_cast<std::int64_t>(element_size(dtype));
}

template <class F>
void visit_float(DType dtype, F&& f) {
  if (dtype == DType::f32) f(float{});
  else if (dtype == DType::f64) f(double{});
  else throw DTypeError(std::string("program train: ") + std::string(name(dtype)) + " is not supported here yet (f32 and f64 are)");
}

using program_detail::f32_to_narrow;
using program_detail::narrow;
using program_detail::narrow_to_f32;

// f(dst offset, src offset) for every index of dl's shape, in row-major order.
template <class F>
void for_each_offset(const Layout& dl, const Layout& sl, F&& f) {
  const std::int64_t n = checked_numel(dl.shape);
  std::vector<std::int64_t> index(dl.shape.size(), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t od = dl.offset, os = sl.offset;
    for (std::size_t k = 0; k < index.size(); ++k) od += index[k] * dl.strides[k], os += index[k] * sl.strides[k];
    f(od, os);
    for (std::size_t k = index.size(); k-- > 0;) {
      if (++index[k] < dl.shape[k]) break;
      index[k] = 0;
    }
  }
}

// dst += src, elementwise over one shape (strides of either may be anything; dst's never 0).
// bf16 and f16 add in f32 and round once, as torch does.
void add_into(std::byte* dst, const Layout& dl, const std::byte* src, const Layout& sl, DType dtype) {
  if (narrow(dtype)) {
    auto* d = reinterpret_cast<std::uint16_t*>(dst);
    const auto* s = reinterpret_cast<const std::uint16_t*>(src);
    for_each_offset(dl, sl, [&](std::int64_t od, std::int64_t os) {
      d[od] = f32_to_narrow(narrow_to_f32(d[od], dtype) + narrow_to_f32(s[os], dtype), dtype);
    });
    return;
  }
  visit_float(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* d = reinterpret_cast<T*>(dst);
    const T* s = reinterpret_cast<const T*>(src);
    if (dl.is_contiguous() && sl.is_contiguous()) {
      const std::int64_t n = checked_numel(dl.shape);
      parallel_for(n, pieces_for(n, 1 << 15), [&](std::int64_t, std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) d[dl.offset + i] += s[sl.offset + i];
      });
      return;
    }
    for_each_offset(dl, sl, [&](std::int64_t od, std::int64_t os) { d[od] += s[os]; });
  });
}

bool same_strides(const Layout& want, const Layout& have) {
  if (want.shape != have.shape) return false;
  for (std::size_t d = 0; d < want.shape.size(); ++d)
    if (want.shape[d] != 1 && want.strides[d] != have.strides[d]) return false;
  return true;
}

}  // namespace

struct Trainer::Impl {
  ProgramPlan plan;
  TrainingPlan training;
  OptimizerOptions opt;
  std::vector<Program> forward;                 // per statement
  std::vector<Program> backward;                // per backward event
  std::vector<std::int64_t> offset;             // per TrainingBuffer: arena offset
  std::vector<std::vector<std::int64_t>> forward_staging, backward_staging;  // arena offsets
  std::vector<std::vector<std::vector<std::int64_t>>> recompute_staging;     // per event, per recompute
  std::shared_ptr<Storage> arena;
  std::int64_t arena_bytes = 0;
  TensorMap params;                             // own storage
  std::map<int, Tensor> constants;
  std::vector<int> param_ids;                   // tensor ids of params with a gradient
  std::vector<std::vector<Tensor>> state;       // per param_ids entry: momentum / m, v (f32 for bf16 / f16)
  std::vector<Tensor> master;                   // per param_ids entry: f32 master weights of a bf16 / f16
                                                // param (mixed precision), else undefined
  std::int64_t state_bytes = 0, params_bytes = 0;  // params_bytes: and the program's numbers
  std::int64_t steps = 0;
  Count recompute_flops;                        // per micro-batch's backward
  RecomputeChoice choice;                       // what the backward keeps
  int loss = -1;                                // the output tensor
  std::vector<int> split;                       // micro-batches: the inputs cut along the batch axis (dim 0)
  std::int64_t micro_length = 0;                // the batch axis's length in one micro-batch
  std::vector<Tensor> accumulated;              // micro-batches: per param_ids entry, its gradient summed
                                                // over the micro-batches (f32 for bf16 / f16 params)
  std::shared_ptr<StepHooks> hooks;             // a step on a mesh: its collectives (else null)
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> ranges;  // per param_ids entry: the
                                                // elements updated here, its state theirs in order
  std::vector<int> last_event;                  // per tensor: the backward event completing its gradient (-1)
  // micro-batches on a mesh: the tensors (a param, a layer's slice of one) whose gradient's
  // collective waits for the micro-batches' sum, each with its param's param_ids entry
  std::vector<std::pair<int, std::size_t>> deferred;
  std::vector<bool> is_deferred;                // per tensor
  std::vector<std::uint16_t> narrow_scratch;    // mixed precision on a mesh: a summed gradient as it moves

  void check_program();
  void lower_all();
  void place();
  void choose_and_place();
  std::byte* buffer_base(int training_buffer) const { return arena->data() + offset[static_cast<std::size_t>(training_buffer)]; }
  std::byte* tensor_ptr(int id, const std::map<int, Tensor>& bound) const;
  std::byte* grad_ptr(int id) const {
    const auto t = static_cast<std::size_t>(id);
    return at(buffer_base(training.gradient_buffer[t]), training.gradient_layout[t].offset, plan.tensor(id).dtype);
  }
  void run_forward(const std::map<int, Tensor>& bound) const;
  void run_backward(const std::map<int, Tensor>& bound, double seed) const;
  void accumulate(bool first);
  void update();
};

void Trainer::Impl::check_program() {
  if (plan.outputs.size() != 1)
    throw Error("program train needs one output, the loss (a 0-d float); the program has " +
                std::to_string(plan.outputs.size()) + " outputs");
  loss = plan.outputs[0];
  const ProgramTensor& l = plan.tensor(loss);
  if (!l.shape.empty() || !is_floating(l.dtype))
    throw Error("program train needs the output to be the loss, a 0-d float; " + plan.describe(loss) + " is not");
  if (!l.requires_grad) throw Error("the loss " + plan.describe(loss) + " does not depend on any param: nothing to train");
  for (const ProgramTensor& t : plan.tensors) {
    if (t.role != TensorRole::param || t.dtype == DType::f32 || t.dtype == DType::f64) continue;
    if (!narrow(t.dtype))
      throw DTypeError("param '" + t.name + "' is " + std::string(name(t.dtype)) + ": a param trains in f64, f32, bf16 or f16");
    if (!opt.mixed_precision)
      throw DTypeError("param '" + t.name + "' is " + std::string(name(t.dtype)) +
                       ": train it with mixed precision (f32 master weights and optimizer state); updates in " +
                       std::string(name(t.dtype)) + " itself are not implemented");
  }
}

void Trainer::Impl::lower_all() {
  for (const PlannedStatement& st : plan.statements) forward.push_back(lower(st.plan, Device::cpu()));
  for (const TrainingGradient& g : training.backward) {
    backward.push_back(lower(g.gradient.plan, Device::cpu()));
    const Program& p = backward.back();
    const PlannedStatement& st = plan.statements[static_cast<std::size_t>(g.statement)];
    for (std::size_t k = 0; k < g.source_tensors.size(); ++k) {  // the layouts the sources will have
      const int t = g.source_tensors[k];
      const Layout& have = t >= 0 ? plan.tensor(t).layout : training.gradient_layout[static_cast<std::size_t>(st.output)];
      EINEXPR_ASSERT(same_strides(p.input_layouts[k], have),
                     "program train: the gradient " + g.expression + " reads " + g.gradient.sources[k].name + " as " +
                         shape_str(p.input_layouts[k].strides) + " but it is laid out as " + shape_str(have.strides));
    }
    if (g.into == GradientInto::fresh || g.into == GradientInto::add) {
      const Value& out = g.gradient.plan.output_value();
      EINEXPR_ASSERT(p.output_buffer == out.buffer && p.output_layout == out.layout,
                     "program train: the lowering of " + g.expression + " moved its output");
    }
  }
}

// Lifetimes of the timeline's buffers and of each lowering's staging buffers, then offsets.
void Trainer::Impl::place() {
  std::vector<Lifetime> lifetimes;
  for (const TrainingBuffer& b : training.buffers) lifetimes.push_back({b.bytes, b.first, b.last});
  auto staging = [&](const Program& p, std::size_t plan_temps, int event, std::vector<std::int64_t>& slots) {
    for (std::size_t j = plan_temps; j < p.temp_bytes.size(); ++j) {
      slots.push_back(static_cast<std::int64_t>(lifetimes.size()));
      lifetimes.push_back({static_cast<std::int64_t>(p.temp_bytes[j]), event, event});
    }
  };
  const int n = static_cast<int>(plan.statements.size());
  forward_staging.resize(forward.size());
  for (int s = 0; s < n; ++s) {
    const Plan& pl = plan.statements[static_cast<std::size_t>(s)].plan;
    staging(forward[static_cast<std::size_t>(s)], pl.buffers.size() - static_cast<std::size_t>(pl.num_inputs), s,
            forward_staging[static_cast<std::size_t>(s)]);
  }
  backward_staging.resize(backward.size());
  recompute_staging.resize(backward.size());
  for (std::size_t e = 0; e < backward.size(); ++e) {
    const TrainingGradient& g = training.backward[e];
    for (const TrainingRecompute& r : g.recompute) {
      const Plan& pl = plan.statements[static_cast<std::size_t>(r.statement)].plan;
      recompute_staging[e].emplace_back();
      staging(forward[static_cast<std::size_t>(r.statement)], pl.buffers.size() - static_cast<std::size_t>(pl.num_inputs),
              r.event, recompute_staging[e].back());
    }
    const Plan& pl = g.gradient.plan;
    staging(backward[e], pl.buffers.size() - static_cast<std::size_t>(pl.num_inputs), g.event, backward_staging[e]);
  }
  const MemoryPlan m = plan_memory(lifetimes, static_cast<std::int64_t>(cpu_alignment));
  offset.assign(m.offsets.begin(), m.offsets.begin() + static_cast<std::ptrdiff_t>(training.buffers.size()));
  auto resolve = [&](std::vector<std::int64_t>& v) {
    for (std::int64_t& slot : v) slot = m.offsets[static_cast<std::size_t>(slot)];
  };
  for (auto* slots : {&forward_staging, &backward_staging})
    for (auto& v : *slots) resolve(v);
  for (auto& per_event : recompute_staging)
    for (auto& v : per_event) resolve(v);
  arena_bytes = m.arena_bytes;
}

// What the backward keeps (recompute.hpp), its timeline lowered and placed, the arena
// allocated. Under auto the limit holds for peak_bytes_predicted: the staging buffers and
// the placement's gaps above the timeline's peak are taken off the limit and the search run
// again, a few times at most.
void Trainer::Impl::choose_and_place() {
  const RecomputeOptions asked = opt.recompute ? *opt.recompute : default_recompute(plan);
  const std::int64_t fixed = step_fixed_bytes(plan, opt.kind, opt.mixed_precision);
  RecomputeOptions now = asked;
  for (int attempt = 0;; ++attempt) {
    choice = choose_recompute(plan, now, fixed);
    training = plan_training(plan, choice.training);
    recompute_flops = choice.recompute_flops;
    forward.clear();
    backward.clear();
    forward_staging.clear();
    backward_staging.clear();
    recompute_staging.clear();
    lower_all();
    place();
    const std::int64_t predicted = arena_bytes + params_bytes + state_bytes;
    if (asked.mode != RecomputeMode::automatic || predicted <= asked.memory_limit) break;
    if (attempt == 3 || now.memory_limit - (predicted - asked.memory_limit) <= 0)
      throw Error("memory limit " + std::to_string(asked.memory_limit) + " bytes: the trainer needs " +
                  std::to_string(predicted) + " with the best choice found (its arena " + std::to_string(arena_bytes) +
                  " bytes for a timeline peak of " + std::to_string(choice.peak_bytes) + ", the rest its lowerings' "
                  "staging buffers and the placement's gaps; params and optimizer state " +
                  std::to_string(params_bytes + state_bytes) + ")");
    now.memory_limit -= predicted - asked.memory_limit;
  }
  arena = Storage::allocate(static_cast<std::size_t>(std::max<std::int64_t>(arena_bytes, 1)), Device::cpu());
}

std::byte* Trainer::Impl::tensor_ptr(int id, const std::map<int, Tensor>& bound) const {
  const ProgramTensor& t = plan.tensor(id);
  const ProgramBuffer& pb = plan.buffers[static_cast<std::size_t>(t.buffer)];
  std::byte* base = pb.external ? static_cast<std::byte*>(bound.at(pb.tensor).data_ptr())
                                : buffer_base(training.forward_buffer[static_cast<std::size_t>(t.buffer)]);
  return at(base, t.layout.offset, t.dtype);
}

void Trainer::Impl::run_forward(const std::map<int, Tensor>& bound) const {
  if (hooks) hooks->begin_forward();
  for (std::size_t s = 0; s < plan.statements.size(); ++s) {
    const PlannedStatement& st = plan.statements[s];
    Workspace ws{{}, Device::cpu(), hooks.get()};
    for (int in : st.inputs) ws.buffers.push_back(tensor_ptr(in, bound));
    for (std::size_t j = static_cast<std::size_t>(st.plan.num_inputs); j < st.buffers.size(); ++j)
      ws.buffers.push_back(buffer_base(training.forward_buffer[static_cast<std::size_t>(st.buffers[j])]));
    for (const std::int64_t o : forward_staging[s]) ws.buffers.push_back(arena->data() + o);
    for (const Kernel& k : forward[s].kernels) k.run(ws);
    if (hooks) {
      const ProgramTensor& y = plan.tensor(st.output);
      Layout layout = y.layout;
      layout.offset = 0;
      hooks->statement_done(static_cast<int>(s), tensor_ptr(st.output, bound), layout, y.dtype);
    }
  }
}

void Trainer::Impl::run_backward(const std::map<int, Tensor>& bound, double seed) const {
  for (int t : training.zeroed)  // a stack some of whose layers' slices get no gradient
    std::memset(grad_ptr(t), 0, static_cast<std::size_t>(checked_numel(plan.tensor(t).shape)) * element_size(plan.tensor(t).dtype));
  for (int o : training.seeds) {  // dY = 1 (1/K for each of K micro-batches)
    const DType d = plan.tensor(o).dtype;
    std::byte* p = grad_ptr(o);
    for (std::int64_t i = 0; i < checked_numel(plan.tensor(o).shape); ++i)
      store_from_double(seed, p + i * static_cast<std::int64_t>(element_size(d)), d);
  }
  if (hooks) hooks->begin_backward();
  std::vector<bool> reached(plan.statements.size(), false);  // a statement's gradients begun
  // a forward tensor in the buffer `b` the timeline gives it (-1: the input's or param's own)
  auto source = [&](int tensor, int b) {
    if (b < 0) return tensor_ptr(tensor, bound);
    const ProgramTensor& t = plan.tensor(tensor);
    return at(buffer_base(b), t.layout.offset, t.dtype);
  };
  for (std::size_t e = 0; e < training.backward.size(); ++e) {
    const TrainingGradient& g = training.backward[e];
    for (std::size_t r = 0; r < g.recompute.size(); ++r) {  // the forward statements made again first
      const TrainingRecompute& rc = g.recompute[r];
      const PlannedStatement& fs = plan.statements[static_cast<std::size_t>(rc.statement)];
      Workspace ws{{}, Device::cpu(), hooks.get()};
      for (std::size_t i = 0; i < fs.inputs.size(); ++i) ws.buffers.push_back(source(fs.inputs[i], rc.inputs[i]));
      for (int b : rc.buffers) ws.buffers.push_back(buffer_base(b));
      for (const std::int64_t o : recompute_staging[e][r]) ws.buffers.push_back(arena->data() + o);
      for (const Kernel& k : forward[static_cast<std::size_t>(rc.statement)].kernels) k.run(ws);
      if (hooks) {  // its result, in the buffer the recomputation wrote
        const ProgramTensor& y = plan.tensor(fs.output);
        for (std::size_t j = static_cast<std::size_t>(fs.plan.num_inputs); j < fs.buffers.size(); ++j)
          if (fs.buffers[j] == y.buffer) {
            Layout layout = y.layout;
            layout.offset = 0;
            hooks->statement_recomputed(rc.statement,
                                        at(buffer_base(rc.buffers[j - static_cast<std::size_t>(fs.plan.num_inputs)]),
                                           y.layout.offset, y.dtype),
                                        layout, y.dtype);
            break;
          }
      }
    }
    const PlannedStatement& st = plan.statements[static_cast<std::size_t>(g.statement)];
    if (hooks && !reached[static_cast<std::size_t>(g.statement)]) {
      reached[static_cast<std::size_t>(g.statement)] = true;
      const ProgramTensor& y = plan.tensor(st.output);
      Layout layout = training.gradient_layout[static_cast<std::size_t>(st.output)];
      std::byte* p = grad_ptr(st.output);
      layout.offset = 0;
      hooks->output_gradient(g.statement, p, layout, y.dtype);
    }
    Workspace ws{{}, Device::cpu(), hooks.get()};
    for (std::size_t k = 0; k < g.source_tensors.size(); ++k)
      ws.buffers.push_back(g.source_tensors[k] >= 0 ? source(g.source_tensors[k], g.source_buffers[k]) : grad_ptr(st.output));
    for (int b : g.temp_buffers) ws.buffers.push_back(buffer_base(b));
    for (const std::int64_t o : backward_staging[e]) ws.buffers.push_back(arena->data() + o);
    const Program& p = backward[e];
    for (const Kernel& k : p.kernels) k.run(ws);
    const ProgramTensor& t = plan.tensor(g.tensor);
    const Layout& grad_layout = training.gradient_layout[static_cast<std::size_t>(g.tensor)];
    std::byte* grad_base = buffer_base(training.gradient_buffer[static_cast<std::size_t>(g.tensor)]);
    const Value& out = g.gradient.plan.output_value();
    switch (g.into) {
      case GradientInto::fresh:
      case GradientInto::view: break;
      case GradientInto::add: add_into(grad_base, grad_layout, buffer_base(g.contribution), out.layout, t.dtype); break;
      case GradientInto::add_view:
      case GradientInto::copy: {
        const std::byte* src = ws.buffers[static_cast<std::size_t>(out.buffer)];
        if (g.into == GradientInto::copy)
          copy_strided(grad_base, grad_layout, src, out.layout, element_size(t.dtype));
        else
          add_into(grad_base, grad_layout, src, out.layout, t.dtype);
        break;
      }
    }
    if (hooks && last_event[static_cast<std::size_t>(g.tensor)] == static_cast<int>(e) &&
        !is_deferred[static_cast<std::size_t>(g.tensor)]) {
      Layout layout = grad_layout;
      layout.offset = 0;
      hooks->gradient_done(g.tensor, grad_ptr(g.tensor), layout, t.dtype);
    }
  }
}

// Micro-batches: each param's gradient of this micro-batch written (the first) or added into
// its accumulator, in the accumulator's dtype (f32 for a bf16 / f16 param).
void Trainer::Impl::accumulate(bool first) {
  for (std::size_t i = 0; i < param_ids.size(); ++i) {
    const DType gd = plan.tensor(param_ids[i]).dtype;
    const std::byte* g = grad_ptr(param_ids[i]);
    Tensor& acc = accumulated[i];
    const std::int64_t n = acc.numel();
    visit_float(acc.dtype(), [&](auto zero) {
      using T = decltype(zero);
      T* a = static_cast<T*>(acc.data_ptr());
      for (std::int64_t j = 0; j < n; ++j) {
        const T v = narrow(gd) ? static_cast<T>(narrow_to_f32(reinterpret_cast<const std::uint16_t*>(g)[j], gd))
                               : reinterpret_cast<const T*>(g)[j];
        a[j] = first ? v : a[j] + v;
      }
    });
  }
}

// torch.optim's single-tensor updates (see train.hpp), in the param's dtype, or with mixed
// precision on the f32 master copy of a bf16 / f16 param, which is then rounded into it.
void Trainer::Impl::update() {
  const double t = static_cast<double>(steps + 1);
  for (std::size_t i = 0; i < param_ids.size(); ++i) {
    const ProgramTensor& pt = plan.tensor(param_ids[i]);
    Tensor& w = params.find(pt.name)->second;
    const bool mixed = narrow(pt.dtype);
    const DType math = mixed ? DType::f32 : pt.dtype;
    visit_float(math, [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(mixed ? master[i].data_ptr() : w.data_ptr());
      const bool summed = !accumulated.empty();  // micro-batches: the accumulator, in the math dtype
      const std::byte* g_raw = summed ? static_cast<const std::byte*>(accumulated[i].data_ptr()) : grad_ptr(param_ids[i]);
      auto* narrow_out = mixed ? static_cast<std::uint16_t*>(w.data_ptr()) : nullptr;
      T* s0 = state[i].empty() ? nullptr : static_cast<T*>(state[i][0].data_ptr());
      T* s1 = state[i].size() < 2 ? nullptr : static_cast<T*>(state[i][1].data_ptr());
      const T lr = static_cast<T>(opt.lr), wd = static_cast<T>(opt.weight_decay), mu = static_cast<T>(opt.momentum);
      // torch's Python-float scalars: 1 - β in double, then rounded to T (not 1 - T(β))
      const T w1 = static_cast<T>(1 - opt.beta1), w2 = static_cast<T>(1 - opt.beta2), b2 = static_cast<T>(opt.beta2);
      const T eps = static_cast<T>(opt.eps), neg_step = static_cast<T>(-(opt.lr / (1 - std::pow(opt.beta1, t))));
      const T bc2_sqrt = static_cast<T>(std::sqrt(1 - std::pow(opt.beta2, t)));
      const T decay = static_cast<T>(1 - opt.lr * opt.weight_decay);
      const Optimizer kind = opt.kind;
      const bool first = steps == 0;
      const DType gd = pt.dtype;
      // one loop per optimizer (the switch outside it, so that each loop can be vectorized)
      auto grad_at = [&](std::int64_t j) -> T {
        return mixed && !summed ? static_cast<T>(narrow_to_f32(reinterpret_cast<const std::uint16_t*>(g_raw)[j], gd))
                                : reinterpret_cast<const T*>(g_raw)[j];
      };
      auto round_out = [&](std::int64_t b, std::int64_t e) {
        if (mixed)
          for (std::int64_t j = b; j < e; ++j) narrow_out[j] = f32_to_narrow(static_cast<float>(p[j]), gd);
      };
      std::int64_t shift = 0;  // param element j has its state at j - shift (ZeRO: the ranges' states in turn)
      auto one_range = [&](std::int64_t, std::int64_t b, std::int64_t e) {
        const std::int64_t sh = shift;
        switch (kind) {
          case Optimizer::sgd:
            for (std::int64_t j = b; j < e; ++j) {
              const T grad = wd != T(0) ? grad_at(j) + wd * p[j] : grad_at(j);  // torch adds it only then
              p[j] = p[j] - lr * grad;
            }
            break;
          case Optimizer::momentum:
            for (std::int64_t j = b; j < e; ++j) {
              const T grad = wd != T(0) ? grad_at(j) + wd * p[j] : grad_at(j);
              s0[j - sh] = first ? grad : mu * s0[j - sh] + grad;
              p[j] = p[j] - lr * s0[j - sh];
            }
            break;
          case Optimizer::adam:
          case Optimizer::adamw: {
            const bool decoupled = kind == Optimizer::adamw;
            for (std::int64_t j = b; j < e; ++j) {
              T grad = grad_at(j);
              if (decoupled) p[j] = p[j] * decay;
              else if (wd != T(0)) grad = grad + wd * p[j];
              s0[j - sh] = s0[j - sh] + w1 * (grad - s0[j - sh]);  // lerp_(g, 1 - β1)
              s1[j - sh] = s1[j - sh] * b2 + w2 * grad * grad;     // mul_(β2).addcmul_(g, g, 1 - β2)
              p[j] = p[j] + neg_step * s0[j - sh] / (std::sqrt(s1[j - sh]) / bc2_sqrt + eps);  // addcdiv_
            }
            break;
          }
        }
        round_out(b, e);
      };
      std::int64_t held = 0;
      for (const auto& range : ranges[i]) {
        const std::int64_t r0 = range.first;  // captured below: not a structured binding (clang 14)
        shift = r0 - held;
        const std::int64_t len = range.second - r0;
        parallel_for(len, pieces_for(len, 1 << 14),
                     [&](std::int64_t piece, std::int64_t b, std::int64_t e) { one_range(piece, r0 + b, r0 + e); });
        held += len;
      }
    });
    if (hooks) hooks->param_updated(param_ids[i], static_cast<std::byte*>(w.data_ptr()), pt.dtype);
  }
  ++steps;
}

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trainer::~Trainer() = default;
Trainer::Trainer(Trainer&&) noexcept = default;
Trainer& Trainer::operator=(Trainer&&) noexcept = default;

Trainer compile_training(const ast::Program& program, const ProgramOptions& options, const OptimizerOptions& optimizer,
                         const TensorMap& params, std::shared_ptr<StepHooks> hooks) {
  if (!(optimizer.lr >= 0)) throw Error("the learning rate must be >= 0, got " + std::to_string(optimizer.lr));
  if (!(optimizer.weight_decay >= 0)) throw Error("the weight decay must be >= 0, got " + std::to_string(optimizer.weight_decay));
  if (!(optimizer.momentum >= 0)) throw Error("the momentum must be >= 0, got " + std::to_string(optimizer.momentum));
  if (!(optimizer.beta1 >= 0 && optimizer.beta1 < 1) || !(optimizer.beta2 >= 0 && optimizer.beta2 < 1))
    throw Error("the betas must be in [0, 1), got " + std::to_string(optimizer.beta1) + ", " + std::to_string(optimizer.beta2));
  if (!(optimizer.eps > 0)) throw Error("eps must be > 0, got " + std::to_string(optimizer.eps));
  auto m = std::make_unique<Trainer::Impl>();
  m->opt = optimizer;
  m->hooks = std::move(hooks);
  ProgramOptions o = options;
  for (const auto& [name_binding, t] : params) {
    const std::string& name = name_binding;  // captured below: clang 14 cannot capture a binding
    const bool listed = std::any_of(o.given.begin(), o.given.end(), [&](const GivenTensor& g) { return g.name == name; });
    if (t.defined() && !listed) o.given.push_back({name, t.shape(), t.dtype(), "the tensor given for '" + name + "'"});
  }
  if (optimizer.micro_batches < 1)
    throw Error("micro-batches must be at least 1, got " + std::to_string(optimizer.micro_batches));
  if (optimizer.micro_batches > 1) {  // plan at the micro-batch's size
    const ProgramPlan full = plan_program(program, o);
    const auto axis = std::find_if(full.axes.begin(), full.axes.end(),
                                   [&](const auto& a) { return a.first == optimizer.batch_axis; });
    if (axis == full.axes.end())
      throw Error("the program has no axis '" + optimizer.batch_axis + "' to split into micro-batches");
    const std::int64_t k = optimizer.micro_batches;
    if (axis->second % k != 0)
      throw ShapeError("axis '" + optimizer.batch_axis + "' is " + std::to_string(axis->second) + ": it does not split into " +
                       std::to_string(k) + " equal micro-batches");
    m->micro_length = axis->second / k;
    for (const ProgramTensor& t : full.tensors) {
      const auto at = std::find(t.dims.begin(), t.dims.end(), optimizer.batch_axis);
      if (at == t.dims.end() || (t.role != TensorRole::input && t.role != TensorRole::param)) continue;
      if (t.role == TensorRole::param)
        throw Error("param '" + t.name + "' has the batch axis '" + optimizer.batch_axis + "': micro-batches split inputs only");
      if (at != t.dims.begin())
        throw Error("input '" + t.name + "' has the batch axis '" + optimizer.batch_axis + "' as dim " +
                    std::to_string(at - t.dims.begin()) + ": micro-batches cut inputs along their first dim");
      m->split.push_back(full.tensor(t.name));
      for (GivenTensor& g : o.given)
        if (g.name == t.name && !g.shape.empty()) g.shape[0] = m->micro_length;
    }
    bool overridden = false;
    for (auto& [name, length] : o.axes)
      if (name == optimizer.batch_axis) length = m->micro_length, overridden = true;
    if (!overridden) o.axes.emplace_back(optimizer.batch_axis, m->micro_length);
  }
  m->plan = plan_program(program, o);
  m->check_program();
  m->params = program_detail::bind_tensors(m->plan, params, Device::cpu(), {TensorRole::param});
  for (auto& [name, t] : m->params) t = t.clone();  // the trainer's own
  m->training = plan_training(m->plan);  // which params have gradients: the same under any recomputation
  for (std::size_t id = 0; id < m->plan.tensors.size(); ++id) {
    const ProgramTensor& t = m->plan.tensors[id];
    if (t.role == TensorRole::constant) {
      m->constants[static_cast<int>(id)] = Tensor::full({}, t.value, t.dtype);
      m->params_bytes += static_cast<std::int64_t>(element_size(t.dtype));  // held as long
    }
    if (t.role != TensorRole::param) continue;
    m->params_bytes += m->params.at(t.name).nbytes();
    if (!m->training.needs_grad[id] || m->training.gradient_buffer[id] < 0) continue;
    EINEXPR_ASSERT(m->training.gradient_layout[id].is_contiguous(),
                   "program train: the gradient of '" + t.name + "' is not contiguous");
    m->param_ids.push_back(static_cast<int>(id));
    const bool mixed = narrow(t.dtype);
    const std::int64_t numel = checked_numel(t.shape);
    m->ranges.push_back(m->hooks ? m->hooks->update_ranges(static_cast<int>(id), numel)
                                 : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, numel}});
    std::int64_t held = 0;
    for (const auto& [b, e] : m->ranges.back()) {
      EINEXPR_ASSERT(0 <= b && b <= e && e <= numel, "program train: an update range outside '" + t.name + "'");
      held += e - b;
    }
    const Shape state_shape = held == numel ? t.shape : Shape{held};  // ZeRO: this device's part
    std::vector<Tensor> s;
    for (int k = 0; k < optimizer_states(optimizer.kind); ++k) s.push_back(Tensor::zeros(state_shape, mixed ? DType::f32 : t.dtype));
    for (const Tensor& x : s) m->state_bytes += x.nbytes();
    m->state.push_back(std::move(s));
    m->master.push_back(mixed ? m->params.at(t.name).to(DType::f32) : Tensor());
    if (mixed) m->state_bytes += m->master.back().nbytes();
    if (optimizer.micro_batches > 1) {
      m->accumulated.push_back(Tensor::zeros(t.shape, mixed ? DType::f32 : t.dtype));
      m->state_bytes += m->accumulated.back().nbytes();
    }
  }
  m->choose_and_place();
  m->last_event.assign(m->plan.tensors.size(), -1);
  for (std::size_t e = 0; e < m->training.backward.size(); ++e)
    m->last_event[static_cast<std::size_t>(m->training.backward[e].tensor)] = static_cast<int>(e);
  m->is_deferred.assign(m->plan.tensors.size(), false);
  if (m->hooks && optimizer.micro_batches > 1 && m->hooks->params_once_a_step())  // completed once a step: the sum
    for (std::size_t id = 0; id < m->plan.tensors.size(); ++id) {
      const ProgramTensor& t = m->plan.tensors[id];
      const int param = t.role == TensorRole::param ? static_cast<int>(id) : t.role == TensorRole::layer ? t.stacked : -1;
      const auto at = std::find(m->param_ids.begin(), m->param_ids.end(), param);
      if (m->last_event[id] < 0 || at == m->param_ids.end()) continue;
      EINEXPR_ASSERT(m->training.gradient_buffer[id] == m->training.gradient_buffer[static_cast<std::size_t>(param)],
                     "program train: the gradient of '" + t.name + "' is not in its param's");
      m->deferred.emplace_back(static_cast<int>(id), static_cast<std::size_t>(at - m->param_ids.begin()));
      m->is_deferred[id] = true;
    }
  return Trainer(std::move(m));
}

double Trainer::step(const TensorMap& inputs) {
  Impl& m = *impl_;
  const int k = m.opt.micro_batches;
  TensorMap full = inputs;  // the micro-batch's rows of each input cut along the batch axis
  for (int id : m.split) {
    const auto it = full.find(m.plan.tensor(id).name);
    if (it == full.end() || !it->second.defined() || it->second.dim() == 0) continue;  // bind_tensors says why
    if (it->second.shape()[0] != m.micro_length * k)
      throw ShapeError("input '" + it->first + "' has " + std::to_string(it->second.shape()[0]) + " rows along '" +
                       m.opt.batch_axis + "' but the trainer was compiled for " + std::to_string(m.micro_length * k) +
                       " (" + std::to_string(k) + " micro-batches of " + std::to_string(m.micro_length) + ")");
  }
  double sum = 0;
  for (int micro = 0; micro < k; ++micro) {
    TensorMap these = full;
    for (int id : m.split) {
      Tensor& t = these.at(m.plan.tensor(id).name);
      t = t.slice(0, micro * m.micro_length, (micro + 1) * m.micro_length);
    }
    std::map<int, Tensor> bound;
    for (const auto& [id, t] : program_detail::bind_tensors(m.plan, these, Device::cpu(), {TensorRole::input}))
      bound[m.plan.tensor(id)] = t;
    for (const auto& [name, t] : m.params) bound[m.plan.tensor(name)] = t;
    for (const auto& [id, t] : m.constants) {
      bound[id] = t;
      if (const int k_th = m.plan.tensor(id).dropout; k_th >= 0) {  // this step's (micro-batch's) stream
        // on a mesh: this device's draws, inside one process's micro-batch
        const auto [which, offset] = m.hooks ? m.hooks->dropout_draws(k_th, micro, k) : std::pair<int, std::uint64_t>{micro, 0};
        *static_cast<std::int64_t*>(t.data_ptr()) = static_cast<std::int64_t>(
            random::stream(m.opt.seed, static_cast<std::uint64_t>(m.steps * k + which), static_cast<std::uint64_t>(k_th)) +
            offset * random::gamma);
      }
    }
    m.run_forward(bound);
    const double loss = load_as_double(m.tensor_ptr(m.loss, bound), m.plan.tensor(m.loss).dtype);
    if (!std::isfinite(loss))
      throw Error("the loss is " + std::string(std::isnan(loss) ? "nan" : "infinite") + " at step " +
                  std::to_string(m.steps + 1) + (k > 1 ? ", micro-batch " + std::to_string(micro + 1) : std::string()) +
                  ": stopped before its update (the params are those of step " + std::to_string(m.steps) + ")");
    sum += loss;
    m.run_backward(bound, 1.0 / k);
    if (k > 1) m.accumulate(micro == 0);
  }
  for (const auto& [id, i] : m.deferred) {  // on a mesh: each param's summed gradient completed
    const auto t = static_cast<std::size_t>(id);
    const int param = m.param_ids[i];
    Layout layout = m.training.gradient_layout[t];
    const std::int64_t from = layout.offset - m.training.gradient_layout[static_cast<std::size_t>(param)].offset;
    layout.offset = 0;
    Tensor& sum = m.accumulated[i];
    const DType moved = m.plan.tensor(param).dtype;
    if (sum.dtype() == moved) {
      m.hooks->gradient_done(id, static_cast<std::byte*>(sum.data_ptr()) + from * static_cast<std::int64_t>(element_size(sum.dtype())),
                             layout, sum.dtype());
      continue;
    }
    // mixed precision: the f32 sum moves in the param's dtype (bf16 / f16), as the cost counts
    // it, and comes back into the sum
    EINEXPR_ASSERT(layout.is_contiguous(), "program train: the gradient of '" + m.plan.tensor(id).name + "' is not contiguous");
    float* at = static_cast<float*>(sum.data_ptr()) + from;
    const std::int64_t n = layout.numel();
    std::vector<std::uint16_t>& words = m.narrow_scratch;  // kept: a step allocates nothing once warm
    if (words.size() < static_cast<std::size_t>(n)) words.resize(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j) words[static_cast<std::size_t>(j)] = f32_to_narrow(at[j], moved);
    m.hooks->gradient_done(id, reinterpret_cast<std::byte*>(words.data()), layout, moved);
    for (std::int64_t j = 0; j < n; ++j) at[j] = narrow_to_f32(words[static_cast<std::size_t>(j)], moved);
  }
  m.update();
  return sum / k;
}

std::int64_t Trainer::steps() const noexcept { return impl_->steps; }

namespace {

std::vector<const char*> state_names(Optimizer kind) {
  switch (kind) {
    case Optimizer::sgd: return {};
    case Optimizer::momentum: return {"momentum_buffer"};
    case Optimizer::adam:
    case Optimizer::adamw: return {"exp_avg", "exp_avg_sq"};
  }
  return {};
}

}  // namespace

TensorMap Trainer::optimizer_state() const {
  const Impl& m = *impl_;
  TensorMap out;
  const std::vector<const char*> names = state_names(m.opt.kind);
  for (std::size_t i = 0; i < m.param_ids.size(); ++i) {
    const std::string& param = m.plan.tensor(m.param_ids[i]).name;
    for (std::size_t k = 0; k < names.size(); ++k) out[param + "." + names[k]] = m.state[i][k].clone();
    if (m.master[i].defined()) out[param + ".master"] = m.master[i].clone();
  }
  return out;
}

void Trainer::restore(const TensorMap& params, const TensorMap& state, std::int64_t steps) {
  Impl& m = *impl_;
  if (steps < 0) throw Error("a checkpoint's step count must be >= 0, got " + std::to_string(steps));
  const program_detail::NamedTensors p = program_detail::bind_tensors(m.plan, params, Device::cpu(), {TensorRole::param});
  const std::vector<const char*> names = state_names(m.opt.kind);
  std::vector<std::vector<Tensor>> s(m.param_ids.size());
  std::size_t used = 0;
  for (std::size_t i = 0; i < m.param_ids.size(); ++i) {
    const ProgramTensor& t = m.plan.tensor(m.param_ids[i]);
    std::vector<std::pair<std::string, const Tensor*>> wanted;  // (name, the trainer's tensor)
    for (std::size_t k = 0; k < names.size(); ++k) wanted.emplace_back(names[k], &m.state[i][k]);
    if (m.master[i].defined()) wanted.emplace_back("master", &m.master[i]);
    for (const auto& [n, mine] : wanted) {
      const std::string key = t.name + "." + n;
      const auto it = state.find(key);
      if (it == state.end())
        throw Error("the checkpoint has no '" + key + "' (" +
                    (n == "master" ? std::string("mixed precision keeps f32 master weights") : std::string(name(m.opt.kind)) + " keeps it") +
                    " for each param)");
      // the trainer's own: the param's shape, or under ZeRO (hooks) this device's part, 1-d
      if (!it->second.defined() || it->second.shape() != mine->shape() || it->second.dtype() != mine->dtype())
        throw ShapeError("the checkpoint's '" + key + "' is not " + shape_str(mine->shape()) + " " +
                         std::string(einexpr::name(mine->dtype())));
      s[i].push_back(it->second);
      ++used;
    }
  }
  if (used != state.size())
    for (const auto& [key, t] : state) {
      const std::size_t dot = key.find('.');
      const std::string param = key.substr(0, dot), what = dot == std::string::npos ? "" : key.substr(dot + 1);
      bool known = false;
      for (const char* n : names) known = known || what == n;
      known = known || (what == "master" && m.opt.mixed_precision);
      if (!known || m.plan.tensor(param) < 0)
        throw Error("the checkpoint's '" + key + "' is no state of " + name(m.opt.kind) +
                    (names.empty() ? " (it keeps none)" : ""));
    }
  // into the trainer's own storage: a restore allocates nothing
  for (const auto& [n, t] : p) m.params.at(n).copy_from(t);
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (std::size_t k = 0; k < m.state[i].size(); ++k) m.state[i][k].copy_from(s[i][k]);
    if (m.master[i].defined()) m.master[i].copy_from(s[i].back());
  }
  m.steps = steps;
}
const TensorMap& Trainer::parameters() const noexcept { return impl_->params; }

TensorMap Trainer::gradients() const {
  const Impl& m = *impl_;
  TensorMap out;
  for (std::size_t k = 0; k < m.param_ids.size(); ++k) {
    const int id = m.param_ids[k];
    const ProgramTensor& t = m.plan.tensor(id);
    if (!m.accumulated.empty()) {  // micro-batches: the sum over them
      out[t.name] = m.accumulated[k];
      continue;
    }
    const auto i = static_cast<std::size_t>(id);
    Layout layout = m.training.gradient_layout[i];
    layout.offset += m.offset[static_cast<std::size_t>(m.training.gradient_buffer[i])] / static_cast<std::int64_t>(element_size(t.dtype));
    out[t.name] = Tensor(m.arena, std::move(layout), t.dtype);
  }
  return out;
}

const ProgramPlan& Trainer::plan() const noexcept { return impl_->plan; }
const TrainingPlan& Trainer::training() const noexcept { return impl_->training; }
const OptimizerOptions& Trainer::optimizer() const noexcept { return impl_->opt; }
std::int64_t Trainer::arena_bytes() const noexcept { return impl_->arena_bytes; }
const RecomputeChoice& Trainer::recompute() const noexcept { return impl_->choice; }

Count Trainer::recompute_flops() const noexcept {
  return impl_->recompute_flops * Count(static_cast<std::uint64_t>(impl_->opt.micro_batches));
}
std::int64_t Trainer::peak_bytes_predicted() const noexcept {
  return impl_->arena_bytes + impl_->params_bytes + impl_->state_bytes;
}

}  // namespace einexpr
