#pragma once
// einexpr's own CPU threads: parallel_for(n, pieces, fn) cuts [0, n) into `pieces` ranges (in
// order, their bounds fixed by n and pieces alone) and runs fn(piece, begin, end) for each, on
// the calling thread and on up to num_threads() - 1 pool threads. Made for a shared machine,
// where a thread that is not running may hold no work and stall no one:
//   - a piece goes to whichever thread asks first (one atomic counter), so the caller does
//     every piece a sleeping or descheduled pool thread never took;
//   - the caller waits only for the pieces others took, never for threads to check in (no
//     barrier): a pool thread woken too late finds nothing left and goes back to sleep; a
//     caller whose last piece is held by a thread off its core spins about 20 µs, then
//     sleeps until that piece is done;
//   - an idle pool thread spins for a bounded time (about 50 µs), then sleeps on a futex
//     (std::atomic::wait), so it holds no core another process needs;
//   - after a stall (the caller waited for a piece another thread held more than 1 ms past
//     two of its own pieces: that thread was off its core; a thread just woken is late by
//     only ~0.1 ms), jobs run on their caller alone for 2 ms,
//     doubling (up to 128 ms) with each stall within 250 ms of the last: on a machine whose
//     cores other work holds, einexpr runs as one thread would, not a scheduler slice
//     slower; on a quiet one a rare stall costs 2 ms on one thread.
// Results are the same on any schedule: fn's pieces are fixed, and a caller that combines
// per-piece partial results combines them in piece order. One job runs on the pool at a
// time; a caller that finds it busy (another thread's job), and a call from inside a piece,
// runs its pieces itself, in order. An exception thrown by fn is rethrown in the caller (the
// first one; pieces not yet started are skipped). At most 2^20 - 1 pieces (more are cut into
// that many).
#include <cstdint>
#include <type_traits>
#include <utility>

namespace einexpr {

namespace detail {
using PieceFn = void (*)(const void* context, std::int64_t piece, std::int64_t begin, std::int64_t end);
void run_parallel(std::int64_t n, std::int64_t pieces, PieceFn fn, const void* context);
}  // namespace detail

/// The bounds of piece `piece` of `pieces` over [0, n): as even as integers allow.
constexpr std::pair<std::int64_t, std::int64_t> piece_range(std::int64_t n, std::int64_t piece,
                                                            std::int64_t pieces) noexcept {
  const std::int64_t per = n / pieces, extra = n % pieces;
  const std::int64_t begin = piece * per + (piece < extra ? piece : extra);
  return {begin, begin + per + (piece < extra ? 1 : 0)};
}

/// fn(piece, begin, end) for every piece of [0, n) (pieces >= 1; empty pieces are skipped).
template <class F>
void parallel_for(std::int64_t n, std::int64_t pieces, F&& fn) {
  using Fn = std::remove_reference_t<F>;
  detail::run_parallel(
      n, pieces,
      [](const void* context, std::int64_t piece, std::int64_t begin, std::int64_t end) {
        (*static_cast<Fn*>(const_cast<void*>(context)))(piece, begin, end);
      },
      static_cast<const void*>(&fn));
}

/// How many pieces to cut `n` items into when each piece should have at least `grain`
/// items: a few per thread (so a late thread's share can be taken), at least one.
std::int64_t pieces_for(std::int64_t n, std::int64_t grain) noexcept;

/// What the pool did since the process started (tests, the bench): jobs shared out, pieces
/// the caller ran, pieces pool threads ran, jobs of more than one piece run on their caller
/// alone (the pool was busy, a nested call, or a backoff after a stall), and stalls (jobs
/// whose caller waited long for a piece a thread off its core held).
struct PoolStats {
  std::int64_t jobs = 0, caller_pieces = 0, pool_pieces = 0, serial_jobs = 0, stalls = 0;
};
PoolStats pool_stats() noexcept;

}  // namespace einexpr
