// einexpr's thread pool (parallel.hpp): pieces claimed from one atomic word, no barrier, idle
// threads spinning briefly then sleeping on a futex.
#include "einexpr/runtime/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EINEXPR_PAUSE() _mm_pause()
#else
#define EINEXPR_PAUSE() ((void)0)
#endif

#include "einexpr/runtime/threads.hpp"

namespace einexpr {

namespace {

using Clock = std::chrono::steady_clock;

/// How long an idle pool thread keeps looking for the next job before it sleeps: long enough
/// for a run of small kernels (a plan's steps) to find it awake, short enough to leave the
/// core to other work soon after.
constexpr auto spin_time = std::chrono::microseconds(50);
/// How long a caller that has run out of pieces spins for the pieces others hold before it
/// sleeps until the last one is done.
constexpr auto caller_spin_time = std::chrono::microseconds(20);
/// After a job whose caller waited long for a piece another thread held (that thread was off
/// its core: other work holds the cores), jobs run on their caller alone for a while: at
/// first this long, doubling with each stall that comes within stall_memory_ns of the last
/// (the cores stay busy), up to the longest; a stall after a longer calm starts again at the
/// first (a quiet machine's rare interrupt costs 2 ms on one thread).
constexpr std::int64_t first_backoff_ns = 2'000'000, longest_backoff_ns = 128'000'000;
constexpr std::int64_t stall_memory_ns = 250'000'000;
/// A wait for another thread's piece longer than two of the caller's own pieces by more than
/// this is a stall (judge() below says why 1 ms).
constexpr std::int64_t stall_margin_ns = 1'000'000;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// The claim word: (epoch, pieces, next piece) of the current job, so that a thread can tell
// from the one value it compares and swaps whether a piece is left, whatever job it
// was looking at before (a thread late for job E never claims a piece of job E + 1 with E's
// count: the CAS compares the whole word).
constexpr int piece_bits = 20;
constexpr std::uint64_t piece_mask = (std::uint64_t{1} << piece_bits) - 1;
constexpr std::int64_t most_pieces = static_cast<std::int64_t>(piece_mask);
constexpr std::uint64_t claim_word(std::uint64_t epoch, std::uint64_t pieces, std::uint64_t next) {
  return (epoch << (2 * piece_bits)) | (pieces << piece_bits) | next;
}

thread_local bool in_pool_thread = false;
thread_local int pool_index = 0;
thread_local bool in_job = false;  // this thread is running a job's pieces (as caller or helper)

struct InJob {
  InJob() { in_job = true; }
  ~InJob() { in_job = false; }
};

class Pool {
 public:
  static Pool& get() {
    static Pool* pool = new Pool;  // never destroyed: its threads sleep until the process ends
    return *pool;
  }

  void run(std::int64_t n, std::int64_t pieces, detail::PieceFn fn, const void* context) {
    const int threads = num_threads();
    if (pieces <= 1 || threads <= 1 || in_job || now_ns() < serial_until_.load(std::memory_order_relaxed) ||
        !busy_.try_lock()) {
      if (pieces > 1 && threads > 1) serial_jobs_.fetch_add(1, std::memory_order_relaxed);
      for (std::int64_t p = 0; p < pieces; ++p) {
        const auto [b, e] = piece_range(n, p, pieces);
        if (b < e) fn(context, p, b, e);
      }
      return;
    }
    std::lock_guard<std::mutex> hold(busy_, std::adopt_lock);
    const InJob job;
    grow(threads - 1);
    jobs_.fetch_add(1, std::memory_order_relaxed);
    const std::int64_t start = now_ns();
    // Publish: the fields, then the claim word (release), then wake the sleepers.
    n_ = n;
    pieces_ = pieces;
    fn_ = fn;
    context_ = context;
    error_ = nullptr;
    helpers_.store(threads - 1, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    const std::uint64_t epoch = (claim_.load(std::memory_order_relaxed) >> (2 * piece_bits)) + 1;
    claim_.store(claim_word(epoch, static_cast<std::uint64_t>(pieces), 0), std::memory_order_release);
    wake_.fetch_add(1);  // seq_cst with sleeping_: a thread going to sleep sees the job or is woken
    if (sleeping_.load() > 0) wake_.notify_all();
    // The caller works too, then waits only for the pieces others took.
    std::int64_t mine = 0;
    for (std::int64_t p; (p = take()) >= 0; ++mine) work(p);
    caller_pieces_.fetch_add(mine, std::memory_order_relaxed);
    const std::int64_t own_done = now_ns();
    const auto target = static_cast<std::uint32_t>(pieces);
    const auto until = Clock::now() + caller_spin_time;
    for (int spins = 0; done_.load(std::memory_order_acquire) < target; ++spins) {
      EINEXPR_PAUSE();
      if (spins % 64 == 63 && Clock::now() > until) {
        // A helper holding a piece is off its core: sleep until the last piece is done
        // rather than take a core from it.
        caller_waiting_.store(true);
        for (std::uint32_t d; (d = done_.load()) < target;) done_.wait(d);
        caller_waiting_.store(false, std::memory_order_relaxed);
        break;
      }
    }
    judge(start, own_done, mine);
    if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(error_);
  }

  PoolStats stats() const noexcept {
    return {jobs_.load(), caller_pieces_.load(), pool_pieces_.load(), serial_jobs_.load(), stalls_.load()};
  }

 private:
  /// After the job: did the caller wait for a piece held by a thread that was off its core?
  /// Healthy, it waits at most about one piece (the last one another thread started before
  /// the caller ran out); a stall is a scheduler slice (milliseconds). Under busy_.
  /// The margin is stall_margin_ns, not less: a pool thread just woken from its futex holds
  /// its piece 75-155 µs longer than its pieces take on a quiet Zen 5 guest (the vCPU's
  /// wake-up), while a thread taken off its core holds it 4-8 ms (two compile loops beside
  /// it); with a 50 µs margin the first shared job after every backoff was judged a stall, and
  /// the backoff stayed at its 128 ms ceiling on a quiet machine (bench/RESULTS.md).
  void judge(std::int64_t start, std::int64_t own_done, std::int64_t mine) {
    if (mine == 0) return;  // pool threads took every piece: nothing to compare with
    const std::int64_t waited = now_ns() - own_done, per_piece = (own_done - start) / mine;
    if (waited > 2 * per_piece + stall_margin_ns) {
      const std::int64_t now = now_ns();
      stalls_.fetch_add(1, std::memory_order_relaxed);
      backoff_ns_ = now - last_stall_ns_ < stall_memory_ns ? std::min(2 * backoff_ns_, longest_backoff_ns)
                                                           : first_backoff_ns;
      last_stall_ns_ = now;
      serial_until_.store(now + backoff_ns_, std::memory_order_relaxed);
    }
  }

  /// The next piece of the job the claim word holds, or -1 when it has none left.
  std::int64_t take() {
    std::uint64_t v = claim_.load(std::memory_order_acquire);
    for (;;) {
      const std::uint64_t next = v & piece_mask, pieces = (v >> piece_bits) & piece_mask;
      if (next >= pieces) return -1;
      if (claim_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire))
        return static_cast<std::int64_t>(next);
    }
  }

