#include "engine.hpp"

#include <atomic>
#include <cstring>

#include "einexpr/codegen/pipeline.hpp"
#include "einexpr/parser/check.hpp"
#include "einexpr/parser/ops.hpp"
#include "einexpr/parser/numpy_hint.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/cache.hpp"
#include "einexpr/runtime/strided.hpp"

namespace einexpr::engine {

namespace {

std::atomic<std::uint64_t> g_parses{0}, g_plans{0}, g_lowerings{0};

LruCache<std::string, ast::Pattern>& pattern_cache() {
  static LruCache<std::string, ast::Pattern> cache(256);
  return cache;
}

LruCache<std::string, Entry>& program_cache() {
  static LruCache<std::string, Entry> cache(1024);
  return cache;
}

}  // namespace

void count_parse() { ++g_parses; }

std::shared_ptr<const ast::Pattern> pattern(Op op, std::string_view text) {
  std::string key(1, static_cast<char>(op));
  key.append(text);
  return pattern_cache().get_or_create(key, [&] {
    count_parse();
    return parse_pattern(op, text);
  });
}

std::string op_name(const OpSpec& spec) {
  if (const auto* n = spec.get_if<NormalizeOptions>()) return name(n->kind);
  if (const auto* m = spec.get_if<MapOptions>())
    return "map." + std::visit([](auto f) { return std::string(name(f)); }, m->function);
  return name(spec.op());
}

void key_of(const Request& r, bool with_spec, std::string& key) {
  key.clear();
  if (with_spec) {
    r.spec.append_key(key);
    key.append(r.pattern);
    key.push_back('\0');
  }
  // The rest in one resize and plain copies: dtype, device, '|', then per input its rank,
  // dtype, shape and strides (appending field by field cost ~30 instructions a field).
  const DType dtype = r.inputs.empty() ? DType::f32 : r.inputs[0].dtype();
  const Device dev = r.inputs.empty() ? Device::cpu() : r.inputs[0].device();
  std::size_t bytes = sizeof dtype + sizeof dev.kind + sizeof dev.index + 1;
  for (const Tensor& t : r.inputs)
    bytes += sizeof(std::int32_t) + sizeof(DType) + 2 * t.shape().size() * sizeof(std::int64_t);
  std::size_t at = key.size();
  key.resize(at + bytes);
  char* out = key.data();
  const auto put = [&](const void* p, std::size_t n) {
    if (n == 0) return;  // a 0-d tensor's shape().data() may be null
    std::memcpy(out + at, p, n);
    at += n;
  };
  put(&dtype, sizeof dtype);
  put(&dev.kind, sizeof dev.kind);
  put(&dev.index, sizeof dev.index);
  out[at++] = '|';
  for (const Tensor& t : r.inputs) {
    const auto rank = static_cast<std::int32_t>(t.dim());
    const DType input_dtype = t.dtype();
    put(&rank, sizeof rank);
    put(&input_dtype, sizeof input_dtype);
    put(t.shape().data(), t.shape().size() * sizeof(std::int64_t));
    put(t.strides().data(), t.strides().size() * sizeof(std::int64_t));
  }
}

std::string& scratch_key() {
  thread_local std::string key;  // keeps its capacity: a call whose program is cached allocates no key
  return key;
}

Entry make_entry(const OpSpec& spec, const ast::Pattern* p, TensorRefs inputs) {
  std::vector<Layout> layouts;
  std::vector<DType> dtypes;
  for (const Tensor& t : inputs) {
    layouts.push_back(Layout{t.shape(), t.strides(), 0});
    dtypes.push_back(t.dtype());
  }
  if (dtypes.empty()) dtypes.push_back(DType::f32);
  // The pipeline's stages 2-5 (pipeline.hpp; stage 1 is pattern(), cached).
  Plan planned = compile_plan(spec, p, layouts, std::span<const DType>(dtypes));
  ++g_plans;
  Program program = lower_validated(planned, inputs.empty() ? Device::cpu() : inputs[0].device());
  ++g_lowerings;
  return Entry{std::move(planned), std::move(program)};
}

std::shared_ptr<const Entry> entry(const Request& r) {
  std::string& scratch = scratch_key();
  key_of(r, true, scratch);
  if (auto found = program_cache().find(scratch)) return found;
  std::string key = scratch;  // planning may build keys of its own on this thread
  const std::shared_ptr<const ast::Pattern> p =
      r.pattern.empty() && r.spec.op() == Op::map ? nullptr : pattern(r.spec.op(), r.pattern);
  return program_cache().insert(key, std::make_shared<const Entry>(make_entry(r.spec, p.get(), r.inputs)));
}

std::pair<DType, Device> common_dtype_device(std::string_view op, TensorRefs inputs, int index_operand) {
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined())
      throw Error(std::string(op) + ": operand " + std::to_string(i + 1) + " is an undefined tensor");
  if (inputs.empty()) throw Error(std::string(op) + ": no operands");
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    if (static_cast<int>(i) == index_operand) {
      if (inputs[i].dtype() != DType::i64 && inputs[i].dtype() != DType::i32)
        throw DTypeError(std::string(op) + ": operand " + std::to_string(i + 1) + " holds the indices, so it is i64 or "
                         "i32, not " + std::string(name(inputs[i].dtype())) + "; convert with .to(DType::i64) first");
    } else if (inputs[i].dtype() != inputs[0].dtype())
      throw DTypeError(std::string(op) + " operands have different dtypes: " + std::string(name(inputs[0].dtype())) +
                       " (operand 1) and " + std::string(name(inputs[i].dtype())) + " (operand " +
                       std::to_string(i + 1) + "); convert with .to() first");
    if (inputs[i].device() != inputs[0].device())
      throw DeviceError(std::string(op) + " operands are on different devices: " + inputs[0].device().str() +
                        " (operand 1) and " + inputs[i].device().str() + " (operand " + std::to_string(i + 1) +
                        "); move them with .to() first");
  }
  return {inputs[0].dtype(), inputs[0].device()};
}

