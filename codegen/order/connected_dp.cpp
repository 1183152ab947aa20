// ComponentDp (connected_dp.hpp), the core: states by number of leaves, each the best way
// found to contract a connected subset of the component. When level k is final, each of
// its states is paired with every final state of at most k leaves that it shares an axis
// with and does not overlap (each such pair once: a partner found through its lowest
// neighbouring leaf, equal sizes once by id), the results going to the higher levels.
// A state scoring more than the cap is never kept (Pfeifer, Haegeman and Verstraete's
// cost cap), nor one whose result alone would take its parent past the cap. Clusters
// (outer products that can pay) are in connected_dp_clusters.cpp.
#include "order/connected_dp.hpp"

#include <algorithm>

#include "cost/convention.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::order::detail {

int MaskIndex::find(Mask m) const {
  const std::size_t mask = keys_.size() - 1;
  for (std::size_t h = (m * 0x9E3779B97F4A7C15ull) >> 20 & mask;; h = (h + 1) & mask) {
    if (keys_[h] == m) return ids_[h];
    if (keys_[h] == 0) return -1;
  }
}

void MaskIndex::insert(Mask m, int id) {
  if (2 * (used_ + 1) > keys_.size()) {  // keep it at most half full
    std::vector<Mask> keys(keys_.size() * 2, 0);
    std::vector<int> ids(keys_.size() * 2, -1);
    keys.swap(keys_);
    ids.swap(ids_);
    used_ = 0;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != 0) insert(keys[i], ids[i]);
  }
  const std::size_t mask = keys_.size() - 1;
  std::size_t h = (m * 0x9E3779B97F4A7C15ull) >> 20 & mask;
  while (keys_[h] != 0) h = (h + 1) & mask;
  keys_[h] = m;
  ids_[h] = id;
  ++used_;
}

ComponentDp::ComponentDp(const Network& net, const Weights& w, const DpLimits& limits, Mask component, bool sigma,
                         bool root_last)
    : net_(net),
      w_(w),
      limits_(limits),
      component_(component),
      sigma_(sigma),
      root_last_(root_last),
      no_zero_(std::none_of(net.length.begin(), net.length.end(), [](SatCount l) { return l == SatCount(0); })),
      swap_prune_(no_zero_ && w.objective == Objective::flops && !w.limit),
      pair_factor_(net.bond_regime ? 2 : 1),
      words_(static_cast<std::size_t>(net.words)),
      length64_(net.length.size()),
      scratch_u_(words_),
      scratch_r_(words_) {
  for (std::size_t c = 0; c < net.length.size(); ++c)
    length64_[c] = net.length[c].raw() > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(net.length[c].raw());
}

void ComponentDp::kept(const std::uint64_t* u, Mask inside, std::uint64_t* dst) const {
  for (std::size_t i = 0; i < words_; ++i) {
    dst[i] = 0;
    for (std::uint64_t b = u[i]; b; b &= b - 1) {
      const int c = static_cast<int>(i * 64) + __builtin_ctzll(b);
      if ((net_.out[i] >> (c % 64) & 1) || (net_.holders[static_cast<std::size_t>(c)] & ~inside) != 0)
        dst[i] |= std::uint64_t(1) << (c % 64);
    }
  }
}

SatCount ComponentDp::size_of(const std::uint64_t* s) const {
  SatCount p = 1;
  for (std::size_t i = 0; i < words_; ++i)
    for (std::uint64_t b = s[i]; b; b &= b - 1)
      p *= net_.length[i * 64 + static_cast<std::size_t>(__builtin_ctzll(b))];
  return p;
}

int ComponentDp::leaf_state(int leaf) {
  State s;
  s.mask = Mask(1) << leaf;
  s.count = 1;
  s.nbr = net_.neighbours(leaf) & component_;
  s.size = net_.size(net_.leaf[static_cast<std::size_t>(leaf)]);
  s.value[0] = 0;
  s.ok[0] = true;
  s.split[0] = Split{Split::leaf, 0, leaf, -1};
  const int id = static_cast<int>(states_.size());
  states_.push_back(s);
  res_.insert(res_.end(), net_.leaf[static_cast<std::size_t>(leaf)].begin(), net_.leaf[static_cast<std::size_t>(leaf)].end());
  index_.insert(s.mask, id);
  pending_[1].push_back(id);
  return id;
}

