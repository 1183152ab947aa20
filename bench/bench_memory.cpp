// Memory-bound ops: copying rearranges beside memcpy of the same bytes, reductions beside a
// read-sum of the same bytes, a materialized repeat beside a fill of the same bytes; each
// at 1 and 2 threads (the table's scaling column).
#include <cstring>

#include "bench.hpp"

namespace bench {

namespace {

using einexpr::Tensor;

/// The op writing into `out`, and returning a new tensor.
struct Op {
  std::function<void(Tensor& out, const Tensor& x)> into;
  std::function<Tensor(const Tensor& x)> fresh;
};

void add_roles(const std::string& w, int threads, const Work& work, const std::function<Tensor()>& make, const Op& op,
               bool with_cold) {
  add(w, "out", threads, work, [=](int) {
    const Tensor x = input(w, "x", make);
    auto out = std::make_shared<Tensor>(op.fresh(x));
    return std::function<void()>([=] { op.into(*out, x); });
  });
  if (threads == 1) return;
  add(w, "fresh", threads, work, [=](int) {
    const Tensor x = input(w, "x", make);
    return std::function<void()>([=] { op.fresh(x); });
  });
  if (!with_cold) return;
  add(w, "cold", threads, work, [=](int) {
    const Tensor x = input(w, "x", make);
    return std::function<void()>([=] {
      einexpr::allocator_for(einexpr::Device::cpu()).release_cached();
      op.fresh(x);
    });
  });
}

/// Scratch bytes for a limit, shared by the workload's roles.
float* scratch(const std::string& w, const std::string& key, std::size_t bytes) {
  const auto n = static_cast<std::int64_t>(bytes / sizeof(float));
  return static_cast<float*>(input(w, key, [&] { return pattern_f32({n}); }).data_ptr());
}

void add_copy(const std::string& w, const std::string& pattern, const einexpr::Shape& shape,
              const einexpr::AxisLengths& lengths) {
  const auto make = [shape] { return pattern_f32(shape); };
  const Op op{[=](Tensor& out, const Tensor& x) { einexpr::rearrange_into(out, x, pattern, lengths); },
              [=](const Tensor& x) { return einexpr::rearrange(x, pattern, lengths, einexpr::Copy::always); }};
  const double bytes = static_cast<double>(make().nbytes());
  const Work work{0, 2 * bytes, 0.7};
  for (int t : {1, 2}) {
    add_roles(w, t, work, make, op, true);
    add(w, "limit:memcpy", t, work, [=](int threads) {
      float* src = scratch(w, "src", static_cast<std::size_t>(bytes));
      float* dst = scratch(w, "dst", static_cast<std::size_t>(bytes));
      return std::function<void()>([=] { memcpy_threads(dst, src, static_cast<std::size_t>(bytes), threads); });
    });
  }
}

/// `outputs`: the elements the reduction writes.
void add_reduce(const std::string& w, const std::string& pattern, einexpr::Reduction reduction,
                const einexpr::Shape& shape, std::int64_t outputs) {
  const auto make = [shape] { return pattern_f32(shape); };
  const Op op{[=](Tensor& out, const Tensor& x) { einexpr::reduce_into(out, x, pattern, reduction); },
              [=](const Tensor& x) { return einexpr::reduce(x, pattern, reduction); }};
  std::int64_t elements = 1;
  for (std::int64_t n : shape) elements *= n;
  const double in_bytes = 4.0 * static_cast<double>(elements);
  const Work work{0, in_bytes + 4.0 * static_cast<double>(outputs), 0.8};
  for (int t : {1, 2}) {
    add_roles(w, t, work, make, op, false);
    add(w, "limit:read-sum", t, work, [=](int threads) {
      const float* p = static_cast<const float*>(input(w, "x", make).data_ptr());
      const auto n = static_cast<std::size_t>(in_bytes / 4);
      return std::function<void()>([=] { benchmark_keep(read_sum(p, n, threads)); });
    });
  }
}

void add_repeat(const std::string& w, std::int64_t c, const einexpr::Shape& shape) {
  const std::string pattern = "h w -> c h w";
  const einexpr::AxisLengths lengths{{"c", c}};
  const auto make = [shape] { return pattern_f32(shape); };
  const Op op{[=](Tensor& out, const Tensor& x) { einexpr::repeat_into(out, x, pattern, lengths); },
              [=](const Tensor& x) { return einexpr::repeat(x, pattern, lengths, einexpr::Copy::always); }};
  const double out_bytes = 4.0 * static_cast<double>(c * shape[0] * shape[1]);
  const Work work{0, out_bytes + out_bytes / static_cast<double>(c), 0.75};
  for (int t : {1, 2}) {
    add_roles(w, t, work, make, op, true);
    const auto n = static_cast<std::size_t>(out_bytes / 4);
    add(w, "limit:fill", t, work, [=](int threads) {
      float* dst = scratch(w, "dst", n * 4);
      return std::function<void()>([=] { fill_stores(dst, n, 0.5f, threads); });
    });
    add(w, "limit:memset", t, work, [=](int threads) {
      float* dst = scratch(w, "dst", n * 4);
      return std::function<void()>([=] { fill_memset(dst, n * 4, threads); });
    });
  }
}

}  // namespace

void register_memory() {
  add_copy("rearrange b c h w -> b h w c 32x64x128x128", "b c h w -> b h w c", {32, 64, 128, 128}, {});
  add_copy("rearrange b (h d) s -> b h s d 32x1024x512 h=16", "b (h d) s -> b h s d", {32, 1024, 512},
           {{"h", 16}});
  add_reduce("reduce b s h -> b h mean 64x1024x1024", "b s h -> b h", einexpr::Reduction::mean, {64, 1024, 1024},
             64 * 1024);
  add_reduce("reduce b s h -> b h max 64x1024x1024", "b s h -> b h", einexpr::Reduction::max, {64, 1024, 1024},
             64 * 1024);
  // The reduced axis innermost: rows of 1024 (each output a vectorized fold), and one run.
  add_reduce("reduce b s h -> b s mean 64x1024x1024", "b s h -> b s", einexpr::Reduction::mean, {64, 1024, 1024},
             64 * 1024);
  add_reduce("reduce n -> sum 67108864", "n ->", einexpr::Reduction::sum, {std::int64_t{1} << 26}, 1);
  add_repeat("repeat h w -> c h w c=64 1024x1024", 64, {1024, 1024});
}

}  // namespace bench
