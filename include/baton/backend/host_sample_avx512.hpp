// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The sampler's heaviest passes over a row — a block's maximum and validity, the
///        weights with their total and list, each block's mass of the weights before a bound (a
///        dense draw's round), and the top-ranked entries — on AVX-512 vectors, sixteen entries at
///        a time, for the host. They compute exactly what kernels::RowPasses computes (the same
///        bits, the same sums in the same order); the lighter passes are Avx2RowPasses'.
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
// A pass inlines every helper it calls (`flatten`): a lane vector passed by reference to a helper
// left out of line lives in memory, and each add waits on the last one's store (measured: the
// weighing pass took 62 µs at 152k that way, 33 inlined: g++ 12 -O2).
#define BATON_SAMPLE_AVX512_PASS \
  __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq"), flatten))
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

/// A chunk's mass from its two float lane vectors, as kernels::add_chunk_mass sums it (to
/// double, add_lanes).
BATON_SAMPLE_AVX512 inline double chunk_sum16(__m512 p0, __m512 p1) {
  const __m512d d[4] = {_mm512_maskz_cvtps_pd(0xff, _mm512_maskz_extractf32x8_ps(0xff, p0, 0)),
                        _mm512_maskz_cvtps_pd(0xff, _mm512_maskz_extractf32x8_ps(0xff, p0, 1)),
                        _mm512_maskz_cvtps_pd(0xff, _mm512_maskz_extractf32x8_ps(0xff, p1, 0)),
                        _mm512_maskz_cvtps_pd(0xff, _mm512_maskz_extractf32x8_ps(0xff, p1, 1))};
  return add_lanes16(d);
}

/// The end of a weighing chunk starting at `chunk`: its mass to its block (when `block_mass` is
/// not null), its lanes to the doubles (add_chunk16).
BATON_SAMPLE_AVX512 inline void end_chunk16(__m512& p0, __m512& p1, __m512d* d, double* block_mass,
                                            int chunk, int block) {
  if (block_mass) kernels::place_chunk_mass(block_mass, chunk, block, chunk_sum16(p0, p1));
  add_chunk16(p0, p1, d);
}

/// RowPasses::block on AVX-512.
BATON_SAMPLE_AVX512_PASS inline kernels::BlockScan avx512_block(const float* row, int begin,
                                                                int end) {
  // A NaN is flagged as it passes; +Inf is the maximum's (max keeps it, and a NaN lane's max
  // goes unread: the row is discarded).
  __m512 mx0 = _mm512_set1_ps(-INFINITY), mx1 = mx0;
  __mmask16 nan = 0;
  int i = begin;
  for (; i + 32 <= end; i += 32) {
    const __m512 v0 = _mm512_loadu_ps(row + i), v1 = _mm512_loadu_ps(row + i + 16);
    nan |= _mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q);
    mx0 = _mm512_maskz_max_ps(0xffff, mx0, v0);
    mx1 = _mm512_maskz_max_ps(0xffff, mx1, v1);
  }
  alignas(64) float lanes[32];
  _mm512_store_ps(lanes, mx0);
  _mm512_store_ps(lanes + 16, mx1);
  kernels::BlockScan s = kernels::RowPasses::block(row, i, end);
  for (const float l : lanes)
    if (l > s.max) s.max = l;
  s.bad |= nan != 0 || s.max == INFINITY;
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
  // p times 2^k in one instruction (scalef: the product by an exact power of two, rounded
  // once, as the scalar multiply by the scale); below kExpLowest (and -Inf) the lanes are 0.
  const __mmask16 ok = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kernels::kExpLowest), _CMP_GE_OQ);
  return _mm512_maskz_scalef_ps(ok, p, k);
}

/// avx512_top_ranked()'s step over sixteen scaled logits z (ids at..at + 15): the rare lanes
/// that rank before the list's last (or any, while it is not full) inserted.
BATON_SAMPLE_AVX512 inline void rank16(__m512 z, int at, kernels::RankedTop& r) {
  const __m512 bar =
      r.count == r.top_n ? _mm512_set1_ps(r.top[r.count - 1].logprob) : _mm512_set1_ps(-INFINITY);
  auto bits = static_cast<unsigned>(_mm512_cmp_ps_mask(z, bar, _CMP_GT_OQ));
  if (bits == 0) return;
  alignas(64) float zs[16];
  _mm512_store_ps(zs, z);
  for (; bits != 0; bits &= bits - 1) {
    const int lane = __builtin_ctz(bits);
    r.count = kernels::insert_ranked(r.top, r.count, r.top_n, at + lane, zs[lane]);
  }
}

