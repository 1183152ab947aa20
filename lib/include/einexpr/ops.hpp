#pragma once
// The tensor ops with einops' semantics and names:
//
//   Tensor z = einsum(x, y, "b s1 h, b s2 h -> b s1 s2");
//   Tensor r = rearrange(x, "b s (h d) -> b h s d", {{"h", 8}});
//   Tensor m = reduce(x, "b s h -> b h", "mean");
//   Tensor t = repeat(m, "b h -> b c h", {{"c", 4}});
//
// Each call goes parse (cached) -> check -> plan -> lower -> run; the program is cached by
// everything it depends on (op, pattern, shapes, strides, dtype, device, lengths), so a
// repeated call neither parses nor plans. compile_*() skips even the cache lookup's hashing
// of the pattern. Errors are einexpr::Error subclasses; the message ends with the pattern,
// the input shapes and the given lengths.
//
// Views: rearrange returns a view sharing the input's storage when it only permutes,
// splits or merges axes whose strides allow it (as torch's reshape/permute); repeat returns
// a stride-0 view when it only adds axes (as einops on torch). Copy::never guarantees a
// view (ShapeError otherwise), Copy::always a fresh contiguous tensor. reduce and einsum
// results are new tensors, except a single-operand einsum that only permutes or takes a
// diagonal, which is a view (as numpy.einsum).
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/ops.hpp"
#include "einexpr/runtime/cache.hpp"
#include "einexpr/runtime/tensor.hpp"

