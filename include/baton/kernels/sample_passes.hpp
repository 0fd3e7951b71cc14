// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The sampler's passes over a whole row of logits, written once for every decode loop
///        (RowPasses): a block's maximum and validity, the weights exp(z - max) by sample_exp's
///        steps (so every loop gets the same bits), the list of tokens that may be kept, a
///        band of weights with each block's mass above it, the top-ranked entries and the
///        argmax. A host substitutes vector versions computing exactly the same
///        (backend/host_sample.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "baton/core/macros.hpp"
#include "baton/kernels/argmax.hpp"
#include "baton/kernels/sample_select.hpp"

namespace baton::kernels {

/// exp(x) for the sampler's weights (x = z - max z <= 0), from correctly rounded steps only —
/// rintf, fmaf, a multiply by an exact power of two — so every loop that weighs a row (the scalar
/// passes, the host's AVX2 passes doing the same steps eight at a time, a GPU thread) gets the
/// same bits, which a library expf does not promise across them. Within 2 ulp of exp on
/// [-87.3, 0] (a degree-7 Taylor polynomial on |r| <= ln2 / 2); 0 below it, -Inf included.
inline constexpr float kExpLowest = -87.3f;  ///< below: 0 (2^-126 is about e^-87.34)
inline constexpr float kLog2e = 1.44269504f;
inline constexpr float kLn2Hi = 0.693145751953125f;  ///< ln 2's leading 16 bits
inline constexpr float kLn2Lo = 1.42860677e-06f;     ///< ln 2 - kLn2Hi
BATON_HD inline float sample_exp(float x) {
  if (!(x >= kExpLowest)) return 0.0f;
  const float k = rintf(x * kLog2e);  // in [-126, 0] for x in [kExpLowest, 0]
  float r = fmaf(k, -kLn2Hi, x);
  r = fmaf(k, -kLn2Lo, r);
  // Horner, the host's AVX2 passes in the same order (backend/host_sample.hpp).
  float p = fmaf(1.0f / 5040, r, 1.0f / 720);
  p = fmaf(p, r, 1.0f / 120);
  p = fmaf(p, r, 1.0f / 24);
  p = fmaf(p, r, 1.0f / 6);
  p = fmaf(p, r, 0.5f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  const std::uint32_t bits = static_cast<std::uint32_t>(static_cast<int>(k) + 127) << 23;
  float scale = 0.0f;
  __builtin_memcpy(&scale, &bits, 4);
  return p * scale;
}

/// How a pass sums a row's weights, the same in every loop: entry i adds to lane i % 32; each
/// lane sums a chunk of kSumChunk entries in float, in id order, then adds that to its double;
/// the 32 doubles are added pairwise in one fixed order (add_lanes). A vector pass sums exactly
/// as the scalar one: 32 lanes are two AVX-512 vectors (four AVX2 ones) whose adds do not wait
/// on each other, where with eight lanes each vector's add waited on the last; and the float
/// adds spare it the conversions a double per entry costs.
inline constexpr int kWeightLanes = 32;
inline constexpr int kSumChunk = 256;
/// The lanes' doubles added pairwise: lane k and k + 16, then k and k + 8, ... (the halving a
/// vector pass does in registers, so its total is these bits).
BATON_HD inline double add_lanes(const double* lane) {
  double s[kWeightLanes / 2];
  for (int k = 0; k < kWeightLanes / 2; ++k) s[k] = lane[k] + lane[k + kWeightLanes / 2];
  for (int width = kWeightLanes / 4; width >= 1; width /= 2)
    for (int k = 0; k < width; ++k) s[k] += s[k + width];
  return s[0];
}
/// A chunk's float sums into the lanes.
BATON_HD inline void add_chunk(double* lane, const float* part) {
  for (int k = 0; k < kWeightLanes; ++k) lane[k] += static_cast<double>(part[k]);
}

/// The sum of the chunk starting at `chunk` added to its block's mass (block_mass[chunk / block],
/// set by the block's first chunk).
BATON_HD inline void place_chunk_mass(double* block_mass, int chunk, int block, double sum) {
  double& mass = block_mass[chunk / block];
  mass = chunk % block == 0 ? sum : mass + sum;
}
/// A chunk's mass (its float lanes to double, add_lanes) added to its block's.
BATON_HD inline void add_chunk_mass(double* block_mass, int chunk, int block, const float* part) {
  double lane[kWeightLanes];
  for (int k = 0; k < kWeightLanes; ++k) lane[k] = static_cast<double>(part[k]);
  place_chunk_mass(block_mass, chunk, block, add_lanes(lane));
}

/// Whether entry i of a row whose weights are `weights` weighs before `bound`: ranks before it
/// (higher z, or the same z and a lower id), or, for a bound of z = +Inf, weighs more than its
/// weight. Weights grow with z, so a heavier entry ranks before and a lighter one after; only
/// an entry of the bound's very weight needs its z (the row's, times 1 / t). The bound
/// {+Inf, w, 0} is "of weight above w": {+Inf, 0, 0} every token of weight > 0, and the float
/// below a floor f every token of weight at least f.
BATON_HD inline bool weighs_before(const float* row, float t, const float* weights, int i,
                                   const Candidate& bound) {
  const float w = weights[i];
  if (w != bound.w) return w > bound.w;
  const float z = scaled_logit(row[i], t);
  return z > bound.z || (z == bound.z && i < bound.id);
}

/// The best-ranked entries a weighing pass collects on its way (top_ranked()'s, without a pass
/// of its own): `top` [top_n] best first, each with its scaled logit in the logprob field;
/// `count` how many it holds.
struct RankedTop {
  TopLogprob* top = nullptr;
  int top_n = 0;
  int count = 0;
};

/// One block of truncate()'s first pass: its largest entry, and whether one is NaN or +Inf
/// (then no token may be chosen from the row).
struct BlockScan {
  float max;
  bool bad;
};

/// The passes over a whole row that truncate() and sample_row() make, written once here for
/// every decode loop. A host substitutes vector versions that compute exactly the same
/// (backend/host_sample.hpp); the selections, which run on the short list, stay here.
struct RowPasses {
  /// row[begin, end) as BlockScan says.
  BATON_HD static BlockScan block(const float* row, int begin, int end) {
    BlockScan s{-INFINITY, false};
    for (int i = begin; i < end; ++i) {
      const float l = row[i];
      s.bad |= (l != l) | (l == INFINITY);
      if (l > s.max) s.max = l;
    }
    return s;
  }
  /// Appends to `list`, in id order, every entry of row[begin, end) whose scaled logit
  /// z = scaled_logit(row[i], t) is not -Inf, is at least `floor_z` and whose weight w =
  /// sample_exp(z - m) is at least `floor_w`; returns how many. (The row holds no NaN or +Inf.)
  BATON_HD static int list_at_least(const float* row, int begin, int end, float t, float floor_z,
                                    float m, float floor_w, Candidate* list) {
    int c = 0;
    for (int i = begin; i < end; ++i) {
      const float z = scaled_logit(row[i], t);
      if (z == -INFINITY || z < floor_z) continue;
      const float w = sample_exp(z - m);
      if (w >= floor_w) list[c++] = Candidate{z, w, i};
    }
    return c;
  }
  /// Every entry's weight w = sample_exp(scaled_logit(row[i], t) - m) into `weights` (when not
  /// null), the row's total weight (top-p's mass, summed as add_lanes says) into `total`, and
  /// list_at_least()'s list without a bound on z, up to `cap` entries: returns how many were
  /// listed, or cap + 1 when more would have been (the list is then incomplete). Without a
  /// list, only counts them (list_weighed() lists them from the weights, when they are few:
  /// listing in this pass, tested entry by entry, cost more than the pass). With
  /// `block_mass` (not null), each block of `block` entries' mass as mass_before() sums it (a
  /// chunk's lanes to double and add_lanes, the chunks of a block added in order) with every
  /// token included: the dense draw's first round costs no pass of its own. With `ranked` (not
  /// null), top_ranked()'s entries into it, as top_ranked() finds them.
  BATON_HD static int weigh(const float* row, int n, float t, float m, float floor_w, int cap,
                            Candidate* list, float* weights, double* total, double* block_mass,
                            int block, RankedTop* ranked) {
    double lane[kWeightLanes] = {};
    int c = 0;
    for (int chunk = 0; chunk < n; chunk += kSumChunk) {
      float part[kWeightLanes] = {};
      const int chunk_end = chunk + kSumChunk < n ? chunk + kSumChunk : n;
      for (int i = chunk; i < chunk_end; ++i) {
        const float z = scaled_logit(row[i], t);
        const float w = sample_exp(z - m);  // 0 for a masked (-Inf) entry
        part[i % kWeightLanes] += w;
        if (weights) weights[i] = w;
        if (ranked && z != -INFINITY)
          ranked->count = insert_ranked(ranked->top, ranked->count, ranked->top_n, i, z);
        if (z != -INFINITY && w >= floor_w && c <= cap) {
          if (list && c < cap) list[c] = Candidate{z, w, i};
          ++c;
        }
      }
      if (block_mass) add_chunk_mass(block_mass, chunk, block, part);
      add_chunk(lane, part);
    }
    *total = add_lanes(lane);
    return c;
  }
  /// weigh()'s list from the weights it stored: every entry that is not masked and weighs at
  /// least `floor_w`, in id order, with its z and weight; returns how many.
  BATON_HD static int list_weighed(const float* row, int begin, int end, float t,
                                   const float* weights, float floor_w, Candidate* list) {
    int c = 0;
    for (int i = begin; i < end; ++i) {
      if (!(weights[i] >= floor_w)) continue;
      const float z = scaled_logit(row[i], t);
      if (z != -INFINITY) list[c++] = Candidate{z, weights[i], i};
    }
    return c;
  }
  /// Each block of `block` entries' mass (block_mass[j], j < ceil(n / block)) of the tokens that
  /// weigh before `bound` (weighs_before(): ranked before it, or of at least a floor): each lane
  /// sums a chunk of kSumChunk entries in float, the chunk's 32 lanes go to double and
  /// add_lanes, and a block's chunks are added in order (block a multiple of kSumChunk).
  BATON_HD static void mass_before(const float* row, int n, float t, const float* weights,
                                   const Candidate& bound, int block, double* block_mass) {
    for (int chunk = 0; chunk < n; chunk += kSumChunk) {
      float part[kWeightLanes] = {};
      mass_range(row, chunk, chunk + kSumChunk < n ? chunk + kSumChunk : n, t, weights, bound,
                 part);
      add_chunk_mass(block_mass, chunk, block, part);
    }
  }
  /// mass_before() over [begin, end) of one chunk, its sums continued in `part` (a vector pass's
  /// tail goes here).
  BATON_HD static void mass_range(const float* row, int begin, int end, float t,
                                  const float* weights, const Candidate& bound, float* part) {
    for (int i = begin; i < end; ++i)
      if (weighs_before(row, t, weights, i, bound)) part[i % kWeightLanes] += weights[i];
  }
  /// The `top_n` (> 0) best-ranked unmasked entries into top[], best first, each with its
  /// scaled logit in the logprob field; returns how many (fewer when fewer are unmasked).
  BATON_HD static int top_ranked(const float* row, int n, float t, int top_n, TopLogprob* top) {
    int count = 0;
    for (int i = 0; i < n; ++i) {
      const float z = scaled_logit(row[i], t);
      if (z != -INFINITY) count = insert_ranked(top, count, top_n, i, z);
    }
    return count;
  }
  /// The exact argmax (kernels::argmax).
  BATON_HD static std::int32_t argmax(const float* row, int n) { return kernels::argmax(row, n); }
};

}  // namespace baton::kernels
