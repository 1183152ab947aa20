// einexpr_suite_bench: the published suites of issue 33 (HPTT's permutations, TCCG's
// contractions; bench/suite_cases.py lists them with their sources), one case a line on
// stdin, one JSON object a line on stdout. Every case's roles run in rounds, each round every
// role once in a rotating order, so each einexpr time has its limit measured seconds apart:
//   permute|PATTERN|SIZES|DTYPES|ROUNDS   e.g. "permute|a b c -> c b a|384 355 384|f32,f64,bf16|7"
//     per dtype: out (rearrange_into a preallocated tensor), fresh (rearrange, Copy::always),
//     stream (a streaming-store copy of the same bytes, bench.hpp's: the limit), memcpy
//   einsum|PATTERN|NAME=LEN ...|M N K|ROUNDS
//     out (einsum_into), fresh (einsum), and the limit: one f32 GEMM of the flattened m, n, k
//     through OpenBLAS (its own threads, and rows split over OpenMP threads, one
//     single-threaded call each: the faster is the limit), as bench_gemm.cpp calls it
// Threads: 2 unless EINEXPR_BENCH_THREADS says otherwise. Each result is checked (a sample of
// output elements against the input through a view, or against a naive sum) before timing.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../runtime/copy_permute.hpp"
#include "bench.hpp"
#include "einexpr/runtime/strided.hpp"

namespace {

using einexpr::DType;
using einexpr::Tensor;
using Clock = std::chrono::steady_clock;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, sep);) out.push_back(part);
  return out;
}

std::vector<std::int64_t> ints(const std::string& s) {
  std::vector<std::int64_t> v;
  std::stringstream ss(s);
  for (std::int64_t x; ss >> x;) v.push_back(x);
  return v;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Wall times of every role over `rounds` rounds, a rotating order each round; with
/// "ROLE cpu" the process's CPU time of the same calls (all threads: on a machine whose
/// other work takes the cores away now and then, the time a call really ran; with
/// OMP_WAIT_POLICY=passive, so that no thread spins while it waits).
std::map<std::string, std::vector<double>> rounds_of(const std::vector<std::pair<std::string, std::function<void()>>>& roles,
                                                     int rounds) {
  for (const auto& r : roles) r.second();  // warm: plans cached, pages touched
  std::map<std::string, std::vector<double>> t;
  for (int round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < roles.size(); ++i) {
      const auto& [name, body] = roles[(i + static_cast<std::size_t>(round)) % roles.size()];
      const double cpu = process_cpu_seconds();
      const auto start = Clock::now();
      body();
      t[name].push_back(std::chrono::duration<double>(Clock::now() - start).count());
      t[name + " cpu"].push_back(process_cpu_seconds() - cpu);
    }
  return t;
}

std::string json_times(const std::map<std::string, std::vector<double>>& t) {
  std::ostringstream os;
  os.precision(6);
  os << "{";
  bool first = true;
  for (const auto& [name, v] : t) {
    os << (first ? "" : ", ") << "\"" << name << "\": [";
    for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
    first = false;
  }
  os << "}";
  return os.str();
}

Tensor pattern_of(const einexpr::Shape& shape, DType dtype) {
  const Tensor x = bench::pattern_f32(shape);
  return dtype == DType::f32 ? x : x.to(dtype);
}

/// A sample of out's elements, byte for byte, against the view rearrange gives of x (no copy).
bool check_permute(const Tensor& out, const Tensor& x, const std::string& pattern) {
  const Tensor view = einexpr::rearrange(x, pattern, {}, einexpr::Copy::never);
  const auto es = static_cast<std::int64_t>(out.element_size());
  const auto* o = static_cast<const std::byte*>(out.data_ptr());
  const auto* v = static_cast<const std::byte*>(view.data_ptr());
  std::mt19937_64 rng(7);
  for (int s = 0; s < 4000; ++s) {
    std::int64_t flat = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(out.numel()));
    std::int64_t oo = 0, vo = 0;
    for (std::size_t d = out.shape().size(); d-- > 0;) {
      const std::int64_t i = flat % out.shape()[d];
      flat /= out.shape()[d];
      oo += i * out.strides()[d];
      vo += i * view.strides()[d];
    }
    if (std::memcmp(o + oo * es, v + vo * es, static_cast<std::size_t>(es)) != 0) return false;
  }
  return true;
}