namespace einexpr {

Tensor rearrange(const Tensor& x, std::string_view pattern, const AxisLengths& lengths = {},
                 Copy copy = Copy::if_needed);
/// Concatenation, einx's '+': rearrange({x, y}, "b s1 d, b s2 d -> b (s1 + s2) d"). Each input
/// is copied once into its slice of the result; input i names the output's axes with the
/// '(a + b)' dim replaced by its part (permutations and compositions around it allowed, as
/// rearrange's). The parts' lengths are the inputs'.
Tensor rearrange(std::span<const Tensor> xs, std::string_view pattern, const AxisLengths& lengths = {});
inline Tensor rearrange(std::initializer_list<Tensor> xs, std::string_view pattern, const AxisLengths& lengths = {}) {
  return rearrange(std::span<const Tensor>(xs.begin(), xs.size()), pattern, lengths);
}
/// Split, the reverse: split(qkv, "b s (q + k + v) -> b s q, b s k, b s v", {{"q", 64}, {"k", 64}})
/// gives one tensor per output, each a view of x where the strides allow (as rearrange). The
/// lengths of all parts but one are given; the last is inferred (all given: they must add up).
std::vector<Tensor> split(const Tensor& x, std::string_view pattern, const AxisLengths& lengths = {},
                          Copy copy = Copy::if_needed);
/// Reductions: "sum", "mean", "max", "min", "prod", "any", "all" (bool), and on floats
/// "var" and "std" (torch.var / torch.std: divided by n - correction, correction 1 by
/// default as torch's; 0 gives the population variance) and "logsumexp" (max-subtracted).
/// `correction` is read by var and std only.
Tensor reduce(const Tensor& x, std::string_view pattern, Reduction reduction,
              const AxisLengths& lengths = {}, std::int64_t correction = 1);
Tensor reduce(const Tensor& x, std::string_view pattern, std::string_view reduction,
              const AxisLengths& lengths = {}, std::int64_t correction = 1);
Tensor repeat(const Tensor& x, std::string_view pattern, const AxisLengths& lengths = {},
              Copy copy = Copy::if_needed);
Tensor einsum(std::span<const Tensor> operands, std::string_view pattern,
              const AxisLengths& lengths = {});
namespace detail {
/// einsum on operands given by pointer: what einsum(x, y, ..., pattern) calls, so that no
/// operand is copied (a Tensor's copy allocates its shape and strides).
Tensor einsum_refs(std::span<const Tensor* const> operands, std::string_view pattern, const AxisLengths& lengths);
}  // namespace detail

/// einsum({x, y}, pattern[, lengths]): operands as a braced list.
inline Tensor einsum(std::initializer_list<Tensor> operands, std::string_view pattern,
                     const AxisLengths& lengths = {}) {
  return einsum(std::span<const Tensor>(operands.begin(), operands.size()), pattern, lengths);
}
/// einsum(x, [y, [z,]] pattern, lengths): up to three operands with axis lengths (braced
/// lengths like {{"h", 8}} work here; for more operands use the braced-list form).
inline Tensor einsum(const Tensor& x, std::string_view pattern, const AxisLengths& lengths) {
  return einsum(std::span<const Tensor>(&x, 1), pattern, lengths);
}
inline Tensor einsum(const Tensor& x, const Tensor& y, std::string_view pattern, const AxisLengths& lengths) {
  const std::array<const Tensor*, 2> operands{&x, &y};
  return detail::einsum_refs(operands, pattern, lengths);
}
inline Tensor einsum(const Tensor& x, const Tensor& y, const Tensor& z, std::string_view pattern,
                     const AxisLengths& lengths) {
  const std::array<const Tensor*, 3> operands{&x, &y, &z};
  return detail::einsum_refs(operands, pattern, lengths);
}

namespace detail {
template <class T>
inline constexpr bool is_tensor_v = std::is_same_v<std::remove_cvref_t<T>, Tensor>;
template <class T>
inline constexpr bool is_pattern_v = std::is_convertible_v<const T&, std::string_view>;
template <class T>
inline constexpr bool is_lengths_v = std::is_same_v<std::remove_cvref_t<T>, AxisLengths>;
template <class... Ts>
using last_t = typename decltype((std::type_identity<Ts>{}, ...))::type;
template <std::size_t N, class... Ts>
using nth_t = std::tuple_element_t<N, std::tuple<Ts...>>;
/// Tensors, then one pattern: einsum(x, y, ..., pattern).
template <class... Args>
concept einsum_args = sizeof...(Args) >= 2 && (is_tensor_v<Args> + ...) == sizeof...(Args) - 1 &&
                      is_pattern_v<last_t<Args...>>;
/// Tensors, a pattern, then AxisLengths: einsum(x, y, ..., pattern, lengths).
template <class... Args>
concept einsum_args_lengths = sizeof...(Args) >= 3 && (is_tensor_v<Args> + ...) == sizeof...(Args) - 2 &&
                              is_pattern_v<nth_t<sizeof...(Args) - 2, Args...>> && is_lengths_v<last_t<Args...>>;
/// A range of tensors (a std::vector<Tensor>, a span), a pattern and maybe AxisLengths.
template <class... Args>
concept einsum_range_args =
    (sizeof...(Args) == 2 || sizeof...(Args) == 3) &&
    std::is_convertible_v<const nth_t<0, Args...>&, std::span<const Tensor>> && is_pattern_v<nth_t<1, Args...>> &&
    (sizeof...(Args) == 2 || is_lengths_v<last_t<Args...>>);
template <class... Args>
concept einsum_call = einsum_args<Args...> || einsum_args_lengths<Args...> || einsum_range_args<Args...>;
template <class...>
inline constexpr bool always_false = false;
}  // namespace detail

/// einsum(x, y, ..., pattern[, lengths]): operands first, the pattern last (einops' order).
template <class... Args>
  requires(detail::einsum_args<Args...> || detail::einsum_args_lengths<Args...>)
Tensor einsum(const Args&... args) {
  constexpr std::size_t n = sizeof...(Args) - (detail::einsum_args<Args...> ? 1 : 2);
  std::array<const Tensor*, n> operands{};
  std::string_view pattern;
  const AxisLengths* lengths = nullptr;
  std::size_t i = 0;
  (
      [&](const auto& arg) {
        using A = std::remove_cvref_t<decltype(arg)>;
        if constexpr (std::is_same_v<A, Tensor>) {
          if (i < n) operands[i] = &arg;
        } else if constexpr (detail::is_lengths_v<A>) {
          lengths = &arg;
        } else {
          pattern = std::string_view(arg);
        }
        ++i;
      }(args),
      ...);
  static const AxisLengths none;
  return detail::einsum_refs(operands, pattern, lengths ? *lengths : none);
}

/// Any other argument list: one short message instead of every overload einsum has.
template <class... Args>
  requires(!detail::einsum_call<Args...>)
Tensor einsum(const Args&...) {
  static_assert(detail::always_false<Args...>,
                "einsum takes (x, y, ..., pattern), (x, y, ..., pattern, lengths), ({x, y, ...}, pattern"
                "[, lengths]) or (std::span/std::vector of Tensors, pattern[, lengths]): Tensors first, "
                "then the pattern (a string), then optionally the AxisLengths");
  return {};
}

/// Elementwise f(x): "relu", "gelu" (torch's approximate='tanh'), "gelu_erf" (torch's default
/// nn.GELU()), "exp", "log", "square", "sqrt", "rsqrt", "neg", "abs", "sigmoid", "tanh",
/// "silu", "reciprocal", "erf", "softplus" (torch's beta=1, threshold=20: x where x > 20).
/// plan.hpp defines each; the CPU's error bounds in ULPs: codegen/lower/cpu/vec_math_bounds.hpp.
Tensor map(const Tensor& x, std::string_view function);
Tensor map(const Tensor& x, UnaryOp function);
/// Elementwise f(x) with a pattern: map(x, "b s h -> b h s", "gelu"). The pattern may
/// permute, split and merge axes around f, as rearrange does ("b (h d) -> b h d" with
/// {{"h", 8}}); every axis is on both sides, so nothing is summed or repeated. The result
/// is a new tensor.
Tensor map(const Tensor& x, std::string_view pattern, std::string_view function, const AxisLengths& lengths = {});
Tensor map(const Tensor& x, std::string_view pattern, UnaryOp function, const AxisLengths& lengths = {});
/// Elementwise f(x, y) with named broadcasting: map(x, b, "b s h, h -> b s h", "add").
/// Functions: "add", "sub", "mul", "div", "maximum", "minimum".
Tensor map(const Tensor& x, const Tensor& y, std::string_view pattern, std::string_view function);
Tensor map(const Tensor& x, const Tensor& y, std::string_view pattern, BinaryOp function);

/// A number as an operand (a 0-d tensor of the other operand's dtype and device):
/// map(x, 0.125, "b h s t, -> b h s t", "mul"), map(1.0, x, ", b d -> b d", "sub").
Tensor map(const Tensor& x, double y, std::string_view pattern, std::string_view function);
Tensor map(double x, const Tensor& y, std::string_view pattern, std::string_view function);
Tensor map(const Tensor& x, double y, std::string_view pattern, BinaryOp function);
Tensor map(double x, const Tensor& y, std::string_view pattern, BinaryOp function);
/// The 0-d tensor a number becomes beside `like`: its dtype and device.
Tensor scalar_like(double value, const Tensor& like);

// ---- indexed ops: einx's notation, the indexed axis of the first operand in brackets ----
/// get_at(wte, tokens, "[v] d, b s -> b s d"): the table's rows at integer indices (i64 or i32),
/// an embedding lookup; "b [n] d, b k -> b k d" gathers per batch. An index outside the axis
/// (negative ones included) is an IndexError naming its position and value; nothing is written.
Tensor get_at(const Tensor& table, const Tensor& indices, std::string_view pattern, const AxisLengths& lengths = {});
/// add_at(table, indices, updates, "[v] d, b s, b s d -> [v] d"): a new tensor, the table with
/// each update added at its index (repeated indices add up): get_at's gradient.
Tensor add_at(const Tensor& table, const Tensor& indices, const Tensor& updates, std::string_view pattern,
              const AxisLengths& lengths = {});
/// cross_entropy(logits, targets, "b s [v], b s -> b s"): the loss per position, lse(logits) -
/// logits[target], torch's F.cross_entropy(reduction='none'); a target equal to ignore_index
/// gives 0. Fused: no log-probabilities are materialized; reduced floats accumulate in f32.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, std::string_view pattern,
                     std::int64_t ignore_index = -100, const AxisLengths& lengths = {});

