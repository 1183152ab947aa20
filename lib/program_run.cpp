// CompiledProgram: plan_program + one lowered Program per statement + a memory plan, made
// once; run() binds every kernel's buffers to the arena, the outputs' storage or the
// caller's tensors, and runs the kernels in order.
//
// Memory: the buffers a statement makes (plan temporaries, and the staging buffers a
// lowering adds) are placed in one arena by plan_memory() over their lifetimes (from the
// statement that makes them to the last that reads them, views included); buffers holding
// an output get storage of their own, which the returned tensors keep.
#include <algorithm>
#include <map>

#include "einexpr/codegen/lower.hpp"
#include "einexpr/codegen/memory_plan.hpp"
#include "einexpr/program.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/storage.hpp"
#include "einexpr/step_hooks.hpp"
#include "program_bind.hpp"

namespace einexpr {

struct CompiledProgram::Impl {
  ProgramPlan plan;
  Device device;
  std::vector<Program> programs;                // per statement
  std::vector<std::int64_t> buffer_offset;      // per ProgramBuffer: arena offset, -1 if not there
  std::vector<std::vector<std::int64_t>> staging_offset;  // per statement, per staging temporary
  std::vector<int> output_buffers;              // ProgramBuffers with storage of their own
  std::map<int, Tensor> constants;              // the numbers written in the program, on the device
  std::int64_t arena = 0, unshared = 0, outputs = 0;

