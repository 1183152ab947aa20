#pragma once
// Plans built by hand for cost tests, while the planners are elsewhere: each value's dims
// are written as a pattern side ("b s h", "(h d)", "()", "3"), their lengths come from a
// size table, and the builder makes views, copies, contractions, reductions and maps.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/layout.hpp"

namespace cost_test {

using Sizes = std::map<std::string, std::int64_t>;

class PlanBuilder {
 public:
  PlanBuilder(const std::string& op, std::string pattern, einexpr::DType dtype, Sizes sizes) : sizes_(std::move(sizes)) {
    for (einexpr::Op o : {einexpr::Op::rearrange, einexpr::Op::reduce, einexpr::Op::repeat, einexpr::Op::einsum,
                          einexpr::Op::map})
      if (op == einexpr::name(o)) plan_.op = o;
    plan_.pattern = std::move(pattern);
    plan_.dtype = dtype;
  }

  /// A contiguous input with these dims (inputs come before any step).
  int input(const std::string& dims) { return input(dims, {}); }
  /// An input with explicit strides (0: broadcast); empty strides: contiguous.
  int input(const std::string& dims, einexpr::Strides strides) {
    const auto axes = parse(dims);
    einexpr::Shape shape = lengths(axes);
    if (strides.empty()) strides = einexpr::contiguous_strides(shape);
    plan_.buffers.push_back({plan_.num_inputs, 0, plan_.dtype});
    plan_.num_inputs += 1;
    return add({static_cast<int>(plan_.buffers.size()) - 1, {shape, strides, 0}, axes});
  }
  /// A view of src's buffer with other dims (row-major strides of the new shape, or the
  /// given ones); src itself when the dims are the same.
  int view(int src, const std::string& dims, einexpr::Strides strides = {}) {
    const auto axes = parse(dims);
    if (axes == value(src).dims && strides.empty()) return src;
    einexpr::Shape shape = lengths(axes);
    if (strides.empty()) strides = einexpr::contiguous_strides(shape);
    const int dst = add({value(src).buffer, {shape, strides, 0}, axes});
    plan_.steps.push_back(einexpr::ViewStep{src, dst});
    return dst;
  }
  /// A copy of src into a new contiguous buffer.
  int copy(int src) {
    const int dst = temp(value(src).dims);
    plan_.steps.push_back(einexpr::CopyStep{src, dst});
    return dst;
  }
  /// dst[batch.., m, n] = sum_k a[batch.., m, k] b[batch.., k, n]; a and b are viewed as
  /// those dims first (each of m, k, n is one dim: "i", "(b i)", "()").
  int contract(int a, int b, const std::string& batch, const std::string& m, const std::string& k,
               const std::string& n) {
    const std::string prefix = batch.empty() ? "" : batch + " ";
    const int va = view(a, prefix + m + " " + k), vb = view(b, prefix + k + " " + n);
    const int dst = temp(parse(prefix + m + " " + n));
    const int nb = static_cast<int>(parse(batch).size());
    std::vector<einexpr::AxisId> summed;
    for (const einexpr::DimAxes& dim : parse(k)) summed.insert(summed.end(), dim.begin(), dim.end());
    plan_.steps.push_back(einexpr::ContractStep{
        va, vb, dst, nb, nb == 0 ? einexpr::ContractStep::Kind::gemm : einexpr::ContractStep::Kind::batched_gemm,
        summed});
    return dst;
  }
  int reduce(int src, einexpr::Reduction op, std::vector<int> dims) {
    std::vector<einexpr::DimAxes> kept;
    for (std::size_t d = 0; d < value(src).dims.size(); ++d)
      if (std::find(dims.begin(), dims.end(), static_cast<int>(d)) == dims.end()) kept.push_back(value(src).dims[d]);
    const int dst = temp(kept);
    plan_.steps.push_back(einexpr::ReduceStep{src, dst, op, std::move(dims)});
    return dst;
  }
  int map(einexpr::UnaryOp op, int src) {
    const int dst = temp(value(src).dims);
    plan_.steps.push_back(einexpr::MapStep{{src}, dst, op});
    return dst;
  }
  int map(einexpr::BinaryOp op, int a, int b) {
    const int dst = temp(value(a).dims);
    plan_.steps.push_back(einexpr::MapStep{{a, b}, dst, op});
    return dst;
  }
  einexpr::Plan finish(int output) {
    plan_.output = output;
    return plan_;
  }
  const einexpr::Value& value(int v) const { return plan_.values.at(static_cast<std::size_t>(v)); }

  /// "b (h d) ()" -> {{b}, {h, d}, {}} as axis ids of the plan's table (a number: a new
  /// anonymous axis of that length).
  std::vector<einexpr::DimAxes> parse(const std::string& dims) {
    std::vector<einexpr::DimAxes> out;
    std::string spaced;
    for (char c : dims) spaced += c == '(' ? std::string(" ( ") : c == ')' ? std::string(" ) ") : std::string(1, c);
    std::istringstream in(spaced);
    bool group = false;
    for (std::string tok; in >> tok;) {
      if (tok == "(") {
        out.emplace_back();
        group = true;
      } else if (tok == ")") {
        group = false;
      } else if (group) {
        out.back().push_back(id(tok));
      } else {
        out.push_back({id(tok)});
      }
    }
    return out;
  }

 private:
  einexpr::AxisId id(const std::string& token) {
    if (std::isdigit(static_cast<unsigned char>(token[0])))
      return plan_.axes.add({token, std::stoll(token), einexpr::AxisKind::anonymous});
    return plan_.axes.named(token, sizes_.at(token));
  }
  einexpr::Shape lengths(const std::vector<einexpr::DimAxes>& axes) const {
    einexpr::Shape shape;
    for (const einexpr::DimAxes& axis : axes) shape.push_back(plan_.axes.product(axis));
    return shape;
  }
  int temp(std::vector<einexpr::DimAxes> axes) {
    einexpr::Shape shape = lengths(axes);
    plan_.buffers.push_back({-1, einexpr::checked_numel(shape), plan_.dtype});
    einexpr::Layout layout = einexpr::Layout::contiguous(shape);
    return add({static_cast<int>(plan_.buffers.size()) - 1, layout, std::move(axes)});
  }
  int add(einexpr::Value v) {
    plan_.values.push_back(std::move(v));
    return static_cast<int>(plan_.values.size()) - 1;
  }

  einexpr::Plan plan_;
  Sizes sizes_;
};

}  // namespace cost_test
