// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The sampler's passes over a whole row of logits (kernels::RowPasses: a block's maximum
///        and validity, the list of entries above a bound, the argmax) on AVX2 vectors, for the
///        host. They compute exactly what the scalar passes compute — the same maximum, counts,
///        list (in id order, each weight from kernels::sample_exp's steps), top-p's total (in the
///        same eight lanes) and argmax — eight entries at a time; the rest of the sampler
///        (selections on the short list, the draw) is shared.
///
/// At vocab 152k a scalar pass costs about 150 µs of a decode step (one compare chain per
/// entry); these take a tenth of that (benchmarks/sampling_bench.cpp, docs/sampling.md).
/// Host only: never included from .cu files.
#pragma once

#include <cmath>
#include <cstdint>

#include "baton/backend/host_simd.hpp"
#include "baton/kernels/sample.hpp"

namespace baton::host_simd {

#if BATON_HOST_SIMD_X86
namespace detail {

/// RowPasses::block on AVX2.
__attribute__((target("avx2"), flatten)) inline kernels::BlockScan avx2_block(const float* row,
                                                                              int begin, int end) {
  // A NaN is flagged as it passes; +Inf is the maximum's (the row is discarded either way).
  __m256 mx0 = _mm256_set1_ps(-INFINITY), mx1 = mx0, nan = _mm256_setzero_ps();
  int i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m256 v0 = _mm256_loadu_ps(row + i), v1 = _mm256_loadu_ps(row + i + 8);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q));
    mx0 = _mm256_max_ps(mx0, v0);
    mx1 = _mm256_max_ps(mx1, v1);
  }
  alignas(32) float lanes[16];
  _mm256_store_ps(lanes, mx0);
  _mm256_store_ps(lanes + 8, mx1);
  kernels::BlockScan s = kernels::RowPasses::block(row, i, end);
  for (const float l : lanes)
    if (l > s.max) s.max = l;
  s.bad |= _mm256_movemask_ps(nan) != 0 || s.max == INFINITY;
  return s;
}

/// kernels::sample_exp on eight lanes: the same steps (the multiply, rintf as round-to-nearest,
/// the two fmaf of the reduction, Horner's seven fmaf, the exact power of two), so the same bits.
__attribute__((target("avx2,fma"))) inline __m256 avx2_sample_exp(__m256 x) {
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kernels::kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(k, _mm256_set1_ps(-kernels::kLn2Hi), x);
  r = _mm256_fmadd_ps(k, _mm256_set1_ps(-kernels::kLn2Lo), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(1.0f / 5040), r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // Below kExpLowest (and -Inf) the scale's exponent would leave its field: those lanes are 0.
  const __m256 low = _mm256_cmp_ps(x, _mm256_set1_ps(kernels::kExpLowest), _CMP_NGE_UQ);
  const __m256i e = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_blendv_ps(k, _mm256_setzero_ps(), low)),
                       _mm256_set1_epi32(127)),
      23);
  return _mm256_andnot_ps(low, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

/// Appends the lanes of `bits` (ids i + lane, their z and w stored in zs and ws) to list[c...]
/// in id order; returns the new count.
inline int append_stored(unsigned bits, const float* zs, const float* ws, int i,
                         kernels::Candidate* list, int c) {
  for (; bits != 0; bits &= bits - 1) {
    const int lane = __builtin_ctz(bits);
    list[c++] = kernels::Candidate{zs[lane], ws[lane], i + lane};
  }
  return c;
}

/// append_stored() from the vectors z and w.
__attribute__((target("avx2"))) inline int append_lanes(unsigned bits, __m256 z, __m256 w, int i,
                                                        kernels::Candidate* list, int c) {
  alignas(32) float zs[8], ws[8];
  _mm256_store_ps(zs, z);
  _mm256_store_ps(ws, w);
  return append_stored(bits, zs, ws, i, list, c);
}

/// RowPasses::list_at_least on AVX2: the bound tested and the weights computed eight entries at
/// a time (avx2_sample_exp); the entries that pass are appended in id order.
__attribute__((target("avx2,fma"), flatten)) inline int avx2_list_at_least(
    const float* row, int begin, int end, float t, float floor_z, float m, float floor_w,
    kernels::Candidate* list) {
  const __m256 tv = _mm256_set1_ps(1.0f / t), fz = _mm256_set1_ps(floor_z), mv = _mm256_set1_ps(m),
               fw = _mm256_set1_ps(floor_w), neg_inf = _mm256_set1_ps(-INFINITY);
  int c = 0, i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 z = _mm256_mul_ps(_mm256_loadu_ps(row + i), tv);  // as scaled_logit, exactly
    const __m256 pass =
        _mm256_and_ps(_mm256_cmp_ps(z, neg_inf, _CMP_NEQ_UQ), _mm256_cmp_ps(z, fz, _CMP_GE_OQ));
    if (_mm256_movemask_ps(pass) == 0) continue;
    const __m256 w = avx2_sample_exp(_mm256_sub_ps(z, mv));
    const unsigned bits = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_and_ps(pass, _mm256_cmp_ps(w, fw, _CMP_GE_OQ))));
    c = append_lanes(bits, z, w, i, list, c);
  }
  return c + kernels::RowPasses::list_at_least(row, i, end, t, floor_z, m, floor_w, list + c);
}

