// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A persistent pool of worker threads that wait by spinning briefly and then sleeping,
///        and share a loop's chunks through one atomic ticket.
///
/// Why not OpenMP: libgomp reads its wait policy once, when it loads, and its default spins
/// for a long time at every barrier. A decode step has dozens of parallel regions; when another
/// process holds one of the cores, a spinning team waits for a descheduled member at each of
/// them (decode became 3-10x slower on a shared 2-core machine). Here a waiting thread spins
/// for `spin` (microseconds: the next region usually comes that soon) and then sleeps on a
/// futex (C++20 atomic wait), and chunks are claimed dynamically, so whoever is running does
/// the work of a descheduled peer instead of waiting for it.
///
/// The pool is an object the caller creates and owns (no global); the host backend reaches it
/// through the Workspace it is given (see host_context.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace baton {

class ThreadPool {
 public:
  /// The most threads a pool may have: kMaxThreads, or the machine's hardware threads where
  /// it has more. More threads than cores only take turns, and each reserves a stack (8 MiB
  /// by default): 256 of them fit a 4 GB address space, the 1024 a file once asked for do not.
  static constexpr int kMaxThreads = 256;
  static int max_threads() noexcept {
    return std::max(kMaxThreads, static_cast<int>(std::thread::hardware_concurrency()));
  }

  /// `threads` workers in all, the calling thread included (so threads - 1 are started);
  /// `spin`: how long an idle worker, and the caller at the end of a loop, spins before
  /// sleeping. usage_error for a count outside [1, max_threads()]; io_error when the system
  /// refuses a thread (a process or memory limit), after the ones started are stopped.
  explicit ThreadPool(int threads, std::chrono::microseconds spin = std::chrono::microseconds(50))
      : spin_(spin) {
    BATON_CHECK(threads >= 1 && threads <= max_threads(), usage_error,
                "ThreadPool: threads = ", threads, " is outside [1, ", max_threads(),
                "] (ThreadPool::max_threads(): 256, or the machine's hardware threads if more)");
    workers_.reserve(static_cast<std::size_t>(threads - 1));
    try {
      for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
    } catch (const std::system_error& e) {
      // The destructor does not run for a constructor that throws, and a joinable
      // std::thread's destructor terminates the process: stop and join the started ones here.
      const int started = size();
      stop_and_join();
      BATON_FAIL(io_error, "ThreadPool: the system refused thread ", started + 1, " of ", threads,
                 " (", e.what(),
                 "); a process or memory limit is lower than that: ask for "
                 "fewer threads");
    }
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() { stop_and_join(); }

  int size() const noexcept { return static_cast<int>(workers_.size()) + 1; }
  /// How many loops (parallel_for calls with work) this pool has run: what a caller checks to
  /// see that its work reached the pool (a relay's stages, a command's forward).
  std::uint64_t loops() const noexcept { return loops_; }

  /// Calls f(begin, end) over [0, n) in chunks of at most `grain` indices (the last one
  /// shorter), each chunk exactly once, on the pool's threads and the caller; returns when all
  /// are done. Which thread runs a chunk is not fixed, so f must not depend on it (each index's
  /// result must depend on the index alone: that keeps results identical for any thread
  /// count). Not reentrant: one loop at a time per pool, from one calling thread.
  template <class F>
  void parallel_for(long n, long grain, F&& f) {
    parallel_for_tapered(n, grain, grain, std::forward<F>(f));
  }

  /// parallel_for whose chunks taper at the loop's end: `grain` indices while much is left,
  /// then a share of what is left (a 2·size()-th of it), down to `unit` indices; every chunk
  /// starts at a multiple of `unit`. Why: a loop ends when its last chunk does, and with equal
  /// chunks one thread can still be in a whole chunk while the others have nothing left (the
  /// waits at the end of decode's 33 products a step). Small last chunks end the threads
  /// nearly together; the bulk still moves in `grain`-sized chunks, so a descheduled thread
  /// holds no more than it did.
  template <class F>
  void parallel_for_tapered(long n, long grain, long unit, F&& f) {
    if (n <= 0) return;
    ++loops_;  // only the calling thread writes it (one loop at a time)
    if (unit < 1) unit = 1;
    grain = std::max(unit, grain / unit * unit);  // whole units
    const long units = (n + unit - 1) / unit;
    if (workers_.empty() || grain >= n) {
      for (long b = 0; b < n; b += grain) f(b, b + grain < n ? b + grain : n);
      return;
    }
    BATON_CHECK(units < (1L << 31), usage_error, "ThreadPool: ", units, " units in one loop");
    using Fn = std::remove_reference_t<F>;
    job_ = Job{[](void* ctx, long b, long e) { (*static_cast<Fn*>(ctx))(b, e); },
               const_cast<void*>(static_cast<const void*>(&f)), n, unit,
               static_cast<std::uint32_t>(units)};
    // A claim takes the units left / 2·size(), within [1, grain / unit] (the high half).
    claim_shape_.store(pack(static_cast<std::uint32_t>(std::min(grain / unit, units)),
                            static_cast<std::uint32_t>(2 * size())),
                       std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    ++generation_;
    // Publishing the ticket (release) makes job_ visible to whoever claims a chunk of it.
    ticket_.store(pack(generation_, job_.units), std::memory_order_release);
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) wake(epoch_, true);
    run_chunks(generation_);
    wait_done(job_.units);
  }

 private:
  struct Job {
    void (*fn)(void*, long, long) = nullptr;
    void* ctx = nullptr;
    long n = 0, unit = 1;
    std::uint32_t units = 0;  ///< ceil(n / unit)
  };

  // The ticket packs the loop's generation (high 32 bits) and the units still unclaimed (low
  // 32). A claim is a compare-exchange that takes units off the low half while the generation
  // is the one the claimer saw: success means a unit of that loop is unfinished, so the caller
  // is still inside it and job_ still describes it. Units are claimed from the front, so the
  // units left say where the claim starts.
  static std::uint64_t pack(std::uint32_t gen, std::uint32_t left) {
    return (static_cast<std::uint64_t>(gen) << 32) | left;
  }

  // Sleeping and waking on a 32-bit word: the futex itself on Linux (libstdc++ 12's
  // atomic::wait lost wake-ups in this pool's tests), the standard wait elsewhere.
  static void sleep_while(std::atomic<std::uint32_t>& a, std::uint32_t v) noexcept {
#if defined(__linux__)
    static_assert(sizeof(std::atomic<std::uint32_t>) == 4);
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&a), FUTEX_WAIT_PRIVATE, v, nullptr,
            nullptr, 0);
#else
    a.wait(v);
#endif
  }
  static void wake(std::atomic<std::uint32_t>& a, bool all) noexcept {
#if defined(__linux__)
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&a), FUTEX_WAKE_PRIVATE, all ? 1 << 30 : 1,
            nullptr, nullptr, 0);