  /// Runs piece p of the job whose piece it claimed: the job cannot end (nor its fields
  /// change) before this piece is counted done.
  void work(std::int64_t p) {
    const auto pieces = static_cast<std::uint32_t>(pieces_);  // read before the count lets the job end
    const auto [b, e] = piece_range(n_, p, pieces_);
    if (b < e && !failed_.load(std::memory_order_relaxed)) {
      try {
        fn_(context_, p, b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_lock_);
        if (!failed_.load(std::memory_order_relaxed)) {
          error_ = std::current_exception();
          failed_.store(true, std::memory_order_relaxed);
        }
      }
    }
    // seq_cst with caller_waiting_: a caller going to sleep sees the count or is woken.
    if (done_.fetch_add(1) + 1 == pieces && caller_waiting_.load()) done_.notify_one();
  }

  void grow(int wanted) {
    while (workers_ < wanted) {
      const int index = workers_ + 1;
      std::thread([this, index] { loop(index); }).detach();  // may throw: the caller runs every piece then
      ++workers_;
    }
  }

  void loop(int index) {
    in_pool_thread = true;
    pool_index = index;
    std::uint32_t seen = wake_.load(std::memory_order_acquire);
    for (;;) {
      // Wait for the next job: spin a while, then sleep.
      const auto until = Clock::now() + spin_time;
      int spins = 0;
      while (wake_.load(std::memory_order_acquire) == seen) {
        EINEXPR_PAUSE();
        if (++spins % 64 == 0 && Clock::now() > until) {
          sleeping_.fetch_add(1);
          if (wake_.load() == seen) wake_.wait(seen);  // returns at once if a job came meanwhile
          sleeping_.fetch_sub(1);
        }
      }
      seen = wake_.load(std::memory_order_acquire);
      if (index > helpers_.load(std::memory_order_relaxed)) continue;  // fewer threads asked for
      const InJob job;
      std::int64_t mine = 0;
      for (std::int64_t p; (p = take()) >= 0; ++mine) work(p);
      pool_pieces_.fetch_add(mine, std::memory_order_relaxed);
    }
  }

  std::mutex busy_;                      // one job at a time
  std::atomic<std::uint64_t> claim_{0};  // claim_word(epoch, pieces, next piece)
  std::atomic<std::uint32_t> wake_{0};   // bumped per job; idle threads sleep on it
  std::atomic<int> sleeping_{0};
  std::atomic<std::uint32_t> done_{0};  // pieces finished (run or skipped) of the current job
  std::atomic<bool> caller_waiting_{false};
  std::atomic<int> helpers_{0};
  int workers_ = 0;  // under busy_
  std::int64_t backoff_ns_ = first_backoff_ns;  // under busy_
  std::int64_t last_stall_ns_ = INT64_MIN / 2;   // under busy_
  std::atomic<std::int64_t> serial_until_{0};   // now_ns() before which jobs run on their caller
  // The job's fields: written by the caller before it publishes the claim word (release),
  // read by a thread after it claimed a piece of that job (acquire), so they are the job's.
  std::int64_t n_ = 0, pieces_ = 0;
  detail::PieceFn fn_ = nullptr;
  const void* context_ = nullptr;
  std::atomic<bool> failed_{false};
  std::mutex error_lock_;
  std::exception_ptr error_;
  std::atomic<std::int64_t> jobs_{0}, caller_pieces_{0}, pool_pieces_{0}, serial_jobs_{0}, stalls_{0};
};

}  // namespace

namespace detail {
void run_parallel(std::int64_t n, std::int64_t pieces, PieceFn fn, const void* context) {
  if (n <= 0 || pieces <= 0) return;
  Pool::get().run(n, std::min({pieces, n, most_pieces}), fn, context);
}
}  // namespace detail

std::int64_t pieces_for(std::int64_t n, std::int64_t grain) noexcept {
  const std::int64_t most = std::max<std::int64_t>(1, n / std::max<std::int64_t>(grain, 1));
  return std::min<std::int64_t>(most, 4 * static_cast<std::int64_t>(num_threads()));
}

PoolStats pool_stats() noexcept { return Pool::get().stats(); }

int thread_index() noexcept { return in_pool_thread ? pool_index : 0; }

}  // namespace einexpr