/// The 32 sum lanes (kernels::kWeightLanes) as AVX2 holds them: four float vectors while a chunk
/// or block is summed (lanes 8q .. 8q + 7 in p[q]), eight double vectors across chunks (lanes
/// 4q .. 4q + 3 in d[q]); arrays indexed by constants only, so they stay in registers.

/// A chunk's float lanes added to the double lanes (kernels::add_chunk), the float lanes
/// cleared for the next chunk.
__attribute__((target("avx2"))) inline void add_chunk8(__m256* p, __m256d* d) {
  for (int q = 0; q < 4; ++q) {
    d[2 * q] = _mm256_add_pd(d[2 * q], _mm256_cvtps_pd(_mm256_castps256_ps128(p[q])));
    d[2 * q + 1] = _mm256_add_pd(d[2 * q + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(p[q], 1)));
    p[q] = _mm256_setzero_ps();
  }
}

/// kernels::add_lanes on the double vectors: the same pairwise adds, four at a time.
__attribute__((target("avx2"))) inline double add_lanes8(const __m256d* d) {
  const __m256d s0 = _mm256_add_pd(d[0], d[4]), s1 = _mm256_add_pd(d[1], d[5]),
                s2 = _mm256_add_pd(d[2], d[6]), s3 = _mm256_add_pd(d[3], d[7]);   // k + 16
  const __m256d u = _mm256_add_pd(_mm256_add_pd(s0, s2), _mm256_add_pd(s1, s3));  // k + 8, k + 4
  const __m128d v = _mm_add_pd(_mm256_castpd256_pd128(u), _mm256_extractf128_pd(u, 1));  // k + 2
  return _mm_cvtsd_f64(_mm_add_sd(v, _mm_unpackhi_pd(v, v)));                            // k + 1
}

/// avx2_top_ranked()'s step over eight scaled logits z (ids at..at + 7): the rare lanes that
/// rank before the list's last (or any, while it is not full) inserted (a later entry ranks
/// before the last only with a larger z: ties go to the lower id).
__attribute__((target("avx2"))) inline void rank8(__m256 z, int at, kernels::RankedTop& r) {
  const __m256 bar =
      r.count == r.top_n ? _mm256_set1_ps(r.top[r.count - 1].logprob) : _mm256_set1_ps(-INFINITY);
  auto bits = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(z, bar, _CMP_GT_OQ)));
  if (bits == 0) return;
  alignas(32) float zs[8];
  _mm256_store_ps(zs, z);
  for (; bits != 0; bits &= bits - 1) {
    const int lane = __builtin_ctz(bits);
    r.count = kernels::insert_ranked(r.top, r.count, r.top_n, at + lane, zs[lane]);
  }
}

/// A chunk's mass from its four float lane vectors, as kernels::add_chunk_mass sums it (to
/// double, add_lanes).
__attribute__((target("avx2"))) inline double chunk_sum8(const __m256* p) {
  __m256d d[8];
  for (int q = 0; q < 4; ++q) {
    d[2 * q] = _mm256_cvtps_pd(_mm256_castps256_ps128(p[q]));
    d[2 * q + 1] = _mm256_cvtps_pd(_mm256_extractf128_ps(p[q], 1));
  }
  return add_lanes8(d);
}

/// The end of a weighing chunk starting at `chunk`: its mass to its block (when `block_mass` is
/// not null), its lanes to the doubles (add_chunk8).
__attribute__((target("avx2"))) inline void end_chunk8(__m256* p, __m256d* d, double* block_mass,
                                                       int chunk, int block) {
  if (block_mass) kernels::place_chunk_mass(block_mass, chunk, block, chunk_sum8(p));
  add_chunk8(p, d);
}

