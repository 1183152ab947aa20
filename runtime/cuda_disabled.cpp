// Built only without CUDA: every CUDA entry point says so.
#include "backend.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::backend {

namespace {
[[noreturn]] void no_cuda() { throw DeviceError("einexpr was built without CUDA"); }
}  // namespace

int cuda_device_count() noexcept { return 0; }
Allocator& cuda_allocator(int) { no_cuda(); }
void cuda_copy(void*, Device, const void*, Device, std::size_t) { no_cuda(); }
void cuda_synchronize(int) { no_cuda(); }
void cuda_copy_strided(int, void*, const Layout&, const void*, const Layout&, std::size_t) { no_cuda(); }
void cuda_convert_strided(int, void*, const Layout&, DType, const void*, const Layout&, DType) { no_cuda(); }
void cuda_fill(int, void*, const void*, std::size_t, std::size_t) { no_cuda(); }

}  // namespace einexpr::backend
