#pragma once
// Cost of a plan, computed without running it (conventions in DESIGN.md):
//   FLOPs   One convention (codegen/cost/convention.hpp), the one the contraction-order
//           search minimizes: 2 per multiply-add in a step that sums; 1 per output element
//           in a step that only multiplies (outer, Hadamard); reductions one op per input
//           element folded in (n_in - n_out), + n_out for mean; var and logsumexp 4·n_in,
//           std 4·n_in + n_out; views, copies, rearrange, repeat 0. Beside it, for
//           cross-checking with other tools: flops_exact (k multiplies and k-1 adds per
//           output element: m·n·(2k-1)), flops_numpy
//           (numpy.einsum_path / opt_einsum's model on einexpr's path) and macs (multiply-
//           accumulates of the contractions, what fvcore, ptflops and thop count).
//   Bytes   ideal: each input read once + the output written once, at the dtype's size;
//           planned: what the steps move (a view 0; a copy reads and writes; temporaries).
//   Intensity = flops / ideal bytes. Roofline: time >= max(flops / peak, bytes / bandwidth).
// Each count is also a Formula in the axis names (2·b·s1·s2·h), so scaling reads off it.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "einexpr/codegen/count.hpp"
#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/dtype.hpp"

namespace einexpr {

/// A polynomial in axis names with exact coefficients: 2·b·h·s1·s2, 2·(b·h·s1 + b·h·s2).
/// Terms are ordered by degree (highest first), then by their factors; factors are sorted.
/// A term may be negative (a reduction folds n_in - n_out elements: b·h·s - b·h).
struct Formula {
  struct Term {
    Count coefficient;                 // > 0
    std::vector<std::string> factors;  // sorted; repeated for powers; never numbers
    bool negative = false;             // the term is subtracted
    friend bool operator==(const Term&, const Term&) = default;
  };
  std::vector<Term> terms;             // like terms combined, none zero; {} is 0

  static Formula constant(Count c);
  /// Factors that are numbers ("3", an anonymous axis) fold into the coefficient.
  static Formula product(Count coefficient, std::vector<std::string> factors);
  Formula operator+(const Formula& other) const;
  Formula operator-(const Formula& other) const;
  Formula& operator+=(const Formula& other);
  Formula& operator-=(const Formula& other);
  Formula operator*(Count c) const;
  /// Substitutes lengths (factors that are numbers stand for themselves). Throws Error
  /// naming a factor without a length, ShapeError if the value is negative or overflows.
  Count evaluate(const std::map<std::string, std::int64_t, std::less<>>& lengths) const;
  /// "2·b·h·s1·s2"; a common coefficient is factored out: "2·(b·h·s1 + b·h·s2 + b·s1·s2)".
  std::string str() const;
  friend bool operator==(const Formula&, const Formula&) = default;
};

struct StepCost {
  std::string kind;        // "view", "copy", "contract", "reduce", "map", "embed"
  std::string label;       // the step as to_string(step) prints it
  bool is_view = false;
  Count flops, flops_exact, macs;
  Count bytes_read, bytes_written;   // what this step moves
  Count bytes_allocated;             // the temporary it makes (0 for views)
  Formula flops_formula, bytes_formula;
};

struct Cost {
  std::string op, pattern;
  DType dtype = DType::f32;
  Count flops;             // 2 per multiply-add
  Count flops_exact;       // multiplies + adds exactly (m·n·(2k-1) for a matmul)
  MaybeCount naive_flops;  // einsum: numpy.einsum_path's naive count, one loop nest over all
                           // axes ((n-1)+1 per iteration for n operands sharing an axis);
                           // others and plans built by hand (no ContractionInfo): flops.
                           // nullopt where it is 2^128 or more (a 64-operand einsum's ~2^190)
  MaybeCount flops_numpy;  // einsum: numpy.einsum_path's / opt_einsum's count of this plan's
                           // path (each pairwise step 2·∏(axes of both) when it sums, else
                           // 1·∏; no axis summed early); numpy prints it + 1. Others and plans
                           // built by hand: flops. nullopt where it is 2^128 or more
  Count macs;              // multiply-accumulates of the contractions (|B|·m·n·k each);
                           // reductions and maps count 0 (fvcore, ptflops, thop)
  Count bytes_read;        // ideal: each input once
  Count bytes_written;     // ideal: the output once
  Count bytes_planned;     // sum over steps of bytes moved
  Count peak_extra_bytes;  // most temporary memory alive at once
  Formula flops_formula, bytes_formula;  // bytes_formula: ideal bytes
  std::vector<StepCost> steps;