#else
    all ? a.notify_all() : a.notify_one();
#endif
  }

  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
  }

  void stop_and_join() noexcept {
    stop_.store(true);
    epoch_.fetch_add(1);
    wake(epoch_, true);
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  /// Claims and runs chunks of loop `gen` until none is left.
  void run_chunks(std::uint32_t gen) {
    std::uint64_t t = ticket_.load(std::memory_order_acquire);
    for (;;) {
      if (static_cast<std::uint32_t>(t >> 32) != gen || (t & 0xffffffffu) == 0) return;
      // The claim's size is read before the claim succeeds, while the caller may already be
      // setting up its next loop: hence an atomic beside job_. A size read from the next loop
      // only sizes a claim that the compare-exchange then refuses (the generation moved).
      const auto left = static_cast<std::uint32_t>(t & 0xffffffffu);
      const std::uint64_t shape = claim_shape_.load(std::memory_order_relaxed);
      const std::uint32_t take = std::clamp(left / static_cast<std::uint32_t>(shape), 1u,
                                            static_cast<std::uint32_t>(shape >> 32));
      if (!ticket_.compare_exchange_weak(t, t - take, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
        continue;
      const Job j = job_;  // a copy: once the last unit is counted the caller may reuse job_
      const long first = static_cast<long>(j.units - left);
      const long b = first * j.unit, e = std::min(j.n, (first + static_cast<long>(take)) * j.unit);
      j.fn(j.ctx, b, e);
      if (done_.fetch_add(take, std::memory_order_acq_rel) + take == j.units &&
          caller_sleeping_.load(std::memory_order_seq_cst))
        wake(done_, false);
      t = ticket_.load(std::memory_order_acquire);
    }
  }

  void wait_done(std::uint32_t units) {
    const auto until = std::chrono::steady_clock::now() + spin_;
    int k = 0;
    while (done_.load(std::memory_order_acquire) != units) {
      if ((++k & 63) != 0 || std::chrono::steady_clock::now() < until) {
        pause();
        continue;
      }
      caller_sleeping_.store(true, std::memory_order_seq_cst);
      std::uint32_t d = done_.load(std::memory_order_seq_cst);
      while (d != units) {
        sleep_while(done_, d);
        d = done_.load(std::memory_order_acquire);
      }
      caller_sleeping_.store(false, std::memory_order_relaxed);
    }
  }

  void worker_loop() {
    // 0, the epoch at construction, not a fresh load: a worker that starts late must still
    // see the loops (and the stop) that were announced before it ran.
    std::uint32_t seen = 0;
    for (;;) {
      // Spin for spin_, then sleep until the epoch moves.
      const auto until = std::chrono::steady_clock::now() + spin_;
      int k = 0;
      std::uint32_t now = epoch_.load(std::memory_order_acquire);
      while (now == seen) {
        if ((++k & 63) != 0 || std::chrono::steady_clock::now() < until) {
          pause();
        } else {
          sleepers_.fetch_add(1, std::memory_order_seq_cst);
          sleep_while(epoch_, seen);
          sleepers_.fetch_sub(1, std::memory_order_relaxed);
        }
        now = epoch_.load(std::memory_order_acquire);
      }
      seen = now;
      if (stop_.load()) return;
      const std::uint64_t t = ticket_.load(std::memory_order_acquire);
      run_chunks(static_cast<std::uint32_t>(t >> 32));
    }
  }

  std::chrono::microseconds spin_;
  std::vector<std::thread> workers_;
  Job job_;
  std::uint32_t generation_ = 0;  ///< written by the calling thread only
  std::uint64_t loops_ = 0;       ///< written by the calling thread only
  std::atomic<std::uint64_t> ticket_{0};
  std::atomic<std::uint64_t> claim_shape_{0};  ///< pack(most units a claim takes, share)
  std::atomic<std::uint32_t> done_{0};
  std::atomic<std::uint32_t> epoch_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
};

}  // namespace baton
