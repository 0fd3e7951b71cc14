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
/// widened) once for MR rows, every x vector once for NR weight rows (Shape: 4 x 6 on AVX-512,
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
#include <utility>

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
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) a[m][j] = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= in; i += 8) {
    __m256 xv[MR];
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m) xv[m] = _mm256_loadu_ps(x + m * ldx + i);
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      const __m256 wv = load8(w + j * ldw + i);
#pragma GCC unroll 8
      for (int m = 0; m < MR; ++m) a[m][j] = _mm256_fmadd_ps(wv, xv[m], a[m][j]);
    }
  }
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
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
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) a[m][j] = _mm512_setzero_ps();
}

/// The avx512 rule's sum hsum8(fold16(v[c])) of 16 accumulators at once: lane 4k + j of the
/// result holds accumulator 4j + k's. Each level adds the same pairs as the one-vector form
/// (lanes i and i+8, then i and i+4, then 0+2 and 1+3, then those two), with the same operand
/// first, so every sum has the same bits; the shuffles gather the pairs of four or eight
/// accumulators into one vector, so each add does the work of up to sixteen.
#define BATON_DOT_AVX512_INLINE \
  __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"), always_inline)) inline
BATON_DOT_AVX512_INLINE __m512 sums16(const __m512 (&v)[16]) {
  const __mmask16 kAll = 0xffff;  // the masked forms: GCC 12 warns on the plain shuffles
  __m512 c[8], d[4], e[2];
#pragma GCC unroll 8
  for (int p = 0; p < 8; ++p)  // [fold(A) | fold(B)]: 128-bit lanes 0+2 and 1+3 of A, then B
    c[p] = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(kAll, v[2 * p], v[2 * p + 1], 0x44),
                         _mm512_maskz_shuffle_f32x4(kAll, v[2 * p], v[2 * p + 1], 0xEE));
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q)  // lane k: the four-lane sums s of accumulator 4q + k
    d[q] = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(kAll, c[2 * q], c[2 * q + 1], 0x88),
                         _mm512_maskz_shuffle_f32x4(kAll, c[2 * q], c[2 * q + 1], 0xDD));
#pragma GCC unroll 2
  for (int r = 0; r < 2; ++r)  // per lane [s0+s2, s1+s3] of two accumulators
    e[r] = _mm512_add_ps(_mm512_maskz_shuffle_ps(kAll, d[2 * r], d[2 * r + 1], 0x44),
                         _mm512_maskz_shuffle_ps(kAll, d[2 * r], d[2 * r + 1], 0xEE));
  return _mm512_add_ps(_mm512_maskz_shuffle_ps(kAll, e[0], e[1], 0x88),
                       _mm512_maskz_shuffle_ps(kAll, e[0], e[1], 0xDD));
}

/// y[c / NR * ldy + c % NR] (= or +=) s: output c of an MR x NR tile.
template <int NR>
BATON_DOT_AVX512_INLINE void put_sum(int c, float s, float* y, std::size_t ldy, bool accumulate) {
  float& out = y[static_cast<std::size_t>(c / NR) * ldy + c % NR];
  out = accumulate ? out + s : s;
}

/// store_sums for accumulators g .. g + 15 of the tile (those past the last repeat it).
template <int MR, int NR, int g, int... l>
BATON_DOT_AVX512_INLINE void store_group(const __m512 (&a)[MR][NR], float* y, std::size_t ldy,
                                         bool accumulate, std::integer_sequence<int, l...>) {
  constexpr int last = MR * NR - 1;
  const __m512 v[16] = {a[std::min(g + l, last) / NR][std::min(g + l, last) % NR]...};
  alignas(64) float sums[16];
  _mm512_store_ps(sums, sums16(v));
  ((g + l <= last ? put_sum<NR>(g + l, sums[(l % 4) * 4 + l / 4], y, ldy, accumulate) : void()),
   ...);
}

/// y[m * ldy + j] (= or +=) the sum of accumulator a[m][j] (hsum8(fold16(.)): the avx512 rule),
/// sixteen accumulators at a time (sums16); a tile of fewer than eight sums each alone.
template <int MR, int NR>
BATON_DOT_AVX512_INLINE void store_sums(const __m512 (&a)[MR][NR], float* y, std::size_t ldy,
                                        bool accumulate) {
  constexpr int count = MR * NR;
  static_assert(count <= 32, "store_sums: a tile of at most 32 accumulators");
  if constexpr (count < 8) {
#pragma GCC unroll 8
    for (int c = 0; c < count; ++c)
      put_sum<NR>(c, hsum8(fold16(a[c / NR][c % NR])), y, ldy, accumulate);
  } else {
    constexpr auto lanes = std::make_integer_sequence<int, 16>{};
    store_group<MR, NR, 0>(a, y, ldy, accumulate, lanes);
    if constexpr (count > 16) store_group<MR, NR, 16>(a, y, ldy, accumulate, lanes);
  }
}
#undef BATON_DOT_AVX512_INLINE

/// One 16-block of tile_avx512 from input i, the lanes outside `k` read as zero. The whole
/// blocks pass the constant full mask, which compiles to plain loads: a mask chosen per block
/// cost a mask-register move on an FMA port every block and masked loads (a 4 x 5 tile in L1
/// at 1,024 inputs: 118 GFLOP/s a thread that way, 151 with plain loads, on a Xeon with two
/// FMA units).
template <class W, int MR, int NR>
__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"), always_inline)) inline void
step_avx512(__m512 (&a)[MR][NR], const W* w, std::size_t ldw, const float* x, std::size_t ldx,
            int i, __mmask16 k) {
  __m512 xv[MR];
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m) xv[m] = _mm512_maskz_loadu_ps(k, x + m * ldx + i);
#pragma GCC unroll 8
  for (int j = 0; j < NR; ++j) {
    const __m512 wv = load16(w + j * ldw + i, k);
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m) a[m][j] = _mm512_fmadd_ps(wv, xv[m], a[m][j]);
  }
}

