// bench, roofline, devices: an expression timed on random data beside its cost, roofline
// plots of expressions' bounds, and the device table they are compared with.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "args.hpp"
#include "einexpr/codegen/mesh.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace einexpr::cli {

namespace {

/// --copy: the policy of a rearrange or repeat (CLI11 has checked the name).
Copy parse_copy(const std::string& text, const std::string& op) {
  const Copy copy = text == "always" ? Copy::always : text == "never" ? Copy::never : Copy::if_needed;
  if (copy != Copy::if_needed && op != "rearrange" && op != "repeat")
    throw UsageError("--copy " + text + " applies to rearrange and repeat, not " + op);
  return copy;
}

/// The expression compiled with the lengths its plan from sizes used (the tensors' shapes
/// then say the rest) and the --copy policy.
Compiled compile(const ExprSpec& e, const Plan& plan, Copy copy) {
  OpSpec spec = e.op_spec();
  if (auto* r = spec.get_if<RearrangeOptions>()) r->copy = copy;
  if (auto* r = spec.get_if<RepeatOptions>()) r->copy = copy;
  if (spec.op() != Op::einsum)
    for (const auto& [axis, length] : e.sizes)
      if (plan.axes.find(axis) >= 0) spec.lengths.emplace_back(axis, length);
  return Compiled(std::move(spec), e.pattern);
}

/// The length of the axis a plan's integer indices select along (get_at, add_at,
/// cross_entropy), or 0.
std::int64_t index_bound(const Plan& plan) {
  for (const Step& s : plan.steps) {
    if (const auto* g = std::get_if<GatherStep>(&s)) return g->length;
    if (const auto* a = std::get_if<ScatterAddStep>(&s)) return a->length;
    if (const auto* c = std::get_if<CrossEntropyStep>(&s))
      return plan.value(c->srcs[0]).layout.shape.at(static_cast<std::size_t>(c->axis));
  }
  return 0;
}

/// Random inputs of the shapes the plan from sizes gives, on `device`: normal data, and
/// indices uniform over their axis.
std::vector<Tensor> random_inputs(const Plan& plan, Device device, std::uint64_t seed) {
  std::vector<Tensor> inputs;
  for (int i = 0; i < plan.num_inputs; ++i) {
    const Shape& shape = plan.values.at(static_cast<std::size_t>(i)).layout.shape;
    const DType dtype = plan.dtype_of(i);
    if (dtype == DType::i64 || dtype == DType::i32) {
      const std::int64_t bound = std::max<std::int64_t>(1, index_bound(plan));
      std::vector<std::int64_t> v(static_cast<std::size_t>(checked_numel(shape)));
      std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i) + 1;
      for (auto& e : v) {  // splitmix64
        x += 0x9E3779B97F4A7C15ull;
        std::uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        e = static_cast<std::int64_t>((z ^ (z >> 31)) % static_cast<std::uint64_t>(bound));
      }
      inputs.push_back(Tensor::from_vector(v, shape).to(dtype).to(device));
      continue;
    }
    inputs.push_back(Tensor::randn(shape, dtype, seed + static_cast<std::uint64_t>(i)).to(device));
  }
  return inputs;
}

/// measure()'s progress callback: a line on stderr, rewritten in place on a terminal.
struct Progress {
  bool shown = false;
  void operator()(int repeats, double elapsed) {
    std::fprintf(stderr, "%sbench: %d timed runs, %.1f s", isatty(2) ? "\r" : "", repeats, elapsed);
    if (!isatty(2)) std::fputc('\n', stderr);
    std::fflush(stderr);
    shown = true;
  }
  void finish() const {
    if (shown && isatty(2)) std::fputc('\n', stderr);
  }
};

