// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What truncation leaves of a row and how a token is drawn from it: the kept set, listed
///        (a short list of the tokens that may be kept, cut exactly) or dense (a set too long to
///        list: the row's weights and each block's mass, drawn from by rejection), and the draw.
#pragma once

#include <cmath>
#include <cstdint>

#include "baton/core/macros.hpp"
#include "baton/kernels/philox.hpp"
#include "baton/kernels/sample_passes.hpp"

namespace baton::kernels {

/// The draw over a dense kept set walks blocks of the row: each block's mass, then the one block
/// where the draw lands. At most kMaxDrawBlocks blocks, each a multiple of kSumChunk entries (a
/// block's mass is its chunks' sums: sample_passes.hpp).
inline constexpr int kMaxDrawBlocks = 4096;
BATON_HD constexpr int draw_block_size(int n) {
  const int chunks = (n + kSumChunk - 1) / kSumChunk;
  return (chunks + kMaxDrawBlocks - 1) / kMaxDrawBlocks * kSumChunk;
}

/// The doubles a sampling call's `bins` holds: the binned selection's bins, then the dense draw's
/// first round of block masses, then a round's.
inline constexpr int kSampleBins = kMassBins + 2 * kMaxDrawBlocks;

/// A dense draw gives up after this many rejections and takes the top-ranked token (always kept).
/// Each round keeps only what ranks before the last draw, on a flat row about e times less mass
/// on average, so even a top-p so small that only the top token is kept takes some 13 rounds on
/// average at 152k; 256 rounds are reached with a probability far below 1e-100.
inline constexpr int kMaxDrawRounds = 256;

/// Where a row stands after the truncations; `max_z` is the largest scaled logit (weights are
/// exp(z - max_z)). In one of two forms, for the draw:
///  - listed (`list` not null): the kept set is every token that is not masked and ranks at or
///    before `cut`, `count` of them; `list` holds, in id order, every token that may be kept (a
///    superset of the kept set, with their weights), so the draw walks it instead of the row;
///  - dense (a kept set too long to list): the row's weights, the tokens that may be drawn (those
///    that weigh before `first`: of weight at least min-p's floor, or above 0) and each block's
///    mass of them; top-p (no top-k) keeps a token when the mass ranked before it is below
///    `top_mass`. The draw finds its token by rejection (draw()); `count` is 1 (some token may
///    be drawn) and `cut` keep_all(): the set is never counted.
struct KeptSet {
  Candidate cut;
  float max_z;
  int count;  ///< 0 when no token may be drawn (all masked, or a NaN/+Inf row)
  const Candidate* list = nullptr;
  int listed = 0;
  // The dense form.
  const float* row = nullptr;
  float temperature = 1.0f;
  const float* weights = nullptr;      ///< [n]
  const double* block_mass = nullptr;  ///< [ceil(n / block)]: the first round's
  double* round_mass = nullptr;        ///< [ceil(n / block)]: a later round's, the draw's scratch
  int n = 0;
  int block = 0;
  Candidate first{INFINITY, 0.0f, 0};  ///< the first round draws what weighs before this
  double top_mass = INFINITY;          ///< top-p's target: its fraction of the row's weight
  /// The whole row's weight, sum of sample_exp(z - max_z) over every token as RowPasses::weigh
  /// sums it, when truncate() computed it (top-p or a dense set without top-k); else 0. The
  /// log-probabilities' softmax takes it instead of weighing the row again (kernels::log_probs).
  double row_weight = 0.0;
  /// The best-ranked entries the weighing pass collected (truncate()'s `ranked`), else null:
  /// log_probs() takes them instead of a pass.
  const RankedTop* ranked = nullptr;
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
  /// Where in `bins` a dense kept set's first round of block masses is, and a later round's.
  BATON_HD double* block_masses() const { return bins + kMassBins; }
  BATON_HD double* round_masses() const { return bins + kMassBins + kMaxDrawBlocks; }
};

/// Lists longer than this take the binned top-p selection.
inline constexpr int kBinnedSelectionFrom = 512;

/// Kept sets of more tokens than this are dense, not listed (when the scratch has weights and
/// bins): listing a wide set and selecting in it cost more than the rejection draw's pass over the
/// weights (at 152k, peaked rows keeping 1-4 thousand tokens: about 10% less a row at 1,024 than
/// at 4,096, benchmarks/sampling_bench.cpp).
inline constexpr int kListCap = 1024;

namespace detail {

/// truncate() for a kept set too long to list (no top-k): the row's weights are in work.weights,
/// the blocks' masses of every token in work.block_masses() (the weighing pass's), its total
/// weight `total`. Min-p's floor (`min_p` > 0: every token of weight at least min_p is kept)
/// takes one pass for the first round's masses; top-p's cut is left to the draw.
template <class Passes>
BATON_HD inline KeptSet dense_kept(const float* row, int n, float t, float top_p, float min_p,
                                   const SampleScratch& work, float m, double total) {
  KeptSet s{keep_all(), m, 1};
  s.row_weight = total;
  s.row = row;
  s.temperature = t;
  s.weights = work.weights;
  s.block_mass = work.block_masses();
  s.round_mass = work.round_masses();
  s.n = n;
  s.block = draw_block_size(n);
  if (top_p < 1.0f) s.top_mass = static_cast<double>(top_p) * total;
  if (min_p > 0.0f) {
    // "Weighs more than the float below min_p": weighs at least min_p.
    std::uint32_t bits = 0;
    __builtin_memcpy(&bits, &min_p, 4);
    --bits;
    __builtin_memcpy(&s.first.w, &bits, 4);
    Passes::mass_before(row, n, t, work.weights, s.first, s.block, work.block_masses());
  }
  return s;
}

/// The blocks' masses `mass` added in block order: what a round may draw weighs this much.
BATON_HD inline double block_total(const KeptSet& s, const double* mass) {
  double total = 0.0;
  for (int j = 0, blocks = (s.n + s.block - 1) / s.block; j < blocks; ++j) total += mass[j];
  return total;
}
/// One round of the dense draw: the token, among those that weigh before `bound`, where the
/// cumulative mass in id order passes u times their total (`mass`: each block's, `total`:
/// block_total()); -1 when they weigh nothing. Rounding may leave the walk short of the target:
/// then the landing block's last such token of weight > 0 (every block of mass > 0 has one).
BATON_HD inline std::int32_t draw_round(const KeptSet& s, const double* mass, double total,
                                        const Candidate& bound, double u) {
  const int blocks = (s.n + s.block - 1) / s.block;
  const double target = u * total;
  double acc = 0.0;
  int land = -1;  // the block the draw lands in, else the last of mass > 0
  for (int j = 0; j < blocks; ++j) {
    if (!(mass[j] > 0.0)) continue;
    land = j;
    if (acc + mass[j] > target) break;
    acc += mass[j];
  }
  if (land < 0) return -1;
  const int begin = land * s.block, end = begin + s.block < s.n ? begin + s.block : s.n;
  std::int32_t last = -1;
  for (int i = begin; i < end; ++i) {
    if (!(s.weights[i] > 0.0f) || !weighs_before(s.row, s.temperature, s.weights, i, bound))
      continue;
    acc += s.weights[i];
    last = i;
    if (acc > target) return i;
  }
  return last;
}

/// The top-ranked token (the highest z, the lowest id among equals): the first of weight 1 with
/// the largest z.
BATON_HD inline std::int32_t top_ranked_token(const KeptSet& s) {
  for (int i = 0; i < s.n; ++i)
    if (scaled_logit(s.row[i], s.temperature) == s.max_z) return i;
  return -1;
}

/// draw() over a dense kept set, by rejection (as FlashInfer samples top-p): draw from what may
/// be drawn; the token is kept when the mass ranked before it is below top-p's target (one pass,
/// Passes::mass_before, whose block masses are also the next round's); else every token kept
/// ranks before it (the kept set is a prefix of the ranking), so the next round draws from what
/// ranks before it. A draw lands on a kept token with the kept set's distribution in every round
/// (each token with probability proportional to its weight), so the token taken has exactly that
/// distribution. Round r > 0 draws with next_uniform(u, r).
template <class Passes>
BATON_HD inline std::int32_t draw_dense(const KeptSet& s, double u) {
  const double* mass = s.block_mass;
  double total = block_total(s, mass);
  Candidate bound = s.first;
  for (std::uint32_t round = 0; round < kMaxDrawRounds; ++round) {
    const std::int32_t j =
        draw_round(s, mass, total, bound, round == 0 ? u : next_uniform(u, round));
    if (j < 0 || !(s.top_mass < INFINITY)) return j;  // no top-p: every token drawn is kept
    bound = Candidate{scaled_logit(s.row[j], s.temperature), s.weights[j], j};
    Passes::mass_before(s.row, s.n, s.temperature, s.weights, bound, s.block, s.round_mass);
    mass = s.round_mass;
    total = block_total(s, mass);                      // the mass ranked before j
    if (total < s.top_mass || total == 0.0) return j;  // 0: j is the top-ranked token
  }
  return top_ranked_token(s);
}

}  // namespace detail

/// A listed candidate's weight if it is kept (ranked at or before `cut`), else 0. No branch:
/// kept and dropped tokens alternate unpredictably in id order. (The list holds no masked token.)
BATON_HD inline double kept_weight(const Candidate& cut, const Candidate& c) {
  return ranks_at_or_before(c.z, c.id, cut) ? static_cast<double>(c.w) : 0.0;
}

/// Draws from the kept set with uniform `u` in [0, 1): a listed set by the inverse of the kept
/// weights' cumulative sum, walked in id order; a dense one by rejection (detail::draw_dense,
/// whose first round is that inverse over what may be drawn). Returns -1 for an empty set; when
/// rounding leaves the sum under the target, the last kept token of weight > 0. `Passes`: as
/// truncate()'s (the dense form's rounds take a pass over the weights).
template <class Passes = RowPasses>
BATON_HD inline std::int32_t draw(const KeptSet& s, double u) {
  if (s.count == 0) return -1;
  if (!s.list) return detail::draw_dense<Passes>(s, u);
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
