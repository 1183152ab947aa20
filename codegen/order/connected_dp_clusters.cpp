// ComponentDp's clusters and the reconstruction of its trees. A cluster is an outer
// product that can pay: pieces (connected states sharing no axis with one another) each
// sharing an axis with a state z, multiplied together first and then contracted with z at
// once (as two vectors u_i and v_j meet a matrix A_ij). A piece is "eligible" for z when
// z, the piece and the least the final step could cost fit under the cap; for the FLOPs
// objective a piece also holds at most 2·|z| elements and two pieces x, y satisfy
// |x|·|y| <= 2·|x ∪ z| and <= 2·|y ∪ z|: otherwise contracting one of them with z first is
// strictly cheaper (README, "Outer products").
#include <algorithm>
#include <functional>

#include "cost/convention.hpp"
#include "einexpr/runtime/error.hpp"
#include "order/connected_dp.hpp"

namespace einexpr::order::detail {

OuterTable outer_table(const std::vector<Part>& parts, const Weights& w, bool sigma, bool top) {
  const auto r = static_cast<unsigned>(parts.size());
  EINEXPR_ASSERT(r >= 1 && r <= kMaxParts, "outer_table: 1 to 12 parts");
  OuterTable t;
  t.full = (1u << r) - 1;
  const std::size_t n = t.full + 1;
  t.size.assign(n, 1);
  t.value[0].assign(n, 0);
  t.value[1].assign(n, 0);
  t.ok[0].assign(n, false);
  t.ok[1].assign(n, false);
  t.split[0].assign(n, 0);
  t.split[1].assign(n, 0);
  t.in_b.assign(n, 0);
  for (unsigned s = 1; s <= t.full; ++s) {
    const unsigned low = s & (~s + 1);
    if (s == low) {
      const Part& p = parts[static_cast<std::size_t>(__builtin_ctz(s))];
      t.size[s] = p.size;
      for (int i = 0; i < 2; ++i) {
        t.value[i][s] = p.value[i];
        t.ok[i][s] = p.ok[i];
      }
      continue;
    }
    t.size[s] = t.size[s ^ low] * t.size[low];
    const bool last = top && s == t.full;
    if (!w.fits(t.size[s], last)) continue;
    for (unsigned a = (s - 1) & s; a > 0; a = (a - 1) & s) {
      if (!(a & low)) continue;
      const unsigned b = s ^ a;
      const SatCount sa = t.size[a], sb = t.size[b];
      const SatCount step = w.step(convention::pairwise_flops(sa, sa, sb, sb, sa * sb, false), t.size[s], last);
      auto offer = [&](int i, SatCount v, std::uint8_t in_b) {
        v = w.combine(v, step);
        if (!t.ok[static_cast<std::size_t>(i)][s] || v < t.value[static_cast<std::size_t>(i)][s]) {
          t.value[static_cast<std::size_t>(i)][s] = v;
          t.ok[static_cast<std::size_t>(i)][s] = true;
          t.split[static_cast<std::size_t>(i)][s] = a;
          if (i == 1) t.in_b[s] = in_b;
        }
      };
      if (t.ok[0][a] && t.ok[0][b]) offer(0, w.combine(t.value[0][a], t.value[0][b]), 0);
      if (sigma && t.ok[1][a] && t.ok[0][b]) offer(1, w.combine(t.value[1][a], t.value[0][b]), 0);
      if (sigma && t.ok[0][a] && t.ok[1][b]) offer(1, w.combine(t.value[0][a], t.value[1][b]), 1);
    }
    if (sigma && top && t.ok[0][s]) {  // σ multiplied into this product's result
      const SatCount v = w.combine(t.value[0][s], w.step(t.size[s], t.size[s], false));
      if (!t.ok[1][s] || v < t.value[1][s]) {
        t.value[1][s] = v;
        t.ok[1][s] = true;
        t.split[1][s] = 0;  // 0: absorbed here
      }
    }
  }
  return t;
}

int emit_outer_table(const OuterTable& t, bool with_sigma, const std::function<int(unsigned, bool)>& part,
                     const std::function<int(int, int)>& add, int sigma_node) {
  std::function<int(unsigned, bool)> rec = [&](unsigned s, bool sig) -> int {
    if ((s & (s - 1)) == 0) return part(static_cast<unsigned>(__builtin_ctz(s)), sig);
    const unsigned a = t.split[sig ? 1 : 0][s];
    if (sig && a == 0) return add(rec(s, false), sigma_node);
    const bool in_b = sig && t.in_b[s];
    const int x = rec(a, sig && !in_b);
    const int y = rec(s ^ a, in_b);
    return add(x, y);
  };
  return rec(t.full, with_sigma);
}

/// The cluster chosen so far: its pieces' scores combined, the product of their sizes,
/// and |z ∪ pieces| (= |z| times each piece's extra: pieces share no axis).
struct ComponentDp::Partial {
  SatCount values, outer, merged;
};

/// The least a cluster can score: its parts, the last outer product (the pieces' product)
/// and the step with z (at least |z ∪ pieces| FLOPs). It only grows as pieces join.
SatCount ComponentDp::bound(SatCount values, SatCount outer, SatCount merged) const {
  return w_.combine(w_.combine(values, w_.step(outer, outer, false)), w_.step(merged, 0, false));
}

void ComponentDp::note_eligible(int z, int piece) {
  if (eligible_.size() < states_.size()) eligible_.resize(states_.size());
  const State& Z = states_[static_cast<std::size_t>(z)];
  const State& P = states_[static_cast<std::size_t>(piece)];
  if (swap_prune_ && SatCount(2) * Z.size < P.size) return;
  const SatCount values = w_.combine(least(z), least(piece));
  if (no_zero_ && bound(values, P.size, Z.size) > limits_.cap) return;
  SatCount extra = 1;
  for (std::size_t i = 0; i < words_; ++i)
    for (std::uint64_t b = res(piece)[i] & ~res(z)[i]; b; b &= b - 1)
      extra *= net_.length[i * 64 + static_cast<std::size_t>(__builtin_ctzll(b))];
  if (no_zero_ && bound(values, P.size, Z.size * extra) > limits_.cap) return;
  std::vector<Eligible>& el = eligible_[static_cast<std::size_t>(z)];
  const Eligible e{piece, P.count, least(piece), extra};
  el.insert(std::upper_bound(el.begin(), el.end(), e, [](const Eligible& a, const Eligible& b) { return a.count < b.count; }),
            e);
}

// Each cluster is tried once, at the level of its largest part (all its parts are final
// then, and its result is larger still): a state z of that level with any set of its
// pieces, or a smaller z with sets holding a piece of that level (the first such piece in
// the list anchors the set).
void ComponentDp::clusters(int level) {
  std::vector<int> pieces;
  for (int s = 1; s <= level; ++s)
    for (int z : level_[static_cast<std::size_t>(s)]) {
      if (static_cast<std::size_t>(z) >= eligible_.size()) continue;
      const std::vector<Eligible>& el = eligible_[static_cast<std::size_t>(z)];
      if (el.size() < 2) continue;
      const Partial none{least(z), 1, states_[static_cast<std::size_t>(z)].size};
      if (s == level) {
        dfs(z, 0, el.size(), pieces, none);
        continue;
      }
      const auto anchors = static_cast<std::size_t>(
          std::lower_bound(el.begin(), el.end(), level, [](const Eligible& e, int c) { return e.count < c; }) - el.begin());
      for (std::size_t a = anchors; a < el.size(); ++a) {
        pieces.assign(1, el[a].id);
        const Partial one{w_.combine(none.values, el[a].least), states_[static_cast<std::size_t>(el[a].id)].size,
                          none.merged * el[a].extra};
        dfs(z, 0, anchors, pieces, one);   // the smaller pieces
        dfs(z, a + 1, el.size(), pieces, one);  // and the later ones of this level
      }
    }
}

/// Extends `pieces` by the eligible pieces of z from index `from` (below `end`), in order,
/// trying every set of two or more.
void ComponentDp::dfs(int z, std::size_t from, std::size_t end, std::vector<int>& pieces, const Partial& partial) {
  const std::vector<Eligible>& el = eligible_[static_cast<std::size_t>(z)];
  Mask taken = states_[static_cast<std::size_t>(z)].mask, touched = 0;
  for (int p : pieces) {
    taken |= states_[static_cast<std::size_t>(p)].mask;
    touched |= states_[static_cast<std::size_t>(p)].nbr;
  }
  for (std::size_t i = from; i < end && tick(); ++i) {
    const State& p = states_[static_cast<std::size_t>(el[i].id)];
    if ((p.mask & taken) || (p.mask & touched)) continue;
    const Partial next{w_.combine(partial.values, el[i].least), partial.outer * p.size, partial.merged * el[i].extra};
    if (no_zero_ && bound(next.values, next.outer, next.merged) > limits_.cap) continue;
    pieces.push_back(el[i].id);
    if (pieces.size() >= 2) cluster(z, pieces);
    if (pieces.size() < kMaxPieces) dfs(z, i + 1, end, pieces, next);
    pieces.pop_back();
  }
}

Joined ComponentDp::product(const std::vector<int>& pieces, SatCount& size) const {
  const State& A = states_[static_cast<std::size_t>(pieces[0])];
  const State& B = states_[static_cast<std::size_t>(pieces[1])];
  if (pieces.size() == 2) {  // directly
    size = A.size * B.size;
    if (!w_.fits(size, false)) return Joined{};
    return join(w_, sigma_, A.value, A.ok, B.value, B.ok, w_.step(size, size, false));
  }
  std::vector<Part> parts;
  for (int id : pieces) {
    const State& s = states_[static_cast<std::size_t>(id)];
    parts.push_back({s.size, {s.value[0], s.value[1]}, {s.ok[0], s.ok[1]}});
  }
  const OuterTable o = outer_table(parts, w_, sigma_, false);
  size = o.size[o.full];
  Joined j;
  for (std::size_t i = 0; i < 2; ++i) {
    j.value[i] = o.value[i][o.full];
    j.ok[i] = o.ok[i][o.full];
  }
  return j;
}

void ComponentDp::cluster(int z, const std::vector<int>& pieces) {
  const State& Z = states_[static_cast<std::size_t>(z)];
  if (swap_prune_ && pieces.size() == 2) {
    const SatCount outer = states_[static_cast<std::size_t>(pieces[0])].size * states_[static_cast<std::size_t>(pieces[1])].size;
    for (int piece : {pieces[0], pieces[1]}) {
      for (std::size_t j = 0; j < words_; ++j) scratch_u_[j] = res(z)[j] | res(piece)[j];
      if (SatCount(2) * size_of(scratch_u_.data()) < outer) return;
    }
  }
  SatCount so;
  const Joined o = product(pieces, so);
  if (!o.ok[0] && !o.ok[1]) return;
  Mask p = Z.mask, nbr = Z.nbr;
  for (std::size_t j = 0; j < words_; ++j) scratch_u_[j] = res(z)[j];
  for (int id : pieces) {
    p |= states_[static_cast<std::size_t>(id)].mask;
    nbr |= states_[static_cast<std::size_t>(id)].nbr;
    for (std::size_t j = 0; j < words_; ++j) scratch_u_[j] |= res(id)[j];
  }
  kept(scratch_u_.data(), p, scratch_r_.data());
  bool sums = false;
  for (std::size_t j = 0; j < words_; ++j) sums = sums || scratch_u_[j] != scratch_r_[j];
  const SatCount size_p = size_of(scratch_r_.data());
  const bool last = is_last(p);
  if (!w_.fits(size_p, last)) return;
  const SatCount step =
      w_.step(convention::pairwise_flops(Z.size, Z.size, so, so, size_of(scratch_u_.data()), sums), size_p, last);
  const Joined j = join(w_, sigma_, Z.value, Z.ok, o.value, o.ok, step);
  const std::size_t at = pieces_.size();
  pieces_.push_back(static_cast<int>(pieces.size()));
  pieces_.insert(pieces_.end(), pieces.begin(), pieces.end());
  if (!offer(p, nbr & ~p, scratch_r_.data(), size_p, j.value, j.ok, Split{Split::cluster, j.in_b, z, static_cast<int>(at)}))
    pieces_.resize(at);
}

struct ComponentDp::Emitter {
  Tree& tree;
  int& next;
  int sigma_node;
  int add(int a, int b) {
    tree.steps.emplace_back(a, b);
    return next++;
  }
};

int ComponentDp::emit(Tree& tree, int& next, bool with_sigma, int sigma_node) const {
  EINEXPR_ASSERT(top_ >= 0, "connected_dp: emit before a tree was found");
  Emitter e{tree, next, sigma_node};
  return emit_state(e, top_, with_sigma);
}

int ComponentDp::emit_state(Emitter& e, int id, bool sig) const {
  const Split& s = states_[static_cast<std::size_t>(id)].split[sig ? 1 : 0];
  switch (s.kind) {
    case Split::leaf: return s.a;
    case Split::absorb: return e.add(emit_state(e, id, false), e.sigma_node);
    case Split::pair: {
      const int a = emit_state(e, s.a, sig && !s.sigma_in_b);
      return e.add(a, emit_state(e, s.b, sig && s.sigma_in_b));
    }
    case Split::cluster: {
      const auto at = static_cast<std::size_t>(s.b);
      const std::vector<int> pieces(pieces_.begin() + static_cast<std::ptrdiff_t>(at) + 1,
                                    pieces_.begin() + static_cast<std::ptrdiff_t>(at) + 1 + pieces_[at]);
      const int z = emit_state(e, s.a, sig && !s.sigma_in_b);
      std::vector<Part> parts;
      for (int p : pieces) {
        const State& st = states_[static_cast<std::size_t>(p)];
        parts.push_back({st.size, {st.value[0], st.value[1]}, {st.ok[0], st.ok[1]}});
      }
      const OuterTable o = outer_table(parts, w_, sigma_, false);
      const int x = emit_outer_table(
          o, sig && s.sigma_in_b, [&](unsigned i, bool g) { return emit_state(e, pieces[i], g); },
          [&](int a, int b) { return e.add(a, b); }, e.sigma_node);
      return e.add(z, x);
    }
  }
  return -1;
}

}  // namespace einexpr::order::detail