void print_bench_table(const ExprSpec& e, const RunReport& r, const Roofline& bound, Device device, bool view) {
  const Measurement& m = r.time;
  std::cout << e.op << " '" << e.pattern << "'" << (e.op == "map" ? " " + e.function : "") << " ("
            << name(r.cost.dtype) << ")  " << lengths_text(e.sizes) << "  on "
            << device.str() << ", " << r.threads << " thread" << (r.threads == 1 ? "" : "s") << "\n";
  Table t({}, "lrll");
  add_quantity(t, "median", seconds(m.median_s),
               "of " + std::to_string(m.repeats) + " runs (min " + seconds(m.min_s) + ", max " + seconds(m.max_s) +
                   "; " + std::to_string(m.warmup) + " warm-up)");
  // The median hides runs that stalled (a thread kept off its core by other work): the mean
  // shows them, and the line says so when it is well above the median.
  const double ratio = m.median_s > 0 ? m.mean_s / m.median_s : 1;
  add_quantity(t, "mean", seconds(m.mean_s),
               num(ratio, 3) + " x the median" +
                   (ratio > 1.25 ? "; some runs stalled (the slowest " + seconds(m.max_s) +
                                       "): other work on the cores? --threads 1 or a quiet machine tells"
                                 : ""));
  add_quantity(t, "FLOPs", si(r.cost.flops.to_double(), "FLOP"), si(r.flops_per_s, "FLOP/s"));
  add_quantity(t, "bytes", iec(r.cost.ideal_bytes().to_double()), si(r.bytes_per_s, "B/s") + " (ideal bytes / median)");
  add_quantity(t, "MFU", fixed(r.mfu, 3),
               "against " + r.device + ": " + si(bound.peak_flops, "FLOP/s") + " " + std::string(name(r.cost.dtype)));
  add_quantity(
      t, "roofline", seconds(bound.time_s),
      bound.bound() + "-bound on " + r.device + "; the median is " + num(m.median_s / bound.time_s, 3) + " x it");
  std::cout << t.str();
  if (view) std::cout << "  the result is a view of the input: no data moves\n";
}

void print_bench_json(const ExprSpec& e, const RunReport& r, const Roofline& bound, Device device, bool view) {
  const Measurement& m = r.time;
  JsonWriter j(std::cout);
  j.begin_object().field("op", e.op).field("pattern", e.pattern).field("dtype", name(r.cost.dtype));
  if (e.op == "map") j.field("function", e.function);
  j.field("device", device.str()).field("spec", r.device).field("threads", r.threads);
  j.field("warmup", m.warmup).field("repeats", m.repeats);
  j.field("median_s", m.median_s).field("min_s", m.min_s).field("max_s", m.max_s).field("mean_s", m.mean_s);
  j.field("flops", r.cost.flops).field("bytes", r.cost.ideal_bytes());
  j.field("flops_per_s", r.flops_per_s).field("bytes_per_s", r.bytes_per_s).field("mfu", r.mfu);
  j.field("peak_flops", bound.peak_flops).field("bandwidth", bound.bandwidth);
  j.field("roofline_time_s", bound.time_s).field("bound", bound.bound()).field("output_is_view", view);
  j.end_object();
}

std::string peak_text(const DeviceSpec& d, const std::string& key) {
  const auto it = d.peak_flops.find(key);
  return it == d.peak_flops.end() ? "-" : si(it->second, "");
}

/// The dtype keys of the table's peaks, in the usual order, then any others.
std::vector<std::string> peak_keys(const std::vector<DeviceSpec>& devices) {
  std::vector<std::string> keys = {"f64", "f32", "tf32", "bf16", "f16", "fp8", "i8"};
  for (const DeviceSpec& d : devices)
    for (const auto& kv : d.peak_flops)
      if (std::find(keys.begin(), keys.end(), kv.first) == keys.end()) keys.push_back(kv.first);
  std::erase_if(keys, [&](const std::string& k) {
    return std::none_of(devices.begin(), devices.end(), [&](const DeviceSpec& d) { return d.peak_flops.count(k); });
  });
  return keys;
}

}  // namespace

int bench_command(const BenchArgs& args) {
  ExprSpec e = parse_expr_args(args.expr.op, args.expr.pattern, args.expr.rest, args.expr.correction,
                               args.expr.eps, args.expr.ignore_index, args.expr.p);
  const Copy copy = parse_copy(args.copy, e.op);
  const DType dtype = expr_dtype(args.expr.dtype, e);
  const Device device = parse_run_device(args.run.device);
  const DeviceSpec spec = find_device(!args.spec.empty() ? args.spec : device.is_cpu() ? "cpu" : "h100");
  spec.peak_for(dtype);  // no peak for this dtype: fail before running
  apply_threads(args.run);
  const Plan plan = plan_expr(e, dtype);
  const std::vector<Tensor> inputs = random_inputs(plan, device, args.seed);
  const Compiled compiled = compile(e, plan, copy);
  const bool view = compiled.plan(inputs).output_is_view();  // what --copy made of it
  Progress progress;
  MeasureOptions options;
  options.warmup = args.warmup;
  options.min_repeats = args.repeats;
  options.max_repeats = std::max(1000000, args.repeats);  // --min-time decides, not a count
  options.min_seconds = args.min_time;
  options.max_seconds = std::max(args.max_time, args.min_time);
  options.progress = [&progress](int repeats, double elapsed) { progress(repeats, elapsed); };
  const RunReport report = measure_run(compiled, inputs, spec, options);
  progress.finish();
  const Roofline bound = roofline(report.cost, spec);
  if (args.json)
    print_bench_json(e, report, bound, device, view);
  else
    print_bench_table(e, report, bound, device, view);
  return 0;
}

