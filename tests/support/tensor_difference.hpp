#pragma once
// max |a - b| / max |b| over two tensors of one shape, in f64 (max |a - b| where b is all
// zeros): how far a result is from its reference, relative to the reference's largest element.
#include <algorithm>
#include <cmath>

#include "einexpr/runtime/tensor.hpp"

namespace test {

inline double max_relative_difference(const einexpr::Tensor& a, const einexpr::Tensor& b) {
  const einexpr::Tensor x = a.to(einexpr::DType::f64).contiguous(), y = b.to(einexpr::DType::f64).contiguous();
  double diff = 0, size = 0;
  for (std::int64_t i = 0; i < y.numel(); ++i) {
    diff = std::max(diff, std::abs(x.data<double>()[i] - y.data<double>()[i]));
    size = std::max(size, std::abs(y.data<double>()[i]));
  }
  return size > 0 ? diff / size : diff;
}

}  // namespace test
