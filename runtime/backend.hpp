#pragma once
// Private: the runtime's entry points into CUDA. Implemented by cuda/*.cpp|cu in CUDA
// builds and by cuda_disabled.cpp otherwise (which throws DeviceError, or returns 0).
#include <cstddef>

#include "einexpr/runtime/device.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/storage.hpp"

namespace einexpr::backend {

int cuda_device_count() noexcept;
/// The caching allocator of CUDA device `index`.
Allocator& cuda_allocator(int index);
/// A copy between any two places, at least one of them a GPU (through the device's stream).
void cuda_copy(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes);
void cuda_synchronize(int index);
/// On GPU `index`: dst[i] = src[i] over two strided views of the same shape (offsets
/// relative to the base pointers).
void cuda_copy_strided(int index, void* dst, const Layout& dst_layout, const void* src,
                       const Layout& src_layout, std::size_t element_size);
/// On GPU `index`: dst[i] = convert(src[i]) over two strided views of the same shape.
void cuda_convert_strided(int index, void* dst, const Layout& dst_layout, DType dst_dtype,
                          const void* src, const Layout& src_layout, DType src_dtype);
/// On GPU `index`: n contiguous elements of element_size bytes set to *element (host).
void cuda_fill(int index, void* dst, const void* element, std::size_t element_size, std::size_t n);

}  // namespace einexpr::backend
