// Storage and the CPU allocator: alignment, the cache of large blocks, injected and real
// allocation failures, size overflow before any allocation, wrapped memory, copy_bytes and
// synchronize.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "einexpr/config.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/storage.hpp"
#include "einexpr/runtime/tensor.hpp"

using namespace einexpr;

// Under AddressSanitizer (EINEXPR_SANITIZE=ON) a 2^62-byte request would abort the process
// instead of returning null; let it return null, so the test sees einexpr's AllocationError.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace {

Allocator& cpu() { return allocator_for(Device::cpu()); }

// Arms fail_cpu_allocation_after for one scope.
struct FailAfter {
  explicit FailAfter(long n) { testing::fail_cpu_allocation_after(n); }
  ~FailAfter() { testing::fail_cpu_allocation_after(-1); }
  FailAfter(const FailAfter&) = delete;
  FailAfter& operator=(const FailAfter&) = delete;
};

}  // namespace

TEST_CASE("CPU memory is 64-byte aligned, and 0 bytes still give a unique pointer", "[storage]") {
  std::vector<std::shared_ptr<Storage>> kept;
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{63}, std::size_t{64},
                            std::size_t{100}, std::size_t{4096}, std::size_t{1} << 20, (std::size_t{3} << 20) + 5}) {
    CAPTURE(bytes);
    auto s = Storage::allocate(bytes, Device::cpu());
    CHECK(reinterpret_cast<std::uintptr_t>(s->data()) % cpu_alignment == 0);
    CHECK(s->nbytes() == bytes);
    CHECK(s->device() == Device::cpu());
    std::memset(s->data(), 0xAB, bytes);  // the memory is usable to its end
    kept.push_back(std::move(s));
  }
  // Small blocks are malloc'd and aligned by hand: every size up to 300 bytes and a few up
  // to the 1 MiB boundary, all alive at once (ASan sees a write past a block's end).
  std::vector<std::size_t> sizes;
  for (std::size_t b = 1; b <= 300; ++b) sizes.push_back(b);
  for (std::size_t b : {std::size_t{65535}, std::size_t{65537}, (std::size_t{1} << 20) - 64, (std::size_t{1} << 20) - 1})
    sizes.push_back(b);
  for (std::size_t bytes : sizes) {
    auto s = Storage::allocate(bytes, Device::cpu());
    CHECK(reinterpret_cast<std::uintptr_t>(s->data()) % cpu_alignment == 0);
    std::memset(s->data(), static_cast<int>(bytes & 0xFF), bytes);
    kept.push_back(std::move(s));
  }
  std::set<std::byte*> distinct;
  for (int i = 0; i < 4; ++i) {
    kept.push_back(Storage::allocate(0, Device::cpu()));
    distinct.insert(kept.back()->data());
  }
  CHECK(distinct.size() == 4);
  CHECK(cpu_alignment == 64);
  for (DType d : all_dtypes)
    CHECK(reinterpret_cast<std::uintptr_t>(Tensor::empty({3, 5}, d).data_ptr()) % 64 == 0);
}

TEST_CASE("large blocks are cached: a repeated large allocation reaches the system once", "[storage]") {
  const std::size_t bytes = std::size_t{5} << 20;
  { auto warm = Storage::allocate(bytes, Device::cpu()); }  // now cached, if it was not
  const AllocatorStats before = cpu().stats();
  for (int i = 0; i < 5; ++i) {
    const Tensor t = Tensor::empty({static_cast<std::int64_t>(bytes / 4)}, DType::f32);
    CHECK(cpu().stats().bytes_in_use >= before.bytes_in_use + bytes);
  }
  const AllocatorStats after = cpu().stats();
  CHECK(after.system_allocations == before.system_allocations);
  CHECK(after.requests == before.requests + 5);
  CHECK(after.bytes_in_use == before.bytes_in_use);
  CHECK(after.bytes_cached >= bytes);
  CHECK(after.peak_bytes_in_use >= before.bytes_in_use + bytes);
  cpu().release_cached();
  CHECK(cpu().stats().bytes_cached == 0);
  { auto again = Storage::allocate(bytes, Device::cpu()); }
  CHECK(cpu().stats().system_allocations == after.system_allocations + 1);  // the cache was emptied
}