/// avx512_weigh()'s sixteen entries src[0..15] (ids at..at + 15): their weights into `dst`
/// (when not null) and their sum into `part` (lanes 0..15 or 16..31 of the 32, the caller's
/// pick); returns the list's count (without a list, the count of what it would hold: a weight
/// above a floor > 0 is not a masked token's, 0, so only a floor of 0, `zero_floor`, needs z).
BATON_SAMPLE_AVX512 inline int weigh16(const float* src, float* dst, int at, __m512 tv, __m512 mv,
                                       __m512 fw, bool zero_floor, int cap,
                                       kernels::Candidate* list, kernels::RankedTop* ranked,
                                       __m512& part, int c) {
  const __m512 z = _mm512_mul_ps(_mm512_loadu_ps(src), tv);
  const __m512 w = avx512_sample_exp(_mm512_sub_ps(z, mv));
  part = _mm512_add_ps(part, w);
  if (dst) _mm512_storeu_ps(dst, w);
  if (ranked) rank16(z, at, *ranked);
  if (c > cap) return c;  // the list is already too long
  const __mmask16 heavy = _mm512_cmp_ps_mask(w, fw, _CMP_GE_OQ);
  const auto bits = static_cast<unsigned>(
      zero_floor || list ? _mm512_mask_cmp_ps_mask(heavy, z, _mm512_set1_ps(-INFINITY), _CMP_NEQ_UQ)
                         : heavy);
  if (!list) return c + __builtin_popcount(bits);  // the caller clamps
  if (bits == 0) return c;
  alignas(64) float zs[16], ws[16];
  _mm512_store_ps(zs, z);
  _mm512_store_ps(ws, w);
  return list_capped(bits, c, cap,
                     [&](unsigned b, int to) { return append_stored(b, zs, ws, at, list, to); });
}

/// RowPasses::weigh on AVX-512: avx2_weigh sixteen entries at a time (two vectors, 32
/// entries, into the 32 lanes; the row's last entries padded with masked ones, as there).
BATON_SAMPLE_AVX512_PASS inline int avx512_weigh(const float* row, int n, float t, float m,
                                                 float floor_w, int cap, kernels::Candidate* list,
                                                 float* weights, double* total, double* block_mass,
                                                 int block, kernels::RankedTop* ranked) {
  static_assert(kernels::kWeightLanes == 32 && kernels::kSumChunk % 32 == 0);
  const __m512 tv = _mm512_set1_ps(1.0f / t), mv = _mm512_set1_ps(m), fw = _mm512_set1_ps(floor_w);
  const bool zero_floor = !(floor_w > 0.0f);
  __m512 p0 = _mm512_setzero_ps(), p1 = _mm512_setzero_ps();
  __m512d d[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(),
                  _mm512_setzero_pd()};
  int c = 0, i = 0;
  for (; i + 32 <= n; i += 32) {
    c = weigh16(row + i, weights ? weights + i : nullptr, i, tv, mv, fw, zero_floor, cap, list,
                ranked, p0, c);
    c = weigh16(row + i + 16, weights ? weights + i + 16 : nullptr, i + 16, tv, mv, fw, zero_floor,
                cap, list, ranked, p1, c);
    if ((i + 32) % kernels::kSumChunk == 0)
      end_chunk16(p0, p1, d, block_mass, i + 32 - kernels::kSumChunk, block);
  }
  const int last_chunk = i / kernels::kSumChunk * kernels::kSumChunk;
  if (i < n) {  // the last entries, padded to 32
    alignas(64) float pad[32], w[32];
    for (int k = 0; k < 32; ++k) pad[k] = i + k < n ? row[i + k] : -INFINITY;
    c = weigh16(pad, w, i, tv, mv, fw, zero_floor, cap, list, ranked, p0, c);
    c = weigh16(pad + 16, w + 16, i + 16, tv, mv, fw, zero_floor, cap, list, ranked, p1, c);
    for (int k = 0; weights && i + k < n; ++k) weights[i + k] = w[k];
    end_chunk16(p0, p1, d, block_mass, last_chunk, block);
  } else if (i % kernels::kSumChunk != 0) {
    end_chunk16(p0, p1, d, block_mass, last_chunk, block);
  }
  *total = add_lanes16(d);
  return c > cap ? cap + 1 : c;
}

/// RowPasses::list_weighed on AVX-512: sixteen weights compared at a time; the rare lanes that
/// pass are appended.
BATON_SAMPLE_AVX512_PASS inline int avx512_list_weighed(const float* row, int begin, int end,
                                                        float t, const float* weights,
                                                        float floor_w, kernels::Candidate* list) {
  const __m512 fw = _mm512_set1_ps(floor_w), tv = _mm512_set1_ps(1.0f / t);
  int c = 0, i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512 w = _mm512_loadu_ps(weights + i);
    const __mmask16 heavy = _mm512_cmp_ps_mask(w, fw, _CMP_GE_OQ);
    if (heavy == 0) continue;
    const __m512 z = _mm512_mul_ps(_mm512_loadu_ps(row + i), tv);
    const auto bits = static_cast<unsigned>(
        _mm512_mask_cmp_ps_mask(heavy, z, _mm512_set1_ps(-INFINITY), _CMP_NEQ_UQ));
    alignas(64) float zs[16], ws[16];
    _mm512_store_ps(zs, z);
    _mm512_store_ps(ws, w);
    c = append_stored(bits, zs, ws, i, list, c);
  }
  return c + kernels::RowPasses::list_weighed(row, i, end, t, weights, floor_w, list + c);
}