/// dropout(x, p, seed): x with each element zeroed with probability p and the others scaled by
/// 1/(1-p), torch's F.dropout in training. The mask is drawn from the seed alone (SplitMix64,
/// codegen/random.hpp): the same on the CPU and the GPU, any thread count, any layout of x; p = 0
/// returns x itself. Error for p outside [0, 1), DTypeError for a non-float x.
Tensor dropout(const Tensor& x, double p, std::int64_t seed);

// ---- normalizations along named axes: the axes they work along in brackets (einx's notation) ----
/// softmax(x, "b h q [k]"): exp(x - m) / sum exp(x - m) along k, m the maximum (so no
/// overflow), reading x once. Several bracketed axes ("b [h w] c", "[b] h [w]") normalize
/// along all of them together; "... [d]" along the last dim of any rank. The result has x's
/// shape and dtype (floats only); a row with NaN or +inf gives NaN, as torch.
Tensor softmax(const Tensor& x, std::string_view pattern, const AxisLengths& lengths = {});
/// x - m - log(sum exp(x - m)) along the bracketed axes.
Tensor log_softmax(const Tensor& x, std::string_view pattern, const AxisLengths& lengths = {});
/// (x - mean) / sqrt(var + eps) along the bracketed axes: torch's layer_norm without its
/// affine part. var is the population variance (correction 0, as torch's layer_norm), eps
/// 1e-5 by default as torch.
Tensor layer_norm(const Tensor& x, std::string_view pattern, double eps = 1e-5, const AxisLengths& lengths = {});
/// With the affine part: · gain + bias, both shaped as x's bracketed dims in order (torch's
/// weight and bias over normalized_shape): layer_norm(x, g, b, "b s [d]"). One plan, whose
/// backward keeps x only (dg = sum(dY · x̂) makes x̂ again).
Tensor layer_norm(const Tensor& x, const Tensor& gain, const Tensor& bias, std::string_view pattern, double eps = 1e-5,
                  const AxisLengths& lengths = {});