  Count ideal_bytes() const { return bytes_read + bytes_written; }
  /// flops / ideal bytes (0 when no bytes move).
  double intensity() const noexcept;
  /// The exact-count intensity (the seeds' figures use it): flops_exact / ideal bytes.
  double intensity_exact() const noexcept;
  /// An aligned, human-readable summary with SI units.
  std::string str() const;
};

/// Costs every step of `plan` and sums them.
Cost cost(const Plan& plan);

/// FLOPs per output element of an elementwise function: relu 1 and gelu 20 (the seeds'
/// figures); the others count the operations of their definition in plan.hpp, each
/// arithmetic operation and each exp / log / tanh / erf / sqrt as 1 (the table in
/// codegen/cost/elementwise_flops.cpp says where each number comes from).
Count flops_per_element(UnaryOp op) noexcept;
Count flops_per_element(BinaryOp op) noexcept;
/// FLOPs per element of a backward pass's elementwise derivative (the dY multiply included).
Count flops_per_element(const GradOp& op) noexcept;

/// The backward pass of a plan: one gradient per input (backward.hpp derives them as plans
/// from the forward plan) and what each costs.
struct GradientCost {
  std::string input;       // "operand 1", "operand 2", ... (from 1, as in errors)
  std::string expression;  // "einsum(dY, B, 'b k, d k -> b d')" (backward.hpp names the tensors)
  Cost cost;
};
struct BackwardCost {
  std::vector<GradientCost> gradients;
  Count flops;             // sum over gradients
  Count bytes;             // ideal bytes, summed
};
/// Throws Error naming what has no gradient (reduce any / all).
BackwardCost backward_cost(const Plan& forward);

// ---- devices and the roofline ----

/// A device's promised dense peaks (FLOP/s by dtype key: "f64", "f32", "tf32", "bf16",
/// "f16", "fp8", "i8"...) and memory bandwidth (B/s), with where the numbers come from.
struct DeviceSpec {
  std::string name;                    // "h100", "h200", "a100", "t4", "b200", "cpu", ...
  std::string description;             // "NVIDIA H100 SXM5 80 GB"
  std::map<std::string, double> peak_flops;
  double bandwidth = 0;                // bytes / s
  std::string source;                  // datasheet / measurement it comes from
  double memory = 0;                   // bytes of device memory (0: not given); program cost --search
                                       // fits each device's share into it

  /// Peak for `dtype` (f8 types use "fp8"); throws Error naming the device and dtype
  /// when the table has no entry.
  double peak_for(DType dtype) const;
  /// peak / bandwidth: the intensity above which an expression is compute-bound.
  double accelerator_intensity(DType dtype) const;
};

/// The 'cpu' device as measured on this machine: FMA peaks (f64; f32, which bf16, f16 and
/// fp8 compute in) and copy bandwidth, with the CPU model and thread count they were
/// measured with (codegen/cost/cpu_device.cpp says how).
struct CpuCalibration {
  DeviceSpec device;       // named "cpu"
  std::string cpu_model;   // "AMD EPYC (family 25, model 1)", from /proc/cpuinfo
  int threads = 0;         // OpenMP threads (num_threads()) of the measurement
  std::string isa;         // the vectors of the FMA probe: "avx512", "avx2", "scalar"
  std::string cache_path;  // the file it was read from or written to ("" when none)
  bool measured = false;   // measured by this call (else read from a file)
};
/// The 'cpu' device: the device file $EINEXPR_CPU_DEVICE names, when set (its "cpu" entry,
/// or its only one; never measured: tests and fixed setups use it); else the cache
/// (cpu_cache_path()) when it holds this CPU model, thread count and instruction set; else
/// measured now (about 0.2 s) and cached. A cache that is missing, corrupt or for another
/// machine is measured again; one that cannot be written is skipped.
CpuCalibration cpu_calibration();
/// Measures the CPU now, rewrites the cache and replaces the table's 'cpu' entry
/// (`einexpr devices --calibrate`).
CpuCalibration calibrate_cpu();
/// $XDG_CACHE_HOME/einexpr/cpu_device.json (XDG_CACHE_HOME absolute), else
/// $HOME/.cache/einexpr/cpu_device.json; "" when neither is set.
std::string cpu_cache_path();

/// The built-in table (GPUs from their datasheets; 'cpu' from cpu_calibration(), looked up
/// the first time 'cpu' is asked for or the whole table is listed), plus devices from the
/// JSON file named by $EINEXPR_DEVICES, if set (read on first use, and again when it names
/// another file; a bad file throws Error; its entries replace built-in ones of the same
/// name, 'cpu' included). Loading devices may add to the table: keep no reference across
/// load_device_file.
const std::vector<DeviceSpec>& device_specs();
/// Adds (or replaces by name) the devices in a JSON file; throws Error on a bad file.
void load_device_file(const std::string& path);
/// Reads a device file without adding it: a JSON list of {"name", "description",
/// "peak_flops": {"bf16": 989.5e12, ...}, "bandwidth", "source"} (codegen/cost/devices.json).
/// Throws Error naming the file and the problem (entry, key, what was expected).
std::vector<DeviceSpec> read_device_file(const std::string& path);
/// Case-insensitive lookup; throws Error listing the known names. The reference stays
/// valid (a later file that redefines the device changes it in place).
const DeviceSpec& find_device(std::string_view name);

struct Roofline {
  std::string device;
  DType dtype = DType::f32;
  double peak_flops = 0;               // FLOP/s
  double bandwidth = 0;                // B/s
  double accelerator_intensity = 0;    // peak / bandwidth
  double intensity = 0;                // the expression's flops / ideal bytes
  double compute_time_s = 0;           // flops / peak
  double memory_time_s = 0;            // ideal bytes / bandwidth
  double time_s = 0;                   // max of the two: the lower bound
  bool compute_bound = false;
  double best_mfu = 0;                 // flops / (time_s · peak)
  std::string bound() const { return compute_bound ? "compute" : "memory"; }
};
Roofline roofline(const Cost& cost, const DeviceSpec& device);

/// Achieved FLOP/s over the device's promised FLOP/s for `dtype`.
double mfu(Count flops, double seconds, const DeviceSpec& device, DType dtype);

/// A labelled point on a roofline plot.
struct RooflinePoint {
  std::string label;
  double intensity = 0;     // FLOP / byte
  double flops_per_s = 0;   // achieved (measured) or bound (from the roofline)
  bool measured = false;
};
/// An SVG log-log roofline plot: the device's roofs (bandwidth slope, peak for `dtype`)
/// and each point, labelled. Written via a temporary file and rename.
void write_roofline_svg(const std::string& path, const DeviceSpec& device, DType dtype,
                        const std::vector<RooflinePoint>& points);
std::string roofline_svg(const DeviceSpec& device, DType dtype,
                         const std::vector<RooflinePoint>& points);

}  // namespace einexpr
