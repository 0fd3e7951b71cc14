// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The host backend's own machinery: the thread pool's loop covers every index exactly once for
// any grain and thread count, also when more threads than cores compete. (The products'
// kernels: test_host_products.cpp.)
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "baton/backend/host_context.hpp"
#include "baton/backend/host_simd.hpp"
#include "baton/backend/thread_pool.hpp"
#include "baton/core/dtype.hpp"
#include "support/expect_error.hpp"
#include "support/not_run.hpp"

using namespace baton;
using host_simd::Isa;

TEST_CASE("the best ISA is one the CPU runs, and a context refuses one it does not") {
  CHECK(host_simd::cpu_supports(host_simd::best_isa()));
  CHECK(host_simd::cpu_supports(Isa::portable));
  for (Isa isa : {Isa::avx2, Isa::avx512}) {
    if (host_simd::cpu_supports(isa)) {
      HostContext ctx({.threads = 1, .isa = isa});
      CHECK(ctx.isa() == isa);
    } else {
      test::expect_error<usage_error>([&] { HostContext ctx({.threads = 1, .isa = isa}); },
                                      {"does not run it"});
    }
  }
}

TEST_CASE("the pool's loop runs every index exactly once") {
  for (int threads : {1, 2, 3, 8}) {  // 8 > cores: descheduled workers must not lose chunks
    ThreadPool pool(threads, std::chrono::microseconds(threads == 3 ? 0 : 50));
    CHECK(pool.size() == threads);
    for (long n : {0L, 1L, 2L, 7L, 64L, 1000L, 4099L})
      for (long grain : {1L, 3L, 64L, 5000L}) {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        std::atomic<int> bad_chunks{0};  // doctest's CHECK is not thread-safe: count here
        for (int rep = 0; rep < 3; ++rep)
          pool.parallel_for(n, grain, [&](long b, long e) {
            if (e - b < 1 || e - b > grain || b % grain != 0) bad_chunks.fetch_add(1);
            for (long i = b; i < e; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1);
          });
        int wrong = bad_chunks.load();
        for (auto& h : hits) wrong += h.load() != 3;
        CHECK_MESSAGE(wrong == 0, threads, " threads, n ", n, ", grain ", grain);
      }
  }
}

TEST_CASE("the pool's tapered loop runs every index once, in whole units, no chunk over grain") {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads, std::chrono::microseconds(threads == 3 ? 0 : 50));
    for (long n : {1L, 7L, 64L, 1000L, 4099L})
      for (const auto& shape : {std::pair{1L, 1L}, {8L, 1L}, {64L, 3L}, {250L, 16L}, {5000L, 7L}}) {
        // named copies, not a structured binding: clang cannot capture one in these lambdas
        const long grain = shape.first, unit = shape.second;
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        std::atomic<int> bad_chunks{0}, short_chunks{0}, chunks{0};
        pool.parallel_for_tapered(n, grain, unit, [&](long b, long e) {
          chunks.fetch_add(1);
          if (e - b < 1 || e - b > grain || b % unit != 0 || (e != n && (e - b) % unit != 0))
            bad_chunks.fetch_add(1);
          if (e - b < grain && e != n) short_chunks.fetch_add(1);
          for (long i = b; i < e; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1);
        });
        int wrong = bad_chunks.load();
        for (auto& h : hits) wrong += h.load() != 1;
        CHECK_MESSAGE(wrong == 0, threads, " threads, n ", n, ", grain ", grain, ", unit ", unit);
        // With more than one thread, a long loop's last chunks are smaller than grain (the
        // taper), and it takes fewer chunks than units (the bulk moves in whole grains).
        if (threads > 1 && n >= 1000 && grain >= 4 * unit && grain < n / 4) {
          CHECK_MESSAGE(short_chunks.load() > 0, threads, " threads, n ", n, ", grain ", grain);
          CHECK(chunks.load() < (n + unit - 1) / unit);
        }
      }
  }
}

TEST_CASE("the pool survives many short loops after its workers went to sleep") {
  ThreadPool pool(2, std::chrono::microseconds(0));  // sleep at once: every loop wakes a worker
  std::atomic<long> sum{0};
  for (int rep = 0; rep < 2000; ++rep)
    pool.parallel_for(4, 1, [&](long b, long) { sum.fetch_add(b + 1); });
  CHECK(sum.load() == 2000L * 10);
  CHECK_THROWS_AS(ThreadPool(0), usage_error);
}
