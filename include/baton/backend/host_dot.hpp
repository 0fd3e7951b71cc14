// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host's float products y[t][o] (= or +=) W[o, :] · x[t, :] (W in f32 / bf16 / f16,
///        x and y in f32), in ONE arithmetic whatever the number of rows: a row's result does
///        not depend on the rows beside it, so a request batched with 63 others gets the bits it
///        gets alone (docs/batching.md).
///
/// The rule, per output element, on each instruction set:
///   - avx512: one 16-lane accumulator over the inputs in 16-blocks, in order, the last partial
///     block zero-masked; then s = hsum8(fold16(a)) (halves added, then 4, 2, 1).
///   - avx2: one 8-lane accumulator over the whole 8-blocks; s = hsum8(a); then the last inputs
///     (fewer than 8) one at a time, in order, each a fused multiply-add.
///   - portable: kernels::dot_row (the shared BATON_HD math).
///   - bf16 products (AVX512-BF16; HostContext::bf16_products): x split once into two bf16
///     terms, x ~ hi + lo (16 significant bits); one accumulator over 32-blocks, each block the
///     weights times hi then times lo with vdpbf16ps (two products a lane an instruction), the
///     last partial block zero-masked; s = hsum8(fold16(a)).
///   y = accumulate ? y + s : s.
/// 16-bit weights are widened exactly (bf16: a shift; f16: F16C), so the products are exact
/// and only the additions' order above decides the rounding.
///
/// Shapes. A tile runs MR rows of x against NR weight rows: every weight vector loaded (and
/// widened) once for MR rows, every x vector once for NR weight rows (Shape: 4 x 5 on AVX-512,
/// 3 x 3 on AVX2's 16 registers; one row of x streams one weight row at a time on AVX-512 and
/// takes four side by side on AVX2: Shape says why). The tile shape changes with the number of
/// rows, never the arithmetic: each output has its own accumulator and sums its inputs in the order
/// above in every shape. The tests check that any row count, any split of the rows and any tile
/// equals the row alone, bit for bit. As in host_simd.hpp, vectors never cross a function boundary
/// whose target differs. Host only: never included from .cu files.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "baton/backend/host_simd.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/error.hpp"
#include "baton/kernels/dot.hpp"