/// x / sqrt(mean(x²) + eps) along the bracketed axes (RMSNorm without its scale); eps 1e-6 by
/// default (LLaMA's; torch's nn.RMSNorm, newer than torch 1.13, defaults to the dtype's epsilon).
Tensor rms_norm(const Tensor& x, std::string_view pattern, double eps = 1e-6, const AxisLengths& lengths = {});
/// With its gain (shaped as x's bracketed dims): rms_norm(x, g, "b s [d]"), LLaMA's RMSNorm.
Tensor rms_norm(const Tensor& x, const Tensor& gain, std::string_view pattern, double eps = 1e-6,
                const AxisLengths& lengths = {});
/// Any of the four by value; eps is read by layer_norm and rms_norm only (their defaults above
/// are default_eps(kind), plan.hpp).
Tensor normalize(const Tensor& x, std::string_view pattern, Normalization kind, double eps = 0,
                 const AxisLengths& lengths = {});

// ---- any op, as data ----
/// The op `spec` describes (OpSpec: the op's options and the axis lengths) on `inputs` with
/// `pattern`: apply(OpSpec::reduce(Reduction::mean), {x}, "b s h -> b h") is reduce(x, "b s h ->
/// b h", "mean"). Each named function above is this with its spec; the command line runs
/// every op of the registry through it.
Tensor apply(const OpSpec& spec, std::span<const Tensor> inputs, std::string_view pattern);
inline Tensor apply(const OpSpec& spec, std::initializer_list<Tensor> inputs, std::string_view pattern) {
  return apply(spec, std::span<const Tensor>(inputs.begin(), inputs.size()), pattern);
}

// ---- out-parameter forms: write into a tensor the caller owns (same shape and dtype) ----
void rearrange_into(Tensor& out, const Tensor& x, std::string_view pattern,
                    const AxisLengths& lengths = {});
void reduce_into(Tensor& out, const Tensor& x, std::string_view pattern, Reduction reduction,
                 const AxisLengths& lengths = {}, std::int64_t correction = 1);
void repeat_into(Tensor& out, const Tensor& x, std::string_view pattern,
                 const AxisLengths& lengths = {});
void einsum_into(Tensor& out, std::span<const Tensor> operands, std::string_view pattern,
                 const AxisLengths& lengths = {});
