// dropout's steps on the CPU (plan.hpp's contract):
//   random  the keep mask, element i from the seed and i alone (codegen/random.hpp), in
//           pieces of the flat index that einexpr's threads share: the same mask on any count
//   mask    dst = src · (mask ? scale : 0) over a loop nest in dst's order
#include <cstdint>
#include <type_traits>

#include "cpu_kernels.hpp"
#include "einexpr/codegen/random.hpp"
#include "einexpr/runtime/parallel.hpp"
#include "element.hpp"
#include "strided_loop.hpp"

namespace einexpr::cpu {

Kernel random_kernel(const RandomStep& step, const Operand& seed, const Operand& dst) {
  Kernel k;
  k.name = "random_mask " + layout_str(dst.layout);
  const std::int64_t n = checked_numel(dst.layout.shape);
  const std::uint64_t threshold = random::threshold(step.p);
  k.run = [seed, dst, n, threshold](const Workspace& ws) {
    const auto s = static_cast<std::uint64_t>(buffer_ptr<const std::int64_t>(ws, seed.buffer)[seed.layout.offset]);
    std::uint8_t* out = buffer_ptr<std::uint8_t>(ws, dst.buffer) + dst.layout.offset;
    auto fill = [&](std::int64_t, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i)
        out[i] = random::keep(s, static_cast<std::uint64_t>(i), threshold) ? 1 : 0;
    };
    if (n < parallel_threshold || num_threads() <= 1) {
      fill(0, 0, n);
      return;
    }
    parallel_for(n, pieces_for(n, parallel_threshold / 4), fill);
  };
  return k;
}

Kernel mask_kernel(const MaskStep& step, const Operand& src, const Operand& mask, const Operand& dst, DType dtype) {
  Kernel k;
  k.name = "mask " + std::string(name(dtype)) + " " + layout_str(dst.layout);
  const Nest<3> nest =
      Nest<3>::make_ordered(dst.layout.shape, {dst.layout.strides, src.layout.strides, mask.layout.strides}, 0);
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = compute_t<S>;
    if constexpr (!std::is_floating_point_v<C>) {
      throw DTypeError("dropout needs a floating dtype, not " + std::string(name(dtype)));
    } else {
    const C scale = static_cast<C>(step.scale);
    k.run = [src, mask, dst, nest, scale](const Workspace& ws) {
      S* d = buffer_ptr<S>(ws, dst.buffer) + dst.layout.offset;
      const S* x = buffer_ptr<const S>(ws, src.buffer) + src.layout.offset;
      const std::uint8_t* m = buffer_ptr<const std::uint8_t>(ws, mask.buffer) + mask.layout.offset;
      parallel_pieces(nest, 1 << 14, [&](const std::array<std::int64_t, 3>& off, std::int64_t len) {
        const std::int64_t ds = nest.row_stride(0), xs = nest.row_stride(1), ms = nest.row_stride(2);
        S* dp = d + off[0];
        const S* xp = x + off[1];
        const std::uint8_t* mp = m + off[2];
        for (std::int64_t i = 0; i < len; ++i)
          dp[i * ds] = Element<S>::store(Element<S>::load(xp[i * xs]) * (mp[i * ms] ? scale : C(0)));
      });
    };
    }
  });
  return k;
}

}  // namespace einexpr::cpu
