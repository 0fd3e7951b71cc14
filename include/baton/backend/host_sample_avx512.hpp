// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The sampler's three heaviest passes over a row — a block's maximum and validity, the
///        weights with their total and list, and the band of weights with each block's mass
///        above it — on AVX-512 vectors, sixteen entries at a time, for the host. They compute
///        exactly what kernels::RowPasses computes (the same bits, the same sums in the same
///        order); the lighter passes are Avx2RowPasses'.
///
/// Why: at vocab 152k a wide top-p costs three passes over 600 KB, and the weights' pass (an
/// exp per entry) is half of it; sixteen lanes halve its instructions
/// (benchmarks/sampling_bench.cpp). Sums stay in kernels::kWeightLanes (8) float lanes: each
/// vector's low half is added before its high half, entry i into lane i % 8 in id order, as the
/// scalar pass adds them. Host only: never included from .cu files.
#pragma once

#include <cmath>
#include <cstdint>

#include "baton/backend/host_sample.hpp"

namespace baton::host_simd {

#if BATON_HOST_SIMD_X86
#define BATON_SAMPLE_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")))
namespace detail {

/// A 16-lane vector's halves added to eight float lanes, low half first (entry order).
/// Intrinsics here take their zero-masked forms where the plain ones pass an "undefined" operand
/// through, which GCC 12 reports as uninitialized once inlined (as host_simd.hpp's fold16).
BATON_SAMPLE_AVX512 inline __m256 add_halves(__m256 part, __m512 v) {
  part = _mm256_add_ps(part, _mm512_maskz_extractf32x8_ps(0xff, v, 0));
  return _mm256_add_ps(part, _mm512_maskz_extractf32x8_ps(0xff, v, 1));
}

/// RowPasses::block on AVX-512.
BATON_SAMPLE_AVX512 inline kernels::BlockScan avx512_block(const float* row, int begin, int end) {
  const __m512 inf = _mm512_set1_ps(INFINITY), neg_inf = _mm512_set1_ps(-INFINITY);
  __m512 mx = neg_inf;
  __mmask16 bad = 0;
  int finite = 0, i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512 v = _mm512_loadu_ps(row + i);
    bad |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(v, inf, _CMP_EQ_OQ);
    finite +=
        __builtin_popcount(static_cast<unsigned>(_mm512_cmp_ps_mask(v, neg_inf, _CMP_NEQ_UQ)));
    mx = _mm512_maskz_max_ps(0xffff, mx, v);  // NaN lanes are in `bad`, which discards the max
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, mx);
  kernels::BlockScan s = kernels::RowPasses::block(row, i, end);
  for (const float l : lanes)
    if (l > s.max) s.max = l;
  s.finite += finite;
  s.bad |= bad != 0;
  return s;
}

/// kernels::sample_exp on sixteen lanes: avx2_sample_exp's steps (so the same bits).
BATON_SAMPLE_AVX512 inline __m512 avx512_sample_exp(__m512 x) {
  const __m512 k =
      _mm512_maskz_roundscale_ps(0xffff, _mm512_mul_ps(x, _mm512_set1_ps(kernels::kLog2e)),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(k, _mm512_set1_ps(-kernels::kLn2Hi), x);
  r = _mm512_fmadd_ps(k, _mm512_set1_ps(-kernels::kLn2Lo), r);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(1.0f / 5040), r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  // Below kExpLowest (and -Inf) the scale's exponent would leave its field: those lanes are 0.
  const __mmask16 ok = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kernels::kExpLowest), _CMP_GE_OQ);
  const __m512i e = _mm512_maskz_slli_epi32(
      0xffff,
      _mm512_add_epi32(_mm512_maskz_cvtps_epi32(0xffff, _mm512_maskz_mov_ps(ok, k)),
                       _mm512_set1_epi32(127)),
      23);
  return _mm512_maskz_mul_ps(ok, p, _mm512_castsi512_ps(e));
}

/// append_stored() from the vectors z and w.
BATON_SAMPLE_AVX512 inline int append_lanes16(unsigned bits, __m512 z, __m512 w, int i,
                                              kernels::Candidate* list, int c) {
  alignas(64) float zs[16], ws[16];
  _mm512_store_ps(zs, z);
  _mm512_store_ps(ws, w);
  return append_stored(bits, zs, ws, i, list, c);
}

