#include "device_context.hpp"

#include <memory>
#include <mutex>
#include <string>

#include "cuda_check.hpp"
#include "einexpr/runtime/error.hpp"
#include "owners.hpp"

namespace einexpr::gpu {

namespace {

struct DeviceState {
  std::once_flag once;
  OwnedStream stream;
  cudaDeviceProp props{};
};

struct Devices {
  int count = device_count();
  std::unique_ptr<DeviceState[]> states{new DeviceState[static_cast<std::size_t>(count > 0 ? count : 1)]};
};

Devices& devices() {
  static Devices* d = new Devices();  // never destroyed: see device_context.hpp
  return *d;
}

DeviceState& state(int index) {
  check_device(index);
  DeviceState& s = devices().states[static_cast<std::size_t>(index)];
  std::call_once(s.once, [&] {  // if this throws, the next call tries again
    DeviceGuard guard(index);
    EINEXPR_CUDA_CHECK(cudaGetDeviceProperties(&s.props, index));
    cudaStream_t created = nullptr;
    EINEXPR_CUDA_CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));
    s.stream.reset(created);
  });
  return s;
}

}  // namespace

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no GPU: not an error for us
    return 0;
  }
  return n;
}

void check_device(int index) {
  const int n = devices().count;
  if (index < 0 || index >= n)
    throw DeviceError("cuda:" + std::to_string(index) + " does not exist (" + std::to_string(n) +
                      (n == 1 ? " CUDA device is" : " CUDA devices are") + " visible)");
}

DeviceGuard::DeviceGuard(int index) {
  EINEXPR_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != index) EINEXPR_CUDA_CHECK(cudaSetDevice(index));
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_ && previous_ >= 0)
    (void)cudaSetDevice(previous_);
}

cudaStream_t stream(int index) { return state(index).stream.get(); }

const cudaDeviceProp& properties(int index) { return state(index).props; }

int compute_capability(int index) {
  const cudaDeviceProp& p = properties(index);
  return p.major * 10 + p.minor;
}

}  // namespace einexpr::gpu
