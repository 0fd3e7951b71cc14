// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Activations quantized to 8 bits per 32-block (quantize_rows: every integer product
///        of the host takes them), and the matrix-vector rows for Q8_0 / Q4_0 weights in GGML's
///        row layout: integer dot products, the instruction set chosen at run time (portable;
///        AVX2, which the avx512 family runs too).
///
/// Which layout runs where: the host loads every block matrix whose rows are a multiple of 8 in
/// groups of eight rows (core/quant.hpp), and host_quant_groups.hpp multiplies those, decode and
/// prefill; the row kernels here serve the rest (matrices of other heights, and any BlockView in
/// GGML's layout: tests, tools), any number of activation rows in one arithmetic.
///
/// Why the activations are quantized too (as llama.cpp does for these formats). A decode step
/// reads each weight once, so its speed is bytes over bandwidth — as long as the core keeps up.
/// Widening a Q4_0 block to f32 and multiplying with f32 activations costs about 12 vector
/// instructions per 32 weights on AVX2 (nibbles, sign-extend, convert, four FMAs); at the 18
/// bytes a block takes, two cores would need ~30 G instructions/s to follow 25 GB/s. With the
/// activations in int8, one `vpmaddubsw` multiplies 32 pairs and one `vpmaddwd` adds them into
/// eight 32-bit sums, exactly. The cost is the activations' rounding (relative error up to 1/254
/// of a block's largest value), measured in docs/performance.md ("Quantized weights": KL
/// divergence and top-1 agreement beside llama.cpp, which rounds its activations the same way).
///
/// What one block costs decides the speed (one thread, a 98 MB matrix, this repository's AMD
/// EPYC): one accumulator chain read 24 GB/s (Q8_0) and 12 GB/s (Q4_0) — every FMA waited on the
/// previous one, and with a run-time accumulator index the accumulators lived in memory; the
/// f16 scale of each block converted on its own cost ~5 more instructions a block. Now eight
/// blocks' scales convert at once (block j's FMA takes lane j by a permute), the block loop is
/// unrolled into two chains, and Q4_0 multiplies its unsigned nibbles (q + 8) without vpsignb,
/// taking 8 · scale · sum(x) off once per eight blocks: 25-27 GB/s (Q8_0) and 15-16 GB/s (Q4_0)
/// on one thread, about the read bandwidth on two. A first 512-bit kernel (two blocks a register)
/// read less than the 256-bit one and was dropped: the avx512 family runs these. Still ~7
/// operations a block beside the loads: what the grouped layout removes (1.4-1.9x faster).
///
/// One block's sum is exact in every kernel (integers); the blocks' scaled sums are added in an
/// order that differs between kernels (relative 1e-6, like the float GEMV's).
/// Host only: never included from .cu files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "baton/backend/host_simd.hpp"
#include "baton/core/error.hpp"
#include "baton/core/quant.hpp"

