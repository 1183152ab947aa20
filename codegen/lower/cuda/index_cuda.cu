// The indexed ops' steps on the GPU, by the CPU's rules (codegen/lower/cpu/index_cpu.cpp):
//   fill          one value in every element
//   check         the indices first: the first (lowest linear position) outside [0, length)
//                 found by atomicMin, copied back (the stream waits for it), IndexError before
//                 anything is written
//   gather        one thread an output element: dst = src[index · stride]
//   scatter-add   one thread an update, added with an atomic (f16, bf16 and fp8 by a
//                 compare-and-swap on their 32-bit word): repeated indices add in any order
//   cross-entropy one block a row: the row's max and sum of exp by block reductions (f32, f64
//                 for f64), lse = max + log(sum); forward one loss, backward the whole row
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../../runtime/cuda/element.cuh"
#include "../../../runtime/cuda/indexing.cuh"
#include "cuda_check.hpp"
#include "einexpr/runtime/strided.hpp"
#include "kernels.hpp"

namespace einexpr::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 4;

template <int N>
StridedPart<N> collapsed(const std::array<const Layout*, N>& layouts) {
  std::vector<const Strides*> strides;
  for (const Layout* l : layouts) strides.push_back(&l->strides);
  const CollapsedDims c = collapse_dims(layouts[0]->shape, strides);
  StridedPart<N> part;
  part.shape = c.shape;
  for (int v = 0; v < N; ++v) {
    part.strides[static_cast<std::size_t>(v)] = c.strides[static_cast<std::size_t>(v)];
    part.base[static_cast<std::size_t>(v)] = layouts[static_cast<std::size_t>(v)]->offset;
  }
  return part;
}

/// Calls f(Tag) with an unsigned type of `bytes` bytes (elements moved bit for bit).
template <class F>
void visit_bits(std::size_t bytes, F&& f) {
  switch (bytes) {
    case 1: f(std::uint8_t{}); return;
    case 2: f(std::uint16_t{}); return;
    case 4: f(std::uint32_t{}); return;
    default: f(std::uint64_t{}); return;
  }
}

template <class I>
__device__ __forceinline__ std::int64_t load_index(const std::byte* base, std::int64_t off) {
  return static_cast<std::int64_t>(reinterpret_cast<const I*>(base)[off]);
}

__device__ __forceinline__ std::int64_t index_value(const std::byte* base, std::int64_t off, bool i32) {
  return i32 ? load_index<std::int32_t>(base, off) : load_index<std::int64_t>(base, off);
}

template <class T>
__global__ void __launch_bounds__(kThreads) fill_kernel(T* dst, T value, OffsetCalc<1> calc, std::uint32_t n) {
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) {
      std::int64_t off[1];
      calc.offsets(i, off);
      dst[off[0]] = value;
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    check_kernel(const std::byte* idx, bool i32, OffsetCalc<1> calc, std::uint32_t n, std::int64_t length,
                 bool has_allowed, std::int64_t allowed, unsigned long long part_base,
                 unsigned long long* first_bad) {
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) {
      std::int64_t off[1];
      calc.offsets(i, off);
      const std::int64_t v = index_value(idx, off[0], i32);
      if ((v < 0 || v >= length) && !(has_allowed && v == allowed)) atomicMin(first_bad, part_base + i);
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    gather_kernel(T* dst, const T* src, const std::byte* idx, bool i32, std::int64_t stride, OffsetCalc<3> calc,
                  std::uint32_t n) {
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) {
      std::int64_t off[3];
      calc.offsets(i, off);
      dst[off[0]] = src[off[1] + index_value(idx, off[2], i32) * stride];
    }
  }
}

/// acc += v for one element, atomically.
template <class S>
__device__ __forceinline__ void atomic_add(S* acc, compute_t<S> v) {
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    atomicAdd(acc, v);
  } else if constexpr (std::is_same_v<S, std::int32_t>) {
    atomicAdd(reinterpret_cast<unsigned int*>(acc), static_cast<unsigned int>(v));  // wraps
  } else if constexpr (std::is_same_v<S, std::int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(acc), static_cast<unsigned long long>(v));  // wraps
  } else {
    // 1- and 2-byte floats: compare-and-swap on the aligned 32-bit word that holds them.
    const auto addr = reinterpret_cast<std::uintptr_t>(acc);
    auto* word = reinterpret_cast<unsigned int*>(addr & ~std::uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
    const unsigned mask = (sizeof(S) == 1 ? 0xFFu : 0xFFFFu) << shift;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      S cur;
      const auto bits = static_cast<std::conditional_t<sizeof(S) == 1, std::uint8_t, std::uint16_t>>((assumed & mask) >> shift);
      memcpy(&cur, &bits, sizeof(S));
      const S next = Elem<S>::store(Elem<S>::load(cur) + v);
      std::conditional_t<sizeof(S) == 1, std::uint8_t, std::uint16_t> nb;
      memcpy(&nb, &next, sizeof(S));
      const unsigned updated = (assumed & ~mask) | (static_cast<unsigned>(nb) << shift);
      old = atomicCAS(word, assumed, updated);
    } while (old != assumed);
  }
}