/// avx512_mass_before()'s sixteen weights from `at`: those that weigh before the bound (bw its
/// weight) added to `part`; only one of the bound's very weight needs its z (rare).
BATON_SAMPLE_AVX512 inline void mass16(const float* row, float t, const float* weights, int at,
                                       const kernels::Candidate& bound, __m512 bw, __m512& part) {
  const __m512 w = _mm512_loadu_ps(weights + at);
  __mmask16 take = _mm512_cmp_ps_mask(w, bw, _CMP_GT_OQ);
  if (const __mmask16 tie = _mm512_cmp_ps_mask(w, bw, _CMP_EQ_OQ); tie != 0) {
    for (unsigned bits = tie; bits != 0; bits &= bits - 1) {
      const int lane = __builtin_ctz(bits);
      if (kernels::weighs_before(row, t, weights, at + lane, bound))
        take = static_cast<__mmask16>(take | (1u << lane));
    }
  }
  part = _mm512_mask_add_ps(part, take, part, w);
}

/// RowPasses::mass_before on AVX-512: sixteen weights compared at a time, those that weigh before
/// the bound added into the chunk's 32 float lanes (two vectors), as the scalar pass adds them.
BATON_SAMPLE_AVX512_PASS inline void avx512_mass_before(const float* row, int n, float t,
                                                        const float* weights,
                                                        const kernels::Candidate& bound, int block,
                                                        double* block_mass) {
  const __m512 bw = _mm512_set1_ps(bound.w);
  for (int chunk = 0; chunk < n; chunk += kernels::kSumChunk) {
    const int end = chunk + kernels::kSumChunk < n ? chunk + kernels::kSumChunk : n;
    __m512 p0 = _mm512_setzero_ps(), p1 = _mm512_setzero_ps();
    int i = chunk;
    for (; i + 32 <= end; i += 32) {
      mass16(row, t, weights, i, bound, bw, p0);
      mass16(row, t, weights, i + 16, bound, bw, p1);
    }
    if (i < end) {  // the row's last, partial chunk: its last entries as the scalar pass
      alignas(64) float part[kernels::kWeightLanes];
      _mm512_store_ps(part, p0);
      _mm512_store_ps(part + 16, p1);
      kernels::RowPasses::mass_range(row, i, end, t, weights, bound, part);
      p0 = _mm512_load_ps(part);
      p1 = _mm512_load_ps(part + 16);
    }
    kernels::place_chunk_mass(block_mass, chunk, block, chunk_sum16(p0, p1));
  }
}

/// RowPasses::top_ranked on AVX-512: avx2_top_ranked sixteen entries at a time (once the list is
/// full, a later entry ranks before its last only with a larger z: ties go to the lower id).
BATON_SAMPLE_AVX512_PASS inline int avx512_top_ranked(const float* row, int n, float t, int top_n,
                                                      kernels::TopLogprob* top) {
  const __m512 tv = _mm512_set1_ps(1.0f / t);
  kernels::RankedTop r{top, top_n, 0};
  int i = 0;
  for (; i + 16 <= n; i += 16) rank16(_mm512_mul_ps(_mm512_loadu_ps(row + i), tv), i, r);
  return rank_tail(row, i, n, t, top_n, top, r.count);
}

}  // namespace detail
#undef BATON_SAMPLE_AVX512
#undef BATON_SAMPLE_AVX512_PASS
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

/// kernels::RowPasses with the block, weighing, listing, mass and ranking passes on AVX-512 and
/// the rest on AVX2 (same results; the caller checked sample_passes_on_avx512()).
#if BATON_HOST_SIMD_X86
struct Avx512RowPasses : Avx2RowPasses {
  static kernels::BlockScan block(const float* row, int begin, int end) {
    return detail::avx512_block(row, begin, end);
  }
  static int weigh(const float* row, int n, float t, float m, float floor_w, int cap,
                   kernels::Candidate* list, float* weights, double* total, double* block_mass,
                   int block, kernels::RankedTop* ranked) {
    return detail::avx512_weigh(row, n, t, m, floor_w, cap, list, weights, total, block_mass, block,
                                ranked);
  }
  static int list_weighed(const float* row, int begin, int end, float t, const float* weights,
                          float floor_w, kernels::Candidate* list) {
    return detail::avx512_list_weighed(row, begin, end, t, weights, floor_w, list);
  }
  static void mass_before(const float* row, int n, float t, const float* weights,
                          const kernels::Candidate& bound, int block, double* block_mass) {
    detail::avx512_mass_before(row, n, t, weights, bound, block, block_mass);
  }
  static int top_ranked(const float* row, int n, float t, int top_n, kernels::TopLogprob* top) {
    return detail::avx512_top_ranked(row, n, t, top_n, top);
  }
};
#else
struct Avx512RowPasses : kernels::RowPasses {};  // no x86 vectors: the scalar passes
#endif

}  // namespace baton::host_simd