int roofline_command(const RooflineArgs& args) {
  std::vector<ExprSpec> exprs;
  for (const std::string& text : args.exprs) exprs.push_back(parse_expr_text(text));
  const DType dtype = parse_dtype(args.dtype);
  const DeviceSpec device = find_device(args.device);
  check_output_path(args.svg);
  std::vector<RooflinePoint> points;
  Table t({"label", "op", "FLOPs", "bytes", "FLOP/B", "bound", "time", "attainable"}, "llrrrlrr");
  for (const ExprSpec& e : exprs) {
    const Cost c = cost(plan_from_sizes(e.op_spec(), e.pattern, e.sizes, dtype));
    const Roofline r = roofline(c, device);
    const double attainable = r.time_s > 0 ? c.flops.to_double() / r.time_s : 0;
    points.push_back({e.pattern, r.intensity, attainable, false});
    t.add({e.pattern, e.op, si(c.flops.to_double(), "FLOP"), iec(c.ideal_bytes().to_double()), num(r.intensity),
           r.bound(), seconds(r.time_s), si(attainable, "FLOP/s")});
  }
  write_roofline_svg(args.svg, device, dtype, points);
  std::cout << "roofline of " << device.name << " (" << name(dtype) << "): " << si(device.peak_for(dtype), "FLOP/s")
            << ", " << si(device.bandwidth, "B/s") << ", ridge " << num(device.accelerator_intensity(dtype))
            << " FLOP/B\n"
            << t.str() << "wrote " << args.svg << '\n';
  return 0;
}

int devices_command(const DevicesArgs& args) {
  apply_threads(args.run);
  if (args.calibrate) {
    const CpuCalibration c = calibrate_cpu();
    std::cerr << "measured the cpu: " << c.cpu_model << ", " << c.threads << " thread(s), " << c.isa << "; "
              << (c.cache_path.empty() ? "not cached (no writable cache directory)" : "cached in " + c.cache_path)
              << '\n';
  }
  const std::vector<DeviceSpec> devices = device_specs();
  if (args.json) {
    JsonWriter j(std::cout);
    j.begin_array();
    for (const DeviceSpec& d : devices) {
      j.begin_object().field("name", d.name).field("description", d.description).key("peak_flops").begin_object();
      for (const auto& [key, peak] : d.peak_flops) j.field(key, peak);
      j.end_object().field("bandwidth", d.bandwidth);
      if (d.memory > 0) j.field("memory", d.memory);
      j.field("source", d.source).end_object();
    }
    j.end_array();
    return 0;
  }
  const std::vector<std::string> keys = peak_keys(devices);
  std::vector<std::string> header = {"name"};
  for (const std::string& k : keys) header.push_back(k);
  header.insert(header.end(), {"bandwidth", "memory", "description"});
  Table t(header, "l" + std::string(keys.size() + 2, 'r') + "l");
  for (const DeviceSpec& d : devices) {
    std::vector<std::string> row = {d.name};
    for (const std::string& k : keys) row.push_back(peak_text(d, k));
    row.insert(row.end(), {si(d.bandwidth, "B/s"), d.memory > 0 ? si(d.memory, "B") : "-", d.description});
    t.add(row);
  }
  std::cout << "promised dense peaks in FLOP/s by dtype, memory bandwidth\n" << t.str() << "sources\n";
  for (const DeviceSpec& d : devices) std::cout << "  " << d.name << ": " << d.source << '\n';
  // the links of a mesh's dimensions ("dp=64@ib"), for program cost --mesh's α-β times
  std::cout << "links between devices (program cost --mesh: t = " << collective_base_latency_s * 1e6
            << " µs + steps·α + bus bytes / β)\n";
  Table l({"link", "β", "α"}, "lrr");
  for (const Link& k : links()) {
    std::ostringstream alpha;
    alpha << k.latency_s * 1e6 << " µs";
    l.add({k.name, si(k.bandwidth, "B/s"), alpha.str()});
  }
  std::cout << l.str();
  for (const Link& k : links()) std::cout << "  " << k.name << ": " << k.source << '\n';
  return 0;
}

}  // namespace einexpr::cli