void run_permute(const std::vector<std::string>& f, int threads) {
  const std::string pattern = f[1];
  const einexpr::Shape shape = ints(f[2]);
  const int rounds = std::stoi(f[4]);
  std::cout << "{\"kind\": \"permute\", \"pattern\": \"" << pattern << "\", \"sizes\": \"" << f[2] << "\"";
  for (const std::string& dt : split(f[3], ',')) {
    const DType dtype = dt == "f64" ? DType::f64 : dt == "bf16" ? DType::bf16 : DType::f32;
    const Tensor x = pattern_of(shape, dtype);
    Tensor out = einexpr::rearrange(x, pattern, {}, einexpr::Copy::always);
    const bool ok = check_permute(out, x, pattern);
    const auto bytes = static_cast<std::size_t>(x.nbytes());
    auto* src = static_cast<const std::byte*>(x.data_ptr());
    auto* dst = static_cast<std::byte*>(out.data_ptr());
    const auto t = rounds_of(
        {{"out", [&] { einexpr::rearrange_into(out, x, pattern); }},
         {"fresh", [&] { bench::benchmark_keep(einexpr::rearrange(x, pattern, {}, einexpr::Copy::always)); }},
         {"stream", [&] { bench::stream_bytes_threads(dst, src, bytes, threads); }},
         {"memcpy", [&] { bench::memcpy_threads(dst, src, bytes, threads); }}},
        rounds);
    // how copy_permute cuts this copy (the output row-major, the input read through the view)
    const Tensor view = einexpr::rearrange(x, pattern, {}, einexpr::Copy::never);
    const einexpr::CollapsedDims cd = einexpr::collapse_dims(out.shape(), {&out.strides(), &view.strides()});
    const std::string plan = einexpr::detail::describe_permute(cd.shape, cd.strides[0], cd.strides[1], x.element_size());
    std::cout << ", \"" << dt << "\": {\"plan\": \"" << plan << "\", \"bytes\": " << bytes << ", \"checked\": " << (ok ? "true" : "false")
              << ", \"times\": " << json_times(t) << "}";
  }
  std::cout << "}" << std::endl;
}

/// The names of an einsum side ("a b c").
std::vector<std::string> names_of(const std::string& side) {
  std::vector<std::string> v;
  std::stringstream ss(side);
  for (std::string n; ss >> n;) v.push_back(n);
  return v;
}

/// A sample of out's elements against the sum over the contracted names, in double.
bool check_einsum(const Tensor& out, const std::vector<Tensor>& in, const std::vector<std::vector<std::string>>& sides,
                  const std::vector<std::string>& out_names, const einexpr::AxisLengths& lengths) {
  std::vector<std::string> all = out_names;
  for (const auto& side : sides)
    for (const auto& n : side)
      if (std::find(all.begin(), all.end(), n) == all.end()) all.push_back(n);
  const auto len = [&](const std::string& n) {
    for (const auto& [nm, l] : lengths)
      if (nm == n) return l;
    return std::int64_t{1};
  };
  // stride of each name in each tensor (0 where absent)
  auto strides_of = [&](const Tensor& t, const std::vector<std::string>& names) {
    std::vector<std::int64_t> s(all.size(), 0);
    for (std::size_t d = 0; d < names.size(); ++d)
      s[static_cast<std::size_t>(std::find(all.begin(), all.end(), names[d]) - all.begin())] += t.strides()[d];
    return s;
  };
  const auto so = strides_of(out, out_names), sa = strides_of(in[0], sides[0]), sb = strides_of(in[1], sides[1]);
  const auto* po = static_cast<const float*>(out.data_ptr());
  const auto* pa = static_cast<const float*>(in[0].data_ptr());
  const auto* pb = static_cast<const float*>(in[1].data_ptr());
  std::mt19937_64 rng(9);
  for (int s = 0; s < 100; ++s) {
    std::vector<std::int64_t> idx(all.size(), 0);
    for (std::size_t d = 0; d < out_names.size(); ++d)
      idx[d] = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(len(all[d])));
    double sum = 0, mag = 0;
    for (bool done = false; !done;) {
      std::int64_t oa = 0, ob = 0;
      for (std::size_t d = 0; d < all.size(); ++d) oa += idx[d] * sa[d], ob += idx[d] * sb[d];
      sum += double(pa[oa]) * double(pb[ob]);
      mag += std::abs(double(pa[oa]) * double(pb[ob]));
      done = true;  // the next contracted index, odometer style
      for (std::size_t d = all.size(); d-- > out_names.size();) {
        if (++idx[d] < len(all[d])) {
          done = false;
          break;
        }
        idx[d] = 0;
      }
    }
    std::int64_t oo = 0;
    for (std::size_t d = 0; d < out_names.size(); ++d) oo += idx[d] * so[d];
    if (std::abs(double(po[oo]) - sum) > 1e-5 * mag + 1e-6) return false;
  }
  return true;
}

