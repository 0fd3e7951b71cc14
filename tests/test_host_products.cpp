// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The host's float products (host_ops::matmul_nt over host_dot.hpp's kernels) on every
// instruction set this CPU runs, forced one by one, against a double-precision sum: shapes that
// are not multiples of any tile (rows, columns) or vector width, f32 / bf16 / f16 weights, row
// strides wider than the rows (the gaps must stay untouched), = and +=. The bf16 products
// (AVX512-BF16, AMX) are checked the same way against a double sum over the activations split
// into two bf16 terms (hi = bf16(x), lo = bf16(x - hi)), which is what they multiply. Then the
// property batching rests on (docs/batching.md): on every path, a row's result is bit-identical
// whether it is multiplied alone, among any number of rows at any place, in any split of the rows,
// on 1 or 3 threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "baton/backend/host_context.hpp"
#include "baton/backend/host_matmul.hpp"
#include "baton/core/dtype.hpp"
#include "support/expect_error.hpp"
#include "support/not_run.hpp"

using namespace baton;
using host_simd::Isa;

namespace {

constexpr float kGap = -7.25f;  // what the stride gaps of Y hold before and after

/// `bf16_products`: on a context with HostContextOptions::bf16_products (W must be bf16); the
/// reference then splits X into hi + lo bf16 terms as the kernel does, and keeps the f32
/// kernel's tolerance.
/// `amx`: those products on the AMX tiles (whole blocks of 32 output rows; the rest vdpbf16ps).
template <class W>
void check_gemm(Isa isa, int n, int in, int out, std::mt19937& rng, bool bf16_products = false,
                bool amx = false) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int ldx = in + 3, ldy = out + 5;
  std::vector<W> w(static_cast<std::size_t>(out) * in);
  std::vector<float> x(static_cast<std::size_t>(n) * ldx), y(static_cast<std::size_t>(n) * ldy);
  for (auto& v : w) v = narrow<W>(u(rng));
  for (auto& v : x) v = u(rng);
  for (int t = 0; t < n; ++t)
    for (int o = 0; o < ldy; ++o)
      y[static_cast<std::size_t>(t) * ldy + o] = o < out ? u(rng) : kGap;
  HostContext ctx({.threads = 2, .isa = isa, .bf16_products = bf16_products, .amx = amx});
  REQUIRE(ctx.bf16_products() == bf16_products);
  REQUIRE(ctx.amx() == amx);  // the kernel asked for is the one that runs
  const auto xval = [&](std::size_t at) -> double {
    if (!bf16_products) return x[at];
    const float hi = widen(narrow<bf16>(x[at]));  // nearest even; the rest is exact in f32
    return static_cast<double>(hi) + static_cast<double>(widen(narrow<bf16>(x[at] - hi)));
  };
  for (bool acc : {false, true}) {
    const std::vector<float> before = y;
    host_ops::matmul_nt(x.data(), n, in, ldx, w.data(), out, y.data(), ldy, acc, &ctx);
    int wrong = 0;
    for (int t = 0; t < n; ++t)
      for (int o = 0; o < ldy; ++o) {
        const std::size_t at = static_cast<std::size_t>(t) * ldy + o;
        if (o >= out) {
          wrong += y[at] != kGap;
          continue;
        }
        double ref = acc ? before[at] : 0.0, mag = std::fabs(ref);
        for (int i = 0; i < in; ++i) {
          const double p = static_cast<double>(widen(w[static_cast<std::size_t>(o) * in + i])) *
                           xval(static_cast<std::size_t>(t) * ldx + i);
          ref += p;
          mag += std::fabs(p);
        }
        // f32 accumulation of `in` products in a few partial sums: ulps of the magnitude sum
        const bool ok = std::fabs(y[at] - ref) <= 1e-6 * mag + 1e-30;
        if (!ok && wrong < 3)
          MESSAGE(host_simd::isa_name(isa),
                  std::string(bf16_products ? (amx ? "+bf16 amx" : "+bf16") : ""), " ",
                  dtype_name(dtype_of<W>), " n ", n, " in ", in, " out ", out, " acc ", acc, " [",
                  t, ",", o, "]: ", y[at], " vs ", ref);
        wrong += !ok;
      }
    CHECK_MESSAGE(wrong == 0, host_simd::isa_name(isa),
                  std::string(bf16_products ? (amx ? "+bf16 amx" : "+bf16") : ""), " ",
                  dtype_name(dtype_of<W>), " n ", n, " in ", in, " out ", out, " acc ", acc, ": ",
                  wrong, " wrong");
  }
}