/// RowPasses::weigh on AVX-512: avx2_weigh sixteen entries at a time (a chunk of kSumChunk
/// entries is four vectors, each added half by half into the eight float lanes).
BATON_SAMPLE_AVX512 inline int avx512_weigh(const float* row, int n, float t, float m,
                                            float floor_w, int cap, kernels::Candidate* list,
                                            float* weights, double* total) {
  static_assert(kernels::kWeightLanes == 8 && kernels::kSumChunk % 16 == 0);
  const __m512 tv = _mm512_set1_ps(1.0f / t), mv = _mm512_set1_ps(m), fw = _mm512_set1_ps(floor_w),
               neg_inf = _mm512_set1_ps(-INFINITY);
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  int c = 0, i = 0;
  for (; i + kernels::kSumChunk <= n;) {
    __m256 part = _mm256_setzero_ps();
    for (const int chunk_end = i + kernels::kSumChunk; i < chunk_end; i += 16) {
      const __m512 z = _mm512_mul_ps(_mm512_loadu_ps(row + i), tv);
      const __m512 w = avx512_sample_exp(_mm512_sub_ps(z, mv));
      part = add_halves(part, w);
      if (weights) _mm512_storeu_ps(weights + i, w);
      if (c > cap) continue;  // the list is already too long
      const unsigned bits = static_cast<unsigned>(_mm512_cmp_ps_mask(z, neg_inf, _CMP_NEQ_UQ) &
                                                  _mm512_cmp_ps_mask(w, fw, _CMP_GE_OQ));
      if (bits == 0) continue;
      alignas(64) float zs[16], ws[16];
      _mm512_store_ps(zs, z);
      _mm512_store_ps(ws, w);
      c = list_capped(bits, c, cap,
                      [&](unsigned b, int at) { return append_stored(b, zs, ws, i, list, at); });
    }
    add_chunk(lo, hi, part);
  }
  return weigh_tail(row, i, n, t, m, floor_w, cap, list, weights, total, c, lo, hi);
}

/// RowPasses::gather_band on AVX-512: sixteen weights compared at a time, those of at least
/// `high` added half by half into the block's eight float lanes; the rare lanes in the band
/// appended.
BATON_SAMPLE_AVX512 inline int avx512_gather_band(const float* row, int n, float t,
                                                  const float* weights, float low, float high,
                                                  int block, kernels::Candidate* out,
                                                  double* block_mass, int* above) {
  const __m512 lv = _mm512_set1_ps(low), hv = _mm512_set1_ps(high), tv = _mm512_set1_ps(1.0f / t);
  int c = 0, over_count = 0;
  for (int begin = 0, j = 0; begin < n; begin += block, ++j) {
    const int end = begin + block < n ? begin + block : n;
    __m256 sum = _mm256_setzero_ps();
    int i = begin;
    for (; i + 16 <= end; i += 16) {
      const __m512 w = _mm512_loadu_ps(weights + i);
      const __mmask16 over = _mm512_cmp_ps_mask(w, hv, _CMP_GE_OQ);
      sum = add_halves(sum, _mm512_maskz_mov_ps(over, w));
      over_count += __builtin_popcount(static_cast<unsigned>(over));
      const unsigned bits = static_cast<unsigned>(_mm512_cmp_ps_mask(w, lv, _CMP_GE_OQ) &
                                                  static_cast<__mmask16>(~over));
      if (bits == 0) continue;
      c = append_lanes16(bits, _mm512_mul_ps(_mm512_loadu_ps(row + i), tv), w, i, out, c);
    }
    alignas(32) float part[8];
    _mm256_store_ps(part, sum);
    c += kernels::RowPasses::gather_range(row, i, end, t, weights, low, high, out + c, part,
                                          &over_count);
    double lane[8] = {};
    kernels::add_chunk(lane, part);
    block_mass[j] = kernels::add_lanes(lane);
  }
  *above = over_count;
  return c;
}

}  // namespace detail
#undef BATON_SAMPLE_AVX512
#endif

/// Whether this CPU runs Avx512RowPasses (AVX-512 F, BW, VL and DQ, besides Avx2RowPasses' AVX2
/// and FMA). Asked once per token and row: libgcc's feature word only (sample_passes_on_avx2
/// says why).
inline bool sample_passes_on_avx512() {
#if BATON_HOST_SIMD_X86
  return sample_passes_on_avx2() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

/// kernels::RowPasses with the block, weights and band passes on AVX-512 and the rest on AVX2
/// (same results; the caller checked sample_passes_on_avx512()).
#if BATON_HOST_SIMD_X86
struct Avx512RowPasses : Avx2RowPasses {
  static kernels::BlockScan block(const float* row, int begin, int end) {
    return detail::avx512_block(row, begin, end);
  }
  static int weigh(const float* row, int n, float t, float m, float floor_w, int cap,
                   kernels::Candidate* list, float* weights, double* total) {
    return detail::avx512_weigh(row, n, t, m, floor_w, cap, list, weights, total);
  }
  static int gather_band(const float* row, int n, float t, const float* weights, float low,
                         float high, int block, kernels::Candidate* out, double* block_mass,
                         int* above) {
    return detail::avx512_gather_band(row, n, t, weights, low, high, block, out, block_mass, above);
  }
};
#else
struct Avx512RowPasses : kernels::RowPasses {};  // no x86 vectors: the scalar passes
#endif

}  // namespace baton::host_simd
