#pragma once
// Runs one op on inputs of every dtype and layout and compares it with the reference.
#include <catch2/catch.hpp>

#include <functional>
#include <vector>

#include "reference.hpp"

namespace testing_support {

using einexpr::DType;
using einexpr::Shape;
using einexpr::Tensor;

inline const std::vector<DType> float_dtypes = {DType::f32, DType::f64, DType::bf16};
inline const std::vector<DType> all_numeric = {DType::f32, DType::f64, DType::bf16, DType::i64};
inline const std::vector<reference::Layout> all_layouts = {reference::Layout::contiguous, reference::Layout::transposed,
                                                           reference::Layout::sliced, reference::Layout::broadcast};

/// For each dtype and layout: inputs of `shapes`, run(inputs) vs want(inputs), within the
/// dtype's tolerance for `terms` terms per output element (0 for exact ops).
inline void check_against_reference(const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
                                    std::int64_t terms,
                                    const std::function<Tensor(const std::vector<Tensor>&)>& run,
                                    const std::function<reference::Result(const std::vector<Tensor>&)>& want) {
  std::uint64_t seed = 1;
  for (DType dtype : dtypes) {
    for (reference::Layout layout : all_layouts) {
      std::vector<Tensor> inputs;
      for (const Shape& s : shapes) inputs.push_back(reference::make_input(s, dtype, layout, seed++));
      CAPTURE(einexpr::name(dtype), reference::name(layout));
      const Tensor got = run(inputs);
      CHECK(got.dtype() == dtype);
      const reference::Result expected = want(inputs);
      REQUIRE(got.shape() == expected.shape);
      const double err = reference::max_rel_error(got, expected);
      const double tol = terms == 0 ? 0.0 : reference::tolerance(dtype, terms);
      CHECK(err <= tol);
    }
  }
}

}  // namespace testing_support
