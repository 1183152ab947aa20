// search_layouts (mesh.hpp): every mesh size, ZeRO stage, micro-batch count and recomputation
// of a template layout, each costed exactly, ranked by step time among those that fit.
#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>

#include "einexpr/codegen/mesh.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/parallel.hpp"
#include "mesh/sharder.hpp"

namespace einexpr {

namespace {

// Every way to give `dims` sizes whose product is n, the nvlink ones together within `node`.
void sizes(const std::vector<MeshDim>& dims, std::size_t k, std::int64_t left, std::int64_t nvlink, std::int64_t node,
           std::vector<std::int64_t>& now, std::vector<std::vector<std::int64_t>>& out) {
  if (k == dims.size()) {
    if (left == 1) out.push_back(now);
    return;
  }
  for (std::int64_t d = 1; d <= left; ++d) {
    if (left % d != 0) continue;
    const bool fast = dims[k].link == "nvlink";
    if (fast && nvlink * d > node) continue;
    now.push_back(d);
    sizes(dims, k + 1, left / d, fast ? nvlink * d : nvlink, node, now, out);
    now.pop_back();
  }
}

std::string fmt(double v, int digits = 3) {
  std::ostringstream os;
  os.precision(digits);
  os << v;
  return os.str();
}

std::string gb(const Count& c) { return fmt(c.to_double() / 1e9) + " GB"; }

}  // namespace

// The param a tensor's gradient belongs to (itself, or the stack of a layer's slice), or -1.
static int param_of(const ProgramPlan& plan, int id) {
  if (id < 0) return -1;
  const ProgramTensor& t = plan.tensor(id);
  if (t.role == TensorRole::param) return id;
  if (t.role == TensorRole::layer && plan.tensor(t.stacked).role == TensorRole::param) return t.stacked;
  return -1;
}

bool once_a_step(const ProgramPlan& plan, const Collective& x, int zero) {
  if (x.phase == "optimizer") return true;
  return zero < 2 && x.phase == "backward" && x.kind != CollectiveKind::all_gather && param_of(plan, x.of) >= 0;
}

MeshCost step_of_micro_batches(const ProgramPlan& plan, const MeshCost& micro, int micro_batches) {
  MeshCost step = micro;
  step.collectives.clear();
  step.forward_bus_bytes = step.backward_bus_bytes = step.optimizer_bus_bytes = Count{};
  for (const Collective& c : micro.collectives)
    for (int k = once_a_step(plan, c, micro.mesh.zero) ? 1 : micro_batches; k > 0; --k) {
      (c.phase == "forward" ? step.forward_bus_bytes : c.phase == "backward" ? step.backward_bus_bytes : step.optimizer_bus_bytes) +=
          c.bus_bytes;
      step.collectives.push_back(c);
    }
  const Count m = Count::from_int64(micro_batches);
  step.forward_flops = micro.forward_flops * m;
  step.backward_flops = micro.backward_flops * m;
  return step;
}

LayoutSearch search_layouts(const ast::Program& program, const ProgramOptions& options,
                            const ProgramCostOptions& cost_options, const Mesh& shape, const SearchOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  LayoutSearch out;
  out.devices = o.devices;
  if (o.devices < 1) throw Error("--search needs the number of devices (--devices N)");
  if (shape.dims.empty()) throw Error("--search needs a mesh to size: its dimensions and links ('dp@ib tp@nvlink' as "
                                      "--mesh 'dp=1@ib tp=1@nvlink', or a mesh line) and the axes split over them");
  const DeviceSpec& device = find_device(cost_options.device);
  if (!(device.memory > 0))
    throw Error("--search fits each device's memory, and the device table has none for '" + device.name +
                "' (a device file's \"memory\", in bytes)");
  out.device = device.name;
  out.device_memory = device.memory;

  // the batch: its whole length, cut into micro-batches of B/m
  const ProgramPlan whole = plan_program(program, options);
  const auto batch = std::find_if(whole.axes.begin(), whole.axes.end(), [&](const auto& a) { return a.first == o.batch_axis; });
  if (batch == whole.axes.end()) throw Error("--search cuts micro-batches along '" + o.batch_axis + "', which the program has not");
  const std::int64_t B = batch->second;

  struct Planned {
    ProgramPlan plan;
    program_detail::BackwardPlan bwd;
    std::map<std::string, ProgramCost> costs;  // by recomputation
  };
  // each micro-batch count's plan and costs, and each layout's shard(), are independent: both
  // run on einexpr's threads (parallel.hpp), results in the serial order
  auto planned = [&](std::int64_t m) {
    ProgramOptions po = options;
    bool set = false;
    for (auto& [name, len] : po.axes)
      if (name == o.batch_axis) len = B / m, set = true;
    if (!set) po.axes.emplace_back(o.batch_axis, B / m);
    Planned p{plan_program(program, po), {}, {}};
    p.bwd = program_detail::plan_backward(p.plan);
    ProgramCostOptions none = cost_options;
    none.recompute = RecomputeOptions{};
    p.costs["none"] = cost(p.plan, none);
    if (!p.plan.blocks.empty()) {  // each layer's input kept (the previous layer's last result)
      RecomputeOptions layers{.mode = RecomputeMode::checkpoints};
      for (const ProgramBlock& b : p.plan.blocks)
        for (std::int64_t l = 0; l < b.layers; ++l)
          layers.checkpoints.push_back(
              p.plan.statements.at(static_cast<std::size_t>(b.first + (l + 1) * b.per_layer - 1)).name);
      ProgramCostOptions c = cost_options;
      c.recompute = layers;
      p.costs["layers"] = cost(p.plan, c);
    }
    return p;
  };

  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::int64_t> now;
  sizes(shape.dims, 0, o.devices, 1, o.node, now, shapes);
  std::map<std::string, int> refused;
  struct Task {
    Mesh mesh;           // sizes (and ZeRO's stage)
    std::int64_t m = 1;  // micro-batches
    std::string recompute;
  };
  std::vector<Task> tasks;
  std::map<std::int64_t, std::size_t> plan_of;  // micro-batches -> its index in `plans`
  for (const std::vector<std::int64_t>& s : shapes) {
    Mesh mesh = shape;
    for (std::size_t d = 0; d < s.size(); ++d) mesh.dims[d].size = s[d];
    // the batch's devices: the dimensions the batch axis is split over
    std::int64_t dp = 1;
    for (const auto& [axis, dim] : mesh.shard)
      if (axis == o.batch_axis)
        for (const MeshDim& d : mesh.dims)
          if (d.name == dim) dp *= d.size;
    if (B % dp != 0) {
      ++refused[o.batch_axis + " = " + std::to_string(B) + " does not split over " + std::to_string(dp) + " devices"];
      continue;
    }
    for (std::int64_t m = 1; (B / dp) % m == 0; m *= 2) {
      plan_of.emplace(m, plan_of.size());
      tasks.push_back({mesh, m, ""});
    }
  }
  std::vector<std::int64_t> micro(plan_of.size());
  for (const auto& [m, i] : plan_of) micro[i] = m;
  std::vector<Planned> plans(micro.size());
  parallel_for(static_cast<std::int64_t>(micro.size()), static_cast<std::int64_t>(micro.size()),
               [&](std::int64_t, std::int64_t begin, std::int64_t end) {
                 for (std::int64_t i = begin; i < end; ++i) plans[static_cast<std::size_t>(i)] = planned(micro[static_cast<std::size_t>(i)]);
               });
  // each (mesh, micro-batches) with every recomputation and ZeRO stage, in that order
  std::vector<Task> all;
  for (const Task& t : tasks)
    for (const auto& [recompute, c] : plans[plan_of.at(t.m)].costs)
      for (int zero = 0; zero <= 3; ++zero) {
        all.push_back({t.mesh, t.m, recompute});
        all.back().mesh.zero = zero;
      }
  struct Outcome {
    LayoutChoice choice;
    std::string refused;  // shard()'s error
  };
  std::vector<Outcome> outcomes(all.size());
  parallel_for(static_cast<std::int64_t>(all.size()), pieces_for(static_cast<std::int64_t>(all.size()), 1),
               [&](std::int64_t, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const Task& t = all[static_cast<std::size_t>(i)];
      Outcome& out_i = outcomes[static_cast<std::size_t>(i)];
      const Planned& p = plans[plan_of.at(t.m)];
      LayoutChoice& ch = out_i.choice;
      try {
        ch.micro = mesh_detail::shard(p.plan, p.costs.at(t.recompute), t.mesh, p.bwd);
      } catch (const Error& e) {
        out_i.refused = e.what();
        continue;
      }
      ch.mesh = t.mesh;
      ch.micro_batches = static_cast<int>(t.m);
      ch.recompute = t.recompute;
      const MeshTiming& mt = ch.micro.timing;
      ch.compute_s = static_cast<double>(t.m) * (mt.compute_s - mt.optimizer_compute_s) + mt.optimizer_compute_s;
      for (const Collective& x : ch.micro.collectives) {
        ch.once.push_back(once_a_step(p.plan, x, t.mesh.zero));
        (ch.once.back() ? ch.step_comm_s : ch.micro_comm_s) += x.time_s;
      }
      const double comm = static_cast<double>(t.m) * ch.micro_comm_s + ch.step_comm_s;
      ch.step_s = ch.compute_s + comm;
      ch.overlapped_s = std::max(ch.compute_s, comm);
      ch.memory_bytes = ch.micro.params_bytes + ch.micro.grads_bytes + ch.micro.optimizer_bytes + ch.micro.activations_bytes;
    }
  });
  std::vector<LayoutChoice> fit;
  for (Outcome& x : outcomes) {
    ++out.tried;
    if (!x.refused.empty()) {
      ++refused[x.refused];
      continue;
    }
    if (!x.choice.micro.timing.error.empty()) throw Error("--search: " + x.choice.micro.timing.error);
    if (x.choice.memory_bytes.to_double() <= device.memory) fit.push_back(std::move(x.choice));
  }
  out.fit = fit.size();
  std::stable_sort(fit.begin(), fit.end(), [](const LayoutChoice& a, const LayoutChoice& b) { return a.step_s < b.step_s; });
  if (fit.size() > o.top) fit.resize(o.top);
  out.fastest = std::move(fit);
  for (const auto& [why, n] : refused) out.refused.push_back(why + (n > 1 ? "  (×" + std::to_string(n) + ")" : ""));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string to_string(const LayoutSearch& s) {
  std::ostringstream os;
  os << "layouts on " << s.devices << " " << s.device << " (" << fmt(s.device_memory / 1e9) << " GB each): " << s.tried
     << " tried, " << s.fit << " fit, searched in " << fmt(s.seconds, 2) << " s\n";
  if (s.fastest.empty()) {
    os << "  none fits\n";
  } else {
    os << "  rank  mesh                          ZeRO  micro-batches  recompute  step s   overlapped s  memory\n";
    for (std::size_t i = 0; i < s.fastest.size(); ++i) {
      const LayoutChoice& c = s.fastest[i];
      std::string mesh;
      for (const MeshDim& d : c.mesh.dims) mesh += (mesh.empty() ? "" : " ") + d.name + "=" + std::to_string(d.size);
      os << "  " << i + 1 << std::string(i + 1 < 10 ? 5 : 4, ' ') << mesh << std::string(mesh.size() < 30 ? 30 - mesh.size() : 1, ' ')
         << c.mesh.zero << "     " << c.micro_batches << std::string(c.micro_batches < 10 ? 14 : 13, ' ') << c.recompute
         << std::string(c.recompute.size() < 11 ? 11 - c.recompute.size() : 1, ' ') << fmt(c.step_s, 4) << "   "
         << fmt(c.overlapped_s, 4) << "        " << gb(c.memory_bytes) << "\n";
    }
    const LayoutChoice& c = s.fastest.front();
    const MeshCost& m = c.micro;
    const double mb = static_cast<double>(c.micro_batches);
    os << "the first, term by term (" << c.mesh.str() << ", " << c.micro_batches << " micro-batches, recompute "
       << c.recompute << "):\n";
    os << "  compute      " << fmt(c.compute_s, 4) << " s = " << c.micro_batches << " × "
       << fmt(m.timing.compute_s - m.timing.optimizer_compute_s, 4) << " s (a micro-batch's forward and backward, "
       << s.device << " roofline) + " << fmt(m.timing.optimizer_compute_s, 4) << " s (the update)\n";
    std::map<std::string, std::pair<double, int>> by;  // "forward all-reduce over tp" -> time, count
    for (std::size_t i = 0; i < m.collectives.size(); ++i) {
      const Collective& x = m.collectives[i];
      auto& [t, n] = by[std::string(c.once[i] ? "once a step:      " : "each micro-batch: ") + x.phase + " " + name(x.kind) +
                        " over " + x.mesh_dim];
      t += x.time_s;
      ++n;
    }
    os << "  comm         " << fmt(mb * c.micro_comm_s + c.step_comm_s, 4) << " s = " << c.micro_batches << " × "
       << fmt(c.micro_comm_s, 4) << " s (each micro-batch's) + " << fmt(c.step_comm_s, 4) << " s (once a step):\n";
    for (const auto& [what, tn] : by)
      os << "                 " << what << ": " << tn.second << (tn.second == 1 ? " collective, " : " collectives, ")
         << fmt(tn.first, 4) << " s\n";
    os << "  step         " << fmt(c.step_s, 4) << " s (" << fmt(c.overlapped_s, 4) << " s if communication hides behind compute)\n";
    os << "  memory       " << gb(c.memory_bytes) << " of " << fmt(s.device_memory / 1e9) << " GB = params " << gb(m.params_bytes)
       << " + gradients " << gb(m.grads_bytes) << " + optimizer " << gb(m.optimizer_bytes) << " + activations "
       << gb(m.activations_bytes) << " (one micro-batch's)\n";
  }
  if (!s.refused.empty()) {
    os << "refused:\n";
    for (const std::string& r : s.refused) os << "  " << r << "\n";
  }
  return os.str();
}

}  // namespace einexpr