std::vector<Isa> runnable() {
  std::vector<Isa> r;
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
    if (host_simd::cpu_supports(isa))
      r.push_back(isa);
    else
      test::not_run(std::string("test_host_products: the float products' kernels, ") +
                        std::string(host_simd::isa_name(isa)),
                    "this CPU does not run that instruction set");
  }
  return r;
}

}  // namespace

TEST_CASE("the float products agree with a double sum on every ISA the CPU runs") {
  std::mt19937 rng(11);
  const std::vector<Isa> isas = runnable();
  CHECK(!isas.empty());
  for (Isa isa : isas) {
    // rows around the tiles (1, 3, 4); depths around the vector widths (8, 16, 32); columns
    // around the tiles (3, 4, 5)
    for (int n : {1, 2, 3, 7, 9, 17})
      for (int in : {1, 7, 9, 16, 130, 259, 520})
        for (int out : {1, 13, 33, 70}) {
          check_gemm<f32>(isa, n, in, out, rng);
          check_gemm<bf16>(isa, n, in, out, rng);
          check_gemm<f16>(isa, n, in, out, rng);
        }
  }
}

namespace {

/// host_dot.hpp's rule for one output, written out lane by lane: `lanes` accumulators, input i
/// into lane i % lanes, each a fused multiply-add in input order; avx512 (16 lanes) runs the
/// last partial block with the missing inputs as zeros, avx2 (8 lanes) leaves them out and adds
/// them after the lanes' sum, one fused multiply-add each. The lanes are summed as the kernels
/// do: 16 -> 8 (lane i + lane i+8), then 8 -> 4, then (0+2) + (1+3).
template <class W>
float rule_by_hand(Isa isa, const W* w, const float* x, int in) {
  const int lanes = isa == Isa::avx512 ? 16 : 8;
  const int whole = isa == Isa::avx512 ? (in + 15) / 16 * 16 : in / 8 * 8;
  float a[16] = {};
  for (int i = 0; i < whole; ++i)
    a[i % lanes] =
        i < in ? std::fma(widen(w[i]), x[i], a[i % lanes]) : std::fma(0.0f, 0.0f, a[i % lanes]);
  if (lanes == 16)
    for (int l = 0; l < 8; ++l) a[l] = a[l] + a[l + 8];
  for (int l = 0; l < 4; ++l) a[l] = a[l] + a[l + 4];
  float s = (a[0] + a[2]) + (a[1] + a[3]);
  for (int i = whole; i < in; ++i) s = std::fma(widen(w[i]), x[i], s);
  return s;
}

template <class W>
void check_rule(Isa isa, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  HostContext ctx({.threads = 1, .isa = isa, .bf16_products = false});  // the float rule
  int wrong = 0, total = 0;
  // rows and columns around every tile shape (4 x 6, 4 x 5, 3 x 3 and what is left of them),
  // depths around the vector widths and past a block of x's rows
  for (int n : {1, 2, 3, 4, 5, 7, 9, 13})
    for (int in : {5, 16, 33, 100, 1030})
      for (int out : {1, 5, 6, 7, 13, 25}) {
        std::vector<W> w(static_cast<std::size_t>(out) * in);
        std::vector<float> x(static_cast<std::size_t>(n) * in),
            y(static_cast<std::size_t>(n) * out);
        for (auto& v : w) v = narrow<W>(u(rng));
        for (auto& v : x) v = u(rng);
        for (bool acc : {false, true}) {
          for (auto& v : y) v = u(rng);
          const std::vector<float> before = y;
          host_ops::matmul_nt(x.data(), n, in, in, w.data(), out, y.data(), out, acc, &ctx);
          for (int t = 0; t < n; ++t)
            for (int o = 0; o < out; ++o) {
              const std::size_t at = static_cast<std::size_t>(t) * out + o;
              const float s = rule_by_hand(isa, w.data() + static_cast<std::size_t>(o) * in,
                                           x.data() + static_cast<std::size_t>(t) * in, in);
              const float want = acc ? before[at] + s : s;
              ++total;
              wrong += std::memcmp(&want, &y[at], sizeof(float)) != 0;
            }
        }
      }
  CHECK_MESSAGE(wrong == 0, host_simd::isa_name(isa), " ", dtype_name(dtype_of<W>), ": ", wrong,
                " of ", total, " outputs differ from the rule");
}

}  // namespace

