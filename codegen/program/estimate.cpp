// six_n_p(): N from the statements that read params, 6·N·P split by param, and the exact
// forward + backward FLOPs split the same way, so that each difference has a name.
#include "program/estimate.hpp"

#include <set>

namespace einexpr::program_detail {

namespace {

enum Part : int { contractions, other_reads, no_param, accumulation, unread, part_count };

struct Read {
  std::size_t statement;
  int param;
  Count combinations;  // index combinations the statement loops over
  Count size;          // the param's elements
};

Count combinations(const Plan& plan) {
  Count c = 1;
  for (const Axis& a : plan.axes.all()) c *= Count::from_int64(a.length);
  return c;
}

std::vector<Read> param_reads(const ProgramPlan& plan) {
  std::vector<Read> reads;
  for (std::size_t s = 0; s < plan.statements.size(); ++s) {
    const PlannedStatement& st = plan.statements[s];
    std::set<int> seen;
    for (int in : st.inputs) {  // a layer's slice of a stacked param reads that slice of it
      const ProgramTensor& t = plan.tensor(in);
      const int param = t.role == TensorRole::layer ? t.stacked : in;
      if (plan.tensor(param).role == TensorRole::param && seen.insert(in).second)
        reads.push_back({s, param, combinations(st.plan), Count::from_int64(checked_numel(t.shape))});
    }
  }
  return reads;
}

Part part_of(const ProgramPlan& plan, std::size_t s) {
  const PlannedStatement& st = plan.statements[s];
  bool reads_param = false;
  for (int in : st.inputs) {
    const ProgramTensor& t = plan.tensor(in);
    reads_param = reads_param || plan.tensor(t.role == TensorRole::layer ? t.stacked : in).role == TensorRole::param;
  }
  if (!reads_param) return no_param;
  return st.spec.op() == Op::einsum ? contractions : other_reads;
}

std::string notes(Part part, Count skipped) {
  switch (part) {
    case contractions:
      return "the rule counts 2 FLOPs per index combination and param read forward, 4 backward; " + skipped.str() +
             " of those backward FLOPs are gradients toward inputs, which no param needs and the program "
             "does not compute";
    case other_reads: return "biases and gains: the rule counts 6 FLOPs per use, the elementwise ops cost their own";
    case no_param: return "activations, normalizations, attention, the loss: the rule leaves them out";
    case accumulation: return "a tensor read by k statements has its k gradients added, (k-1)·numel FLOPs";
    case unread: return "params that no statement reads";
    case part_count: break;
  }
  return "";
}

}  // namespace

SixNP six_n_p(const ProgramPlan& plan, const BackwardPlan& backward, const ProgramCost& cost) {
  SixNP e;
  e.p = cost.params;
  e.exact = cost.forward_flops + cost.backward_flops;
  const std::vector<Read> reads = param_reads(plan);
  bool any_einsum = false;
  for (const Read& r : reads) any_einsum = any_einsum || plan.statements[r.statement].spec.op() == Op::einsum;
  Count total_combinations, total_size;
  for (const Read& r : reads) {
    if (any_einsum && plan.statements[r.statement].spec.op() != Op::einsum) continue;
    total_combinations += r.combinations;
    total_size += r.size;
  }
  for (const Read& r : reads) {
    if (any_einsum && plan.statements[r.statement].spec.op() != Op::einsum) continue;
    e.n_exact = e.n_exact && r.combinations == r.size * Count::from_u128(total_combinations.raw() / total_size.raw());
  }
  e.n = total_size == Count{} ? 0.0 : total_combinations.to_double() / total_size.to_double();

  std::vector<Count> exact(part_count), rule(part_count);
  for (std::size_t s = 0; s < plan.statements.size(); ++s)
    exact[part_of(plan, s)] += cost.statements[s].forward.flops + cost.statements[s].backward_flops;
  exact[accumulation] = cost.accumulate_flops;
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (plan.tensors[t].role != TensorRole::param) continue;
    Part part = unread;
    for (const Read& r : reads)
      if (r.param == static_cast<int>(t)) {
        part = part_of(plan, r.statement);
        break;
      }
    const Count size = Count::from_int64(checked_numel(plan.tensors[t].shape));
    const Count share = total_size == Count{} ? Count{}
                                              : Count::from_u128((Count(6) * size * total_combinations).raw() / total_size.raw());
    rule[part] += share;
    e.rule += share;
  }
  for (std::size_t s = 0; s < plan.statements.size(); ++s)
    if (part_of(plan, s) == contractions) e.skipped += backward.skipped_flops[s];
  const char* what[part_count] = {"contractions that read a param", "other statements that read a param",
                                  "statements that read no param", "gradient accumulation", "params nothing reads"};
  for (int p = 0; p < part_count; ++p)
    if (exact[p] != Count{} || rule[p] != Count{})
      e.parts.push_back({what[p], exact[p], rule[p], notes(static_cast<Part>(p), e.skipped)});
  return e;
}

}  // namespace einexpr::program_detail
