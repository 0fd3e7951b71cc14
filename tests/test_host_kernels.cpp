// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The host backend's own machinery: decode's matrix-vector kernels on every instruction set
// this CPU runs (forced one by one) against a double-precision sum, on shapes that are not
// multiples of any vector width; the thread pool's loop covers every index exactly once for
// any grain and thread count, also when more threads than cores compete.
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

namespace {

template <class W>
void check_gemv(Isa isa, int rows, int in, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<W> w(static_cast<std::size_t>(rows) * in);
  std::vector<float> x(in), y(rows, 0.5f);
  for (auto& v : w) v = narrow<W>(u(rng));
  for (auto& v : x) v = u(rng);
  for (int pass = 0; pass < 2; ++pass) {
    const bool acc = pass == 1;  // second pass adds onto the first pass's result
    std::vector<float> before = y;
    host_simd::gemv_rows(isa, w.data(), x.data(), in, 0, rows, y.data(), acc);
    for (int o = 0; o < rows; ++o) {
      double ref = 0, mag = 0;
      for (int i = 0; i < in; ++i) {
        const double p = static_cast<double>(widen(w[static_cast<std::size_t>(o) * in + i])) * x[i];
        ref += p;
        mag += std::fabs(p);
      }
      if (acc) ref += before[o];
      // f32 accumulation of `in` products: a few ulps of the magnitude sum
      CHECK_MESSAGE(std::fabs(y[o] - ref) <= 4e-7 * (mag + std::fabs(ref)) + 1e-30,
                    host_simd::isa_name(isa), " ", dtype_name(dtype_of<W>), " rows ", rows, " in ",
                    in, " row ", o, ": ", y[o], " vs ", ref);
    }
  }
}

}  // namespace

TEST_CASE("decode's matrix-vector kernels agree with a double sum on every ISA the CPU runs") {
  std::mt19937 rng(7);
  int ran = 0;
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
    if (!host_simd::cpu_supports(isa)) {
      test::not_run(std::string("test_host_kernels: decode's GEMV kernels, ") +
                        std::string(host_simd::isa_name(isa)),
                    "this CPU does not run that instruction set");
      continue;
    }
    ++ran;
    for (int in : {1, 3, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 100, 129, 257, 1000})
      for (int rows : {1, 3, 4, 5, 9}) {
        check_gemv<f32>(isa, rows, in, rng);
        check_gemv<bf16>(isa, rows, in, rng);
        check_gemv<f16>(isa, rows, in, rng);
      }
  }
  CHECK(ran >= 1);
}

TEST_CASE("gemv_multi_rows: each row equals gemv_rows on it alone, bit for bit, any row count") {
  // What makes a batched decode row equal the row decoded alone (host_matmul.hpp).
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const auto run = [&]<class W>(W, Isa isa, int n, int in) {
    const int outs = 13, ldx = in + 3, ldy = outs + 2;
    std::vector<W> w(static_cast<std::size_t>(outs) * in);
    std::vector<float> x(static_cast<std::size_t>(n) * ldx), y(static_cast<std::size_t>(n) * ldy);
    for (auto& v : w) v = narrow<W>(u(rng));
    for (auto& v : x) v = u(rng);
    for (auto& v : y) v = u(rng);
    for (const bool acc : {false, true}) {
      std::vector<float> got = y, want = y;
      host_simd::gemv_multi_rows(isa, w.data(), x.data(), ldx, n, in, 2, 11, got.data(), ldy, acc);
      for (int t = 0; t < n; ++t)
        host_simd::gemv_rows(isa, w.data(), x.data() + static_cast<std::size_t>(t) * ldx, in, 2, 11,
                             want.data() + static_cast<std::size_t>(t) * ldy, acc);
      CHECK_MESSAGE(got == want, host_simd::isa_name(isa), " ", dtype_name(dtype_of<W>), " n ", n,
                    " in ", in, " accumulate ", acc);
    }
  };
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
    if (!host_simd::cpu_supports(isa)) continue;  // listed NOT RUN by the case above
    for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17})
      for (int in : {1, 7, 8, 15, 16, 17, 33, 100}) {
        run(f32{}, isa, n, in);
        run(bf16{}, isa, n, in);
        run(f16{}, isa, n, in);
      }
  }
}

TEST_CASE("gemv_rows writes only the rows it is given") {
  std::vector<float> w(10 * 5, 1.0f), x(5, 1.0f), y(10, -1.0f);
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
    if (!host_simd::cpu_supports(isa)) continue;
    std::fill(y.begin(), y.end(), -1.0f);
    host_simd::gemv_rows(isa, reinterpret_cast<const f32*>(w.data()), x.data(), 5, 3, 7, y.data(),
                         false);
    for (int o = 0; o < 10; ++o) CHECK(y[o] == (o >= 3 && o < 7 ? 5.0f : -1.0f));
  }
}

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