/// weigh()'s list as the scalar pass keeps it: the lanes of `bits` (in id order) found with c
/// entries listed, appended by `append(bits, c)` (which returns the new count) while the list
/// has room for them all; otherwise the first cap - c of them, and cap + 1 (the list is too
/// long, as the scalar pass counts).
template <class Append>
inline int list_capped(unsigned bits, int c, int cap, Append&& append) {
  const int room = cap - c;
  if (__builtin_popcount(bits) <= room) return append(bits, c);
  unsigned keep = 0;
  for (int k = 0; k < room; ++k) {
    const unsigned low_bit = bits & (0u - bits);
    keep |= low_bit;
    bits ^= low_bit;
  }
  append(keep, c);
  return cap + 1;
}

/// avx2_weigh()'s eight entries src[0..7] (ids at..at + 7): their weights into `dst` (when not
/// null) and their sum into `part` (lanes 8q..8q + 7 of the 32, the caller's pick); returns
/// the list's count.
__attribute__((target("avx2,fma"))) inline int weigh8(const float* src, float* dst, int at,
                                                      __m256 tv, __m256 mv, __m256 fw, int cap,
                                                      kernels::Candidate* list,
                                                      kernels::RankedTop* ranked, __m256& part,
                                                      int c) {
  const __m256 z = _mm256_mul_ps(_mm256_loadu_ps(src), tv);
  const __m256 w = avx2_sample_exp(_mm256_sub_ps(z, mv));
  part = _mm256_add_ps(part, w);
  if (dst) _mm256_storeu_ps(dst, w);
  if (ranked) rank8(z, at, *ranked);
  if (c > cap) return c;  // the list is already too long
  const unsigned bits = static_cast<unsigned>(_mm256_movemask_ps(_mm256_and_ps(
      _mm256_cmp_ps(z, _mm256_set1_ps(-INFINITY), _CMP_NEQ_UQ), _mm256_cmp_ps(w, fw, _CMP_GE_OQ))));
  if (!list) return c + __builtin_popcount(bits);  // counting only (the caller clamps)
  if (bits == 0) return c;
  alignas(32) float zs[8], ws[8];
  _mm256_store_ps(zs, z);
  _mm256_store_ps(ws, w);
  return list_capped(bits, c, cap,
                     [&](unsigned b, int to) { return append_stored(b, zs, ws, at, list, to); });
}

/// weigh8() over 32 entries src[0..31] (ids from `at`) into the four lane vectors `p`; returns
/// the list's count.
__attribute__((target("avx2,fma"))) inline int weigh32(const float* src, float* dst, int at,
                                                       __m256 tv, __m256 mv, __m256 fw, int cap,
                                                       kernels::Candidate* list,
                                                       kernels::RankedTop* ranked, __m256* p,
                                                       int c) {
  for (int q = 0; q < 4; ++q)
    c = weigh8(src + 8 * q, dst ? dst + 8 * q : nullptr, at + 8 * q, tv, mv, fw, cap, list, ranked,
               p[q], c);
  return c;
}

/// RowPasses::weigh on AVX2: every weight eight at a time (stored when `weights` is not null),
/// the total summed as the scalar pass sums it (four vectors, 32 entries, into the 32 lanes;
/// a chunk of kSumChunk entries added in float, then to the doubles), the list up to `cap`
/// entries. The row's last entries are padded with masked ones (-Inf: weight 0, never listed,
/// and x + 0 is x, so the sums are the scalar pass's).
__attribute__((target("avx2,fma"), flatten)) inline int avx2_weigh(
    const float* row, int n, float t, float m, float floor_w, int cap, kernels::Candidate* list,
    float* weights, double* total, double* block_mass, int block, kernels::RankedTop* ranked) {
  static_assert(kernels::kWeightLanes == 32 && kernels::kSumChunk % 32 == 0);
  const __m256 tv = _mm256_set1_ps(1.0f / t), mv = _mm256_set1_ps(m), fw = _mm256_set1_ps(floor_w);
  __m256 p[4];
  __m256d d[8];
  for (__m256& v : p) v = _mm256_setzero_ps();
  for (__m256d& v : d) v = _mm256_setzero_pd();
  int c = 0, i = 0;
  for (; i + 32 <= n; i += 32) {
    c = weigh32(row + i, weights ? weights + i : nullptr, i, tv, mv, fw, cap, list, ranked, p, c);
    if ((i + 32) % kernels::kSumChunk == 0)
      end_chunk8(p, d, block_mass, i + 32 - kernels::kSumChunk, block);
  }
  const int last_chunk = i / kernels::kSumChunk * kernels::kSumChunk;
  if (i < n) {  // the last entries, padded to 32
    alignas(32) float pad[32], w[32];
    for (int k = 0; k < 32; ++k) pad[k] = i + k < n ? row[i + k] : -INFINITY;
    c = weigh32(pad, w, i, tv, mv, fw, cap, list, ranked, p, c);
    for (int k = 0; weights && i + k < n; ++k) weights[i + k] = w[k];
    end_chunk8(p, d, block_mass, last_chunk, block);
  } else if (i % kernels::kSumChunk != 0) {
    end_chunk8(p, d, block_mass, last_chunk, block);
  }
  *total = add_lanes8(d);
  return c > cap ? cap + 1 : c;
}