TEST_CASE("the avx512 and avx2 products follow their rule bit for bit") {
  // The property above says a row's bits do not depend on the batch; this one says which bits
  // they are, so a change of order in every shape at once (the sums of a tile, a tile's loads)
  // cannot pass unnoticed.
  std::mt19937 rng(3);
  for (Isa isa : runnable()) {
    if (isa == Isa::portable) continue;  // kernels::dot_row is its own rule
    check_rule<f32>(isa, rng);
    check_rule<bf16>(isa, rng);
    check_rule<f16>(isa, rng);
  }
}

TEST_CASE("the bf16 products (vdpbf16ps) agree with a double sum over X split into bf16 terms") {
  if (!host_simd::cpu_supports_bf16_products()) {
    test::not_run("test_host_products: the bf16 products (vdpbf16ps)",
                  "this CPU lacks AVX-512 with AVX512-BF16");
    return;
  }
  std::mt19937 rng(13);
  // odd depths leave a half pair at the end; depths around a step (32 inputs)
  for (int n : {1, 3, 7, 9, 17})
    for (int in : {1, 2, 9, 127, 130, 259, 520})
      for (int out : {1, 13, 33, 70}) check_gemm<bf16>(Isa::avx512, n, in, out, rng, true);
}

TEST_CASE("the AMX bf16 products agree with a double sum over X split into bf16 terms") {
  if (!host_simd::cpu_supports_amx_bf16()) {
    test::not_run("test_host_products: the bf16 products on AMX tiles (TDPBF16PS)",
                  "this CPU (or OS) does not run AMX-BF16");
    return;
  }
  std::mt19937 rng(17);
  // tokens around the token blocks (16, 32); depths around a tile row (32 inputs), the tail
  // copy and odd ones; output rows below, at and past the 32-row blocks the tiles take
  for (int n : {1, 3, 16, 17, 33, 40})
    for (int in : {1, 2, 31, 32, 33, 130, 520})
      for (int out : {13, 32, 33, 70, 96})
        check_gemm<bf16>(Isa::avx512, n, in, out, rng, true, true);
}

TEST_CASE("a context refuses bf16 products it cannot run") {
  for (Isa isa : {Isa::portable, Isa::avx2})
    if (host_simd::cpu_supports(isa))
      test::expect_error<usage_error>(
          [&] { HostContext ctx({.threads = 1, .isa = isa, .bf16_products = true}); },
          {"bf16_products", "AVX512-BF16"});
  if (host_simd::cpu_supports(Isa::avx512) && !host_simd::cpu_supports_bf16_products())
    test::expect_error<usage_error>(
        [&] { HostContext ctx({.threads = 1, .isa = Isa::avx512, .bf16_products = true}); },
        {"AVX512-BF16"});
}

