// Failure leaves nothing behind. Each expression runs with its n-th CPU allocation failing
// (testing::fail_cpu_allocation_after(n)) for n = 0, 1, 2, ... until it succeeds. Every
// failed run throws AllocationError naming the bytes; the inputs stay byte-for-byte as they
// were; no einexpr memory stays allocated; and the *_into forms leave `out` exactly as it
// was: a program allocates every temporary before its first kernel runs, so an allocation
// failure comes before any write. The run that finally succeeds gives the right result.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "einexpr/einexpr.hpp"

using namespace einexpr;
using Catch::Matchers::Contains;

// Under AddressSanitizer (EINEXPR_SANITIZE=ON) an allocation of 2^50 bytes would abort the
// process instead of returning null; let it return null, so einexpr's AllocationError shows.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace {

struct FailAfter {
  explicit FailAfter(long n) { testing::fail_cpu_allocation_after(n); }
  ~FailAfter() { testing::fail_cpu_allocation_after(-1); }
  FailAfter(const FailAfter&) = delete;
  FailAfter& operator=(const FailAfter&) = delete;
};

std::vector<std::byte> storage_bytes(const Tensor& t) {
  const std::byte* p = t.storage()->data();
  return std::vector<std::byte>(p, p + t.storage()->nbytes());
}

std::size_t cpu_bytes_in_use() { return allocator_for(Device::cpu()).stats().bytes_in_use; }

using Inputs = std::vector<Tensor>;

/// An expression: returns its result, or (into) writes it into `out` and returns out.
struct Scenario {
  const char* name;
  Inputs inputs;
  std::function<Tensor(const Inputs&, Tensor* out)> run;
  bool into = false;
};

/// Runs the scenario with allocation n failing, for n = 0, 1, ...; returns how many failed.
long failures_until_success(const Scenario& s) {
  std::vector<std::vector<std::byte>> before;
  for (const Tensor& x : s.inputs) before.push_back(storage_bytes(x));
  Tensor want_out = s.into ? s.run(s.inputs, nullptr) : Tensor();
  const std::vector<double> want = s.run(s.inputs, nullptr).to_vector<double>();
  for (long n = 0; n < 100; ++n) {
    CAPTURE(s.name, n);
    const std::size_t in_use = cpu_bytes_in_use();
    Tensor out = s.into ? Tensor::full(want_out.shape(), -7.0, want_out.dtype()) : Tensor();
    bool ok = false;
    Tensor result;
    try {
      const FailAfter guard(n);
      result = s.run(s.inputs, s.into ? &out : nullptr);
      ok = true;
    } catch (const AllocationError& e) {
      CHECK_THAT(std::string(e.what()), Contains("could not allocate") && Contains("injected failure"));
    }
    for (std::size_t i = 0; i < s.inputs.size(); ++i) CHECK(storage_bytes(s.inputs[i]) == before[i]);
    if (ok) {
      CHECK(result.to_vector<double>() == want);
      return n;
    }
    if (s.into) CHECK(out.to_vector<double>() == std::vector<double>(want.size(), -7.0));  // untouched
    out = Tensor();
    CHECK(cpu_bytes_in_use() == in_use);
  }
  FAIL("the expression never succeeded");
  return -1;
}

std::vector<Scenario> scenarios() {
  const Tensor a = Tensor::randn({3, 4}, DType::f64, 1), b = Tensor::randn({4, 5}, DType::f64, 2);
  const Tensor c = Tensor::randn({5, 2}, DType::f64, 3), d = Tensor::randn({2, 3}, DType::f64, 4);
  const Tensor t = Tensor::randn({5, 4, 3}, DType::f32, 5).permute({2, 1, 0});  // [3, 4, 5], transposed
  const Tensor diag = Tensor::randn({3, 3, 4}, DType::f64, 6);
  const Tensor i32 = Tensor::randn({6, 4}, DType::i32, 7).slice(0, 0, 6, 2);  // [3, 4], sliced
  return {
      {"einsum chain of 4", {a, b, c, d}, [](const Inputs& x, Tensor*) {
         return einsum(x, "i j, j k, k l, l m -> i m"); }},
      {"einsum with a diagonal and a pre-reduction", {diag, b, c}, [](const Inputs& x, Tensor*) {
         return einsum(x, "i i j, j k, k l -> i"); }},
      {"copying rearrange of a transposed input", {t}, [](const Inputs& x, Tensor*) {
         return rearrange(x[0], "a b c -> c (a b)"); }},
      {"reduce of a transposed input", {t}, [](const Inputs& x, Tensor*) {
         return reduce(x[0], "a b (c d) -> d a", Reduction::max, {{"c", 5}}); }},
      {"repeat, copied", {i32}, [](const Inputs& x, Tensor*) {
         return repeat(x[0], "a b -> a r b", {{"r", 3}}, Copy::always); }},
      {"binary map with broadcasting", {t, Tensor::randn({5}, DType::f32, 8)}, [](const Inputs& x, Tensor*) {
         return map(x[0], x[1], "a b c, c -> a b c", "mul"); }},
      {"compiled einsum", {a, b}, [](const Inputs& x, Tensor*) {
         static const Compiled f = compile_einsum("i j, j k -> k i");
         return f.run(x); }},
      {"pack", {a, b.transpose(0, 1)}, [](const Inputs& x, Tensor*) {
         return pack(x, "* j").first; }},
      {"einsum_into a chain", {a, b, c}, [](const Inputs& x, Tensor* out) {
         if (out == nullptr) return einsum(x, "i j, j k, k l -> i l");
         einsum_into(*out, x, "i j, j k, k l -> i l");
         return *out; }, true},
      {"rearrange_into a transposed out (a copy at the end)", {t}, [](const Inputs& x, Tensor* out) {
         if (out == nullptr) return rearrange(x[0], "a b c -> c a b", {}, Copy::always);
         Tensor o = out->transpose(0, 1);  // the result's layout differs: computed, then copied in
         rearrange_into(o, x[0], "a b c -> a c b");
         return *out; }, true},
      {"reduce_into", {t}, [](const Inputs& x, Tensor* out) {
         if (out == nullptr) return reduce(x[0], "a b c -> c a", Reduction::sum);
         reduce_into(*out, x[0], "a b c -> c a", Reduction::sum);
         return *out; }, true},
  };
}

}  // namespace

TEST_CASE("an allocation failing anywhere in an expression leaves the inputs untouched", "[failure]") {
  for (const Scenario& s : scenarios()) {
    const long failures = failures_until_success(s);
    CAPTURE(s.name);
    // Every expression here allocates at least its result, except an *_into that writes
    // straight into out (reduce_into: no allocation at all).
    if (!s.into) CHECK(failures >= 1);
  }
}

TEST_CASE("an allocation larger than memory is an AllocationError naming the bytes", "[failure][limits]") {
  // A copying rearrange whose output is 2^50 bytes: planned, then refused by the allocator.
  const Tensor x = Tensor::zeros({1}, DType::f32);
  const Tensor big = x.as_strided({std::int64_t{1} << 24, std::int64_t{1} << 24}, {0, 0}, 0);
  try {
    (void)rearrange(big, "a b -> b a", {}, Copy::always);
    FAIL("no error");
  } catch (const AllocationError& e) {
    CHECK(e.bytes() == std::size_t{1} << 50);
    CHECK_THAT(std::string(e.what()), Contains("could not allocate 1125899906842624 bytes on the CPU"));
    CHECK_THAT(std::string(e.what()), Contains("in rearrange('a b -> b a') on input of shape [16777216, 16777216]"));
  }
  CHECK(x.to_vector<float>() == std::vector<float>{0});
}