void run_einsum(const std::vector<std::string>& f, int threads) {
  const std::string pattern = f[1];
  einexpr::AxisLengths lengths;
  for (const std::string& kv : split(f[2], ' '))
    if (const auto eq = kv.find('='); eq != std::string::npos) lengths.push_back({kv.substr(0, eq), std::stoll(kv.substr(eq + 1))});
  const std::vector<std::int64_t> mnk = ints(f[3]);
  const std::int64_t m = mnk[0], n = mnk[1], k = mnk[2];
  const int rounds = std::stoi(f[4]);
  std::vector<std::vector<std::string>> sides;
  for (const std::string& side : split(pattern.substr(0, pattern.find("->")), ',')) sides.push_back(names_of(side));
  const std::vector<std::string> out_names = names_of(pattern.substr(pattern.find("->") + 2));
  std::vector<Tensor> in;
  std::uint64_t seed = 1;
  for (const auto& side : sides) {
    einexpr::Shape shape;
    for (const std::string& name : side)
      for (const auto& [nm, len] : lengths)
        if (nm == name) shape.push_back(len);
    in.push_back(bench::random_f32(shape, seed++));
  }
  Tensor out = einexpr::einsum(in, pattern);
  const bool ok = check_einsum(out, in, sides, out_names, lengths);
  const Tensor ga = bench::random_f32({m, k}, 11), gb = bench::random_f32({k, n}, 12);
  Tensor gc = Tensor::empty({m, n});
  const auto* pa = static_cast<const float*>(ga.data_ptr());
  const auto* pb = static_cast<const float*>(gb.data_ptr());
  auto* pc = static_cast<float*>(gc.data_ptr());
  const auto t = rounds_of(
      {{"out", [&] { einexpr::einsum_into(out, in, pattern); }},
       {"fresh", [&] { bench::benchmark_keep(einexpr::einsum(in, pattern)); }},
       {"gemm_openblas", [&] {
          bench::set_openblas_threads(threads);
          bench::gemm_openblas(pa, k, pb, n, pc, n, m, n, k, false);
        }},
       {"gemm_split_rows", [&] {
          bench::set_openblas_threads(1);
#pragma omp parallel num_threads(threads)
          {
            const std::int64_t tt = omp_get_thread_num(), nt = omp_get_num_threads();
            const std::int64_t r0 = m * tt / nt / 16 * 16, r1 = tt + 1 == nt ? m : m * (tt + 1) / nt / 16 * 16;
            bench::gemm_openblas(pa + r0 * k, k, pb, n, pc + r0 * n, n, r1 - r0, n, k, false);
          }
        }}},
      rounds);
  std::cout << "{\"kind\": \"einsum\", \"pattern\": \"" << pattern << "\", \"mnk\": [" << m << ", " << n << ", " << k
            << "], \"flops\": " << 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k)
            << ", \"checked\": " << (ok ? "true" : "false") << ", \"times\": " << json_times(t) << "}" << std::endl;
}

}  // namespace

int main() {
  const char* env = std::getenv("EINEXPR_BENCH_THREADS");
  const int threads = env ? std::atoi(env) : 2;
  bench::set_threads(threads);
  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty()) continue;
    const std::vector<std::string> f = split(line, '|');
    try {
      if (f.size() == 5 && f[0] == "permute") run_permute(f, threads);
      else if (f.size() == 5 && f[0] == "einsum") run_einsum(f, threads);
      else std::cout << "{\"error\": \"bad line: " << line << "\"}" << std::endl;
    } catch (const std::exception& e) {
      std::string what = e.what();
      std::replace(what.begin(), what.end(), '"', '\'');
      std::replace(what.begin(), what.end(), '\n', ' ');
      std::cout << "{\"error\": \"" << what << "\"}" << std::endl;
    }
  }
  return 0;
}