namespace baton::host_dot {

/// The length of a row of x split into bf16 terms (split_rows_bf16): two terms per input, the
/// inputs rounded up to whole 32-blocks.
inline std::size_t split_row_length(int in) {
  return static_cast<std::size_t>((in + 31) / 32) * 64;
}

namespace detail {

#if BATON_HOST_SIMD_X86
#define BATON_DOT_AVX2 __attribute__((target("avx2,fma,f16c")))
#define BATON_DOT_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")))
#define BATON_DOT_BF16 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512bf16")))

using host_simd::detail::fold16;
using host_simd::detail::hsum8;
using host_simd::detail::load16;
using host_simd::detail::load8;

/// y[m * ldy + j] for m < MR, j < NR: weight rows w + j * in, x rows x + m * ldx (avx2 rule).
/// The x vectors of a step are loaded once into registers for all NR weight rows; each weight
/// vector once for all MR rows.
template <class W, int MR, int NR>
BATON_DOT_AVX2 void tile_avx2(const W* w, const float* x, std::size_t ldx, int in, float* y,
                              std::size_t ldy, bool accumulate) {
  const std::size_t ldw = static_cast<std::size_t>(in);
  __m256 a[MR][NR];
#pragma GCC unroll 4
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 5
    for (int j = 0; j < NR; ++j) a[m][j] = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= in; i += 8) {
    __m256 xv[MR];
#pragma GCC unroll 4
    for (int m = 0; m < MR; ++m) xv[m] = _mm256_loadu_ps(x + m * ldx + i);
#pragma GCC unroll 5
    for (int j = 0; j < NR; ++j) {
      const __m256 wv = load8(w + j * ldw + i);
#pragma GCC unroll 4
      for (int m = 0; m < MR; ++m) a[m][j] = _mm256_fmadd_ps(wv, xv[m], a[m][j]);
    }
  }
#pragma GCC unroll 4
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 5
    for (int j = 0; j < NR; ++j) {
      __m128 s = _mm_set_ss(hsum8(a[m][j]));
      for (int k = i; k < in; ++k)
        s = _mm_fmadd_ss(_mm_set_ss(widen(w[j * ldw + k])), _mm_set_ss(x[m * ldx + k]), s);
      float& out = y[m * ldy + j];
      out = accumulate ? out + _mm_cvtss_f32(s) : _mm_cvtss_f32(s);
    }
}

/// The accumulators of an AVX-512 tile, zeroed.
template <int MR, int NR>
__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"), always_inline)) inline void
zero_all(__m512 (&a)[MR][NR]) {
#pragma GCC unroll 4
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 5
    for (int j = 0; j < NR; ++j) a[m][j] = _mm512_setzero_ps();
}

/// y[m * ldy + j] (= or +=) the sum of accumulator a[m][j] (hsum8(fold16(.)): the avx512 rule).
template <int MR, int NR>
__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"), always_inline)) inline void
store_sums(const __m512 (&a)[MR][NR], float* y, std::size_t ldy, bool accumulate) {
#pragma GCC unroll 4
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 5
    for (int j = 0; j < NR; ++j) {
      const float s = hsum8(fold16(a[m][j]));
      float& out = y[m * ldy + j];
      out = accumulate ? out + s : s;
    }
}

/// tile_avx2 under the avx512 rule (the last, partial 16-block zero-masked).
template <class W, int MR, int NR>
BATON_DOT_AVX512 void tile_avx512(const W* w, const float* x, std::size_t ldx, int in, float* y,
                                  std::size_t ldy, bool accumulate) {
  const std::size_t ldw = static_cast<std::size_t>(in);
  __m512 a[MR][NR];
  zero_all(a);
  for (int i = 0; i < in; i += 16) {
    const int left = in - i;
    const __mmask16 k = left >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << left) - 1u);
    __m512 xv[MR];
#pragma GCC unroll 4
    for (int m = 0; m < MR; ++m) xv[m] = _mm512_maskz_loadu_ps(k, x + m * ldx + i);
#pragma GCC unroll 5
    for (int j = 0; j < NR; ++j) {
      const __m512 wv = load16(w + j * ldw + i, k);
#pragma GCC unroll 4
      for (int m = 0; m < MR; ++m) a[m][j] = _mm512_fmadd_ps(wv, xv[m], a[m][j]);
    }
  }
  store_sums(a, y, ldy, accumulate);
}

/// x rounded to the nearest bf16 (ties to even), kept as an f32 whose low 16 bits are zero.
/// Written with GCC's vector operators: the shift and widening intrinsics pass an "undefined"
/// operand through that GCC 12 reports as maybe-uninitialized once inlined here.
BATON_DOT_BF16 inline __m512 round_to_bf16(__m512 x) {
  using u32x16 = unsigned __attribute__((vector_size(64)));
  const u32x16 u = (u32x16)x;
  const u32x16 r = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  return (__m512)r;
}

/// x's 32 inputs a (the first 16) and b (the next 16) as two bf16 terms, x ~ hi + lo: hi = x
/// rounded to bf16 (nearest even), lo = the remainder x - hi (exact in f32) rounded likewise,
/// each a vector of 32 bf16 in input order. hi + lo carries 16 significant bits: a relative
/// error of at most 2^-17, against 2^-9 for hi alone.
BATON_DOT_BF16 inline void split_bf16(__m512 a, __m512 b, __m512i& hi, __m512i& lo) {
  const __m512 ha = round_to_bf16(a), hb = round_to_bf16(b);
  hi = (__m512i)_mm512_cvtne2ps_pbh(hb, ha);  // exact: ha and hb are bf16 values already
  lo = (__m512i)_mm512_cvtne2ps_pbh(_mm512_sub_ps(b, hb), _mm512_sub_ps(a, ha));
}