TEST_CASE("a freed block that overflows the cache evicts the blocks freed longest ago", "[storage]") {
  cpu().release_cached();
  const std::size_t a = std::size_t{640} << 20, b = std::size_t{520} << 20;  // together over 1 GiB
  const AllocatorStats start = cpu().stats();
  { auto x = Storage::allocate(a, Device::cpu()); }
  CHECK(cpu().stats().bytes_cached == a);
  { auto y = Storage::allocate(b, Device::cpu()); }  // y's size comes in, x's block goes
  CHECK(cpu().stats().bytes_cached == b);
  CHECK(cpu().stats().system_allocations == start.system_allocations + 2);
  { auto y = Storage::allocate(b, Device::cpu()); }  // from the cache
  CHECK(cpu().stats().system_allocations == start.system_allocations + 2);
  { auto x = Storage::allocate(a, Device::cpu()); }  // x's block was given back: the system again
  CHECK(cpu().stats().system_allocations == start.system_allocations + 3);
  CHECK(cpu().stats().bytes_cached == a);
  cpu().release_cached();
  CHECK(cpu().stats().bytes_cached == 0);
}

TEST_CASE("of two cached blocks of one size, the one freed last is handed out first", "[storage]") {
  cpu().release_cached();
  const std::size_t bytes = std::size_t{4} << 20;  // a whole number of 2 MiB pages
  auto first = Storage::allocate(bytes, Device::cpu());
  auto second = Storage::allocate(bytes, Device::cpu());
  std::byte* const first_data = first->data();
  std::byte* const second_data = second->data();
  first.reset();   // freed first: the colder
  second.reset();  // freed last: its pages the warmest
  CHECK(cpu().stats().bytes_cached == 2 * bytes);
  auto again = Storage::allocate(bytes, Device::cpu());
  CHECK(again->data() == second_data);
  auto more = Storage::allocate(bytes, Device::cpu());
  CHECK(more->data() == first_data);
  again.reset();
  more.reset();
  cpu().release_cached();
}

