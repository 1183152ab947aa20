// lower_cpu: Plan -> Program on the CPU, on the shared skeleton (lower/skeleton.hpp): one
// overload per step kind below, so a new kind fails to compile here.
#include <vector>

#include "cpu_kernels.hpp"
#include "einexpr/codegen/lower.hpp"
#include "gemm.hpp"
#include "lower/skeleton.hpp"
#include "vec_math.hpp"

namespace einexpr {

namespace {

using lowering::Context;

struct CpuBackend {
  void operator()(const ViewStep&, Context&) const {}  // a view moves nothing
  void operator()(const CopyStep& s, Context& c) const {
    c.add(cpu::copy_kernel(c.operand(s.src), c.operand(s.dst), c.dtype_of(s.dst)));
  }
  void operator()(const ContractStep& s, Context& c) const {
    const cpu::AddTemp add_temp = [&c](std::size_t bytes) { return c.add_temp(bytes); };
    c.add(cpu::contract_kernel(s, c.operand(s.a), c.operand(s.b), c.operand(s.dst), c.dtype(), add_temp));
  }
  void operator()(const ReduceStep& s, Context& c) const {
    c.add(cpu::reduce_kernel(s, c.operand(s.src), c.operand(s.dst), c.dtype()));
  }
  void operator()(const MapStep& s, Context& c) const {
    std::vector<cpu::Operand> srcs;
    for (int v : s.srcs) srcs.push_back(c.operand(v));
    c.add(cpu::map_kernel(s, srcs, c.operand(s.dst), c.dtype()));
  }
  void operator()(const NormStep& s, Context& c) const {
    std::vector<cpu::Operand> srcs;
    for (int v : s.srcs) srcs.push_back(c.operand(v));
    c.add(cpu::norm_kernel(s, srcs, c.operand(s.dst), c.dtype()));
  }
  void operator()(const EmbedStep& s, Context& c) const {
    const cpu::Operand dst = c.operand(s.dst);
    c.add(cpu::embed_kernel(c.operand(s.src), dst, c.buffer_elements(dst.buffer), s.into, c.dtype()));
  }
  void operator()(const FillStep& s, Context& c) const {
    c.add(cpu::fill_kernel(c.operand(s.dst), s.value, c.dtype_of(s.dst)));
  }
  void operator()(const GatherStep& s, Context& c) const {
    c.add(cpu::gather_kernel(s, c.operand(s.src), c.operand(s.index), c.operand(s.dst), c.dtype_of(s.dst),
                             c.dtype_of(s.index)));
  }
  void operator()(const ScatterAddStep& s, Context& c) const {
    c.add(cpu::scatter_add_kernel(s, c.operand(s.acc), c.operand(s.index), c.operand(s.updates), c.dtype_of(s.dst),
                                  c.dtype_of(s.index)));
  }
  void operator()(const JoinStep&, Context&) const {}  // the parts' copies filled the buffer
  void operator()(const RandomStep& s, Context& c) const {
    c.add(cpu::random_kernel(s, c.operand(s.seed), c.operand(s.dst)));
  }
  void operator()(const MaskStep& s, Context& c) const {
    c.add(cpu::mask_kernel(s, c.operand(s.src), c.operand(s.mask), c.operand(s.dst), c.dtype_of(s.dst)));
  }
  void operator()(const CrossEntropyStep& s, Context& c) const {
    std::vector<cpu::Operand> srcs;
    for (int v : s.srcs) srcs.push_back(c.operand(v));
    c.add(cpu::cross_entropy_kernel(s, srcs, c.operand(s.dst), c.dtype_of(s.dst), c.dtype_of(s.srcs[s.backward ? 2 : 1])));
  }
};

}  // namespace

Program detail::lower_cpu(const Plan& plan, bool check) {
  CpuBackend backend;
  return lowering::lower_plan(plan, Device::cpu(), backend, check);
}

Program lower_cpu(const Plan& plan) { return detail::lower_cpu(plan, true); }

const char* cpu_gemm_backend() noexcept { return cpu::gemm_library(); }

const char* cpu_isa() noexcept { return cpu::vec::best_table().isa; }

CpuFmaRun cpu_fma_run(bool f64, std::int64_t steps) {
  const cpu::vec::Table& t = cpu::vec::best_table();
  const int lanes = f64 ? t.fma_f64.lanes : t.fma_f32.lanes;
  const double sum = f64 ? t.fma_f64.run(steps) : static_cast<double>(t.fma_f32.run(steps));
  return {2.0 * lanes * cpu::vec::fma_chains * static_cast<double>(steps), sum};
}

}  // namespace einexpr