inline void einsum_into(Tensor& out, std::initializer_list<Tensor> operands, std::string_view pattern,
                        const AxisLengths& lengths = {}) {
  einsum_into(out, std::span<const Tensor>(operands.begin(), operands.size()), pattern, lengths);
}
void normalize_into(Tensor& out, const Tensor& x, std::string_view pattern, Normalization kind, double eps = 0,
                    const AxisLengths& lengths = {});
void map_into(Tensor& out, const Tensor& x, UnaryOp function);
void map_into(Tensor& out, const Tensor& x, std::string_view pattern, UnaryOp function,
              const AxisLengths& lengths = {});
void map_into(Tensor& out, const Tensor& x, const Tensor& y, std::string_view pattern, BinaryOp function);

// ---- einops' pack, unpack, parse_shape ----
/// Packs tensors along the "*" of `pattern` ("i j * k"): returns the packed tensor and, per
/// input, the shape its "*" stood for (to give back to unpack).
std::pair<Tensor, std::vector<Shape>> pack(std::span<const Tensor> tensors, std::string_view pattern);
inline std::pair<Tensor, std::vector<Shape>> pack(std::initializer_list<Tensor> tensors, std::string_view pattern) {
  return pack(std::span<const Tensor>(tensors.begin(), tensors.size()), pattern);
}
/// Splits `packed` along the "*" of `pattern` into tensors whose "*" parts have the given
/// shapes (one entry may contain -1). The results are views of `packed`.
std::vector<Tensor> unpack(const Tensor& packed, std::span<const Shape> shapes,
                           std::string_view pattern);
/// {{"b", 2}, {"h", 4}} for parse_shape(x, "b _ h") on a (2, 3, 4) tensor; "_" skips a dim.
AxisLengths parse_shape(const Tensor& x, std::string_view pattern);

// ---- compiled expressions, for hot loops ----
/// An expression parsed and checked once; calls look up the program by the inputs'
/// layouts in a small cache of their own, with no global cache lookup.
class Compiled {
 public:
  Compiled(Op op, std::string_view pattern, AxisLengths lengths = {},
           Reduction reduction = Reduction::sum, Copy copy = Copy::if_needed);
  /// Any op the planner takes, maps included (an empty pattern: a map of one argument in
  /// the input's layout).
  Compiled(OpSpec spec, std::string_view pattern);
  ~Compiled();
  Compiled(Compiled&&) noexcept;
  Compiled& operator=(Compiled&&) noexcept;

  Tensor run(std::span<const Tensor> inputs) const;
  /// The same, on tensors given by pointer (nothing copied).
  Tensor run(std::span<const Tensor* const> inputs) const;
  template <class... Ts>
    requires(detail::is_tensor_v<Ts> && ...)
  Tensor operator()(const Ts&... inputs) const {
    const std::array<const Tensor*, sizeof...(Ts)> array{&inputs...};
    return run(std::span<const Tensor* const>(array));
  }
  /// The plan for inputs of these layouts (planned on the first call).
  const Plan& plan(std::span<const Tensor> inputs) const;
  const std::string& pattern() const noexcept;
  const OpSpec& spec() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

Compiled compile_einsum(std::string_view pattern, AxisLengths lengths = {});
Compiled compile_rearrange(std::string_view pattern, AxisLengths lengths = {},
                           Copy copy = Copy::if_needed);
Compiled compile_reduce(std::string_view pattern, Reduction reduction, AxisLengths lengths = {},
                        std::int64_t correction = 1);
/// map(x, pattern, function) / map(x, y, pattern, function), compiled.
Compiled compile_map(std::string_view pattern, UnaryOp function, AxisLengths lengths = {});
Compiled compile_map(std::string_view pattern, BinaryOp function, AxisLengths lengths = {});
Compiled compile_repeat(std::string_view pattern, AxisLengths lengths = {},
                        Copy copy = Copy::if_needed);

// ---- the caches, observable ----
struct EngineStats {
  std::uint64_t parses = 0;     // patterns parsed (pattern-cache misses)
  std::uint64_t plans = 0;      // plans built
  std::uint64_t lowerings = 0;  // programs lowered
  CacheStats pattern_cache;
  CacheStats program_cache;
};
EngineStats engine_stats();
/// Empties the pattern and program caches (the counters keep counting).
void clear_caches();

}  // namespace einexpr