/// The bf16-products rule: xb holds x's rows split into two bf16 terms (split_rows_bf16: per
/// 32 inputs, their hi terms then their lo terms); 32 inputs a step, the weights times hi then
/// times lo into the one accumulator, two products a lane per vdpbf16ps, the weights of the last
/// partial step zero-masked (the terms past `in` are zero).
template <int MR, int NR>
BATON_DOT_BF16 void tile_bf16(const bf16* w, const bf16* xb, std::size_t ldx, int in, float* y,
                              std::size_t ldy, bool accumulate) {
  const std::size_t ldw = static_cast<std::size_t>(in);
  __m512 a[MR][NR];
  zero_all(a);
  for (int i = 0; i < in; i += 32) {
    const int left = in - i;
    const __mmask32 k = left >= 32 ? ~__mmask32(0) : static_cast<__mmask32>((1u << left) - 1u);
    __m512bh hi[MR], lo[MR];
#pragma GCC unroll 4
    for (int m = 0; m < MR; ++m) {
      hi[m] = (__m512bh)_mm512_loadu_si512(xb + m * ldx + 2 * i);
      lo[m] = (__m512bh)_mm512_loadu_si512(xb + m * ldx + 2 * i + 32);
    }
#pragma GCC unroll 5
    for (int j = 0; j < NR; ++j) {
      const __m512bh wv = (__m512bh)_mm512_maskz_loadu_epi16(k, w + j * ldw + i);
#pragma GCC unroll 4
      for (int m = 0; m < MR; ++m) {
        a[m][j] = _mm512_dpbf16_ps(a[m][j], wv, hi[m]);
        a[m][j] = _mm512_dpbf16_ps(a[m][j], wv, lo[m]);
      }
    }
  }
  store_sums(a, y, ldy, accumulate);
}

/// Rows [t0, t1) of x split for tile_bf16: row t at xb + t * split_row_length(in), per 32
/// inputs 32 hi terms then 32 lo terms, zeros past `in`.
BATON_DOT_BF16 inline void split_rows_avx512(const float* x, int ldx, int in, int t0, int t1,
                                             bf16* xb, std::size_t row_length) {
  const auto m16 = [](int n) -> __mmask16 {
    return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1u);
  };
  for (int t = t0; t < t1; ++t) {
    const float* row = x + static_cast<std::size_t>(t) * ldx;
    bf16* dst = xb + static_cast<std::size_t>(t) * row_length;
    for (int k = 0; k < in; k += 32) {
      __m512i hi, lo;
      split_bf16(_mm512_maskz_loadu_ps(m16(in - k), row + k),
                 _mm512_maskz_loadu_ps(m16(in - k - 16), row + k + 16), hi, lo);
      _mm512_storeu_si512(dst + 2 * k, hi);
      _mm512_storeu_si512(dst + 2 * k + 32, lo);
    }
  }
}

#undef BATON_DOT_AVX2
#undef BATON_DOT_AVX512
#undef BATON_DOT_BF16
#endif

/// The kernels of one rule as a type: `run<MR, NR>(w, x, ldx, in, y, ldy, accumulate)` computes
/// y[m * ldy + j] for x rows x + m * ldx (m < MR) against weight rows w + j * in (j < NR).
template <class W>
struct Portable {
  template <int MR, int NR>
  static void run(const W* w, const float* x, std::size_t ldx, int in, float* y, std::size_t ldy,
                  bool accumulate) {
    for (int m = 0; m < MR; ++m)
      for (int j = 0; j < NR; ++j) {
        const float s = kernels::dot_row(w + static_cast<std::size_t>(j) * in, x + m * ldx, in);
        float& out = y[m * ldy + j];
        out = accumulate ? out + s : s;
      }
  }
};
#if BATON_HOST_SIMD_X86
template <class W>
struct Avx2 {
  template <int MR, int NR>
  static void run(const W* w, const float* x, std::size_t ldx, int in, float* y, std::size_t ldy,
                  bool accumulate) {
    tile_avx2<W, MR, NR>(w, x, ldx, in, y, ldy, accumulate);
  }
};
template <class W>
struct Avx512 {
  template <int MR, int NR>
  static void run(const W* w, const float* x, std::size_t ldx, int in, float* y, std::size_t ldy,
                  bool accumulate) {
    tile_avx512<W, MR, NR>(w, x, ldx, in, y, ldy, accumulate);
  }
};
struct Bf16Products {
  template <int MR, int NR>
  static void run(const bf16* w, const bf16* xb, std::size_t ldx, int in, float* y, std::size_t ldy,
                  bool accumulate) {
    tile_bf16<MR, NR>(w, xb, ldx, in, y, ldy, accumulate);
  }
};
#endif

