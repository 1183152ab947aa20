// The model language's op table and function names against the rest of einexpr: the
// parser may not include codegen, so it keeps its own lists of reduction and function names
// (parser/ops.cpp); these tests fail when codegen gains a name the parser lacks, or
// the other way round.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/parser/ops.hpp"

using namespace einexpr;

namespace {

/// Every name of an enum whose name() says "?" past its last value.
template <typename Enum>
std::vector<std::string_view> enum_names() {
  std::vector<std::string_view> names;
  for (unsigned v = 0; v < 256; ++v) {
    const std::string_view n = name(static_cast<Enum>(v));
    if (n == "?") break;
    names.push_back(n);
  }
  return names;
}

std::vector<std::string_view> as_vector(std::span<const std::string_view> s) { return {s.begin(), s.end()}; }

}  // namespace

TEST_CASE("program names: the function names are codegen's", "[program]") {
  CHECK(as_vector(reduction_names()) == enum_names<Reduction>());
  CHECK(as_vector(unary_function_names()) == enum_names<UnaryOp>());
  CHECK(as_vector(binary_function_names()) == enum_names<BinaryOp>());
  for (std::string_view n : reduction_names()) CHECK(name(parse_reduction(n)) == n);
  for (std::string_view n : unary_function_names()) CHECK(name(parse_unary_op(n)) == n);
  for (std::string_view n : binary_function_names()) CHECK(name(parse_binary_op(n)) == n);
}

TEST_CASE("program names: the op table", "[program]") {
  std::vector<std::string> names;
  for (const OpRow& row : op_rows()) {
    CAPTURE(row.name);
    names.emplace_back(row.name);
    if (row.op == Op::normalize)  // the name is the normalization, codegen's name for it
      CHECK(row.name == name(parse_normalization(row.name)));
    else
      CHECK(row.name == name(row.op));  // a statement's op prints as it is written
    CHECK(find_op_row(row.name) == &row);
    CHECK(&op_row(row.name) == &row);
    CHECK(row.min_inputs >= 1);
    CHECK(row.min_inputs <= row.max_inputs);
  }
  CHECK(names == std::vector<std::string>{"einsum", "rearrange", "reduce", "repeat", "map", "softmax", "log_softmax",
                                          "layer_norm", "rms_norm", "get_at", "add_at", "cross_entropy", "pack", "unpack",
                                          "dropout"});
  CHECK(op_row_names() ==
        "einsum, rearrange, reduce, repeat, map, softmax, log_softmax, layer_norm, rms_norm, get_at, add_at, "
        "cross_entropy, pack, unpack, dropout");
  // Every Op has a row, and op_row(op) finds its first.
  for (Op op : all_ops) CHECK(op_row(op).op == op);
  CHECK(op_row(Op::normalize).name == "softmax");
  // The indexed ops name their index operand, dropout its seed; the others have none.
  for (const OpRow& row : op_rows())
    CHECK((row.index_operand >= 0) ==
          (row.op == Op::get_at || row.op == Op::add_at || row.op == Op::cross_entropy || row.op == Op::dropout));
  CHECK(find_op_row("normalize") == nullptr);
  CHECK_THROWS_AS(op_row("normalize"), einexpr::InternalError);
  CHECK(find_op_row("") == nullptr);
}