namespace baton::host_quant {

namespace detail {

/// Weight i (0..31) of a block as the integer its scale multiplies.
template <class Blk>
int weight_int(const Blk& b, int i) {
  return block_traits<Blk>::weight(b, i);
}

inline void quantize_rows_portable(const float* x, int n, int in, int ldx,
                                   QuantizedActivations& out) {
  const int blocks = in / kQuantBlock;
  for (int t = 0; t < n; ++t)
    for (int b = 0; b < blocks; ++b)
      quantize_activations(x + static_cast<std::size_t>(t) * ldx + b * kQuantBlock,
                           out.d[static_cast<std::size_t>(t) * blocks + b],
                           out.qs.data() + static_cast<std::size_t>(t) * in + b * kQuantBlock,
                           out.sum[static_cast<std::size_t>(t) * blocks + b]);
}

template <class Blk>
void rows_portable(const Blk* w, const std::int8_t* xq, const float* xd, int blocks, int o0, int o1,
                   float* y, bool accumulate) {
  for (int o = o0; o < o1; ++o) {
    const Blk* r = w + static_cast<std::size_t>(o) * blocks;
    float sum = 0.0f;
    for (int b = 0; b < blocks; ++b) {
      int s = 0;
      for (int i = 0; i < kQuantBlock; ++i) s += weight_int(r[b], i) * xq[b * kQuantBlock + i];
      sum += widen(r[b].d) * xd[b] * static_cast<float>(s);
    }
    y[o] = accumulate ? y[o] + sum : sum;
  }
}

#if BATON_HOST_SIMD_X86
#define BATON_QUANT_AVX2 __attribute__((target("avx2,fma,f16c"), always_inline)) inline

/// quantize_activations for 32 values: the same arithmetic, eight lanes at a time.
__attribute__((target("avx2,fma,f16c"))) inline void quantize_rows_avx2(const float* x, int n,
                                                                        int in, int ldx,
                                                                        QuantizedActivations& out) {
  const int blocks = in / kQuantBlock;
  const __m256 sign = _mm256_set1_ps(-0.0f), half = _mm256_set1_ps(0.5f);
  for (int t = 0; t < n; ++t) {
    for (int b = 0; b < blocks; ++b) {
      const float* p = x + static_cast<std::size_t>(t) * ldx + b * kQuantBlock;
      __m256 v[4];
      __m256 m = _mm256_setzero_ps();
      for (int i = 0; i < 4; ++i) {
        v[i] = _mm256_loadu_ps(p + 8 * i);
        m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[i]));
      }
      __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
      h = _mm_max_ps(h, _mm_movehl_ps(h, h));
      h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
      const float d = _mm_cvtss_f32(h) / 127.0f;
      const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
      __m256i q[4];
      __m256i total = _mm256_setzero_si256();
      for (int i = 0; i < 4; ++i) {
        const __m256 s = _mm256_mul_ps(v[i], id);
        const __m256 a = _mm256_add_ps(_mm256_andnot_ps(sign, s), half);  // |v| + 0.5
        // truncate the magnitude, then give it v's sign back
        const __m256 r = _mm256_or_ps(_mm256_round_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC),
                                      _mm256_and_ps(sign, s));
        q[i] = _mm256_cvttps_epi32(r);
        total = _mm256_add_epi32(total, q[i]);
      }
      const __m128i t4 =
          _mm_add_epi32(_mm256_castsi256_si128(total), _mm256_extracti128_si256(total, 1));
      const __m128i t2 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0x4e));
      out.sum[static_cast<std::size_t>(t) * blocks + b] =
          static_cast<float>(_mm_cvtsi128_si32(_mm_add_epi32(t2, _mm_shuffle_epi32(t2, 0xb1))));
      // 32 int32 -> 32 int8: the packs interleave 128-bit lanes; the permute restores order
      const __m256i w16a = _mm256_packs_epi32(q[0], q[1]), w16b = _mm256_packs_epi32(q[2], q[3]);
      const __m256i w8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(w16a, w16b),
                                                     _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(
                              out.qs.data() + static_cast<std::size_t>(t) * in + b * kQuantBlock),
                          w8);
      out.d[static_cast<std::size_t>(t) * blocks + b] = d;
    }
  }
}

/// A Q4_0 block's 32 nibbles as unsigned bytes in [0, 15] (the weights plus 8), in order: low
/// nibbles are weights 0..15, high nibbles 16..31.
/// The 16 bytes are loaded into both halves at once (a broadcast is a load, not a shuffle),
/// and one variable shift moves the upper half's nibbles down.
BATON_QUANT_AVX2 __m256i nibbles32(const BlockQ4_0& b) {
  const __m256i both =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs)));
  return _mm256_and_si256(_mm256_srlv_epi64(both, _mm256_setr_epi64x(0, 0, 4, 4)),
                          _mm256_set1_epi8(0x0f));
}

/// A block's 32 weights as signed bytes in [-127, 127] (Q8_0) or [-8, 7] (Q4_0), in order.
BATON_QUANT_AVX2 __m256i weights32(const BlockQ8_0& b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
}
BATON_QUANT_AVX2 __m256i weights32(const BlockQ4_0& b) {
  return _mm256_sub_epi8(nibbles32(b), _mm256_set1_epi8(8));
}

/// Eight 32-bit partial sums of w · x over 32 signed bytes, as floats: |w| times x with w's
/// sign (vpmaddubsw multiplies unsigned by signed bytes; |w| <= 128 and |x| <= 127 keep each
/// pair's sum inside int16). `aw` is |w|.
BATON_QUANT_AVX2 __m256 dot32(__m256i w, __m256i aw, __m256i x) {
  const __m256i pairs = _mm256_maddubs_epi16(aw, _mm256_sign_epi8(x, w));
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

/// Q4_0: the nibbles n = q + 8 times x, unsigned by signed as vpmaddubsw takes them (no sign
/// trick; the 8 · sum(x) the nibbles add is taken off once per eight blocks).
BATON_QUANT_AVX2 __m256 dot32_unsigned(__m256i n, __m256i x) {
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(n, x), _mm256_set1_epi16(1)));
}

