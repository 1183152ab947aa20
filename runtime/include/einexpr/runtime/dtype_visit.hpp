#pragma once
// visit_dtype: one switch from a DType to its storage type, for the kernels of every
// backend (codegen/lower/cpu, codegen/lower/cuda, runtime/cuda). f(StorageTag<S>{}) gets S as
// `typename decltype(tag)::type`.
#include <cstdint>
#include <utility>

#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

template <class T>
struct StorageTag {
  using type = T;
};

/// Calls f(StorageTag<S>{}) with S the storage type of `dtype`: double, float, half_t,
/// bfloat16_t, float8_e4m3_t, float8_e5m2_t, std::int64_t, std::int32_t, bool_t.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f64: return std::forward<F>(f)(StorageTag<double>{});
    case DType::f32: return std::forward<F>(f)(StorageTag<float>{});
    case DType::f16: return std::forward<F>(f)(StorageTag<half_t>{});
    case DType::bf16: return std::forward<F>(f)(StorageTag<bfloat16_t>{});
    case DType::f8_e4m3: return std::forward<F>(f)(StorageTag<float8_e4m3_t>{});
    case DType::f8_e5m2: return std::forward<F>(f)(StorageTag<float8_e5m2_t>{});
    case DType::i64: return std::forward<F>(f)(StorageTag<std::int64_t>{});
    case DType::i32: return std::forward<F>(f)(StorageTag<std::int32_t>{});
    case DType::boolean: return std::forward<F>(f)(StorageTag<bool_t>{});
  }
  throw InternalError("visit_dtype: unknown dtype", __FILE__, __LINE__);
}

}  // namespace einexpr