namespace {

/// Every path the products take on this CPU: each runnable ISA with f32 products, and the bf16
/// products on vdpbf16ps and on AMX where the CPU has them.
struct Path {
  Isa isa;
  bool bf16_products, amx;
};
std::vector<Path> paths() {
  std::vector<Path> p;
  for (Isa isa : runnable()) p.push_back({isa, false, false});
  if (host_simd::cpu_supports_bf16_products()) p.push_back({Isa::avx512, true, false});
  if (host_simd::cpu_supports_amx_bf16()) p.push_back({Isa::avx512, true, true});
  return p;
}

/// Y = X · W^T (+= Y when `acc`) for rows [t0, t1) of X only, on `ctx`.
template <class W>
std::vector<float> rows_product(HostContext& ctx, const std::vector<W>& w,
                                const std::vector<float>& x, const std::vector<float>& y0, int t0,
                                int t1, int in, int out, bool acc) {
  std::vector<float> y(y0.begin() + static_cast<std::ptrdiff_t>(t0) * out,
                       y0.begin() + static_cast<std::ptrdiff_t>(t1) * out);
  host_ops::matmul_nt(x.data() + static_cast<std::size_t>(t0) * in, t1 - t0, in, in, w.data(), out,
                      y.data(), out, acc, &ctx);
  return y;
}

template <class W>
void check_rows_alone(const Path& path, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_int_distribution<int> rows_of(1, 64), depth_of(1, 300), width_of(1, 140);
  HostContext serial(
      {.threads = 1, .isa = path.isa, .bf16_products = path.bf16_products, .amx = path.amx});
  HostContext pool(
      {.threads = 3, .isa = path.isa, .bf16_products = path.bf16_products, .amx = path.amx});
  for (int trial = 0; trial < 7; ++trial) {
    // The last trial's rows are long enough that the products go by several blocks of x's rows
    // and panels of W's (host_dot::kRowBlockBytes, kPanelBytes), with rows and columns left over.
    int n = 61, in = 3000, out = 131;
    if (trial < 6) n = rows_of(rng), in = depth_of(rng), out = trial == 0 ? 96 : width_of(rng);
    std::vector<W> w(static_cast<std::size_t>(out) * in);
    std::vector<float> x(static_cast<std::size_t>(n) * in), y0(static_cast<std::size_t>(n) * out);
    for (auto& v : w) v = narrow<W>(u(rng));
    for (auto& v : x) v = u(rng);
    for (auto& v : y0) v = u(rng);
    const bool acc = trial % 2 == 1;
    // every row alone, one thread: the reference bits
    std::vector<float> alone;
    for (int t = 0; t < n; ++t) {
      const std::vector<float> r = rows_product(serial, w, x, y0, t, t + 1, in, out, acc);
      alone.insert(alone.end(), r.begin(), r.end());
    }
    // all rows at once, on 1 and 3 threads, and the rows cut into random runs
    const auto same = [&](const std::vector<float>& got, int t0, const char* what) {
      CHECK_MESSAGE(std::memcmp(got.data(), alone.data() + static_cast<std::size_t>(t0) * out,
                                got.size() * sizeof(float)) == 0,
                    host_simd::isa_name(path.isa), path.bf16_products ? "+bf16" : "",
                    path.amx ? "+amx " : " ", dtype_name(dtype_of<W>), " ", what, " n ", n, " in ",
                    in, " out ", out, " acc ", acc);
    };
    same(rows_product(serial, w, x, y0, 0, n, in, out, acc), 0, "all rows, 1 thread");
    same(rows_product(pool, w, x, y0, 0, n, in, out, acc), 0, "all rows, 3 threads");
    for (int t0 = 0; t0 < n;) {
      const int t1 = std::min(n, t0 + std::uniform_int_distribution<int>(1, 9)(rng));
      same(rows_product(pool, w, x, y0, t0, t1, in, out, acc), t0, "a run of rows");
      t0 = t1;
    }
  }
}

}  // namespace

TEST_CASE("a row's product is bit-identical alone, among any rows, in any split, on any pool") {
  // What makes a request batched with others get the tokens and logits it gets alone.
  std::mt19937 rng(5);
  for (const Path& path : paths()) {
    check_rows_alone<f32>(path, rng);
    check_rows_alone<bf16>(path, rng);
    check_rows_alone<f16>(path, rng);
  }
}

TEST_CASE("bf16 products are the default exactly where the CPU runs them") {
  for (Isa isa : runnable()) {
    const HostContext ctx({.threads = 1, .isa = isa});
    CHECK(ctx.bf16_products() == (isa == Isa::avx512 && host_simd::cpu_supports_bf16_products()));
    const HostContext off({.threads = 1, .isa = isa, .bf16_products = false});
    CHECK_FALSE(off.bf16_products());
    CHECK_FALSE(off.amx());
  }
}

TEST_CASE("an empty depth gives zeros, or leaves Y as it was") {
  std::vector<float> y(6, 2.0f);
  const float* none = nullptr;
  host_ops::matmul_nt(none, 3, 0, 0, reinterpret_cast<const f32*>(none), 2, y.data(), 2, true);
  for (float v : y) CHECK(v == 2.0f);
  host_ops::matmul_nt(none, 3, 0, 0, reinterpret_cast<const f32*>(none), 2, y.data(), 2, false);
  for (float v : y) CHECK(v == 0.0f);
}