/// tile_avx2 under the avx512 rule (the last, partial 16-block zero-masked).
template <class W, int MR, int NR>
BATON_DOT_AVX512 void tile_avx512(const W* w, const float* x, std::size_t ldx, int in, float* y,
                                  std::size_t ldy, bool accumulate) {
  const std::size_t ldw = static_cast<std::size_t>(in);
  __m512 a[MR][NR];
  zero_all(a);
  int i = 0;
  for (; i + 16 <= in; i += 16) step_avx512<W, MR, NR>(a, w, ldw, x, ldx, i, __mmask16(0xffff));
  if (i < in) step_avx512<W, MR, NR>(a, w, ldw, x, ldx, i, __mmask16((1u << (in - i)) - 1u));
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

/// One 32-block of tile_bf16 from input i, the weights outside `k` read as zero (the full
/// blocks pass the constant mask: plain loads, as in step_avx512).
template <int MR, int NR>
__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512bf16"),
               always_inline)) inline void
step_bf16(__m512 (&a)[MR][NR], const bf16* w, std::size_t ldw, const bf16* xb, std::size_t ldx,
          int i, __mmask32 k) {
  __m512bh hi[MR], lo[MR];
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m) {
    hi[m] = (__m512bh)_mm512_loadu_si512(xb + m * ldx + 2 * i);
    lo[m] = (__m512bh)_mm512_loadu_si512(xb + m * ldx + 2 * i + 32);
  }
#pragma GCC unroll 8
  for (int j = 0; j < NR; ++j) {
    const __m512bh wv = (__m512bh)_mm512_maskz_loadu_epi16(k, w + j * ldw + i);
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m) {
      a[m][j] = _mm512_dpbf16_ps(a[m][j], wv, hi[m]);
      a[m][j] = _mm512_dpbf16_ps(a[m][j], wv, lo[m]);
    }
  }
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
  int i = 0;
  for (; i + 32 <= in; i += 32) step_bf16<MR, NR>(a, w, ldw, xb, ldx, i, ~__mmask32(0));
  if (i < in) step_bf16<MR, NR>(a, w, ldw, xb, ldx, i, __mmask32((1u << (in - i)) - 1u));
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
/// 8-lane chains need the four (the same rate either way on that CPU). AVX-512's batched
/// tile is 4 x 6 (24 accumulators, 4 x vectors, a weight vector: 29 of 32 registers): on a
/// Xeon with two FMA units it ran 5-10% above 4 x 5 and 5 x 5 on the 155M model's f32
/// matrices at 512 rows (6 x 4 and 7 x 3 were slower; docs/performance.md).
template <class K>
struct Shape {
  static constexpr int rows = 4, cols = 6, single = 1;
};
#if BATON_HOST_SIMD_X86
template <>
struct Shape<Bf16Products> {  // two split x vectors a row: 20 accumulators + 8 + 1
  static constexpr int rows = 4, cols = 5, single = 1;
};
template <class W>
struct Shape<Avx2<W>> {  // 16 registers: 9 accumulators, 3 rows of x, one weight vector
  static constexpr int rows = 3, cols = 3, single = 4;
};
#endif

/// The last n < MR + 1 rows of x against weight rows w .. w + NR: one tile of n rows.
template <class K, int MR, int NR, class W, class X>
void rows_left(const W* w, const X* x, std::size_t ldx, int n, int in, float* y, std::size_t ldy,
               bool accumulate) {
  if constexpr (MR > 0) {
    if (n == MR) return K::template run<MR, NR>(w, x, ldx, in, y, ldy, accumulate);
    rows_left<K, MR - 1, NR>(w, x, ldx, n, in, y, ldy, accumulate);
  }
}

/// Weight rows w .. w + NR (rows `in` apart) against rows [0, n) of x: tiles of MR rows, then
/// one tile of what is left.
template <class K, int MR, int NR, class W, class X>
void rows_against(const W* w, const X* x, std::size_t ldx, int n, int in, float* y, std::size_t ldy,
                  bool accumulate) {
  int t = 0;
  for (; t + MR <= n; t += MR)
    K::template run<MR, NR>(w, x + t * ldx, ldx, in, y + t * ldy, ldy, accumulate);
  rows_left<K, MR - 1, NR>(w, x + t * ldx, ldx, n - t, in, y + t * ldy, ldy, accumulate);
}

/// How much of x and of W a tiled product keeps in cache at once: x in blocks of rows of about
/// kRowBlockBytes, W in panels of rows of about kPanelBytes; within a panel every block of x
/// meets every weight row. Without blocks, a prefill's 512 rows of x (2 MB at 1024 inputs, more
/// than a core's L2) were streamed again for every few weight rows, and the products ran at
/// two thirds of their rate at 128 rows. The blocks only order the tiles: each output is still
/// summed by one kernel call in the one order above.
inline constexpr std::size_t kRowBlockBytes = std::size_t{256} << 10;
inline constexpr std::size_t kPanelBytes = std::size_t{1024} << 10;

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
