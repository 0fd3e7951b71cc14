// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Decode's matrix-vector rows for Q8_0 / Q4_0 weights (core/quant.hpp): integer dot
///        products of the weight blocks with the activations quantized to 8 bits per 32-block,
///        the instruction set chosen at run time (portable, AVX2, AVX-512 BW).
///
/// Why the activations are quantized too (as llama.cpp does for these formats). A decode step
/// reads each weight once, so its speed is bytes over bandwidth — as long as the core keeps up.
/// Widening a Q4_0 block to f32 and multiplying with f32 activations costs about 12 vector
/// instructions per 32 weights on AVX2 (nibbles, sign-extend, convert, four FMAs); at the 18
/// bytes a block takes, two cores would need ~30 G instructions/s to follow 25 GB/s. With the
/// activations in int8, one `vpmaddubsw` multiplies 32 pairs and one `vpmaddwd` adds them into
/// eight 32-bit sums: a block is about 8 instructions, and the sums are exact. The cost is the
/// activations' rounding (relative error up to 1/254 of a block's largest value), measured in
/// docs/performance.md ("Quantized weights": KL divergence and top-1 agreement beside llama.cpp).
/// Prefill's products (host_gemm.hpp) keep f32 activations: they dequantize each weight once per
/// product and are bound by multiply-adds, not by bytes.
///
/// One block's sum is exact in every kernel (integers); the blocks' scaled sums are added in an
/// order that differs between kernels (relative 1e-6, like the float GEMV's).
/// Host only: never included from .cu files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "baton/backend/host_simd.hpp"
#include "baton/core/error.hpp"
#include "baton/core/quant.hpp"

namespace baton::host_quant {

/// Quantizes `n` rows of `in` activations (x row t at x + t * ldx; in a multiple of 32) into
/// `out`, row t's blocks at out[t * in / 32 ...].
inline void quantize_rows(const float* x, int n, int in, int ldx,
                          std::vector<QuantizedActivations>& out) {
  const std::size_t blocks = static_cast<std::size_t>(in) / kQuantBlock;
  out.resize(static_cast<std::size_t>(n) * blocks);  // grows once, then reused step after step
  for (int t = 0; t < n; ++t)
    for (std::size_t b = 0; b < blocks; ++b)
      quantize_activations(x + static_cast<std::size_t>(t) * ldx + b * kQuantBlock,
                           out[t * blocks + b]);
}

namespace detail {

/// Weight q (0..31) of block b of a row, as the integer the block scale multiplies.
inline int weight_int(const BlockQ8_0& b, int i) { return b.qs[i]; }
inline int weight_int(const BlockQ4_0& b, int i) {
  return (i < 16 ? (b.qs[i] & 0x0f) : (b.qs[i - 16] >> 4)) - 8;
}

template <class Blk>
void rows_portable(const Blk* w, const QuantizedActivations* x, int blocks, int o0, int o1,
                   float* y, bool accumulate) {
  for (int o = o0; o < o1; ++o) {
    const Blk* r = w + static_cast<std::size_t>(o) * blocks;
    float sum = 0.0f;
    for (int b = 0; b < blocks; ++b) {
      int s = 0;
      for (int i = 0; i < kQuantBlock; ++i) s += weight_int(r[b], i) * x[b].qs[i];
      sum += widen(r[b].d) * x[b].d * static_cast<float>(s);
    }
    y[o] = accumulate ? y[o] + sum : sum;
  }
}

#if BATON_HOST_SIMD_X86
#define BATON_QUANT_AVX2 __attribute__((target("avx2,fma,f16c"), always_inline)) inline
#define BATON_QUANT_AVX512 \
  __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"), always_inline)) inline

/// A block's 32 weights as signed bytes in [-127, 127] (Q8_0) or [-8, 7] (Q4_0), in order.
BATON_QUANT_AVX2 __m256i weights32(const BlockQ8_0& b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
}
BATON_QUANT_AVX2 __m256i weights32(const BlockQ4_0& b) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  // low nibbles are weights 0..15, high nibbles 16..31
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
  return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0f)), _mm256_set1_epi8(8));
}