bool ComponentDp::tick() {
  if (++work_ % 4096 == 0 &&
      (work_ > limits_.max_work || states_.size() > limits_.max_states || limits_.deadline->expired()))
    gave_up_ = true;
  return !gave_up_;
}

bool ComponentDp::offer(Mask m, Mask nbr, const std::uint64_t* res_p, SatCount size, const SatCount v[2],
                        const bool ok[2], Split split) {
  const bool keep[2] = {ok[0] && v[0] <= limits_.cap, ok[1] && v[1] <= limits_.cap};
  if (!keep[0] && !keep[1]) return false;
  int id = index_.find(m);
  if (id < 0) {
    id = static_cast<int>(states_.size());
    State s;
    s.mask = m;
    s.count = popcount(m);
    s.nbr = nbr;
    s.size = size;
    states_.push_back(s);
    res_.insert(res_.end(), res_p, res_p + words_);
    index_.insert(m, id);
    pending_[static_cast<std::size_t>(s.count)].push_back(id);
  }
  State& s = states_[static_cast<std::size_t>(id)];
  bool used = false;
  for (int i = 0; i < 2; ++i)
    if (keep[i] && (!s.ok[i] || v[i] < s.value[i])) {
      s.value[i] = v[i];
      s.ok[i] = true;
      s.split[i] = split;
      if (i == 0) s.split[0].sigma_in_b = 0;
      used = true;
    }
  return used;
}

/// x and b from a scan: first the bound (the step costs at least |x ∪ b| FLOPs, twice that
/// in the bond regime) from what the list holds, then the pair. |x ∪ b| / |x| is multiplied
/// up in 64 bits while it stays within what x can still afford (reach.max_only).
void ComponentDp::visit(int x, const Held& h, SatCount least_b, const Reach& reach) {
  SatCount only_b = 1;  // |x ∪ b| / |x|
  if (reach.max_only != UINT64_MAX) {
    std::uint64_t only = 1;
    for (std::size_t i = 0; i < words_; ++i)
      for (std::uint64_t c = (words_ == 1 ? h.res0 : res(h.id)[i]) & ~res(x)[i]; c; c &= c - 1)
        if (__builtin_mul_overflow(only, length64_[i * 64 + static_cast<std::size_t>(__builtin_ctzll(c))], &only) ||
            only > reach.max_only)
          return;  // the step alone takes x past the cap
    only_b = only;
  } else {
    for (std::size_t i = 0; i < words_; ++i)
      for (std::uint64_t c = res(h.id)[i] & ~res(x)[i]; c; c &= c - 1)
        only_b *= net_.length[i * 64 + static_cast<std::size_t>(__builtin_ctzll(c))];
  }
  if (least_b + reach.unit * only_b > reach.room) return;
  if (pair(x, h.id, only_b)) {
    note_eligible(x, h.id);
    note_eligible(h.id, x);
  }
}