std::string context(std::string_view op_name, std::string_view pattern, TensorRefs inputs,
                    const AxisLengths* lengths) {
  std::string s = "in " + std::string(op_name) + "(";
  if (!pattern.empty()) s += "'" + abbreviate(pattern) + "'";
  s += ")";
  if (!inputs.empty()) {
    s += inputs.size() == 1 ? " on input of shape " : " on inputs of shapes ";
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (i) s += ", ";
      s += inputs[i].defined() ? shape_str(inputs[i].shape()) : "undefined";
    }
    if (inputs[0].defined()) s += " (" + std::string(name(inputs[0].dtype())) + ")";
  }
  if (lengths != nullptr && !lengths->empty()) {
    s += " with ";
    for (std::size_t i = 0; i < lengths->size(); ++i)
      s += (i ? ", " : "") + (*lengths)[i].first + "=" + std::to_string((*lengths)[i].second);
  }
  if (const std::string hint = numpy_pattern_hint(pattern); !hint.empty()) s += "\n  " + hint;
  return s;
}

namespace {

/// Where `plan` (of one input) is views of input 0, then one copy of the last into the
/// output, a new contiguous tensor: that copy's source view; else null.
const Layout* copied_view(const Plan& plan) {
  if (plan.num_inputs != 1 || plan.steps.empty()) return nullptr;
  for (std::size_t i = 0; i + 1 < plan.steps.size(); ++i)
    if (!std::holds_alternative<ViewStep>(plan.steps[i])) return nullptr;
  const auto* copy = std::get_if<CopyStep>(&plan.steps.back());
  if (copy == nullptr || copy->dst != plan.output || plan.value(copy->src).buffer != 0) return nullptr;
  const Layout& out = plan.output_value().layout;
  if (plan.output_value().buffer < plan.num_inputs || out.offset != 0 || out.strides != contiguous_strides(out.shape))
    return nullptr;
  return &plan.value(copy->src).layout;
}

}  // namespace

std::vector<Tensor> run_outputs(std::span<const std::shared_ptr<const Entry>> entries, const Tensor& x) {
  constexpr std::int64_t fewest_rows = 64;  // fewer, longer rows: each copy's own pieces share them out better
  std::vector<Tensor> out;
  std::vector<RowCopy> rows;
  if (x.device().is_cpu() && entries.size() > 1) {
    for (const auto& e : entries) {
      const Layout* src = copied_view(e->plan);
      if (src == nullptr) break;
      Tensor t = Tensor::empty(e->plan.output_value().layout.shape, e->program.dtype, x.device());
      const std::optional<RowCopy> r = as_rows(static_cast<std::byte*>(t.data_ptr()), t.layout(),
                                               static_cast<const std::byte*>(x.data_ptr()), *src, element_size(x.dtype()));
      if (!r || r->rows < fewest_rows || (!rows.empty() && r->rows != rows[0].rows)) break;
      rows.push_back(*r);
      out.push_back(std::move(t));
    }
    if (rows.size() == entries.size()) {
      copy_rows_together(rows, element_size(x.dtype()));
      return out;
    }
    out.clear();
  }
  for (const auto& e : entries) out.push_back(e->program.run(std::span<const Tensor>(&x, 1)));
  return out;
}

}  // namespace einexpr::engine

namespace einexpr {

EngineStats engine_stats() {
  EngineStats s;
  s.parses = engine::g_parses.load();
  s.plans = engine::g_plans.load();
  s.lowerings = engine::g_lowerings.load();
  s.pattern_cache = engine::pattern_cache().stats();
  s.program_cache = engine::program_cache().stats();
  return s;
}

void clear_caches() {
  engine::pattern_cache().clear();
  engine::program_cache().clear();
}

}  // namespace einexpr
