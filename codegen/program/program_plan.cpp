// plan_program(): declarations and statements in source order, in one axis environment;
// each statement planned by plan() on the layouts its inputs have, its buffers mapped to the
// program's, and every buffer's first and last use (liveness) recorded.
#include "einexpr/codegen/program_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>
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
    case TensorRole::layer: return "layer";
  }
  return "?";
}

int ProgramPlan::tensor(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return static_cast<int>(i);
  for (const auto& [alias, id] : aliases)
    if (alias == name) return id;
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
      if (const auto* b = std::get_if<ast::BlockDecl>(&item)) blocks_[b->name.name] = b;
      if (const auto* c = std::get_if<ast::BlockCall>(&item)) call(*c);
    }
    for (const ast::Identifier& o : out_.program.outputs) out_.outputs.push_back(id(o.name));
    for (const ast::Identifier& c : out_.program.checkpoints) out_.checkpoints.push_back(c.name);
    for (const ProgramBlock& pb : out_.blocks)
      for (const ast::CheckpointDecl& c : blocks_.at(pb.block)->checkpoints)
        for (const ast::Identifier& n : c.names)
          for (std::int64_t l = 0; l < pb.layers; ++l) out_.checkpoints.push_back(layer_name(pb.name, l, n.name));
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
  /// Where a statement goes: the top level, or layer `layer` of block call `call`.
  struct Place {
    int call = -1;
    int layer = -1;
  };
  static std::string layer_name(const std::string& call, std::int64_t layer, const std::string& local) {
    return call + "[" + std::to_string(layer) + "]." + local;
  }
  int id(const std::string& name) const {
    const auto it = ids_.find(name);
    return it == ids_.end() ? -1 : it->second;
  }
  int push(ProgramTensor t) {
    const int n = static_cast<int>(out_.tensors.size());
    if (t.role != TensorRole::constant) ids_.emplace(t.name, n);
    out_.tensors.push_back(std::move(t));
    return n;
  }
  void declare(const ast::TensorDecl& decl);
  void statement(const ast::Statement& s, Place place = Place{-1, -1});
  void call(const ast::BlockCall& c);
  std::string resolve(const ast::BlockDecl& b, const ast::Identifier& name, std::int64_t layer,
                      const std::unordered_map<std::string, int>& local);
  DType statement_dtype(const ast::Statement& s) const;
  int constant(const ast::Identifier& literal, double value, DType dtype);
  OpSpec spec_of(const ast::Statement& s) const;
  Plan plan_with(const ast::Statement& s, const OpSpec& spec, const ast::Pattern* pattern,
                 const std::vector<int>& inputs) const;
  void add_result(PlannedStatement& st, const ast::Statement& s, DType dtype, const ast::Identifier& name);
  void dropout(const ast::Statement& s, Place place);
  /// The plan of `spec` on `inputs`, from plans_ when one was made for `key` and the inputs'
  /// layouts and dtypes (a block's layers share their statements' plans).
  Plan cached_plan(std::string key, const ast::Statement& s, const OpSpec& spec, const ast::Pattern* pattern,
                   const std::vector<int>& inputs);
  /// A statement's place in its block's layer.
  void place_in(PlannedStatement& st, Place place) const;
  void liveness();

  const ProgramOptions& options_;
  Environment env_;
  ProgramPlan out_;
  std::unordered_map<std::string, int> ids_;  // tensor names (and aliases) -> ids
  std::unordered_map<std::string, const ast::BlockDecl*> blocks_;
  std::map<std::pair<int, std::int64_t>, int> slices_;  // (declared tensor, layer) -> its slice
  std::map<std::string, Plan> plans_;  // plans by op, function, pattern and the inputs' layouts and dtypes
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
  push(std::move(t));
}