template <class S>
__global__ void __launch_bounds__(kThreads)
    scatter_add_kernel(S* acc, const S* updates, const std::byte* idx, bool i32, std::int64_t stride,
                       OffsetCalc<3> calc, std::uint32_t n) {
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) {
      std::int64_t off[3];
      calc.offsets(i, off);
      atomic_add(acc + off[0] + index_value(idx, off[1], i32) * stride, Elem<S>::load(updates[off[2]]));
    }
  }
}

template <class C>
__device__ __forceinline__ C block_reduce(C v, bool max, C* shared) {
  for (int o = 16; o > 0; o >>= 1) {
    const C other = __shfl_down_sync(0xFFFFFFFFu, v, o);
    v = max ? (other > v ? other : v) : v + other;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? shared[lane] : (max ? C(-INFINITY) : C(0));
    for (int o = 16; o > 0; o >>= 1) {
      const C other = __shfl_down_sync(0xFFFFFFFFu, v, o);
      v = max ? (other > v ? other : v) : v + other;
    }
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const C out = shared[0];
  __syncthreads();
  return out;
}

/// Views of a cross-entropy's rows: logits, targets, per-row (loss or dY), dlogits.
struct XentArgs {
  OffsetCalc<4> rows;
  std::uint32_t nrows = 0;
  std::int64_t n = 0;            // classes
  std::int64_t x_stride = 0, dx_stride = 0;
  std::int64_t ignore_index = -100;
  bool i32 = false, backward = false;
};

template <class S>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_kernel(XentArgs a, const S* x, const std::byte* targets, const S* dy, S* out) {
  using C = compute_t<S>;
  __shared__ C shared[kThreads / 32];
  const std::uint32_t row = blockIdx.x;
  if (row >= a.nrows) return;
  std::int64_t off[4];
  a.rows.offsets(row, off);
  const S* xr = x + off[0];
  const std::int64_t t = index_value(targets, off[1], a.i32);
  const bool ignored = t == a.ignore_index;
  if (ignored) {
    if (!a.backward) {
      if (threadIdx.x == 0) out[off[2]] = Elem<S>::store(C(0));
      return;
    }
    for (std::int64_t c = threadIdx.x; c < a.n; c += kThreads) out[off[3] + c * a.dx_stride] = Elem<S>::store(C(0));
    return;
  }
  C m = C(-INFINITY);
  for (std::int64_t c = threadIdx.x; c < a.n; c += kThreads) {
    const C v = Elem<S>::load(xr[c * a.x_stride]);
    m = v > m || v != v ? v : m;
  }
  m = block_reduce(m, true, shared);
  C s = 0;
  if (m != C(-INFINITY))
    for (std::int64_t c = threadIdx.x; c < a.n; c += kThreads) {
      const C v = Elem<S>::load(xr[c * a.x_stride]);
      s += std::is_same_v<C, float> ? expf(v - m) : exp(v - m);
    }
  s = block_reduce(s, false, shared);
  const C lse = m == C(-INFINITY) ? m : m + (std::is_same_v<C, float> ? logf(s) : log(s));
  if (!a.backward) {
    if (threadIdx.x == 0) out[off[2]] = Elem<S>::store(lse - Elem<S>::load(xr[t * a.x_stride]));
    return;
  }
  const C scale = Elem<S>::load(dy[off[2]]);
  for (std::int64_t c = threadIdx.x; c < a.n; c += kThreads) {
    const C v = Elem<S>::load(xr[c * a.x_stride]);
    C g = scale * (std::is_same_v<C, float> ? expf(v - lse) : exp(v - lse));
    if (c == t) g -= scale;
    out[off[3] + c * a.dx_stride] = Elem<S>::store(g);
  }
}

}  // namespace