/// Eight 32-bit partial sums of w · x over 32 signed bytes, as floats: |w| times x with w's
/// sign (vpmaddubsw multiplies unsigned by signed bytes; |w| <= 128 and |x| <= 127 keep each
/// pair's sum inside int16).
BATON_QUANT_AVX2 __m256 dot32(__m256i w, __m256i x) {
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

BATON_QUANT_AVX2 float hsum8q(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

BATON_QUANT_AVX2 float scale_of(const BlockQ8_0& b) { return _cvtsh_ss(b.d.bits); }
BATON_QUANT_AVX2 float scale_of(const BlockQ4_0& b) { return _cvtsh_ss(b.d.bits); }

/// N activation rows (x row k at x + k * blocks) against weight rows [o0, o1): each weight
/// block is loaded and unpacked once for all N rows.
template <class Blk, int N>
__attribute__((target("avx2,fma,f16c"))) void rows_avx2(const Blk* w,
                                                        const QuantizedActivations* x, int blocks,
                                                        int o0, int o1, float* y, int ldy,
                                                        bool accumulate) {
  for (int o = o0; o < o1; ++o) {
    const Blk* r = w + static_cast<std::size_t>(o) * blocks;
    __m256 acc[N];
    for (int k = 0; k < N; ++k) acc[k] = _mm256_setzero_ps();
    for (int b = 0; b < blocks; ++b) {
      const __m256i wq = weights32(r[b]);
      const float d = scale_of(r[b]);
      for (int k = 0; k < N; ++k) {
        const QuantizedActivations& a = x[static_cast<std::size_t>(k) * blocks + b];
        const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs));
        acc[k] = _mm256_fmadd_ps(dot32(wq, xq), _mm256_set1_ps(d * a.d), acc[k]);
      }
    }
    for (int k = 0; k < N; ++k) {
      const float sum = hsum8q(acc[k]);
      float& out = y[static_cast<std::size_t>(k) * ldy + o];
      out = accumulate ? out + sum : sum;
    }
  }
}

/// lo in the low half, hi in the high one. (The masked forms: GCC 12 warns, -Wmaybe-uninitialized,
/// on the plain insert and convert, which pass an undefined vector through.)
BATON_QUANT_AVX512 __m512i join256(__m256i lo, __m256i hi) {
  const __m512i z = _mm512_setzero_si512();
  return _mm512_mask_inserti64x4(z, 0xff, _mm512_mask_inserti64x4(z, 0xff, z, lo, 0), hi, 1);
}

/// Two blocks' weights in one 512-bit register (block b in the low half, b + 1 in the high).
template <class Blk>
BATON_QUANT_AVX512 __m512i weights64(const Blk& b0, const Blk& b1) {
  return join256(weights32(b0), weights32(b1));
}

/// The 512-bit dot32: sixteen sums, the low eight of one block and the high eight of the next.
/// (AVX-512 has no vpsignb: x is negated where w is negative, and zero w gives zero anyway.)
BATON_QUANT_AVX512 __m512 dot64(__m512i w, __m512i x) {
  const __mmask64 negative = _mm512_movepi8_mask(w);
  const __m512i xs = _mm512_mask_sub_epi8(x, negative, _mm512_setzero_si512(), x);
  const __m512i pairs = _mm512_maddubs_epi16(_mm512_abs_epi8(w), xs);
  return _mm512_maskz_cvtepi32_ps(0xffff, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
}

template <class Blk, int N>
__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"))) void rows_avx512(
    const Blk* w, const QuantizedActivations* x, int blocks, int o0, int o1, float* y, int ldy,
    bool accumulate) {
  for (int o = o0; o < o1; ++o) {
    const Blk* r = w + static_cast<std::size_t>(o) * blocks;
    __m512 acc[N];
    for (int k = 0; k < N; ++k) acc[k] = _mm512_setzero_ps();
    int b = 0;
    for (; b + 2 <= blocks; b += 2) {
      const __m512i wq = weights64(r[b], r[b + 1]);
      const float d0 = scale_of(r[b]), d1 = scale_of(r[b + 1]);
      for (int k = 0; k < N; ++k) {
        const QuantizedActivations* a = x + static_cast<std::size_t>(k) * blocks + b;
        const __m512i xq =
            join256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[0].qs)),
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[1].qs)));
        const __m512 scale = _mm512_mask_blend_ps(0xff00, _mm512_set1_ps(d0 * a[0].d),
                                                  _mm512_set1_ps(d1 * a[1].d));
        acc[k] = _mm512_fmadd_ps(dot64(wq, xq), scale, acc[k]);
      }
    }
    for (int k = 0; k < N; ++k) {
      const __m512d dd = _mm512_castps_pd(acc[k]);
      __m256 s = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, dd, 0)),
                               _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, dd, 1)));
      if (b < blocks) {  // an odd last block
        const QuantizedActivations& a = x[static_cast<std::size_t>(k) * blocks + b];
        const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs));
        s = _mm256_fmadd_ps(dot32(weights32(r[b]), xq), _mm256_set1_ps(scale_of(r[b]) * a.d), s);
      }
      const float sum = hsum8q(s);
      float& out = y[static_cast<std::size_t>(k) * ldy + o];
      out = accumulate ? out + sum : sum;
    }
  }
}