/// Offers x and b contracted (only_b: |x ∪ b| / |x|); false when the step alone takes them
/// past the cap (then no cluster of the two can fit under it either).
bool ComponentDp::pair(int x, int b, SatCount only_b) {
  const State& X = states_[static_cast<std::size_t>(x)];
  const State& B = states_[static_cast<std::size_t>(b)];
  const SatCount size_u = X.size * only_b;
  if (w_.combine(w_.combine(least(x), least(b)), w_.step(size_u, 0, false)) > limits_.cap) return false;
  // What the step sums is among what both hold: the classes no leaf outside needs.
  const Mask p = X.mask | B.mask;
  bool sums = false;
  SatCount kept_x = 1;  // |x| less the summed classes
  for (std::size_t i = 0; i < words_; ++i) {
    std::uint64_t summed = 0;
    for (std::uint64_t c = res(x)[i] & res(b)[i] & ~net_.out[i]; c; c &= c - 1) {
      const int k = static_cast<int>(i * 64) + __builtin_ctzll(c);
      if ((net_.holders[static_cast<std::size_t>(k)] & ~p) == 0) summed |= std::uint64_t(1) << (k % 64);
    }
    sums = sums || summed != 0;
    scratch_r_[i] = (res(x)[i] | res(b)[i]) & ~summed;
    for (std::uint64_t c = res(x)[i] & ~summed; c; c &= c - 1)
      kept_x *= net_.length[i * 64 + static_cast<std::size_t>(__builtin_ctzll(c))];
  }
  const SatCount size_p = kept_x * only_b;
  const bool last = is_last(p);
  if (!w_.fits(size_p, last)) return true;
  const SatCount step =
      w_.step(convention::pairwise_flops(X.size, X.size, B.size, B.size, size_u, sums), size_p, last);
  const Joined j = join(w_, sigma_, X.value, X.ok, B.value, B.ok, step);
  offer(p, (X.nbr | B.nbr) & ~p, scratch_r_.data(), size_p, j.value, j.ok, Split{Split::pair, j.in_b, x, b});
  return true;
}

/// Pairs final state x with each final state b of at most its size (b's id below x's at
/// equal size) that shares an axis with it and no leaf: b is found in the list of its lowest
/// leaf among x's neighbours, by size, stopping where the scores alone pass the cap.
void ComponentDp::scan(int x) {
  const State& X = states_[static_cast<std::size_t>(x)];
  const Mask xm = X.mask, xn = X.nbr;
  const int k = X.count, room = std::min(k, popcount(component_ & ~xm));
  // A partner scoring more than this cannot fit (combine is + or max): the step costs at
  // least pair_factor_ FLOPs per element of x's result.
  const SatCount b_room =
      w_.bottleneck() ? limits_.cap : limits_.cap - least(x) - w_.step(X.size * pair_factor_, 0, false);
  const Reach reach = reach_of(X);
  for (Mask rest = xn; rest; rest &= rest - 1) {
    const int v = lowest(rest);
    const Mask below = (Mask(1) << v) - 1;
    const std::uint32_t mine = pattern(v, xm);
    for (int s = 1; s <= room; ++s) {
      const Held_list& list = by_leaf_[static_cast<std::size_t>(v)][static_cast<std::size_t>(s)];
      if (list.bucket.size() < 2) continue;
      // Only the buckets of states holding none of x's leaves among v's near ones: the
      // subsets of the others, largest first.
      const auto all = static_cast<std::uint32_t>(list.bucket.size() - 2);
      const std::uint32_t free = all & ~mine;
      for (std::uint32_t b = free;; b = (b - 1) & free) {
        for (std::uint32_t i = list.bucket[b], end = list.bucket[b + 1]; i < end; ++i) {
          const Mask m = list.mask[i];
          if ((m & xm) || (m & xn & below)) continue;
          if (list.least[i] > b_room) break;  // the bucket is by score
          if (!tick()) return;
          if (s == k && list.held[i].id >= x) continue;
          visit(x, list.held[i], list.least[i], reach);
        }
        if (b == 0) break;
      }
    }
  }
}

ComponentDp::Reach ComponentDp::reach_of(const State& X) const {
  Reach r;
  if (w_.bottleneck()) {  // a step's FLOPs do not count: no bound from them
    r.room = limits_.cap;
    return r;
  }
  r.room = limits_.cap - X.least;
  r.unit = X.size * w_.step(pair_factor_, 0, false);  // step() is linear in FLOPs when nothing is written
  if (r.unit > SatCount(0) && !r.room.saturated()) {
    const SatCount::u128 q = r.room.raw() / r.unit.raw();
    r.max_only = q >= UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(q);
  }
  return r;
}

std::uint32_t ComponentDp::pattern(int v, Mask m) const {
  std::uint32_t p = 0;
  const std::vector<int>& near = near_[static_cast<std::size_t>(v)];
  for (std::size_t i = 0; i < near.size(); ++i) p |= static_cast<std::uint32_t>(m >> near[i] & 1) << i;
  return p;
}