// The statement's dtype: its tensors' one dtype (numbers take it; the indices of get_at,
// add_at and cross_entropy are i64 or i32 beside it).
DType ProgramPlanner::statement_dtype(const ast::Statement& s) const {
  const int index = op_row(s.op_name.name).index_operand;
  const ProgramTensor* first = nullptr;
  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    if (s.is_literal(i)) continue;
    const ProgramTensor& t = out_.tensor(id(s.inputs[i].name));
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
  return push(std::move(t));
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
Plan ProgramPlanner::plan_with(const ast::Statement& s, const OpSpec& spec, const ast::Pattern* pattern,
                               const std::vector<int>& inputs) const {
  std::vector<Layout> layouts;
  std::vector<DType> dtypes;
  for (int id : inputs) {
    const Layout& l = out_.tensor(id).layout;
    layouts.push_back({l.shape, l.strides, 0});  // a kernel sees the view's first element
    dtypes.push_back(out_.tensor(id).dtype);
  }
  try {
    return plan(spec, pattern, layouts, std::span<const DType>(dtypes));
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

Plan ProgramPlanner::cached_plan(std::string key, const ast::Statement& s, const OpSpec& spec,
                                 const ast::Pattern* pattern, const std::vector<int>& inputs) {
  for (int in : inputs) {
    const ProgramTensor& t = out_.tensor(in);
    key += "|" + std::string(name(t.dtype)) + shape_str(t.layout.shape) + shape_str(t.layout.strides);
  }
  if (const auto hit = plans_.find(key); hit != plans_.end()) return hit->second;
  Plan p = plan_with(s, spec, pattern, inputs);
  ++out_.plans_made;
  plans_.emplace(std::move(key), p);
  return p;
}

void ProgramPlanner::place_in(PlannedStatement& st, Place place) const {
  st.call = place.call;
  st.layer = place.layer;
  if (place.call >= 0)
    st.body = static_cast<int>(out_.statements.size()) - out_.blocks[static_cast<std::size_t>(place.call)].first -
              static_cast<int>(place.layer) * out_.blocks[static_cast<std::size_t>(place.call)].per_layer;
}

// "y = dropout(x, p)". Training (p > 0): y.mask = the keep mask drawn from the seed tensor
// y.seed, then y = x scaled where it keeps; the backward of y reads the mask alone. Otherwise
// the identity: y views x.
void ProgramPlanner::dropout(const ast::Statement& s, Place place) {
  const int x = id(s.inputs.at(0).name);
  const double p = *s.literals.at(1);
  const DType dtype = out_.tensor(x).dtype;
  const std::vector<std::string> dims = out_.tensor(x).dims;  // copies: pushing tensors moves them
  if (!is_floating(dtype))
    fail(s.inputs[0].source, "'" + out_.tensor(x).name + "' is " + std::string(name(dtype)) +
                                 ": dropout scales what it keeps, so it needs a float tensor");
  static const ast::Pattern identity = parse_pattern(Op::rearrange, "... -> ...");
  auto planned = [&](std::string name, OpSpec spec, std::vector<int> inputs, const ast::Pattern* pattern,
                     const std::string& key) {
    PlannedStatement st;
    st.name = std::move(name);
    st.source = s.source;
    st.pattern = "";
    st.inputs = std::move(inputs);
    st.spec = std::move(spec);
    st.plan = cached_plan(key, s, st.spec, pattern, st.inputs);
    place_in(st, place);
    add_result(st, s, dtype, s.name);
    out_.tensors.back().dims = dims;  // x's dims as written, not the plan's '...'
    out_.statements.push_back(std::move(st));
  };
  if (!options_.training || p == 0) {
    planned(s.name.name, OpSpec::rearrange(), {x}, &identity, "dropout|identity");
    return;
  }
  ProgramTensor seed;
  seed.name = s.name.name + ".seed";
  seed.role = TensorRole::constant;
  seed.dtype = DType::i64;
  seed.layout = Layout::contiguous({});
  seed.dropout = out_.dropouts++;
  seed.source = s.inputs[1].source;
  seed.buffer = add_buffer({true, static_cast<int>(out_.tensors.size()), -1, 8, -1, -1});
  const int seed_id = push(std::move(seed));
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", p);
  planned(s.name.name + ".mask", OpSpec::dropout(p, DropoutPart::mask), {x, seed_id}, &s.pattern.pattern,
          std::string("dropout|mask|") + text);
  const int mask = static_cast<int>(out_.tensors.size()) - 1;
  planned(s.name.name, OpSpec::dropout(p, DropoutPart::apply), {x, mask}, &s.pattern.pattern,
          std::string("dropout|apply|") + text);
}

void ProgramPlanner::statement(const ast::Statement& s, Place place) {
  if (s.op == Op::dropout) {
    dropout(s, place);
    return;
  }
  const DType dtype = statement_dtype(s);
  std::vector<int> inputs;
  for (std::size_t i = 0; i < s.inputs.size(); ++i)
    inputs.push_back(s.is_literal(i) ? constant(s.inputs[i], *s.literals[i], dtype) : id(s.inputs[i].name));
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
    // planned once per op, pattern and layouts read (the lengths are the program's): a block's
    // layers share their statements' plans
    st.plan = cached_plan(s.op_name.name + "|" + (s.function ? s.function->text : std::string()) + "|" +
                              ast::to_string(s.pattern.pattern) + "|" + std::to_string(j),
                          s, st.spec, &s.pattern.pattern, st.inputs);
    place_in(st, place);
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
  t.requires_grad = is_floating(dtype) && is_floating(t.dtype) && std::any_of(st.inputs.begin(), st.inputs.end(), [&](int id) {
                      return out_.tensor(id).requires_grad;
                    });
  t.source = name.source;
  st.output = static_cast<int>(out_.tensors.size());
  if (v.buffer >= p.num_inputs) out_.buffers[static_cast<std::size_t>(t.buffer)].tensor = st.output;
  push(std::move(t));
}

// A name a block's statement reads in layer `layer`: its own statements' and parameters'
// tensors (`local`), a declared tensor stacked over the block's axis as that layer's slice, any
// other name of the program as it is.
std::string ProgramPlanner::resolve(const ast::BlockDecl& b, const ast::Identifier& name, std::int64_t layer,
                                    const std::unordered_map<std::string, int>& local) {
  if (const auto it = local.find(name.name); it != local.end()) return out_.tensor(it->second).name;
  const int whole = id(name.name);
  const ProgramTensor& w = out_.tensor(whole);
  if (w.role != TensorRole::input && w.role != TensorRole::param) return name.name;
  const auto layer_dim = std::find(w.dims.begin(), w.dims.end(), b.axis.name);
  bool in_group = false;
  for (const std::string& d : w.dims)
    in_group = in_group || (d.front() == '(' && (" " + d.substr(1, d.size() - 2) + " ").find(" " + b.axis.name + " ") !=
                                                    std::string::npos);
  if (layer_dim == w.dims.end() && !in_group) return name.name;  // read whole by every layer
  if (layer_dim != w.dims.begin())
    throw ProgramError("'" + w.name + "' has the layer axis '" + b.axis.name + "' of block '" + b.name.name + "' " +
                           (in_group ? "inside a composition" : "as dim " + std::to_string(layer_dim - w.dims.begin())) +
                           ": a tensor stacked over the layers has it as its first dim, alone (" + ast::name(
                               w.role == TensorRole::param ? ast::TensorKind::param : ast::TensorKind::input) +
                           " " + w.name + ": " + b.axis.name + " ...)",
                       out_.program, name.source, "declared here", w.source);
  const auto [it, fresh] = slices_.try_emplace({whole, layer}, -1);
  if (fresh) {
    ProgramTensor t;
    t.name = w.name + "[" + std::to_string(layer) + "]";
    t.role = TensorRole::layer;
    t.dtype = w.dtype;
    t.shape.assign(w.shape.begin() + 1, w.shape.end());
    t.dims.assign(w.dims.begin() + 1, w.dims.end());
    t.buffer = w.buffer;
    t.layout = {t.shape, std::vector<std::int64_t>(w.layout.strides.begin() + 1, w.layout.strides.end()),
                w.layout.offset + layer * w.layout.strides.front()};
    t.requires_grad = w.requires_grad;
    t.stacked = whole;
    t.layer = static_cast<int>(layer);
    t.source = w.source;
    it->second = push(std::move(t));
  }
  return out_.tensor(it->second).name;
}

// A block call: its body once per layer, each statement's names made the layer's own.
void ProgramPlanner::call(const ast::BlockCall& c) {
  const ast::BlockDecl& b = *blocks_.at(c.block.name);
  ProgramBlock pb;
  pb.block = b.name.name;
  pb.name = c.name.name;
  pb.axis = b.axis.name;
  pb.layers = env_.length(b.axis.name);
  pb.first = static_cast<int>(out_.statements.size());
  pb.source = c.source;
  std::int64_t per_layer = 0;  // planned statements: a split's outputs are one each
  for (const ast::Statement& body : b.statements)  // a training dropout is two (its mask, then it)
    per_layer += 1 + static_cast<std::int64_t>(body.more_names.size()) +
                 (body.op == Op::dropout && options_.training && body.literals.size() > 1 && body.literals[1] &&
                          *body.literals[1] > 0
                      ? 1
                      : 0);
  const std::int64_t room = max_program_statements - static_cast<std::int64_t>(out_.statements.size());
  if (pb.layers > room / per_layer)
    throw ProgramError("block '" + b.name.name + "' over " + b.axis.name + "=" + std::to_string(pb.layers) + " unrolls into " +
                           std::to_string(pb.layers) + " × " + std::to_string(per_layer) +
                           " statements: a program plans at most " + std::to_string(max_program_statements) +
                           " (here " + std::to_string(room / per_layer) + " layers of this block)",
                       out_.program, c.block.source);
  const int index = static_cast<int>(out_.blocks.size());
  out_.blocks.push_back(pb);
  std::vector<int> args;
  for (const ast::Identifier& in : c.inputs) args.push_back(id(in.name));
  int carry = args.front();
  const ProgramTensor first = out_.tensor(carry);
  for (std::int64_t l = 0; l < pb.layers; ++l) {
    std::unordered_map<std::string, int> local;
    for (std::size_t i = 0; i < b.params.size(); ++i) local[b.params[i].name] = i == 0 ? carry : args[i];
    for (const ast::Statement& body : b.statements) {
      ast::Statement s = body;
      s.name.name = layer_name(c.name.name, l, body.name.name);
      for (ast::Identifier& n : s.more_names) n.name = layer_name(c.name.name, l, n.name);
      for (std::size_t i = 0; i < s.inputs.size(); ++i)
        if (!s.is_literal(i)) s.inputs[i].name = resolve(b, body.inputs[i], l, local);
      statement(s, {index, static_cast<int>(l)});
      local[body.name.name] = id(s.name.name);
      for (std::size_t k = 0; k < body.more_names.size(); ++k) local[body.more_names[k].name] = id(s.more_names[k].name);
    }
    if (l == 0) out_.blocks.back().per_layer = static_cast<int>(out_.statements.size()) - pb.first;
    carry = local.at(b.statements.back().name.name);
    const ProgramTensor& y = out_.tensor(carry);
    if (y.shape != first.shape || y.dtype != first.dtype)
      throw ProgramError("block '" + b.name.name + "' returns " + out_.describe(carry) + " but takes '" +
                             b.params.front().name + "' as " + out_.describe(args.front()) +
                             ": each layer passes its result to the next as its first parameter, so the two have one "
                             "shape and dtype",
                         out_.program, b.statements.back().name.source, "called here", c.source);
  }
  out_.aliases.emplace_back(c.name.name, carry);
  ids_.emplace(c.name.name, carry);
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

/// The axes of plan values on `buffer` (a step's view of a tensor and the tensor itself).
std::set<AxisId> axes_on_buffer(const Plan& p, int buffer) {
  std::set<AxisId> out;
  for (const Value& v : p.values)
    if (v.buffer == buffer)
      for (const DimAxes& d : v.dims) out.insert(d.begin(), d.end());
  return out;
}

/// The one axis of `a` not in `b` (a lookup's indexed axis), or -1.
AxisId only_in(const std::set<AxisId>& a, const std::set<AxisId>& b) {
  AxisId found = -1;
  for (AxisId id : a)
    if (!b.count(id)) {
      if (found >= 0) return -1;
      found = id;
    }
  return found;
}

/// ProgramOptions::parts: each lookup and cross_entropy along a listed axis takes its part.
void apply_parts(ProgramPlan& pp, const std::vector<std::pair<std::string, AxisPart>>& parts) {
  if (parts.empty()) return;
  for (std::size_t i = 0; i < pp.statements.size(); ++i) {
    Plan& p = pp.statements[i].plan;
    auto part_of = [&](AxisId id) -> const AxisPart* {
      if (id < 0 || p.axes[id].kind != AxisKind::named) return nullptr;
      for (const auto& [axis, part] : parts)
        if (axis == p.axes[id].name) return &part;
      return nullptr;
    };
    auto set = [&](AxisPart& step_part, AxisId id) {
      if (const AxisPart* a = part_of(id)) {
        step_part = *a;
        step_part.tag = static_cast<int>(i);
      }
    };
    auto axes_of = [&](int v) {
      std::set<AxisId> out;
      for (const DimAxes& d : p.value(v).dims) out.insert(d.begin(), d.end());
      return out;
    };
    for (Step& step : p.steps) {
      if (auto* g = std::get_if<GatherStep>(&step)) {
        set(g->part, only_in(axes_on_buffer(p, p.value(g->src).buffer), axes_of(g->dst)));
      } else if (auto* a = std::get_if<ScatterAddStep>(&step)) {
        set(a->part, only_in(axes_of(a->dst), axes_of(a->updates)));
      } else if (auto* x = std::get_if<CrossEntropyStep>(&step)) {
        const DimAxes& classes = p.value(x->srcs.at(x->backward ? 1 : 0)).dims.at(static_cast<std::size_t>(x->axis));
        if (classes.size() > 1 && part_of(classes.front()) != nullptr)
          throw Error("'" + pp.statements[i].name + "': a cross_entropy whose classes compose " + p.axes[classes.front()].name +
                      " with other axes, split over a device mesh, is not run");
        if (classes.size() == 1) set(x->part, classes.front());
      }
    }
  }
}

}  // namespace

ProgramPlan plan_program(const ast::Program& program, const ProgramOptions& options) {
  ProgramPlan out = ProgramPlanner(program, options).run();
  apply_parts(out, options.parts);
  return out;
}

}  // namespace einexpr
