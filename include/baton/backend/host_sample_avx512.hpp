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
/// (benchmarks/sampling_bench.cpp). Sums stay in kernels::kWeightLanes (32) float lanes, two
/// vectors, entry i into lane i % 32 in id order, as the scalar pass adds them. Host only: never
/// included from .cu files.
#pragma once

#include <cmath>
#include <cstdint>

#include "baton/backend/host_sample.hpp"

namespace baton::host_simd {

#if BATON_HOST_SIMD_X86
#define BATON_SAMPLE_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")))
namespace detail {

/// The 32 sum lanes (kernels::kWeightLanes) as AVX-512 holds them: two float vectors while a
/// chunk or block is summed (lanes 0..15, 16..31), four double vectors across chunks (lanes
/// 8q .. 8q + 7 in d[q]). Each is a local of its pass, never an array indexed at run time,
/// which would keep the sums in memory and make each add wait on the last one's store.
/// Intrinsics here take their zero-masked forms where the plain ones pass an "undefined" operand
/// through, which GCC 12 reports as uninitialized once inlined (as host_simd.hpp's fold16).

/// A chunk's float lanes added to the double lanes (kernels::add_chunk), the float lanes
/// cleared for the next chunk.
BATON_SAMPLE_AVX512 inline void add_chunk16(__m512& p0, __m512& p1, __m512d* d) {
  d[0] =
      _mm512_add_pd(d[0], _mm512_maskz_cvtps_pd(0xff, _mm512_maskz_extractf32x8_ps(0xff, p0, 0)));
  d[1] =
      _mm512_add_pd(d[1], _mm512_maskz_cvtps_pd(0xff, _mm512_maskz_extractf32x8_ps(0xff, p0, 1)));
  d[2] =
      _mm512_add_pd(d[2], _mm512_maskz_cvtps_pd(0xff, _mm512_maskz_extractf32x8_ps(0xff, p1, 0)));
  d[3] =
      _mm512_add_pd(d[3], _mm512_maskz_cvtps_pd(0xff, _mm512_maskz_extractf32x8_ps(0xff, p1, 1)));
  p0 = _mm512_setzero_ps();
  p1 = _mm512_setzero_ps();
}

/// kernels::add_lanes on the double vectors: the same pairwise adds, eight at a time.
BATON_SAMPLE_AVX512 inline double add_lanes16(const __m512d* d) {
  const __m512d t = _mm512_add_pd(_mm512_add_pd(d[0], d[2]), _mm512_add_pd(d[1], d[3]));
  const __m256d u = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(0xff, t, 0),
                                  _mm512_maskz_extractf64x4_pd(0xff, t, 1));  // k + 4
  const __m128d v = _mm_add_pd(_mm256_castpd256_pd128(u), _mm256_extractf128_pd(u, 1));
  return _mm_cvtsd_f64(_mm_add_sd(v, _mm_unpackhi_pd(v, v)));
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

/// avx512_weigh()'s sixteen entries src[0..15] (ids at..at + 15): their weights into `dst`
/// (when not null) and their sum into `part` (lanes 0..15 or 16..31 of the 32, the caller's
/// pick); returns the list's count.
BATON_SAMPLE_AVX512 inline int weigh16(const float* src, float* dst, int at, __m512 tv, __m512 mv,
                                       __m512 fw, int cap, kernels::Candidate* list, __m512& part,
                                       int c) {
  const __m512 z = _mm512_mul_ps(_mm512_loadu_ps(src), tv);
  const __m512 w = avx512_sample_exp(_mm512_sub_ps(z, mv));
  part = _mm512_add_ps(part, w);
  if (dst) _mm512_storeu_ps(dst, w);
  if (c > cap) return c;  // the list is already too long
  const unsigned bits =
      static_cast<unsigned>(_mm512_cmp_ps_mask(z, _mm512_set1_ps(-INFINITY), _CMP_NEQ_UQ) &
                            _mm512_cmp_ps_mask(w, fw, _CMP_GE_OQ));
  if (bits == 0) return c;
  alignas(64) float zs[16], ws[16];
  _mm512_store_ps(zs, z);
  _mm512_store_ps(ws, w);
  return list_capped(bits, c, cap,
                     [&](unsigned b, int to) { return append_stored(b, zs, ws, at, list, to); });
}

/// RowPasses::weigh on AVX-512: avx2_weigh sixteen entries at a time (two vectors, 32
/// entries, into the 32 lanes; the row's last entries padded with masked ones, as there).
BATON_SAMPLE_AVX512 inline int avx512_weigh(const float* row, int n, float t, float m,
                                            float floor_w, int cap, kernels::Candidate* list,
                                            float* weights, double* total) {
  static_assert(kernels::kWeightLanes == 32 && kernels::kSumChunk % 32 == 0);
  const __m512 tv = _mm512_set1_ps(1.0f / t), mv = _mm512_set1_ps(m), fw = _mm512_set1_ps(floor_w);
  __m512 p0 = _mm512_setzero_ps(), p1 = _mm512_setzero_ps();
  __m512d d[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(),
                  _mm512_setzero_pd()};
  int c = 0, i = 0;
  for (; i + 32 <= n; i += 32) {
    c = weigh16(row + i, weights ? weights + i : nullptr, i, tv, mv, fw, cap, list, p0, c);
    c = weigh16(row + i + 16, weights ? weights + i + 16 : nullptr, i + 16, tv, mv, fw, cap, list,
                p1, c);
    if ((i + 32) % kernels::kSumChunk == 0) add_chunk16(p0, p1, d);
  }
  if (i < n) {  // the last entries, padded to 32
    alignas(64) float pad[32], w[32];
    for (int k = 0; k < 32; ++k) pad[k] = i + k < n ? row[i + k] : -INFINITY;
    c = weigh16(pad, w, i, tv, mv, fw, cap, list, p0, c);
    c = weigh16(pad + 16, w + 16, i + 16, tv, mv, fw, cap, list, p1, c);
    for (int k = 0; weights && i + k < n; ++k) weights[i + k] = w[k];
    add_chunk16(p0, p1, d);
  } else if (i % kernels::kSumChunk != 0) {
    add_chunk16(p0, p1, d);
  }
  *total = add_lanes16(d);
  return c;
}

/// avx512_gather_band()'s sixteen weights from `at`: those of at least `high` (hv) into
/// `part` and `over_count`, those in the band appended to out[c...]; returns the new count.
BATON_SAMPLE_AVX512 inline int gather16(const float* row, const float* weights, int at, __m512 tv,
                                        __m512 lv, __m512 hv, kernels::Candidate* out, __m512& part,
                                        int& over_count, int c) {
  const __m512 w = _mm512_loadu_ps(weights + at);
  const __mmask16 over = _mm512_cmp_ps_mask(w, hv, _CMP_GE_OQ);
  part = _mm512_add_ps(part, _mm512_maskz_mov_ps(over, w));
  over_count += __builtin_popcount(static_cast<unsigned>(over));
  const unsigned bits =
      static_cast<unsigned>(_mm512_cmp_ps_mask(w, lv, _CMP_GE_OQ) & static_cast<__mmask16>(~over));
  if (bits == 0) return c;
  return append_lanes16(bits, _mm512_mul_ps(_mm512_loadu_ps(row + at), tv), w, at, out, c);
}

/// RowPasses::gather_band on AVX-512: sixteen weights compared at a time, those of at least
/// `high` added into the block's 32 float lanes (two vectors); the rare lanes in the band
/// appended.
BATON_SAMPLE_AVX512 inline int avx512_gather_band(const float* row, int n, float t,
                                                  const float* weights, float low, float high,
                                                  int block, kernels::Candidate* out,
                                                  double* block_mass, int* above) {
  const __m512 lv = _mm512_set1_ps(low), hv = _mm512_set1_ps(high), tv = _mm512_set1_ps(1.0f / t);
  int c = 0, over_count = 0;
  for (int begin = 0, j = 0; begin < n; begin += block, ++j) {
    const int end = begin + block < n ? begin + block : n;
    __m512 p0 = _mm512_setzero_ps(), p1 = _mm512_setzero_ps();
    int i = begin;
    for (; i + 32 <= end; i += 32) {
      c = gather16(row, weights, i, tv, lv, hv, out, p0, over_count, c);
      c = gather16(row, weights, i + 16, tv, lv, hv, out, p1, over_count, c);
    }
    if (i < end) {  // the row's last, partial block: its last entries as the scalar pass
      alignas(64) float part[kernels::kWeightLanes];
      _mm512_store_ps(part, p0);
      _mm512_store_ps(part + 16, p1);
      c += kernels::RowPasses::gather_range(row, i, end, t, weights, low, high, out + c, part,
                                            &over_count);
      p0 = _mm512_load_ps(part);
      p1 = _mm512_load_ps(part + 16);
    }
    __m512d d[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(),
                    _mm512_setzero_pd()};
    add_chunk16(p0, p1, d);
    block_mass[j] = add_lanes16(d);
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