  void plan_buffers();
  std::map<int, Tensor> bind_inputs(const std::map<std::string, Tensor, std::less<>>& inputs) const;
};

namespace {

std::byte* at(std::byte* base, std::int64_t elements, DType dtype) {
  return base + elements * static_cast<std::int64_t>(element_size(dtype));
}

}  // namespace

namespace program_detail {

NamedTensors bind_tensors(const ProgramPlan& plan, const NamedTensors& given, Device device,
                          std::initializer_list<TensorRole> roles) {
  auto wanted = [&](TensorRole r) { return std::find(roles.begin(), roles.end(), r) != roles.end(); };
  std::string expected;
  for (TensorRole r : roles) expected += std::string(expected.empty() ? "" : " or ") + einexpr::name(r);
  NamedTensors bound;
  for (const auto& [name, tensor] : given) {
    const int id = plan.tensor(name);
    if (id < 0 || !wanted(plan.tensor(id).role))
      throw Error("'" + name + "' names no " + expected + " of the program" +
                  (id < 0                                          ? std::string()
                   : plan.tensor(id).role == TensorRole::statement ? std::string(" (the program computes it)")
                   : plan.tensor(id).role == TensorRole::input     ? std::string(" (it is an input)")
                                                                    : std::string(" (it is a ") + einexpr::name(plan.tensor(id).role) + ")"));
    const ProgramTensor& t = plan.tensor(id);
    if (!tensor.defined()) throw Error(std::string(einexpr::name(t.role)) + " '" + name + "' is an undefined tensor");
    if (tensor.shape() != t.shape)
      throw ShapeError(std::string(einexpr::name(t.role)) + " '" + name + "' has shape " + shape_str(tensor.shape()) +
                       " but the program was compiled for " + plan.describe(id));
    if (tensor.dtype() != t.dtype)
      throw DTypeError(std::string(einexpr::name(t.role)) + " '" + name + "' is " + std::string(einexpr::name(tensor.dtype())) +
                       " but the program was compiled for " + plan.describe(id));
    if (tensor.device() != device)
      throw DeviceError(std::string(einexpr::name(t.role)) + " '" + name + "' is on " + tensor.device().str() +
                        " but the program runs on " + device.str());
    bound[name] = tensor.is_contiguous() ? tensor : tensor.contiguous();
  }
  for (const ProgramTensor& t : plan.tensors)
    if (wanted(t.role) && !bound.count(t.name)) throw Error("missing " + std::string(einexpr::name(t.role)) + " '" + t.name + "'");
  return bound;
}

}  // namespace program_detail

// Lifetimes of every buffer a run allocates except the outputs', then their offsets.
void CompiledProgram::Impl::plan_buffers() {
  const int n = static_cast<int>(plan.statements.size());
  std::vector<Lifetime> lifetimes;
  std::vector<std::pair<int, int>> owner;  // (ProgramBuffer, -1) or (statement, staging index)
  for (std::size_t b = 0; b < plan.buffers.size(); ++b) {
    const ProgramBuffer& pb = plan.buffers[b];
    if (pb.external) continue;
    if (pb.last_use >= n) {
      output_buffers.push_back(static_cast<int>(b));
      outputs += pb.bytes;
      continue;
    }
    lifetimes.push_back({pb.bytes, pb.first_use, pb.last_use});
    owner.emplace_back(static_cast<int>(b), -1);
  }
  staging_offset.resize(programs.size());
  for (int s = 0; s < n; ++s) {
    const Program& p = programs[static_cast<std::size_t>(s)];
    const PlannedStatement& st = plan.statements[static_cast<std::size_t>(s)];
    const std::size_t plan_temps = st.plan.buffers.size() - static_cast<std::size_t>(st.plan.num_inputs);
    for (std::size_t j = plan_temps; j < p.temp_bytes.size(); ++j) {
      lifetimes.push_back({static_cast<std::int64_t>(p.temp_bytes[j]), s, s});
      owner.emplace_back(s, static_cast<int>(j - plan_temps));
    }
    staging_offset[static_cast<std::size_t>(s)].assign(p.temp_bytes.size() - plan_temps, 0);
  }
  const MemoryPlan m = plan_memory(lifetimes, static_cast<std::int64_t>(cpu_alignment));
  buffer_offset.assign(plan.buffers.size(), -1);
  for (std::size_t i = 0; i < lifetimes.size(); ++i) {
    unshared += lifetimes[i].bytes;
    if (owner[i].second < 0) buffer_offset[static_cast<std::size_t>(owner[i].first)] = m.offsets[i];
    else staging_offset[static_cast<std::size_t>(owner[i].first)][static_cast<std::size_t>(owner[i].second)] = m.offsets[i];
  }
  arena = m.arena_bytes;
}

std::map<int, Tensor> CompiledProgram::Impl::bind_inputs(const std::map<std::string, Tensor, std::less<>>& inputs) const {
  std::map<int, Tensor> bound;
  for (auto& [name, t] : program_detail::bind_tensors(plan, inputs, device, {TensorRole::input, TensorRole::param}))
    bound[plan.tensor(name)] = std::move(t);
  for (const auto& [id, t] : constants) bound[id] = t;
  return bound;
}

CompiledProgram::CompiledProgram(const ast::Program& program, const ProgramOptions& options, Device device)
    : impl_(std::make_unique<Impl>()) {
  ProgramOptions inference = options;  // a run is inference: dropout is the identity (torch's eval())
  inference.training = false;
  impl_->plan = plan_program(program, inference);
  impl_->device = device;
  for (const PlannedStatement& st : impl_->plan.statements) impl_->programs.push_back(lower(st.plan, device));
  impl_->plan_buffers();
  for (std::size_t id = 0; id < impl_->plan.tensors.size(); ++id) {
    const ProgramTensor& t = impl_->plan.tensors[id];
    if (t.role == TensorRole::constant) impl_->constants[static_cast<int>(id)] = Tensor::full({}, t.value, t.dtype, device);
  }
}

CompiledProgram::~CompiledProgram() = default;
CompiledProgram::CompiledProgram(CompiledProgram&&) noexcept = default;
CompiledProgram& CompiledProgram::operator=(CompiledProgram&&) noexcept = default;

const ProgramPlan& CompiledProgram::plan() const noexcept { return impl_->plan; }
Device CompiledProgram::device() const noexcept { return impl_->device; }
std::int64_t CompiledProgram::peak_bytes_predicted() const noexcept { return impl_->arena + impl_->outputs; }
std::int64_t CompiledProgram::arena_bytes() const noexcept { return impl_->arena; }
std::int64_t CompiledProgram::unshared_bytes() const noexcept { return impl_->unshared; }

ProgramRun CompiledProgram::run(const std::map<std::string, Tensor, std::less<>>& inputs, StepHooks* hooks) const {
  const Impl& m = *impl_;
  const std::map<int, Tensor> bound = m.bind_inputs(inputs);
  reset_storage_peak(m.device);
  const std::size_t before = storage_usage(m.device).bytes_in_use;

  std::vector<std::shared_ptr<Storage>> storage(m.plan.buffers.size());  // external and output buffers
  std::vector<std::byte*> base(m.plan.buffers.size(), nullptr);
  for (const auto& [id, t] : bound) {
    const int b = m.plan.tensor(id).buffer;
    storage[static_cast<std::size_t>(b)] = t.storage();
    base[static_cast<std::size_t>(b)] = static_cast<std::byte*>(t.data_ptr());
  }
  const std::shared_ptr<Storage> arena = m.arena > 0 ? Storage::allocate(static_cast<std::size_t>(m.arena), m.device) : nullptr;
  for (std::size_t b = 0; b < m.plan.buffers.size(); ++b)
    if (m.buffer_offset[b] >= 0) base[b] = arena->data() + m.buffer_offset[b];
  for (int b : m.output_buffers) {
    storage[static_cast<std::size_t>(b)] = Storage::allocate(static_cast<std::size_t>(m.plan.buffers[static_cast<std::size_t>(b)].bytes), m.device);
    base[static_cast<std::size_t>(b)] = storage[static_cast<std::size_t>(b)]->data();
  }

  for (std::size_t s = 0; s < m.plan.statements.size(); ++s) {
    const PlannedStatement& st = m.plan.statements[s];
    const Program& p = m.programs[s];
    Workspace ws{{}, m.device, hooks};
    for (int in : st.inputs) {
      const ProgramTensor& t = m.plan.tensor(in);
      ws.buffers.push_back(at(base[static_cast<std::size_t>(t.buffer)], t.layout.offset, t.dtype));
    }
    for (std::size_t j = static_cast<std::size_t>(st.plan.num_inputs); j < st.buffers.size(); ++j)
      ws.buffers.push_back(base[static_cast<std::size_t>(st.buffers[j])]);
    for (const std::int64_t offset : m.staging_offset[s]) ws.buffers.push_back(arena->data() + offset);
    for (const Kernel& k : p.kernels) k.run(ws);
    if (hooks != nullptr) {
      const ProgramTensor& y = m.plan.tensor(st.output);
      Layout layout = y.layout;
      layout.offset = 0;
      hooks->statement_done(static_cast<int>(s), at(base[static_cast<std::size_t>(y.buffer)], y.layout.offset, y.dtype), layout,
                            y.dtype);
    }
  }
  synchronize(m.device);

  ProgramRun out;
  for (std::size_t i = 0; i < m.plan.outputs.size(); ++i) {
    const ProgramTensor& t = m.plan.tensor(m.plan.outputs[i]);
    const std::shared_ptr<Storage>& s = storage[static_cast<std::size_t>(t.buffer)];
    Layout layout = t.layout;
    if (m.plan.buffers[static_cast<std::size_t>(t.buffer)].external)  // a view of an input or param
      layout.offset += bound.at(m.plan.buffers[static_cast<std::size_t>(t.buffer)].tensor).storage_offset();
    // as the program names it ("h", not its block's last layer's "h[11].y")
    out.outputs.emplace_back(m.plan.program.outputs[i].name, Tensor(s, std::move(layout), t.dtype));
  }
  out.peak_bytes_measured = static_cast<std::int64_t>(storage_usage(m.device).peak_bytes_in_use - before);
  return out;
}

}  // namespace einexpr