void fill_values(int device, DType dtype, std::byte* dst, const Layout& dst_layout, double value) {
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  const StridedPart<1> whole = collapsed<1>({&dst_layout});
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S v = Elem<S>::store(static_cast<compute_t<S>>(value));
    for_each_part<1>(whole, [&](const StridedPart<1>& part) {
      const auto n = static_cast<std::uint32_t>(part.numel());
      fill_kernel<S><<<blocks_for(n, kThreads, kPerThread), kThreads, 0, s>>>(reinterpret_cast<S*>(dst) + part.base[0], v,
                                                                               make_offset_calc(part), n);
      EINEXPR_CUDA_CHECK_LAUNCH("fill_kernel");
    });
  });
}

void check_indices(int device, const std::byte* index, const Layout& layout, DType index_dtype, std::int64_t length,
                   const std::string& what, std::byte* scratch, const std::int64_t* allowed) {
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  // The distinct indices: stride-0 dims dropped.
  Layout d;
  d.offset = layout.offset;
  for (std::size_t i = 0; i < layout.shape.size(); ++i)
    if (layout.strides[i] != 0 || layout.shape[i] == 0) {
      d.shape.push_back(layout.shape[i]);
      d.strides.push_back(layout.strides[i]);
    }
  const StridedPart<1> whole = collapsed<1>({&d});
  auto* first = reinterpret_cast<unsigned long long*>(scratch);
  const unsigned long long none = ~0ull;
  EINEXPR_CUDA_CHECK(cudaMemcpyAsync(first, &none, sizeof none, cudaMemcpyHostToDevice, s));
  const bool i32 = index_dtype == DType::i32;
  // Parts are walked in row-major order, so a part's linear positions continue the last one's.
  unsigned long long done = 0;
  for_each_part<1>(whole, [&](const StridedPart<1>& part) {
    const auto n = static_cast<std::uint32_t>(part.numel());
    check_kernel<<<blocks_for(n, kThreads, kPerThread), kThreads, 0, s>>>(
        index + part.base[0] * static_cast<std::int64_t>(element_size(index_dtype)), i32, make_offset_calc(part), n,
        length, allowed != nullptr, allowed ? *allowed : 0, done, first);
    EINEXPR_CUDA_CHECK_LAUNCH("check_kernel");
    done += n;
  });
  unsigned long long bad = none;
  EINEXPR_CUDA_CHECK(cudaMemcpyAsync(&bad, first, sizeof bad, cudaMemcpyDeviceToHost, s));
  EINEXPR_CUDA_CHECK(cudaStreamSynchronize(s));
  if (bad == none) return;
  // The position in the distinct indices' shape, and the value there.
  std::vector<std::int64_t> pos(d.shape.size(), 0);
  unsigned long long rest = bad;
  std::int64_t off = d.offset;
  for (std::size_t i = d.shape.size(); i-- > 0;) {
    pos[i] = static_cast<std::int64_t>(rest % static_cast<unsigned long long>(d.shape[i]));
    rest /= static_cast<unsigned long long>(d.shape[i]);
    off += pos[i] * d.strides[i];
  }
  std::int64_t v = 0;
  if (i32) {
    std::int32_t v32 = 0;
    EINEXPR_CUDA_CHECK(cudaMemcpy(&v32, index + off * 4, 4, cudaMemcpyDeviceToHost));
    v = v32;
  } else {
    EINEXPR_CUDA_CHECK(cudaMemcpy(&v, index + off * 8, 8, cudaMemcpyDeviceToHost));
  }
  std::string p;
  for (std::size_t i = 0; i < pos.size(); ++i) p += (i ? ", " : "") + std::to_string(pos[i]);
  throw IndexError(what + ": index " + std::to_string(v) + " at position [" + p + "] is out of range [0, " +
                   std::to_string(length) + ")" + (v < 0 ? " (negative indices do not count from the end)" : "") +
                   "; nothing was written");
}

void gather_values(int device, std::size_t element_bytes, std::byte* dst, const Layout& dst_layout,
                   const std::byte* src, const Layout& src_layout, const std::byte* index, const Layout& index_layout,
                   DType index_dtype, std::int64_t stride) {
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  StridedPart<3> whole = collapsed<3>({&dst_layout, &src_layout, &index_layout});
  const bool i32 = index_dtype == DType::i32;
  visit_bits(element_bytes, [&](auto tag) {
    using T = decltype(tag);
    for_each_part<3>(whole, [&](const StridedPart<3>& part) {
      const auto n = static_cast<std::uint32_t>(part.numel());
      gather_kernel<T><<<blocks_for(n, kThreads, kPerThread), kThreads, 0, s>>>(
          reinterpret_cast<T*>(dst) + part.base[0], reinterpret_cast<const T*>(src) + part.base[1],
          index + part.base[2] * static_cast<std::int64_t>(element_size(index_dtype)), i32, stride,
          make_offset_calc(part), n);
      EINEXPR_CUDA_CHECK_LAUNCH("gather_kernel");
    });
  });
}