/// RowPasses::list_weighed on AVX2: eight weights compared at a time; the rare lanes that pass
/// are appended.
__attribute__((target("avx2"), flatten)) inline int avx2_list_weighed(const float* row, int begin,
                                                                      int end, float t,
                                                                      const float* weights,
                                                                      float floor_w,
                                                                      kernels::Candidate* list) {
  const __m256 fw = _mm256_set1_ps(floor_w), tv = _mm256_set1_ps(1.0f / t);
  int c = 0, i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 w = _mm256_loadu_ps(weights + i);
    const __m256 heavy = _mm256_cmp_ps(w, fw, _CMP_GE_OQ);
    if (_mm256_movemask_ps(heavy) == 0) continue;
    const __m256 z = _mm256_mul_ps(_mm256_loadu_ps(row + i), tv);
    const auto bits = static_cast<unsigned>(_mm256_movemask_ps(
        _mm256_and_ps(heavy, _mm256_cmp_ps(z, _mm256_set1_ps(-INFINITY), _CMP_NEQ_UQ))));
    c = append_lanes(bits, z, w, i, list, c);
  }
  return c + kernels::RowPasses::list_weighed(row, i, end, t, weights, floor_w, list + c);
}

/// Lanes of `bits` (lane k: bit k) as an all-ones mask vector.
__attribute__((target("avx2"))) inline __m256 lanes_of(unsigned bits) {
  const __m256i lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i set = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), lane_bit);
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(set, lane_bit));
}

/// avx2_mass_before()'s eight weights from `at`: those that weigh before the bound (bw its
/// weight) added to `part`. Heavier ones do; only one of the bound's very weight needs its z
/// (kernels::weighs_before), which is rare.
__attribute__((target("avx2"))) inline void mass8(const float* row, float t, const float* weights,
                                                  int at, const kernels::Candidate& bound,
                                                  __m256 bw, __m256& part) {
  const __m256 w = _mm256_loadu_ps(weights + at);
  __m256 take = _mm256_cmp_ps(w, bw, _CMP_GT_OQ);
  if (const int tie = _mm256_movemask_ps(_mm256_cmp_ps(w, bw, _CMP_EQ_OQ)); tie != 0) {
    unsigned before = 0;
    for (unsigned bits = static_cast<unsigned>(tie); bits != 0; bits &= bits - 1) {
      const int lane = __builtin_ctz(bits);
      if (kernels::weighs_before(row, t, weights, at + lane, bound)) before |= 1u << lane;
    }
    take = _mm256_or_ps(take, lanes_of(before));
  }
  part = _mm256_add_ps(part, _mm256_and_ps(take, w));
}

/// RowPasses::mass_before on AVX2: eight weights compared at a time, those that weigh before the
/// bound added into the chunk's 32 float lanes (four vectors), as the scalar pass adds them.
__attribute__((target("avx2"), flatten)) inline void avx2_mass_before(
    const float* row, int n, float t, const float* weights, const kernels::Candidate& bound,
    int block, double* block_mass) {
  const __m256 bw = _mm256_set1_ps(bound.w);
  for (int chunk = 0; chunk < n; chunk += kernels::kSumChunk) {
    const int end = chunk + kernels::kSumChunk < n ? chunk + kernels::kSumChunk : n;
    __m256 p[4];
    for (__m256& v : p) v = _mm256_setzero_ps();
    int i = chunk;
    for (; i + 32 <= end; i += 32)
      for (int q = 0; q < 4; ++q) mass8(row, t, weights, i + 8 * q, bound, bw, p[q]);
    if (i < end) {  // the row's last, partial chunk: its last entries as the scalar pass
      alignas(32) float part[kernels::kWeightLanes];
      for (int q = 0; q < 4; ++q) _mm256_store_ps(part + 8 * q, p[q]);
      kernels::RowPasses::mass_range(row, i, end, t, weights, bound, part);
      for (int q = 0; q < 4; ++q) p[q] = _mm256_load_ps(part + 8 * q);
    }
    kernels::place_chunk_mass(block_mass, chunk, block, chunk_sum8(p));
  }
}

