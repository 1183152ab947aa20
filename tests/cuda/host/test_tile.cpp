// The shared-memory tile of the permutation kernel (codegen/lower/cuda/tile.cuh), on the CPU:
// every element has its own slot, vectors stay contiguous and aligned, and neither phase
// of the kernel (rows in with 16-byte stores, columns out) conflicts on a bank.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "elements_host.hpp"

using namespace einexpr::test;

namespace {

constexpr int kThreads = 128;  // copy_cuda.cu's block

struct Access {
  int lane;
  long byte;
  int size;
};

// Worst number of distinct 4-byte words one bank serves in one request of a warp's
// accesses (8-byte accesses are served per half-warp, 16-byte ones per quarter-warp).
int conflict_degree(const std::vector<Access>& warp) {
  int worst = 0;
  const int size = warp.front().size;
  const int group = size == 16 ? 8 : size == 8 ? 16 : 32;
  for (int first = 0; first < 32; first += group) {
    std::map<long, std::set<long>> words_per_bank;
    for (const Access& a : warp) {
      if (a.lane < first || a.lane >= first + group) continue;
      for (long w = a.byte / 4; w <= (a.byte + a.size - 1) / 4; ++w) words_per_bank[w % 32].insert(w);
    }
    for (const auto& [bank, words] : words_per_bank) worst = std::max(worst, static_cast<int>(words.size()));
  }
  return worst;
}

}  // namespace

TEST_CASE("the permutation tile: one slot per element, contiguous aligned vectors", "[cuda_host][tile]") {
  for (int v : {1, 2, 4, 8, 16}) {
    const int tile = host_tile_size(v);
    CAPTURE(v, tile);
    CHECK(tile == (v == 1 ? 32 : 8 * v));
    std::vector<int> seen(static_cast<std::size_t>(tile * tile), 0);
    for (int r = 0; r < tile; ++r)
      for (int j = 0; j < tile; ++j) {
        const int s = host_tile_slot(v, r, j);
        REQUIRE(s >= 0);
        REQUIRE(s < tile * tile);
        ++seen[static_cast<std::size_t>(s)];
        if (j % v == 0) CHECK(s % v == 0);
        if (j % v != 0) CHECK(s == host_tile_slot(v, r, j - 1) + 1);
      }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  }
}

TEST_CASE("the permutation tile's two phases do not conflict on shared-memory banks", "[cuda_host][tile]") {
  struct Config {
    int v, element_size, worst_allowed;
  };
  // Vector tiles: no conflicts. Scalar tiles (the fallback) of 1- and 2-byte elements share
  // words between neighbours, which costs at most one extra pass.
  for (const Config& c : {Config{2, 8, 1}, Config{4, 4, 1}, Config{8, 2, 1}, Config{16, 1, 1}, Config{1, 4, 1},
                          Config{1, 8, 1}, Config{1, 2, 2}, Config{1, 1, 4}}) {
    const int tile = host_tile_size(c.v), chunks = tile / c.v, per = tile * chunks / kThreads;
    CAPTURE(c.v, c.element_size);
    int worst_in = 0, worst_out = 0;
    for (int k = 0; k < per; ++k) {
      for (int warp = 0; warp < kThreads / 32; ++warp) {
        std::vector<Access> in;  // rows in: thread (r, c) stores chunk c of row r
        for (int lane = 0; lane < 32; ++lane) {
          const int idx = warp * 32 + lane + k * kThreads, r = idx / chunks, ch = idx % chunks;
          in.push_back({lane, static_cast<long>(host_tile_slot(c.v, r, ch * c.v)) * c.element_size, c.v * c.element_size});
        }
        worst_in = std::max(worst_in, conflict_degree(in));
        for (int e = 0; e < c.v; ++e) {  // columns out: thread (jj, ci) reads rows ci V + e of column jj
          std::vector<Access> out;
          for (int lane = 0; lane < 32; ++lane) {
            const int idx = warp * 32 + lane + k * kThreads, jj = idx / chunks, ci = idx % chunks;
            out.push_back({lane, static_cast<long>(host_tile_slot(c.v, ci * c.v + e, jj)) * c.element_size, c.element_size});
          }
          worst_out = std::max(worst_out, conflict_degree(out));
        }
      }
    }
    CHECK(worst_in <= c.worst_allowed);
    CHECK(worst_out <= c.worst_allowed);
  }
}