void scatter_add_values(int device, DType dtype, std::byte* acc, const Layout& acc_layout, const std::byte* index,
                        const Layout& index_layout, DType index_dtype, const std::byte* updates,
                        const Layout& updates_layout, std::int64_t stride) {
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  const StridedPart<3> whole = collapsed<3>({&acc_layout, &index_layout, &updates_layout});
  const bool i32 = index_dtype == DType::i32;
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_same_v<S, bool_t>) {
      throw DTypeError("add_at on bool tensors is not defined");
    } else {
      for_each_part<3>(whole, [&](const StridedPart<3>& part) {
        const auto n = static_cast<std::uint32_t>(part.numel());
        scatter_add_kernel<S><<<blocks_for(n, kThreads, kPerThread), kThreads, 0, s>>>(
            reinterpret_cast<S*>(acc) + part.base[0], reinterpret_cast<const S*>(updates) + part.base[2],
            index + part.base[1] * static_cast<std::int64_t>(element_size(index_dtype)), i32, stride,
            make_offset_calc(part), n);
        EINEXPR_CUDA_CHECK_LAUNCH("scatter_add_kernel");
      });
    }
  });
}

void cross_entropy_rows(int device, DType dtype, const XentGeometry& g, bool backward, std::int64_t ignore_index,
                        DType index_dtype, std::byte* out, const std::byte* logits, const std::byte* targets,
                        const std::byte* dy) {
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<compute_t<S>>) {
      throw DTypeError("cross_entropy needs floating logits, not " + std::string(name(dtype)));
    } else {
      StridedPart<4> rows;
      rows.shape = g.shape;
      rows.strides = g.strides;
      rows.base = g.base;
      for_each_part<4>(rows, [&](const StridedPart<4>& part) {
        XentArgs a;
        a.rows = make_offset_calc(part);
        a.nrows = static_cast<std::uint32_t>(part.numel());
        a.n = g.classes;
        a.x_stride = g.x_stride;
        a.dx_stride = g.dx_stride;
        a.ignore_index = ignore_index;
        a.i32 = index_dtype == DType::i32;
        a.backward = backward;
        cross_entropy_kernel<S><<<a.nrows, kThreads, 0, s>>>(
            a, reinterpret_cast<const S*>(logits) + part.base[0],
            targets + part.base[1] * static_cast<std::int64_t>(element_size(index_dtype)),
            dy ? reinterpret_cast<const S*>(dy) + part.base[2] : nullptr,
            reinterpret_cast<S*>(out) + (backward ? part.base[3] : part.base[2]));
        EINEXPR_CUDA_CHECK_LAUNCH("cross_entropy_kernel");
      });
    }
  });
}

XentGeometry plan_cross_entropy_rows(const CrossEntropyStep& step, const Layout& logits, const Layout& targets,
                                     const Layout& per_row, const Layout* dlogits) {
  XentGeometry g;
  std::array<Strides, 4> strides{};
  Shape shape;
  std::size_t r = 0;
  for (std::size_t d = 0; d < logits.shape.size(); ++d) {
    if (static_cast<int>(d) == step.axis) {
      g.classes = logits.shape[d];
      g.x_stride = logits.strides[d];
      g.dx_stride = dlogits ? dlogits->strides[d] : 0;
      continue;
    }
    shape.push_back(logits.shape[d]);
    strides[0].push_back(logits.strides[d]);
    strides[1].push_back(targets.strides[r]);
    strides[2].push_back(per_row.strides[r]);
    strides[3].push_back(dlogits ? dlogits->strides[d] : 0);
    ++r;
  }
  std::vector<const Strides*> ptrs;
  for (const Strides& st : strides) ptrs.push_back(&st);
  const CollapsedDims c = collapse_dims(shape, ptrs);
  g.shape = c.shape;
  for (int v = 0; v < 4; ++v) g.strides[static_cast<std::size_t>(v)] = c.strides[static_cast<std::size_t>(v)];
  g.base = {logits.offset, targets.offset, per_row.offset, dlogits ? dlogits->offset : 0};
  return g;
}

}  // namespace einexpr::gpu