BATON_QUANT_AVX2 float hsum8q(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

/// The f16 scales of blocks g .. g + 7 of a row, widened: eight 2-byte loads into one vector
/// (the blocks are 34 or 18 bytes apart) and one conversion.
template <class Blk>
BATON_QUANT_AVX2 __m256 scales8(const Blk* r) {
  __m128i h = _mm_cvtsi32_si128(r[0].d.bits);
  h = _mm_insert_epi16(h, r[1].d.bits, 1);
  h = _mm_insert_epi16(h, r[2].d.bits, 2);
  h = _mm_insert_epi16(h, r[3].d.bits, 3);
  h = _mm_insert_epi16(h, r[4].d.bits, 4);
  h = _mm_insert_epi16(h, r[5].d.bits, 5);
  h = _mm_insert_epi16(h, r[6].d.bits, 6);
  h = _mm_insert_epi16(h, r[7].d.bits, 7);
  return _mm256_cvtph_ps(h);
}

/// N activation rows (row k's values at xq + k * in, its scales at xd + k * blocks, its block
/// sums at xs + k * blocks) against weight rows [o0, o1). Eight blocks at a time: their eight
/// weight scales times each row's eight activation scales make one vector, and block j's FMA
/// takes lane j of it (a permute); each weight block is loaded and unpacked once for all N
/// rows; each row's blocks add into one accumulator in order, for every N. Q4_0 multiplies the
/// unsigned nibbles and takes 8 · scale · sum(x) off per group.
template <class Blk, int N>
__attribute__((target("avx2,fma,f16c"))) void rows_avx2(const Blk* w, const std::int8_t* xq,
                                                        const float* xd, const float* xs, int in,
                                                        int o0, int o1, float* y, int ldy,
                                                        bool accumulate) {
  constexpr bool kQ4 = std::is_same_v<Blk, BlockQ4_0>;
  // One accumulator a row, whatever N is: a row's sums run in one order alone or beside others
  // (docs/batching.md); several rows are chains of their own.
  constexpr int A = 1;
  const int blocks = in / kQuantBlock;
  const auto sx = static_cast<std::size_t>(in), sd = static_cast<std::size_t>(blocks);
  for (int o = o0; o < o1; ++o) {
    const Blk* r = w + static_cast<std::size_t>(o) * blocks;
    __m256 acc[N][A], offset[N];  // offset: Q4_0's sum of scale · sum(x) over the groups
    for (int k = 0; k < N; ++k) {
      offset[k] = _mm256_setzero_ps();
      for (int i = 0; i < A; ++i) acc[k][i] = offset[k];
    }
    int g = 0;
    for (; g + 8 <= blocks; g += 8) {
      const __m256 dw = scales8(r + g);
      __m256 scale[N];
      for (int k = 0; k < N; ++k) {
        scale[k] = _mm256_mul_ps(dw, _mm256_loadu_ps(xd + k * sd + g));
        if constexpr (kQ4)
          offset[k] = _mm256_fmadd_ps(scale[k], _mm256_loadu_ps(xs + k * sd + g), offset[k]);
      }
      // unrolled: the accumulator index j % A must be a constant, or the accumulators live in
      // memory and every FMA waits on a store
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const __m256i lane = _mm256_set1_epi32(j);
        if constexpr (kQ4) {
          const __m256i nq = nibbles32(r[g + j]);
          for (int k = 0; k < N; ++k) {
            const __m256i x = _mm256_loadu_si256(
                reinterpret_cast<const __m256i*>(xq + k * sx + (g + j) * kQuantBlock));
            acc[k][j % A] = _mm256_fmadd_ps(
                dot32_unsigned(nq, x), _mm256_permutevar8x32_ps(scale[k], lane), acc[k][j % A]);
          }
        } else {
          const __m256i wq = weights32(r[g + j]), aw = _mm256_abs_epi8(wq);
          for (int k = 0; k < N; ++k) {
            const __m256i x = _mm256_loadu_si256(
                reinterpret_cast<const __m256i*>(xq + k * sx + (g + j) * kQuantBlock));
            acc[k][j % A] = _mm256_fmadd_ps(
                dot32(wq, aw, x), _mm256_permutevar8x32_ps(scale[k], lane), acc[k][j % A]);
          }
        }
      }
    }
    for (; g < blocks; ++g) {  // the last blocks, fewer than eight
      const __m256i wq = weights32(r[g]), aw = _mm256_abs_epi8(wq);
      const float d = _cvtsh_ss(r[g].d.bits);
      for (int k = 0; k < N; ++k) {
        const __m256i x =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + k * sx + g * kQuantBlock));
        acc[k][0] =
            _mm256_fmadd_ps(dot32(wq, aw, x), _mm256_set1_ps(d * xd[k * sd + g]), acc[k][0]);
      }
    }
    for (int k = 0; k < N; ++k) {
      // the offset vector holds one block sum per lane; the accumulators eight partials each
      const float sum = hsum8q(A == 2 ? _mm256_add_ps(acc[k][0], acc[k][A - 1]) : acc[k][0]) -
                        (kQ4 ? 8.0f * hsum8q(offset[k]) : 0.0f);
      float& out = y[static_cast<std::size_t>(k) * ldy + o];
      out = accumulate ? out + sum : sum;
    }
  }
}