#undef BATON_QUANT_AVX2
#undef BATON_QUANT_AVX512
#endif

template <class Blk>
void rows(host_simd::Isa isa, const Blk* w, const QuantizedActivations* x, int n, int blocks,
          int o0, int o1, float* y, int ldy, bool accumulate) {
#if BATON_HOST_SIMD_X86
  // Tiles of 8 weight rows (they stay in L1 while every group of activation rows uses them,
  // so memory delivers each weight once); within a tile, groups of 4 rows, then 2, then 1.
  constexpr int kTile = 8;
  const auto groups = [&](auto k4, auto k2, auto k1) {
    const auto bx = static_cast<std::size_t>(blocks), sy = static_cast<std::size_t>(ldy);
    for (int a = o0; a < o1; a += kTile) {
      const int e = a + kTile < o1 ? a + kTile : o1;
      int t = 0;
      for (; t + 4 <= n; t += 4) k4(w, x + t * bx, blocks, a, e, y + t * sy, ldy, accumulate);
      for (; t + 2 <= n; t += 2) k2(w, x + t * bx, blocks, a, e, y + t * sy, ldy, accumulate);
      if (t < n) k1(w, x + t * bx, blocks, a, e, y + t * sy, ldy, accumulate);
    }
  };
  if (isa == host_simd::Isa::avx512)
    return groups(rows_avx512<Blk, 4>, rows_avx512<Blk, 2>, rows_avx512<Blk, 1>);
  if (isa == host_simd::Isa::avx2 || isa == host_simd::Isa::avx512)
    return groups(rows_avx2<Blk, 4>, rows_avx2<Blk, 2>, rows_avx2<Blk, 1>);
#endif
  BATON_CHECK(isa == host_simd::Isa::portable, usage_error, "host_quant: kernels ",
              host_simd::isa_name(isa), " were not compiled for this platform");
  for (int t = 0; t < n; ++t)
    rows_portable(w, x + static_cast<std::size_t>(t) * blocks, blocks, o0, o1,
                  y + static_cast<std::size_t>(t) * ldy, accumulate);
}

}  // namespace detail

/// y row t [o] (= or +=) W[o, :] · x row t for o in [o0, o1) and t < n, W in Q8_0 or Q4_0 blocks
/// (`w.format`), x quantized by quantize_rows (row t at x + t * in / 32), y row t at y + t * ldy.
inline void gemv_rows(host_simd::Isa isa, BlockView w, const QuantizedActivations* x, int n,
                      int in, int o0, int o1, float* y, int ldy, bool accumulate) {
  const int blocks = in / kQuantBlock;
  if (w.format == BlockFormat::q8_0)
    return detail::rows(isa, reinterpret_cast<const BlockQ8_0*>(w.data), x, n, blocks, o0, o1, y,
                        ldy, accumulate);
  BATON_CHECK(w.format == BlockFormat::q4_0, usage_error,
              "host_quant::gemv_rows: f16 matrices take the float kernels");
  detail::rows(isa, reinterpret_cast<const BlockQ4_0*>(w.data), x, n, blocks, o0, o1, y, ldy,
               accumulate);
}

}  // namespace baton::host_quant
