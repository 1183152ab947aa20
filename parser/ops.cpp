// The op registry's rows (einexpr/parser/ops.hpp) and the function names calls accept.
#include "einexpr/parser/ops.hpp"

#include "einexpr/parser/check.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {
namespace {

constexpr std::size_t many = max_einsum_operands;

// clang-format off
constexpr OpRow rows[] = {
    // name          op                 tensors  grammar             string after the pattern  index
    {"einsum",        Op::einsum,        1, many, Grammar::plain,     FunctionArg::none,        -1,
     "contractions, numpy's einsum with named axes"},
    {"rearrange",     Op::rearrange,     1, many, Grammar::plain,     FunctionArg::none,        -1,
     "permute, split, merge axes; concatenate several tensors '(a + b)' or split one"},
    {"reduce",        Op::reduce,        1, 1,    Grammar::plain,     FunctionArg::reduction,   -1,
     "sum, mean, max, ... over the axes the output lacks"},
    {"repeat",        Op::repeat,        1, 1,    Grammar::plain,     FunctionArg::none,        -1,
     "broadcast along new axes"},
    {"map",           Op::map,           1, 2,    Grammar::plain,     FunctionArg::elementwise, -1,
     "an elementwise function of one tensor or two (named broadcasting)"},
    // normalizations along the pattern's bracketed axes: softmax(s, "B H S [T]")
    {"softmax",       Op::normalize,     1, 1,    Grammar::bracketed, FunctionArg::none,        -1,
     "softmax along the bracketed axes"},
    {"log_softmax",   Op::normalize,     1, 1,    Grammar::bracketed, FunctionArg::none,        -1,
     "log_softmax along the bracketed axes"},
    // layer_norm(x, g, b, "B S [D]") and rms_norm(x, g, "B S [D]"): the affine part's gain and
    // bias over the bracketed axes, in their order (the pattern names x alone)
    {"layer_norm",    Op::normalize,     1, 3,    Grammar::bracketed, FunctionArg::none,        -1,
     "layer normalization along the bracketed axes, then a gain and a bias over them if given"},
    {"rms_norm",      Op::normalize,     1, 2,    Grammar::bracketed, FunctionArg::none,        -1,
     "RMS normalization along the bracketed axes, then a gain over them if given"},
    // indexed ops: the indexed axis in brackets, the indices an integer tensor
    {"get_at",        Op::get_at,        2, 2,    Grammar::indexed,   FunctionArg::none,        1,
     "gather rows at integer indices (an embedding lookup)"},
    {"add_at",        Op::add_at,        3, 3,    Grammar::indexed,   FunctionArg::none,        1,
     "scatter-add updates at integer indices (get_at's gradient)"},
    {"cross_entropy", Op::cross_entropy, 2, 2,    Grammar::indexed,   FunctionArg::none,        1,
     "per-position cross-entropy of logits against integer targets, fused"},
    // einops' pack and unpack: "i j * k", the "*" standing for each tensor's own dims
    {"pack",          Op::pack,          1, many, Grammar::packed,    FunctionArg::none,        -1,
     "join tensors along the dims their '*' stands for (einops.pack)"},
    {"unpack",        Op::unpack,        1, 1,    Grammar::packed,    FunctionArg::none,        -1,
     "split a packed tensor back into tensors of the given '*' shapes (einops.unpack)"},
    // dropout(x, seed, "b s d, -> b s d"): the seed a 0-d i64; in a model file dropout(x, 0.1)
    {"dropout",       Op::dropout,       2, 2,    Grammar::plain,     FunctionArg::none,        1,
     "zero each element with probability p, scale the rest by 1/(1-p) (a seeded random mask)"},
};

constexpr std::string_view reductions[] = {"sum", "mean", "max", "min", "prod", "any", "all",
                                           "var", "std", "logsumexp"};
constexpr std::string_view unary[] = {"relu", "gelu", "exp", "log", "square", "sqrt", "rsqrt",
                                      "neg", "abs", "sigmoid", "tanh", "silu", "reciprocal",
                                      "gelu_erf", "erf", "softplus"};
constexpr std::string_view binary[] = {"add", "sub", "mul", "div", "maximum", "minimum"};
// clang-format on

/// Every Op has a row: checked once at compile time.
constexpr bool every_op_has_a_row() {
  for (Op op : all_ops) {
    bool found = false;
    for (const OpRow& row : rows) found = found || row.op == op;
    if (!found) return false;
  }
  return true;
}
static_assert(every_op_has_a_row(), "an Op without a row in parser/ops.cpp");

}  // namespace

std::span<const OpRow> op_rows() noexcept { return rows; }

const OpRow* find_op_row(std::string_view name) noexcept {
  for (const OpRow& row : rows)
    if (row.name == name) return &row;
  return nullptr;
}

const OpRow& op_row(std::string_view name) {
  if (const OpRow* row = find_op_row(name)) return *row;
  throw InternalError("no op named '" + std::string(name) + "'", __FILE__, __LINE__);
}

const OpRow& op_row(Op op) noexcept {
  for (const OpRow& row : rows)
    if (row.op == op) return row;
  return rows[0];  // unreachable: every_op_has_a_row
}

std::string op_row_names() {
  std::string s;
  for (const OpRow& row : rows) s += (s.empty() ? "" : ", ") + std::string(row.name);
  return s;
}

ast::Pattern parse_with(Grammar grammar, std::string_view text) {
  switch (grammar) {
    case Grammar::plain: return parse(text);
    case Grammar::bracketed: return parse_bracketed(text);
    case Grammar::indexed: return parse_indexed(text);
    case Grammar::packed: return pack_as_pattern(parse_pack(text));
  }
  throw InternalError("parse_with: unknown grammar", __FILE__, __LINE__);
}

ast::Pattern parse_pattern(Op op, std::string_view text) {
  ast::Pattern p = parse_with(op_row(op).grammar, text);
  check(p, op);
  return p;
}

std::span<const std::string_view> reduction_names() noexcept { return reductions; }
std::span<const std::string_view> unary_function_names() noexcept { return unary; }
std::span<const std::string_view> binary_function_names() noexcept { return binary; }

}  // namespace einexpr