#undef BATON_QUANT_AVX2
#endif

template <class Blk>
void rows(host_simd::Isa isa, const Blk* w, const QuantizedActivations& x, int n, int in, int o0,
          int o1, float* y, int ldy, bool accumulate) {
  const int blocks = in / kQuantBlock;
#if BATON_HOST_SIMD_X86
  if (isa == host_simd::Isa::avx512 || isa == host_simd::Isa::avx2) {
    // Tiles of 8 weight rows (they stay in L1 while every group of activation rows uses
    // them, so memory delivers each weight once); within a tile, groups of 4 rows, 2, then 1.
    constexpr int kTile = 8;
    const auto sx = static_cast<std::size_t>(in), sd = static_cast<std::size_t>(blocks),
               sy = static_cast<std::size_t>(ldy);
    const std::int8_t* q = x.qs.data();
    const float* d = x.d.data();
    const float* sums = x.sum.data();
    for (int a = o0; a < o1; a += kTile) {
      const int e = a + kTile < o1 ? a + kTile : o1;
      int t = 0;
      for (; t + 4 <= n; t += 4)
        rows_avx2<Blk, 4>(w, q + t * sx, d + t * sd, sums + t * sd, in, a, e, y + t * sy, ldy,
                          accumulate);
      for (; t + 2 <= n; t += 2)
        rows_avx2<Blk, 2>(w, q + t * sx, d + t * sd, sums + t * sd, in, a, e, y + t * sy, ldy,
                          accumulate);
      if (t < n)
        rows_avx2<Blk, 1>(w, q + t * sx, d + t * sd, sums + t * sd, in, a, e, y + t * sy, ldy,
                          accumulate);
    }
    return;
  }
#endif
  BATON_CHECK(isa == host_simd::Isa::portable, usage_error, "host_quant: kernels ",
              host_simd::isa_name(isa), " were not compiled for this platform");
  for (int t = 0; t < n; ++t)
    rows_portable(w, x.qs.data() + static_cast<std::size_t>(t) * in,
                  x.d.data() + static_cast<std::size_t>(t) * blocks, blocks, o0, o1,
                  y + static_cast<std::size_t>(t) * ldy, accumulate);
}

}  // namespace detail

/// Quantizes `n` rows of `in` activations (x row t at x + t * ldx; in a multiple of 32) into
/// `out` (grown once, then reused step after step), with the kernels of `isa`.
inline void quantize_rows(host_simd::Isa isa, const float* x, int n, int in, int ldx,
                          QuantizedActivations& out) {
  out.qs.resize(static_cast<std::size_t>(n) * in);
  out.d.resize(static_cast<std::size_t>(n) * (in / kQuantBlock));
  out.sum.resize(out.d.size());
#if BATON_HOST_SIMD_X86
  if (isa != host_simd::Isa::portable) return detail::quantize_rows_avx2(x, n, in, ldx, out);
#endif
  detail::quantize_rows_portable(x, n, in, ldx, out);
}

/// y row t [o] (= or +=) W[o, :] · x row t for o in [o0, o1) and t < n, W in Q8_0 or Q4_0 blocks
/// (`w.format`), x quantized by quantize_rows, y row t at y + t * ldy.
inline void gemv_rows(host_simd::Isa isa, BlockView w, const QuantizedActivations& x, int n, int in,
                      int o0, int o1, float* y, int ldy, bool accumulate) {
  BATON_CHECK(w.format != BlockFormat::f16 && !is_grouped(w.format), usage_error,
              "host_quant::gemv_rows: ", block_format_name(w.format),
              " matrices take the float or grouped kernels");
  visit_format(w.format, [&](auto t) {
    using T = decltype(t);
    if constexpr (T::quantized)
      detail::rows(isa, reinterpret_cast<const typename T::block*>(w.data), x, n, in, o0, o1, y,
                   ldy, accumulate);
  });
}

}  // namespace baton::host_quant
