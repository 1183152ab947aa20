// plan_program(): declarations and statements in source order, in one axis environment;
// each statement planned by plan() on the layouts its inputs have, its buffers mapped to the
// program's, and every buffer's first and last use (liveness) recorded.
#include "einexpr/codegen/program_plan.hpp"

#include <algorithm>
#include <variant>

#include "einexpr/parser/ops.hpp"
#include "einexpr/parser/program.hpp"
#include "einexpr/runtime/error.hpp"
#include "program/environment.hpp"
#include "program/operands.hpp"

namespace einexpr {

const char* name(TensorRole role) noexcept {
  switch (role) {
    case TensorRole::input: return "input";
    case TensorRole::param: return "param";
    case TensorRole::statement: return "statement";
    case TensorRole::constant: return "constant";
  }
  return "?";
}

int ProgramPlan::tensor(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string ProgramPlan::axes_text() const {
  std::string s;
  for (const auto& [axis, length] : axes) s += (s.empty() ? "" : " ") + axis + "=" + std::to_string(length);
  return s;
}

std::string ProgramPlan::describe(int id) const {
  const ProgramTensor& t = tensor(id);
  std::string dims;
  for (std::size_t d = 0; d < t.dims.size(); ++d)
    dims += (d ? ", " : "") + t.dims[d] + "=" + std::to_string(t.shape[d]);
  return "'" + t.name + "' [" + dims + "] " + std::string(name(t.dtype));
}

namespace {

using program_detail::Environment;

class ProgramPlanner {
 public:
  ProgramPlanner(const ast::Program& program, const ProgramOptions& options)
      : options_(options), env_(program, options) {
    out_.program = program;
    out_.axes = env_.lengths();
  }
  ProgramPlan run() {
    for (const ast::Item& item : out_.program.items) {
      if (const auto* d = std::get_if<ast::TensorDecl>(&item)) declare(*d);
      if (const auto* s = std::get_if<ast::Statement>(&item)) statement(*s);
    }
    for (const ast::Identifier& o : out_.program.outputs) out_.outputs.push_back(out_.tensor(o.name));
    liveness();
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const ast::Source& at, const std::string& reason) const {
    throw ProgramError(reason, out_.program, at);
  }
  int add_buffer(ProgramBuffer b) {
    out_.buffers.push_back(b);
    return static_cast<int>(out_.buffers.size()) - 1;
  }
  void declare(const ast::TensorDecl& decl);
  void statement(const ast::Statement& s);
  DType statement_dtype(const ast::Statement& s) const;
  int constant(const ast::Identifier& literal, double value, DType dtype);
  OpSpec spec_of(const ast::Statement& s) const;
  Plan plan_statement(const ast::Statement& s, const OpSpec& spec, const std::vector<int>& inputs, DType dtype) const;
  void add_result(PlannedStatement& st, const ast::Statement& s, DType dtype, const ast::Identifier& name);
  void liveness();

  const ProgramOptions& options_;
  Environment env_;
  ProgramPlan out_;
};

void ProgramPlanner::declare(const ast::TensorDecl& decl) {
  ProgramTensor t;
  t.name = decl.name.name;
  t.role = decl.kind == ast::TensorKind::param ? TensorRole::param : TensorRole::input;
  t.dtype = env_.dtype_of(decl, options_.dtype);
  t.shape = env_.shape_of(decl);
  for (const ast::Dim& dim : decl.dims) t.dims.push_back(program_detail::dim_text(dim));
  t.layout = Layout::contiguous(t.shape);
  t.requires_grad = t.role == TensorRole::param;
  t.source = decl.name.source;
  if (t.role == TensorRole::param && !is_floating(t.dtype))
    fail(decl.dtype ? decl.dtype->source : decl.name.source,
         "param '" + t.name + "' is " + std::string(name(t.dtype)) +
             ": a param is trained, so its dtype is a float (f64 f32 f16 bf16 f8_e4m3 f8_e5m2)");
  const std::int64_t bytes = checked_mul(checked_numel(t.shape), static_cast<std::int64_t>(element_size(t.dtype)));
  t.buffer = add_buffer({true, static_cast<int>(out_.tensors.size()), -1, bytes, -1, -1});
  out_.tensors.push_back(std::move(t));
}

// The statement's dtype: its tensors' one dtype (numbers take it; the indices of get_at,
// add_at and cross_entropy are i64 or i32 beside it).
DType ProgramPlanner::statement_dtype(const ast::Statement& s) const {
  const int index = op_row(s.op_name.name).index_operand;
  const ProgramTensor* first = nullptr;
  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    if (s.is_literal(i)) continue;
    const ProgramTensor& t = out_.tensor(out_.tensor(s.inputs[i].name));
    if (static_cast<int>(i) == index) {
      if (t.dtype != DType::i64 && t.dtype != DType::i32)
        fail(s.inputs[i].source, "'" + t.name + "' is " + std::string(name(t.dtype)) + ": " + s.op_name.name +
                                     "'s operand " + std::to_string(i + 1) +
                                     " holds integer indices; declare it i64 or i32 ('input tokens: B S i64')");
      continue;
    }
    if (first == nullptr) {
      first = &t;
      continue;
    }
    if (t.dtype != first->dtype)
      fail(s.inputs[i].source, "'" + t.name + "' is " + std::string(name(t.dtype)) + " but '" + first->name + "' is " +
                                   std::string(name(first->dtype)) + ": the tensors of a statement have one dtype");
  }
  if (first == nullptr)
    fail(s.op_name.source, "every operand of '" + s.name.name + "' is a number: give at least one tensor");
  return first->dtype;
}

// A number in place of a tensor: a 0-d constant of the statement's dtype, in a buffer of its own.
int ProgramPlanner::constant(const ast::Identifier& literal, double value, DType dtype) {
  ProgramTensor t;
  t.name = literal.name;
  t.role = TensorRole::constant;
  t.dtype = dtype;
  t.value = value;
  t.layout = Layout::contiguous({});
  t.source = literal.source;
  t.buffer = add_buffer({true, static_cast<int>(out_.tensors.size()), -1,
                         static_cast<std::int64_t>(element_size(dtype)), -1, -1});
  out_.tensors.push_back(std::move(t));
  return static_cast<int>(out_.tensors.size()) - 1;
}

OpSpec ProgramPlanner::spec_of(const ast::Statement& s) const {
  OpSpec spec = OpSpec::of(s.op);
  if (auto* r = spec.get_if<ReduceOptions>()) r->reduction = parse_reduction(s.function->text);
  if (auto* n = spec.get_if<NormalizeOptions>()) {  // the op as written names the normalization; eps is torch's default
    n->kind = parse_normalization(s.op_name.name);
    n->eps = default_eps(n->kind);
  }
  if (auto* m = spec.get_if<MapOptions>())
    m->function = s.inputs.size() == 1 ? MapFunction(parse_unary_op(s.function->text))
                                       : MapFunction(parse_binary_op(s.function->text));
  for (const std::string& axis : program_detail::named_axes(s.pattern.pattern))
    spec.lengths.emplace_back(axis, env_.length(axis));
  return spec;
}

// The planner's own rules (a reduction the dtype cannot do, ...) become the statement's fault.
Plan ProgramPlanner::plan_statement(const ast::Statement& s, const OpSpec& spec, const std::vector<int>& inputs,
                                    DType /*dtype*/) const {
  std::vector<Layout> layouts;
  std::vector<DType> dtypes;
  for (int id : inputs) {
    const Layout& l = out_.tensor(id).layout;
    layouts.push_back({l.shape, l.strides, 0});  // a kernel sees the view's first element
    dtypes.push_back(out_.tensor(id).dtype);
  }
  try {
    return plan(spec, &s.pattern.pattern, layouts, std::span<const DType>(dtypes));
  } catch (const ProgramError&) {
    throw;
  } catch (const InternalError&) {
    throw;
  } catch (const Error& e) {
    std::string reason = e.what();
    while (!reason.empty() && reason.back() == '\n') reason.pop_back();
    fail(s.op_name.source, reason);
  }
}

void ProgramPlanner::statement(const ast::Statement& s) {
  const DType dtype = statement_dtype(s);
  std::vector<int> inputs;
  for (std::size_t i = 0; i < s.inputs.size(); ++i)
    inputs.push_back(s.is_literal(i) ? constant(s.inputs[i], *s.literals[i], dtype) : out_.tensor(s.inputs[i].name));
  if (op_row(s.op_name.name).grammar != Grammar::packed)  // pack's one pattern stands for every tensor
    for (std::size_t i = 0; i < inputs.size() && i < s.pattern.pattern.operands.size(); ++i)  // not a norm's gain
      program_detail::check_operand(out_, env_, s, i, out_.tensor(inputs[i]));
  // One planned statement per output: a split "q, k = rearrange(x, "b (q + k) -> b q, b k")"
  // is one plan per part (each a view where the strides allow).
  const std::size_t outputs = 1 + s.more_names.size();
  for (std::size_t j = 0; j < outputs; ++j) {
    PlannedStatement st;
    st.name = j == 0 ? s.name.name : s.more_names[j - 1].name;
    st.source = s.source;
    // pack's "B * D" is planned as "B ... D"; shown as written
    st.pattern = op_row(s.op_name.name).grammar == Grammar::packed ? s.pattern.pattern.text
                                                                  : ast::to_string(s.pattern.pattern);
    st.inputs = inputs;
    st.spec = spec_of(s);
    if (auto* r = st.spec.get_if<RearrangeOptions>()) r->output = static_cast<int>(j);
    st.plan = plan_statement(s, st.spec, st.inputs, dtype);
    add_result(st, s, dtype, j == 0 ? s.name : s.more_names[j - 1]);
    out_.statements.push_back(std::move(st));
  }
}

// The statement's buffers (its inputs', then its temporaries) and its result tensor, which
// lives in a temporary or, for a view, in an input's buffer.
void ProgramPlanner::add_result(PlannedStatement& st, const ast::Statement& /*s*/, DType dtype,
                                const ast::Identifier& name) {
  const int index = static_cast<int>(out_.statements.size());
  const Plan& p = st.plan;
  for (int b = 0; b < static_cast<int>(p.buffers.size()); ++b) {
    const PlanBuffer& pb = p.buffers[static_cast<std::size_t>(b)];
    if (b < p.num_inputs) {
      st.buffers.push_back(out_.tensor(st.inputs[static_cast<std::size_t>(b)]).buffer);
      continue;
    }
    const std::int64_t bytes = checked_mul(pb.elements, static_cast<std::int64_t>(element_size(pb.dtype)));
    st.buffers.push_back(add_buffer({false, -1, index, bytes, -1, -1}));
  }
  const Value& v = p.output_value();
  ProgramTensor t;
  t.name = st.name;
  t.role = TensorRole::statement;
  t.statement = index;
  t.dtype = p.dtype_of(p.output);
  t.shape = v.layout.shape;
  for (const DimAxes& dim : v.dims) t.dims.push_back(to_string(dim, p.axes));
  t.buffer = st.buffers[static_cast<std::size_t>(v.buffer)];
  t.layout = v.layout;
  if (v.buffer < p.num_inputs) t.layout.offset += out_.tensor(st.inputs[static_cast<std::size_t>(v.buffer)]).layout.offset;
  t.requires_grad = is_floating(dtype) && std::any_of(st.inputs.begin(), st.inputs.end(), [&](int id) {
                      return out_.tensor(id).requires_grad;
                    });
  t.source = name.source;
  st.output = static_cast<int>(out_.tensors.size());
  if (v.buffer >= p.num_inputs) out_.buffers[static_cast<std::size_t>(t.buffer)].tensor = st.output;
  out_.tensors.push_back(std::move(t));
}

// Each buffer lives from the statement that makes it to the last that reads it; outputs'
// buffers to the end.
void ProgramPlanner::liveness() {
  const int n = static_cast<int>(out_.statements.size());
  for (int s = 0; s < n; ++s)
    for (int b : out_.statements[static_cast<std::size_t>(s)].buffers) {
      ProgramBuffer& pb = out_.buffers[static_cast<std::size_t>(b)];
      if (!pb.external && pb.first_use < 0) pb.first_use = s;
      pb.last_use = std::max(pb.last_use, s);
    }
  for (int o : out_.outputs) out_.buffers[static_cast<std::size_t>(out_.tensor(o).buffer)].last_use = n;
}

}  // namespace

ProgramPlan plan_program(const ast::Program& program, const ProgramOptions& options) {
  return ProgramPlanner(program, options).run();
}

}  // namespace einexpr
