#pragma once
// The one axis environment of a program (private to codegen/program): every axis's length
// and where that length comes from, so that a disagreement can name both places.
//
//   axes B=1024 D=256          B=1024 (line 2), D=256 (line 2)
//   ProgramOptions::axes B=64  B=64 (given as B=64)
//   given x.npy [32, 256]      x: B D binds B=32 (x.npy)
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "einexpr/codegen/program_plan.hpp"

namespace einexpr::program_detail {

struct AxisValue {
  std::int64_t length = 0;
  std::string origin;   // "line 2", "given as B=64", "x.npy"
  ast::Source source;   // the definition in the program text
  bool fixed = false;   // given from outside (an override or a given tensor's shape)
};

class Environment {
 public:
  /// The program's definitions, then the overrides, then the given tensors' shapes.
  Environment(const ast::Program& program, const ProgramOptions& options);

  const AxisValue& at(const std::string& axis) const;
  std::int64_t length(const std::string& axis) const { return at(axis).length; }
  /// Every axis, in definition order.
  AxisLengths lengths() const;

  /// The shape and dtype of a declared tensor: its dims' lengths; the given dtype, else
  /// its own, else `fallback`. ProgramError if a given tensor disagrees with it.
  Shape shape_of(const ast::TensorDecl& decl) const;
  DType dtype_of(const ast::TensorDecl& decl, DType fallback) const;

 private:
  void override_axes(const AxisLengths& axes);
  void bind_given(const GivenTensor& given);
  void infer_factors(const std::vector<GivenTensor>& given);
  void check_given(const GivenTensor& given) const;
  const ast::TensorDecl& declaration(const std::string& name) const;

  const ast::Program& program_;
  std::vector<std::string> order_;
  std::map<std::string, AxisValue, std::less<>> axes_;
  std::map<std::string, const GivenTensor*, std::less<>> given_;
};

/// "B", "(H K)": a declared dim as written.
std::string dim_text(const ast::Dim& dim);
/// "B S (H K)": a declaration's dims as written.
std::string dims_text(const ast::TensorDecl& decl);
/// The product of a declared dim's axes ("(H K)": H·K).
std::int64_t dim_length(const ast::Dim& dim, const Environment& env);

}  // namespace einexpr::program_detail