/// The tile shapes of kernels K: `rows` x `cols` in the batched shape, `single` weight rows
/// at a time for one row of x. One row of x waits on memory, and on AMD Zen 4 the AVX-512
/// kernels read one weight row after another (one sequential stream per thread) about twice as
/// fast as four rows side by side (10-14 against 19-27 GB/s on 2 threads, the 155M model's
/// matrices at f16 / bf16); a row's one accumulator chain keeps up with memory there. AVX2's
/// 8-lane chains need the four (the same rate either way on that CPU).
template <class K>
struct Shape {
  static constexpr int rows = 4, cols = 5, single = 1;
};
#if BATON_HOST_SIMD_X86
template <class W>
struct Shape<Avx2<W>> {  // 16 registers: 9 accumulators, 3 rows of x, one weight vector
  static constexpr int rows = 3, cols = 3, single = 4;
};
#endif

/// Weight rows w .. w + NR (rows `in` apart) against rows [0, n) of x: tiles of MR rows, then
/// one tile of what is left.
template <class K, int MR, int NR, class W, class X>
void rows_against(const W* w, const X* x, std::size_t ldx, int n, int in, float* y, std::size_t ldy,
                  bool accumulate) {
  int t = 0;
  for (; t + MR <= n; t += MR)
    K::template run<MR, NR>(w, x + t * ldx, ldx, in, y + t * ldy, ldy, accumulate);
  const int left = n - t;
  x += t * ldx, y += t * ldy;
  if constexpr (MR > 3)
    if (left == 3) return K::template run<3, NR>(w, x, ldx, in, y, ldy, accumulate);
  if constexpr (MR > 2)
    if (left == 2) return K::template run<2, NR>(w, x, ldx, in, y, ldy, accumulate);
  if (left == 1) K::template run<1, NR>(w, x, ldx, in, y, ldy, accumulate);
}

/// How much of x and of W a tiled product keeps in cache at once: x in blocks of rows of about
/// kRowBlockBytes, W in panels of rows of about kPanelBytes; within a panel every block of x
/// meets every weight row. Without blocks, a prefill's 512 rows of x (2 MB at 1024 inputs, more
/// than a core's L2) were streamed again for every few weight rows, and the products ran at
/// two thirds of their rate at 128 rows. The blocks only order the tiles: each output is still
/// summed by one kernel call in the one order above.
inline constexpr std::size_t kRowBlockBytes = std::size_t{128} << 10;
inline constexpr std::size_t kPanelBytes = std::size_t{512} << 10;

/// `bytes` worth of items of `item` bytes, rounded down to a multiple of `unit`, at least one.
inline int items_within(std::size_t bytes, std::size_t item, int unit) {
  const auto fit = static_cast<long>(bytes / (item > 0 ? item : 1));
  return static_cast<int>(std::max<long>(unit, fit / unit * unit));
}