TEST_CASE("fail_cpu_allocation_after(n) fails the (n+1)-th allocation, naming the bytes", "[storage][errors]") {
  {
    FailAfter guard(2);
    auto a = Storage::allocate(10, Device::cpu());
    auto b = Storage::allocate(20, Device::cpu());
    CHECK_THROWS_AS(Storage::allocate(100, Device::cpu()), AllocationError);
    auto c = Storage::allocate(30, Device::cpu());  // fires once
    CHECK(c->nbytes() == 30);
  }
  {
    FailAfter guard(0);
    try {
      (void)Tensor::zeros({5, 5}, DType::f64);
      FAIL("no exception");
    } catch (const AllocationError& e) {
      CHECK(e.bytes() == 200);
      CHECK(std::string(e.what()) == "could not allocate 200 bytes on the CPU (injected failure)");
    }
  }
  {
    FailAfter guard(1);  // a copy's allocation fails, the source is untouched
    const Tensor x = Tensor::arange(6).view({2, 3});
    CHECK_THROWS_WITH(x.transpose(0, 1).contiguous(), "could not allocate 24 bytes on the CPU (injected failure)");
    CHECK(x.to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
  }
  FailAfter disabled(-5);
  CHECK(Storage::allocate(8, Device::cpu())->nbytes() == 8);
}

TEST_CASE("an impossible allocation is an AllocationError, an overflowing size a ShapeError first", "[storage][errors]") {
  constexpr std::int64_t g = std::int64_t{1} << 30;
  const AllocatorStats before = cpu().stats();
  // 2^60 f32 elements = 2^62 bytes: the shape is fine, the memory does not exist.
  CHECK_THROWS_AS(Tensor::empty({g, g}, DType::f32), AllocationError);
  CHECK_THROWS_WITH(Tensor::empty({g, g}, DType::f32), "could not allocate 4611686018427387904 bytes on the CPU");
  const AllocatorStats failed = cpu().stats();
  CHECK(failed.bytes_in_use == before.bytes_in_use);
  // Sizes that overflow are refused before the allocator is asked.
  CHECK_THROWS_AS(Tensor::empty({2 * g, 2 * g}, DType::f32), ShapeError);
  CHECK_THROWS_WITH(Tensor::empty({2 * g, 2 * g}, DType::f32), "size overflows 64 bits: 4611686018427387904 * 4");
  CHECK_THROWS_WITH(Tensor::zeros({4 * g, 4 * g, 4}, DType::boolean),
                    "the number of elements of shape [4294967296, 4294967296, 4] overflows 64 bits");
  CHECK(cpu().stats().requests == failed.requests);
  CHECK_THROWS_AS(cpu().allocate(SIZE_MAX - 10), AllocationError);
}

TEST_CASE("Storage::wrap runs the release callback when the last tensor lets go", "[storage]") {
  std::vector<float> memory = {1, 2, 3, 4, 5, 6};
  int released = 0;
  {
    auto s = Storage::wrap(memory.data(), memory.size() * sizeof(float), Device::cpu(),
                           [&](void* p) { released += p == memory.data(); });
    Tensor t(s, Layout::contiguous({2, 3}), DType::f32);
    const Tensor v = t.transpose(0, 1);
    s.reset();
    CHECK(v.to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
    t.set({0, 0}, 10);
    CHECK(memory[0] == 10);
    CHECK(released == 0);
  }
  CHECK(released == 1);
  auto small = Storage::wrap(memory.data(), 8, Device::cpu(), nullptr);
  CHECK_THROWS_WITH(Tensor(small, Layout::contiguous({3}), DType::f32),
                    "Tensor: a view of shape [3], strides [1] and offset 0 reaches past the end of its storage of 8 bytes");
  CHECK_THROWS_WITH(Tensor(nullptr, Layout::contiguous({1}), DType::f32), "Tensor: null storage");
}

TEST_CASE("copy_bytes and synchronize on the CPU, and CUDA refused without CUDA", "[storage]") {
  const std::vector<std::uint8_t> src = {1, 2, 3, 4, 5};
  std::vector<std::uint8_t> dst(5, 0);
  copy_bytes(dst.data(), Device::cpu(), src.data(), Device::cpu(), 5);
  CHECK(dst == src);
  copy_bytes(nullptr, Device::cpu(), nullptr, Device::cpu(), 0);  // nothing to copy
  synchronize(Device::cpu());
  CHECK(cpu().device() == Device::cpu());
  if (!has_cuda) {
    CHECK_THROWS_WITH(copy_bytes(dst.data(), Device::cuda(0), src.data(), Device::cpu(), 5),
                      "einexpr was built without CUDA");
    CHECK_THROWS_WITH(synchronize(Device::cuda(0)), "einexpr was built without CUDA");
    CHECK_THROWS_AS(allocator_for(Device::cuda(0)), DeviceError);
  }
}

TEST_CASE("many threads allocating and freeing leave the allocator balanced", "[storage]") {
  const std::size_t in_use = cpu().stats().bytes_in_use;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        const std::size_t bytes = (i % 3 == 0) ? (std::size_t{1} << 20) + static_cast<std::size_t>(t) : 64u * static_cast<std::size_t>(i + 1);
        auto s = Storage::allocate(bytes, Device::cpu());
        std::memset(s->data(), t, bytes);
      }
    });
  for (std::thread& th : threads) th.join();
  CHECK(cpu().stats().bytes_in_use == in_use);
}

TEST_CASE("storage_usage counts the bytes asked for, and reset_storage_peak starts a window", "[storage]") {
  const Device cpu = Device::cpu();
  reset_storage_peak(cpu);
  const StorageUsage before = storage_usage(cpu);
  CHECK(before.peak_bytes_in_use == before.bytes_in_use);
  const std::size_t small = 1000, large = std::size_t{3} << 20;  // the allocator rounds both up
  {
    const auto a = Storage::allocate(small, cpu);
    const auto b = Storage::allocate(large, cpu);
    CHECK(storage_usage(cpu).bytes_in_use == before.bytes_in_use + small + large);
    float outside = 0;  // wrapped memory is the caller's: not counted
    const auto w = Storage::wrap(&outside, sizeof outside, cpu, [](void*) {});
    CHECK(storage_usage(cpu).bytes_in_use == before.bytes_in_use + small + large);
  }
  const StorageUsage after = storage_usage(cpu);
  CHECK(after.bytes_in_use == before.bytes_in_use);
  CHECK(after.peak_bytes_in_use == before.bytes_in_use + small + large);
  reset_storage_peak(cpu);
  CHECK(storage_usage(cpu).peak_bytes_in_use == after.bytes_in_use);
}