/// RowPasses::top_ranked's entries [i, n) into a list of `count`: a vector pass's tail.
inline int rank_tail(const float* row, int i, int n, float t, int top_n, kernels::TopLogprob* top,
                     int count) {
  for (; i < n; ++i) {
    const float z = kernels::scaled_logit(row[i], t);
    if (z != -INFINITY) count = kernels::insert_ranked(top, count, top_n, i, z);
  }
  return count;
}

/// RowPasses::top_ranked on AVX2: once the list is full, eight entries are compared at a time
/// with its last (a later entry ranks before it only with a larger z: ties go to the lower id),
/// and only the rare lanes that pass are inserted.
__attribute__((target("avx2"), flatten)) inline int avx2_top_ranked(const float* row, int n,
                                                                    float t, int top_n,
                                                                    kernels::TopLogprob* top) {
  const __m256 tv = _mm256_set1_ps(1.0f / t);
  kernels::RankedTop r{top, top_n, 0};
  int i = 0;
  for (; i + 8 <= n; i += 8) rank8(_mm256_mul_ps(_mm256_loadu_ps(row + i), tv), i, r);
  return rank_tail(row, i, n, t, top_n, top, r.count);
}

/// kernels::argmax on AVX2: the maximum and whether a NaN is present in one pass, then the first
/// entry equal to the maximum.
__attribute__((target("avx2"), flatten)) inline std::int32_t avx2_argmax(const float* row, int n) {
  if (n < 16) return kernels::argmax(row, n);
  __m256 mx = _mm256_set1_ps(-INFINITY), nan = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(row + i);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    mx = _mm256_max_ps(mx, v);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, mx);
  float best = lanes[0];
  for (const float l : lanes)
    if (l > best) best = l;
  bool has_nan = _mm256_movemask_ps(nan) != 0;
  for (int k = i; k < n; ++k) {
    has_nan |= row[k] != row[k];
    if (row[k] > best) best = row[k];
  }
  // A NaN anywhere, or an infinite maximum: no token may be chosen (kernels::argmax_id).
  if (has_nan || !(best - best == 0.0f)) return -1;
  const __m256 bv = _mm256_set1_ps(best);
  for (i = 0; i + 8 <= n; i += 8) {
    const int eq = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(row + i), bv, _CMP_EQ_OQ));
    if (eq != 0) return i + __builtin_ctz(static_cast<unsigned>(eq));
  }
  for (; i < n; ++i)
    if (row[i] == best) return i;
  return -1;  // unreachable: `best` is one of the entries
}

}  // namespace detail
#endif

/// Whether this CPU runs Avx2RowPasses (AVX2 and FMA). Asked once per token and row, so it reads
/// libgcc's feature word only: cpu_supports(Isa::avx2) also asks CPUID for F16C, which these
/// passes do not use and which a virtual machine answers by trapping to the hypervisor.
inline bool sample_passes_on_avx2() {
#if BATON_HOST_SIMD_X86
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

/// kernels::RowPasses on AVX2 (same results; the caller checked sample_passes_on_avx2()).
#if BATON_HOST_SIMD_X86
struct Avx2RowPasses {
  static kernels::BlockScan block(const float* row, int begin, int end) {
    return detail::avx2_block(row, begin, end);
  }
  static int list_at_least(const float* row, int begin, int end, float t, float floor_z, float m,
                           float floor_w, kernels::Candidate* list) {
    return detail::avx2_list_at_least(row, begin, end, t, floor_z, m, floor_w, list);
  }
  static int weigh(const float* row, int n, float t, float m, float floor_w, int cap,
                   kernels::Candidate* list, float* weights, double* total, double* block_mass,
                   int block, kernels::RankedTop* ranked) {
    return detail::avx2_weigh(row, n, t, m, floor_w, cap, list, weights, total, block_mass, block,
                              ranked);
  }
  static int list_weighed(const float* row, int begin, int end, float t, const float* weights,
                          float floor_w, kernels::Candidate* list) {
    return detail::avx2_list_weighed(row, begin, end, t, weights, floor_w, list);
  }
  static void mass_before(const float* row, int n, float t, const float* weights,
                          const kernels::Candidate& bound, int block, double* block_mass) {
    detail::avx2_mass_before(row, n, t, weights, bound, block, block_mass);
  }
  static int top_ranked(const float* row, int n, float t, int top_n, kernels::TopLogprob* top) {
    return detail::avx2_top_ranked(row, n, t, top_n, top);
  }
  static std::int32_t argmax(const float* row, int n) { return detail::avx2_argmax(row, n); }
};
#else
struct Avx2RowPasses : kernels::RowPasses {};  // no x86 vectors: the scalar passes
#endif

}  // namespace baton::host_simd
