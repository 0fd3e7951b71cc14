// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What truncation leaves of a row and how a token is drawn from it: the kept set, listed
///        (a short list of the tokens that may be kept) or dense (a set too long to list: the
///        row's weights, top-p's cut found by a sampled estimate and one pass over a band of
///        weights, each block's kept mass), and the draw, the inverse of the kept weights'
///        cumulative sum in id order.
#pragma once

#include <cmath>
#include <cstdint>

#include "baton/core/macros.hpp"
#include "baton/kernels/sample_passes.hpp"

namespace baton::kernels {

/// Where top-p's cut probably lies in a dense row, found without a pass over all of it: the bin
/// where the mass from the bottom, estimated from every kEstimateStride-th weight, passes
/// `below` (the mass top-p leaves out: the total less its target). From the bottom, because
/// the light tokens are many and a sample weighs them well, where the few heavy ones at the
/// top are easily missed. `mass`: 2 x kMassBins, the caller's; mass[kMassBins + b] is left
/// holding how many sampled weights are in bins b and above. `tally`: kTallies x kMassBins
/// more, the caller's scratch. An estimate only picks where to look: the cut is exact whatever
/// it picks.
///
/// The sample is counted, not weighed, in kTallies tallies taken in turn: a count waits on the
/// last one in its bin, and neighbours in a row share bins. Bin b's tallies are adjacent
/// (tally[b * kTallies + k]): tallies kMassBins apart would sit a multiple of 4 KiB apart, where
/// a CPU matching a load to earlier stores by the low address bits makes each count wait on the
/// others anyway. A bin's mass is taken as its count times its middle weight (a bin is 1/32 of an
/// octave wide).
inline constexpr int kEstimateStride = 16;
inline constexpr int kTallies = 4;
BATON_HD inline int estimate_cut_bin(const float* weights, int n, double below, double* mass,
                                     double* tally) {
  double* sampled = mass + kMassBins;
  for (int b = 0; b < kTallies * kMassBins; ++b) tally[b] = 0.0;
  for (int i = 0, k = 0; i < n; i += kEstimateStride, k = (k + 1) % kTallies)
    tally[mass_bin(weights[i]) * kTallies + k] += 1.0;
  for (int b = 0; b < kMassBins; ++b) {
    double count = 0.0;
    for (int k = 0; k < kTallies; ++k) count += tally[b * kTallies + k];
    sampled[b] = count;
    const double low = mass_bin_low(b);
    mass[b] = count * (b + 1 < kMassBins ? 0.5 * (low + mass_bin_high(b)) : low);
  }
  for (int b = kMassBins - 2; b >= 0; --b) sampled[b] += sampled[b + 1];
  double under = 0.0;
  for (int b = 0; b < kMassBins; ++b) {
    under += mass[b] * kEstimateStride;
    if (under > below) return b;
  }
  return kMassBins - 1;
}

/// The next float above a positive w.
BATON_HD inline float next_weight_up(float w) {
  std::uint32_t bits = 0;
  __builtin_memcpy(&bits, &w, 4);
  ++bits;
  __builtin_memcpy(&w, &bits, 4);
  return w;
}

/// The draw over a dense kept set walks blocks of the row: each block's kept mass (its mass
/// above the cut's band, summed in lanes by the gather, then its band tokens that are kept),
/// then the one block where the draw lands. At most kMaxDrawBlocks blocks of a multiple of
/// kWeightLanes entries, at least 256 (a block's sum ends in a conversion of its 32 lanes:
/// fewer entries a block would make those the gather's cost).
inline constexpr int kMaxDrawBlocks = 4096;
BATON_HD constexpr int draw_block_size(int n) {
  const int per = (n + kMaxDrawBlocks - 1) / kMaxDrawBlocks;
  return per <= 256 ? 256 : (per + kWeightLanes - 1) / kWeightLanes * kWeightLanes;
}
static_assert(kMaxDrawBlocks >= kTallies * kMassBins,
              "estimate_cut_bin()'s tallies are kept where the block masses go later");

/// The doubles a sampling call's `bins` holds: the bins and the estimate's counts, then the
/// draw's block masses.
inline constexpr int kSampleBins = 2 * kMassBins + kMaxDrawBlocks;

/// Where a row stands after the truncations: the kept set is every token that is not masked
/// and ranks at or before `cut`; `max_z` is the largest scaled logit (weights are
/// exp(z - max_z)). In one of two forms, for the draw:
///  - listed (`list` not null): `list` holds, in id order, every token that may be kept (a
///    superset of the kept set, with their weights), so the draw walks it instead of the row;
///  - dense (a kept set too long to list): the row's weights, and the kept mass of each block
///    of `block` entries, so the draw walks the blocks, then the one block it lands in.
struct KeptSet {
  Candidate cut;
  float max_z;
  int count;  ///< tokens kept; 0 when no token may be drawn (all masked, or a NaN/+Inf row)
  const Candidate* list = nullptr;
  int listed = 0;
  // The dense form.
  const float* row = nullptr;
  float temperature = 1.0f;
  const float* weights = nullptr;      ///< [n]
  const double* block_mass = nullptr;  ///< [ceil(n / block)]
  int n = 0;
  int block = 0;
  /// The whole row's weight, sum of sample_exp(z - max_z) over every token as RowPasses::weigh
  /// sums it, when truncate() computed it (top-p or a dense set without top-k); else 0. The
  /// log-probabilities' softmax takes it instead of weighing the row again (kernels::log_probs).
  double row_weight = 0.0;
};

/// The bound that keeps every token that is not masked.
BATON_HD constexpr Candidate keep_all() { return Candidate{-INFINITY, 0.0f, 0x7fffffff}; }

/// Candidates a sampling call's scratch holds for a row of n logits: the list of possible
/// tokens and a copy the selections permute.
BATON_HD constexpr int sample_scratch_size(int n) { return 2 * n; }

/// What a sampling call works in, the caller's (nothing here allocates). Without `weights` and
/// `bins` every kept set is listed and top-p selects by quickselect alone (slower on long
/// lists, the same set).
struct SampleScratch {
  Candidate* candidates = nullptr;  ///< sample_scratch_size(n)
  float* weights = nullptr;         ///< n: the row's weights, when a kept set is too long to list
  double* bins = nullptr;           ///< kSampleBins: top-p's mass per bin, the draw's blocks
  /// Where in `bins` a dense kept set's block masses are (after the bins and their counts).
  BATON_HD double* block_masses() const { return bins + 2 * kMassBins; }
};

/// Lists longer than this take the binned top-p selection.
inline constexpr int kBinnedSelectionFrom = 512;

/// The most sampled weights (of every kEstimateStride-th) a dense top-p's first band is widened
/// to: about kEstimateStride times as many tokens to gather and select among.
inline constexpr double kBandSamples = 64.0;

/// Kept sets of more tokens than this are dense, not listed (when the scratch has weights and
/// bins): listing a wide set costs more than walking the row's weights again.
inline constexpr int kListCap = 4096;

namespace detail {

/// The kept set once dense_kept() found its cut: `block_mass` holds each block's mass above the
/// band (gather_band), `band` the band's `size` tokens in id order; those ranked at or before
/// `cut` join their blocks' masses (in id order), and `above` tokens were above the band.
/// `total`: the row's weight (KeptSet::row_weight).
BATON_HD inline KeptSet dense_set(const float* row, int n, float t, const SampleScratch& work,
                                  float m, double total, const Candidate& cut,
                                  const Candidate* band, int size, int above, int block) {
  double* block_mass = work.block_masses();
  int count = above;
  for (int k = 0; k < size; ++k)
    if (ranks_at_or_before(band[k].z, band[k].id, cut)) {
      block_mass[band[k].id / block] += band[k].w;
      ++count;
    }
  KeptSet s{cut, m, count};
  s.row_weight = total;
  s.row = row;
  s.temperature = t;
  s.weights = work.weights;
  s.block_mass = block_mass;
  s.n = n;
  s.block = block;
  return s;
}

/// truncate() for a kept set too long to list (no top-k): the row's weights are in
/// work.weights, its total weight `total`, `finite` of its tokens not masked; every token of weight
/// at least `floor_w` may be kept (a rank prefix: weights grow with z). Top-p's cut:
/// estimate_cut_bin() picks a band of bins, one pass gathers the band's tokens and sums the exact
/// mass above it per block, and when the target falls in the band a selection among its tokens
/// finds the cut (a band that misses is moved toward the cut, twice as wide each time). Min-p,
/// through the floor, keeps the tokens above it when top-p would keep more. The last gather's block
/// masses, with the band's kept tokens added, are the draw's. The cut is the one a full sort gives,
/// whatever band the estimate picked.
template <class Passes>
BATON_HD inline KeptSet dense_kept(const float* row, int n, float t, float top_p,
                                   const SampleScratch& work, float m, float floor_w, double total,
                                   int finite) {
  const float* weights = work.weights;
  const int block = draw_block_size(n);
  double* block_mass = work.block_masses();
  // The band in id order (the list weigh() gave up on is free), and a copy the selection permutes.
  Candidate* band = work.candidates;
  Candidate* sel = work.candidates + n;
  int above = 0;
  auto block_sum = [&] {
    double sum = 0.0;
    for (int j = 0, blocks = (n + block - 1) / block; j < blocks; ++j) sum += block_mass[j];
    return sum;
  };
  if (top_p < 1.0f) {  // then floor_w > 0
    const double target = static_cast<double>(top_p) * total;
    const int estimate = estimate_cut_bin(weights, n, total - target, work.bins, block_mass);
    // The band: the estimated bin, widened a bin at a time each way while the sample says it
    // holds few tokens; and when few tokens are heavier than its bottom (a peaked row), all of
    // them, down to where the sample grows dense.
    const double* sampled = work.bins + kMassBins;  // sampled weights in bin b and above
    auto in_band = [&](int lo, int hi) {
      return sampled[lo] - (hi + 1 < kMassBins ? sampled[hi + 1] : 0.0);
    };
    int lo_bin = estimate, hi_bin = estimate;
    for (bool grew = true; grew;) {
      grew = false;
      if (lo_bin > 0 && in_band(lo_bin - 1, hi_bin) <= kBandSamples) grew = (--lo_bin, true);
      if (hi_bin + 1 < kMassBins && in_band(lo_bin, hi_bin + 1) <= kBandSamples)
        grew = (++hi_bin, true);
    }
    if (sampled[lo_bin] <= kBandSamples) hi_bin = kMassBins - 1;
    for (int width = hi_bin - lo_bin + 1;; width *= 2) {
      const float low = mass_bin_low(lo_bin) > floor_w ? mass_bin_low(lo_bin) : floor_w;
      const int size = Passes::gather_band(row, n, t, weights, low, mass_bin_high(hi_bin), block,
                                           band, block_mass, &above);
      const double mass_above = block_sum();
      double band_mass = 0.0;
      for (int k = 0; k < size; ++k) band_mass += band[k].w;
      if (mass_above >= target) {  // the cut is higher: the next band is above this one
        lo_bin = hi_bin + 1;
        hi_bin = lo_bin + 2 * width - 1 >= kMassBins ? kMassBins - 1 : lo_bin + 2 * width - 1;
      } else if (mass_above + band_mass < target) {  // lower: the band reaches further down
        if (low <= floor_w) break;  // down to the floor: min-p keeps less than top-p
        lo_bin = lo_bin - 2 * width < 0 ? 0 : lo_bin - 2 * width;
      } else {
        for (int k = 0; k < size; ++k) sel[k] = band[k];
        const double rest = target - mass_above;
        const int kept = size >= kBinnedSelectionFrom
                             ? select_top_mass_binned(sel, size, rest, work.bins)
                             : select_top_mass(sel, size, rest);
        return dense_set(row, n, t, work, m, total, worst_ranked(sel, kept), band, size, above,
                         block);
      }
    }
  }
  if (floor_w > 0.0f) {
    // Every token of weight at least floor_w is kept: the worst-ranked of the lightest.
    const float least = Passes::least_weight(weights, 0, n, floor_w);
    const int size = Passes::gather_band(row, n, t, weights, least, next_weight_up(least), block,
                                         band, block_mass, &above);
    return dense_set(row, n, t, work, m, total, worst_ranked(band, size), band, size, above, block);
  }
  // Every token not masked is kept: each block's mass is all its weights (the band is empty).
  const float lightest = next_weight_up(0.0f);
  Passes::gather_band(row, n, t, weights, lightest, lightest, block, band, block_mass, &above);
  return dense_set(row, n, t, work, m, total, keep_all(), band, 0, finite, block);
}

}  // namespace detail

/// A listed candidate's weight if it is kept (ranked at or before `cut`), else 0. No branch:
/// kept and dropped tokens alternate unpredictably in id order. (The list holds no masked token.)
BATON_HD inline double kept_weight(const Candidate& cut, const Candidate& c) {
  return ranks_at_or_before(c.z, c.id, cut) ? static_cast<double>(c.w) : 0.0;
}

namespace detail {

/// draw() over a dense kept set: the blocks' kept masses added in order give the total and
/// the block where the inverse CDF lands; that block is walked entry by entry from the mass
/// before it. Rounding may leave the walk short of the target: then the block's last kept
/// token (every block of mass > 0 has one of weight > 0).
BATON_HD inline std::int32_t draw_dense(const KeptSet& s, double u) {
  const int blocks = (s.n + s.block - 1) / s.block;
  double total = 0.0;
  for (int j = 0; j < blocks; ++j) total += s.block_mass[j];
  const double target = u * total;
  double acc = 0.0;
  int land = -1;  // the block the draw lands in, else the last of mass > 0
  for (int j = 0; j < blocks; ++j) {
    if (!(s.block_mass[j] > 0.0)) continue;
    land = j;
    if (acc + s.block_mass[j] > target) break;
    acc += s.block_mass[j];
  }
  if (land < 0) return -1;
  const int begin = land * s.block, end = begin + s.block < s.n ? begin + s.block : s.n;
  std::int32_t last = -1;
  for (int i = begin; i < end; ++i) {
    const float z = scaled_logit(s.row[i], s.temperature);
    if (z == -INFINITY || !ranks_at_or_before(z, i, s.cut) || !(s.weights[i] > 0.0f)) continue;
    acc += s.weights[i];
    last = i;
    if (acc > target) return i;
  }
  return last;
}

}  // namespace detail

/// Draws from the kept set with uniform `u` in [0, 1): the inverse of the kept weights'
/// cumulative sum, walked in id order (the list, which holds every kept token, or the dense
/// form's blocks). Returns -1 for an empty set; when rounding leaves the sum under the target,
/// the last kept token of weight > 0.
BATON_HD inline std::int32_t draw(const KeptSet& s, double u) {
  if (s.count == 0) return -1;
  if (!s.list) return detail::draw_dense(s, u);
  double total = 0.0;
  for (int i = 0; i < s.listed; ++i) total += kept_weight(s.cut, s.list[i]);
  const double target = u * total;
  double acc = 0.0;
  std::int32_t last = -1;
  for (int i = 0; i < s.listed; ++i) {
    const double w = kept_weight(s.cut, s.list[i]);
    acc += w;
    if (w > 0.0 || s.list[i].id == s.cut.id) last = s.list[i].id;
    if (acc > target) return last;
  }
  return last;  // rounding left target at the very top: the last kept token
}

}  // namespace baton::kernels