/// y rows [0, n), columns [o0, o1), with the kernels K in their Shape; the columns left over
/// one at a time. Many rows go by panels of weight rows and blocks of x's rows (kPanelBytes,
/// kRowBlockBytes).
template <class K, class W, class X>
void tiles(const W* w, const X* x, std::size_t ldx, int n, int in, int o0, int o1, float* y,
           std::size_t ldy, bool accumulate) {
  using S = Shape<K>;
  const std::size_t ldw = static_cast<std::size_t>(in);
  if (n == 1) {
    int o = o0;
    for (; o + S::single <= o1; o += S::single)
      K::template run<1, S::single>(w + o * ldw, x, ldx, in, y + o, ldy, accumulate);
    for (; o < o1; ++o) K::template run<1, 1>(w + o * ldw, x, ldx, in, y + o, ldy, accumulate);
    return;
  }
  const int panel = items_within(kPanelBytes, ldw * sizeof(W), S::cols);
  const int block = items_within(kRowBlockBytes, ldx * sizeof(X), S::rows);
  for (int p0 = o0; p0 < o1; p0 += panel) {
    const int p1 = std::min(o1, p0 + panel);
    for (int t = 0; t < n; t += block) {
      const int rows = std::min(block, n - t);
      const X* xt = x + t * ldx;
      float* yt = y + t * ldy;
      int o = p0;
      for (; o + S::cols <= p1; o += S::cols)
        rows_against<K, S::rows, S::cols>(w + o * ldw, xt, ldx, rows, in, yt + o, ldy, accumulate);
      for (; o < p1; ++o)
        rows_against<K, S::rows, 1>(w + o * ldw, xt, ldx, rows, in, yt + o, ldy, accumulate);
    }
  }
}

}  // namespace detail

/// y row t, columns [o0, o1) (= or +=) W[o, :] · x row t for t < n (x row t at x + t * ldx, y row
/// t at y + t * ldy), under the rule of `isa` (which the CPU must run).
template <StorageType W>
void product(host_simd::Isa isa, const W* w, const float* x, int ldx, int n, int in, int o0, int o1,
             float* y, int ldy, bool accumulate) {
  const auto sx = static_cast<std::size_t>(ldx), sy = static_cast<std::size_t>(ldy);
#if BATON_HOST_SIMD_X86
  if (isa == host_simd::Isa::avx512)
    return detail::tiles<detail::Avx512<W>>(w, x, sx, n, in, o0, o1, y, sy, accumulate);
  if (isa == host_simd::Isa::avx2)
    return detail::tiles<detail::Avx2<W>>(w, x, sx, n, in, o0, o1, y, sy, accumulate);
#endif
  BATON_CHECK(isa == host_simd::Isa::portable, usage_error, "host_dot: kernels ",
              host_simd::isa_name(isa), " were not compiled for this platform");
  detail::tiles<detail::Portable<W>>(w, x, sx, n, in, o0, o1, y, sy, accumulate);
}

/// Rows [t0, t1) of x, each split into two bf16 terms x ~ hi + lo (detail::split_bf16) at
/// xb + t * split_row_length(in): the bf16 products' activations. Needs AVX512-BF16
/// (host_simd::cpu_supports_bf16_products).
inline void split_rows_bf16(const float* x, int ldx, int in, int t0, int t1, bf16* xb) {
#if BATON_HOST_SIMD_X86
  detail::split_rows_avx512(x, ldx, in, t0, t1, xb, split_row_length(in));
#else
  (void)x, (void)ldx, (void)in, (void)t0, (void)t1, (void)xb;
  BATON_CHECK(false, usage_error, "host_dot: bf16 products need AVX512-BF16");
#endif
}

/// product() under the bf16-products rule, x already split (split_rows_bf16). Needs
/// AVX512-BF16.
inline void product_bf16(const bf16* w, const bf16* xb, int n, int in, int o0, int o1, float* y,
                         int ldy, bool accumulate) {
#if BATON_HOST_SIMD_X86
  detail::tiles<detail::Bf16Products>(w, xb, split_row_length(in), n, in, o0, o1, y,
                                      static_cast<std::size_t>(ldy), accumulate);
#else
  (void)w, (void)xb, (void)n, (void)in, (void)o0, (void)o1, (void)y, (void)ldy, (void)accumulate;
  BATON_CHECK(false, usage_error, "host_dot: bf16 products need AVX512-BF16");
#endif
}

}  // namespace baton::host_dot