void ComponentDp::finalize(int level) {
  const auto lv = static_cast<std::size_t>(level);
  const bool whole = level == popcount(component_);
  for (int id : pending_[lv]) {
    State& s = states_[static_cast<std::size_t>(id)];
    if (sigma_ && s.ok[0]) {  // σ multiplied into this state's own result
      const SatCount v = w_.combine(s.value[0], absorb_step(s.size));
      if (v <= limits_.cap && (!s.ok[1] || v < s.value[1])) {
        s.value[1] = v;
        s.ok[1] = true;
        s.split[1] = Split{Split::absorb, 0, -1, -1};
      }
    }
    if (!whole && !w_.bottleneck()) {  // its parent's step costs at least its size
      const SatCount step = w_.step(s.size, 0, false);
      for (int i = 0; i < 2; ++i) s.ok[i] = s.ok[i] && w_.combine(s.value[i], step) <= limits_.cap;
    }
    if (!s.ok[0] && !s.ok[1]) continue;
    s.least = s.ok[0] && (!s.ok[1] || s.value[0] <= s.value[1]) ? s.value[0] : s.value[1];
    level_[lv].push_back(id);
  }
  pending_[lv].clear();
  // Each leaf's states of this level, in buckets, by score: a scan stops at the first too
  // costly.
  std::stable_sort(level_[lv].begin(), level_[lv].end(), [&](int a, int b) { return least(a) < least(b); });
  for (Mask leaves = component_; leaves; leaves &= leaves - 1) {
    const int v = lowest(leaves);
    Held_list& list = by_leaf_[static_cast<std::size_t>(v)][lv];
    const std::uint32_t buckets = std::uint32_t(1) << near_[static_cast<std::size_t>(v)].size();
    list.bucket.assign(buckets + 1, 0);
    for (int id : level_[lv])
      if (states_[static_cast<std::size_t>(id)].mask >> v & 1) ++list.bucket[pattern(v, states_[static_cast<std::size_t>(id)].mask) + 1];
    for (std::uint32_t b = 0; b < buckets; ++b) list.bucket[b + 1] += list.bucket[b];
    list.mask.resize(list.bucket[buckets]);
    list.least.resize(list.bucket[buckets]);
    list.held.resize(list.bucket[buckets]);
    std::vector<std::uint32_t> at(list.bucket.begin(), list.bucket.end() - 1);
    for (int id : level_[lv]) {
      const State& st = states_[static_cast<std::size_t>(id)];
      if (!(st.mask >> v & 1)) continue;
      const std::uint32_t i = at[pattern(v, st.mask)]++;
      list.mask[i] = st.mask;
      list.least[i] = st.least;
      list.held[i] = Held{id, res(id)[0], st.size};
    }
  }
  if (whole && !level_[lv].empty()) top_ = level_[lv].front();
}

bool ComponentDp::run() {
  const int n = popcount(component_);
  pending_.assign(static_cast<std::size_t>(n) + 1, {});
  level_.assign(static_cast<std::size_t>(n) + 1, {});
  by_leaf_.assign(static_cast<std::size_t>(net_.n), std::vector<Held_list>(static_cast<std::size_t>(n) + 1));
  near_.assign(static_cast<std::size_t>(net_.n), {});
  for (Mask leaves = component_; leaves; leaves &= leaves - 1) {
    const int v = lowest(leaves);
    for (Mask m = net_.neighbours(v) & component_; m && near_[static_cast<std::size_t>(v)].size() < 6; m &= m - 1)
      near_[static_cast<std::size_t>(v)].push_back(lowest(m));
  }
  for (Mask m = component_; m; m &= m - 1) leaf_state(lowest(m));
  finalize(1);
  for (int k = 1; k < n && !gave_up_; ++k) {
    for (std::size_t i = 0; i < level_[static_cast<std::size_t>(k)].size() && !gave_up_; ++i)
      scan(level_[static_cast<std::size_t>(k)][i]);
    if (!gave_up_) clusters(k);
    finalize(k + 1);
  }
  if (gave_up_) top_ = -1;
  return !gave_up_;
}

}  // namespace einexpr::order::detail
