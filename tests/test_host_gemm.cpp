// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Prefill's blocked matrix-matrix product (host_gemm.hpp) on every instruction set this CPU
// runs, forced one by one, against a double-precision sum: shapes that are not multiples of
// any tile (rows, columns), depth slice (kc) or vector width, f32 / bf16 / f16 weights, row
// strides wider than the rows (the gaps must stay untouched), = and +=; on a pool of several
// threads the result is bit-identical to one thread's. The opt-in bf16-products kernel
// (AVX512-BF16) is checked the same way against a double sum over the activations rounded to
// bf16, which is what it multiplies: its only difference from the f32 kernel is that rounding.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "baton/backend/host_context.hpp"
#include "baton/backend/host_gemm.hpp"
#include "baton/core/dtype.hpp"
#include "support/expect_error.hpp"
#include "support/not_run.hpp"

using namespace baton;
using host_simd::Isa;

namespace {

constexpr float kGap = -7.25f;  // what the stride gaps of Y hold before and after

/// `bf16_products`: on a context with HostContextOptions::bf16_products (W must be bf16); the
/// reference then rounds X to bf16 as the kernel does, and keeps the f32 kernel's tolerance.
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
  REQUIRE(ctx.amx() == amx);  // the kernel asked for is the one that runs
  const auto xval = [&](std::size_t at) -> double {
    return bf16_products ? widen(narrow<bf16>(x[at])) : x[at];
  };
  for (bool acc : {false, true}) {
    const std::vector<float> before = y;
    host_gemm::gemm_nt(isa, &ctx, true, x.data(), n, in, ldx, w.data(), out, y.data(), ldy, acc);
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
      test::not_run(std::string("test_host_gemm: prefill's GEMM kernels, ") +
                        std::string(host_simd::isa_name(isa)),
                    "this CPU does not run that instruction set");
  }
  return r;
}

}  // namespace

TEST_CASE("prefill's matrix product agrees with a double sum on every ISA the CPU runs") {
  std::mt19937 rng(11);
  const std::vector<Isa> isas = runnable();
  CHECK(!isas.empty());
  for (Isa isa : isas) {
    // rows around the tiles (4, 6, 8); depths around the vector widths and the depth slices
    // (128, 256, 512); columns around the panels (8, 16, 32) and the task block (64)
    for (int n : {3, 7, 9, 17})
      for (int in : {1, 9, 130, 259, 520})
        for (int out : {1, 13, 33, 70}) {
          check_gemm<f32>(isa, n, in, out, rng);
          check_gemm<bf16>(isa, n, in, out, rng);
          check_gemm<f16>(isa, n, in, out, rng);
        }
  }
}

TEST_CASE("prefill's bf16-products kernel agrees with a double sum over bf16-rounded X") {
  if (!host_simd::cpu_supports_bf16_products()) {
    test::not_run("test_host_gemm: prefill's bf16-products GEMM (vdpbf16ps)",
                  "this CPU lacks AVX-512 with AVX512-BF16");
    return;
  }
  std::mt19937 rng(13);
  // odd depths leave a half pair at the end of the last depth slice (kc 128)
  for (int n : {3, 7, 9, 17})
    for (int in : {1, 2, 9, 127, 130, 259, 520})
      for (int out : {1, 13, 33, 70}) check_gemm<bf16>(Isa::avx512, n, in, out, rng, true);
}

TEST_CASE("prefill's AMX bf16 kernel agrees with a double sum over bf16-rounded X") {
  if (!host_simd::cpu_supports_amx_bf16()) {
    test::not_run("test_host_gemm: prefill's bf16 products on AMX tiles (TDPBF16PS)",
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

TEST_CASE("the product does not depend on the pool's thread count") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int n = 37, in = 300, out = 333;
  std::vector<bf16> w(static_cast<std::size_t>(out) * in);
  std::vector<float> x(static_cast<std::size_t>(n) * in);
  for (auto& v : w) v = narrow<bf16>(u(rng));
  for (auto& v : x) v = u(rng);
  struct Path {
    Isa isa;
    bool bf16_products, amx;
  };
  std::vector<Path> paths;
  for (Isa isa : runnable()) paths.push_back({isa, false, false});
  if (host_simd::cpu_supports_bf16_products()) paths.push_back({Isa::avx512, true, false});
  if (host_simd::cpu_supports_amx_bf16()) paths.push_back({Isa::avx512, true, true});
  for (const Path& path : paths) {
    // named copies: clang 16 cannot capture a structured binding in an OpenMP region
    const Isa isa = path.isa;
    const bool bf16p = path.bf16_products;
    std::vector<float> one(static_cast<std::size_t>(n) * out), many(one.size());
    HostContext serial({.threads = 1, .isa = isa, .bf16_products = bf16p, .amx = path.amx});
    HostContext pool({.threads = 3, .isa = isa, .bf16_products = bf16p, .amx = path.amx});
    host_gemm::gemm_nt(isa, &serial, false, x.data(), n, in, in, w.data(), out, one.data(), out,
                       false);
    host_gemm::gemm_nt(isa, &pool, true, x.data(), n, in, in, w.data(), out, many.data(), out,
                       false);
    CHECK_MESSAGE(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)) == 0,
                  host_simd::isa_name(isa), bf16p ? "+bf16" : "", path.amx ? "+amx" : "");
  }
}

TEST_CASE("an empty depth gives zeros, or leaves Y as it was") {
  std::vector<float> y(6, 2.0f);
  const float* none = nullptr;
  host_gemm::gemm_nt(Isa::portable, nullptr, false, none, 3, 0, 0, none, 2, y.data(), 2, true);
  for (float v : y) CHECK(v == 2.0f);
  host_gemm::gemm_nt(Isa::portable, nullptr, false, none, 3, 0, 0, none, 2, y.data(), 2, false);
  for (float v : y) CHECK(v == 0.0f);
}
