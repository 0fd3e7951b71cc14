// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The sampler's selections on a list of candidates, shared by every decode loop: the
///        rank order (higher scaled logit first, the lower id on a tie), top-k and top-p's cuts
///        by quickselect (and by bins of weight for long lists), the worst-ranked of a set,
///        and the insertion that keeps a top-logprobs list. Nothing sorts the vocabulary.
#pragma once

#include <cmath>
#include <cstdint>

#include "baton/core/macros.hpp"

namespace baton::kernels {

/// A token as the selections see it: its scaled logit, its weight exp(z - max) and its id.
struct Candidate {
  float z;
  float w;
  std::int32_t id;
};

/// The selections' total order: higher z first, the lower id on a tie (argmax's rule), so every
/// cut is exact and the same whatever order the scratch is in.
BATON_HD inline bool ranks_before(const Candidate& a, const Candidate& b) {
  return a.z > b.z || (a.z == b.z && a.id < b.id);
}

/// The scaled logit of one entry: the logit times 1 / temperature (one multiply per entry in
/// every pass, where a division costs several times as much; every loop scales this way, so
/// they agree bit for bit).
BATON_HD inline float scaled_logit(float logit, float temperature) {
  return logit * (1.0f / temperature);
}

/// Whether a token of scaled logit z and id `id` ranks at or before `cut` (the kept sets'
/// bound). No branch: kept and dropped tokens alternate unpredictably in id order.
BATON_HD inline bool ranks_at_or_before(float z, std::int32_t id, const Candidate& cut) {
  return (z > cut.z) | ((z == cut.z) & (id <= cut.id));
}

namespace detail {

BATON_HD inline void swap_candidates(Candidate& a, Candidate& b) {
  const Candidate t = a;
  a = b;
  b = t;
}

/// Partitions a[lo, hi) around a pivot: ranked-before-pivot first, then the pivot, then the
/// rest; returns the pivot's index. The pivot is the median of three spread positions, which
/// is deterministic (the result never depends on anything but the input).
BATON_HD inline int partition_by_rank(Candidate* a, int lo, int hi) {
  const int mid = lo + (hi - lo) / 2, last = hi - 1;
  // Median of a[lo], a[mid], a[last] by rank, moved to a[last].
  if (ranks_before(a[mid], a[lo])) swap_candidates(a[mid], a[lo]);
  if (ranks_before(a[last], a[lo])) swap_candidates(a[last], a[lo]);
  if (ranks_before(a[mid], a[last])) swap_candidates(a[mid], a[last]);
  const Candidate pivot = a[last];
  int store = lo;
  for (int i = lo; i < last; ++i)
    if (ranks_before(a[i], pivot)) swap_candidates(a[i], a[store++]);
  swap_candidates(a[store], a[last]);
  return store;
}

}  // namespace detail

/// Partitions a[0, n) so that a[0, k) are its k best-ranked candidates (in some order);
/// 0 < k < n. Expected O(n): a quickselect.
BATON_HD inline void select_top_k(Candidate* a, int n, int k) {
  int lo = 0, hi = n;
  while (hi - lo > 1) {
    const int p = detail::partition_by_rank(a, lo, hi);
    if (p == k || p + 1 == k) return;  // a[0, p] are the p + 1 best, a[0, p) the p best
    if (p > k)
      hi = p;
    else
      lo = p + 1;
  }
}

/// The smallest L such that the L best-ranked candidates of a[0, n) weigh at least `target`,
/// with a[0, L) partitioned to be them (top-p's cut: HF keeps a token while the mass ranked
/// strictly before it is below p). At least 1. Expected O(n): a quickselect on mass.
BATON_HD inline int select_top_mass(Candidate* a, int n, double target) {
  int lo = 0, hi = n;
  double before = 0.0;  // the mass of a[0, lo), all ranked before a[lo, hi); always < target
  if (target <= 0.0) {
    select_top_k(a, n, 1);
    return 1;
  }
  while (hi - lo > 1) {
    const int p = detail::partition_by_rank(a, lo, hi);
    double better = 0.0;
    for (int i = lo; i < p; ++i) better += a[i].w;
    if (before + better >= target) {
      hi = p;  // the cut lies among a[lo, p)
    } else if (before + better + a[p].w >= target) {
      return p + 1;
    } else {
      before += better + a[p].w;
      lo = p + 1;
    }
  }
  // One candidate left (or none, if rounding put the whole mass a hair under target).
  return lo + 1 <= n ? lo + 1 : n;
}

/// Bins by weight: 32 an octave from 2^-32 up to 1 (a weight's float exponent and top five
/// mantissa bits), every lighter weight in bin 0. A higher bin holds strictly heavier, so
/// strictly better-ranked, candidates; a bin's members are ranked apart by the selections.
inline constexpr int kMassBins = 1024;
inline constexpr std::uint32_t kMassBinBase = (0x3F800000u >> 18) - (kMassBins - 1);  // 1.0f: top
BATON_HD inline int mass_bin(float w) {
  std::uint32_t bits = 0;
  __builtin_memcpy(&bits, &w, 4);
  // Weights are >= 0: no sign bit. Clamped without a branch: the sampler's estimate bins
  // weights of no predictable size on its way through the row.
  int b = static_cast<int>(bits >> 18) - static_cast<int>(kMassBinBase);
  b = b > 0 ? b : 0;
  return b < kMassBins - 1 ? b : kMassBins - 1;
}

/// The weights of bin b: [low, high), for b > 0 (bin 0 holds everything under bin 1's low).
BATON_HD inline float mass_bin_low(int b) {
  const std::uint32_t bits = (kMassBinBase + static_cast<std::uint32_t>(b)) << 18;
  float w = 0.0f;
  __builtin_memcpy(&w, &bits, 4);
  return b == 0 ? 0.0f : w;
}
BATON_HD inline float mass_bin_high(int b) {
  return b + 1 >= kMassBins ? INFINITY : mass_bin_low(b + 1);
}

/// select_top_mass() for a long list of weights: one pass finds the list's lightest and
/// heaviest weight, a second sums the mass of kMassBins bins spanning them (a weight's float
/// bits less the lightest's, shifted: a higher bin holds strictly heavier, so strictly
/// better-ranked, candidates), the bin where the cumulative mass from the top crosses `target`
/// is found, the bins above it move to the front, and select_top_mass() runs on that bin alone.
/// The same L and the same set (the bins only order what ranks apart for certain).
/// `bin_mass`: kMassBins, the caller's (no stack arrays on a device).
BATON_HD inline int select_top_mass_binned(Candidate* a, int n, double target, double* bin_mass) {
  if (target <= 0.0 || n < 2) return select_top_mass(a, n, target);
  auto bits_of = [](float w) {
    std::uint32_t b = 0;
    __builtin_memcpy(&b, &w, 4);
    return b;
  };
  std::uint32_t least = bits_of(a[0].w), most = least;
  for (int i = 1; i < n; ++i) {
    const std::uint32_t b = bits_of(a[i].w);
    least = b < least ? b : least;
    most = b > most ? b : most;
  }
  int shift = 0;
  while (((most - least) >> shift) >= static_cast<std::uint32_t>(kMassBins)) ++shift;
  auto bin = [&](float w) { return static_cast<int>((bits_of(w) - least) >> shift); };
  for (int b = 0; b < kMassBins; ++b) bin_mass[b] = 0.0;
  for (int i = 0; i < n; ++i) bin_mass[bin(a[i].w)] += a[i].w;
  double above = 0.0;  // the mass of the bins above `cross`
  int cross = kMassBins - 1;
  while (cross > 0 && above + bin_mass[cross] < target) {
    above += bin_mass[cross];
    --cross;
  }
  // Bins above `cross` to the front, then `cross` itself.
  int store = 0;
  for (int i = 0; i < n; ++i)
    if (bin(a[i].w) > cross) detail::swap_candidates(a[i], a[store++]);
  const int first = store;
  for (int i = first; i < n; ++i)
    if (bin(a[i].w) == cross) detail::swap_candidates(a[i], a[store++]);
  if (store == first) return first > 0 ? first : 1;  // rounding: all of it
  return first + select_top_mass(a + first, store - first, target - above);
}

/// The worst-ranked of a[0, n), n >= 1.
BATON_HD inline Candidate worst_ranked(const Candidate* a, int n) {
  Candidate cut = a[0];
  for (int i = 1; i < n; ++i)
    if (ranks_before(cut, a[i])) cut = a[i];
  return cut;
}

/// The most tokens a top-logprobs list holds (OpenAI's bound on top_logprobs).
inline constexpr int kMaxTopLogprobs = 20;

/// One entry of a top-logprobs list.
struct TopLogprob {
  std::int32_t id;
  float logprob;
};

/// Inserts token i of scaled logit z into top[0, count), kept sorted by rank and at most
/// top_n long (the logprob field holds z until the list is done); returns the new count.
BATON_HD inline int insert_ranked(TopLogprob* top, int count, int top_n, std::int32_t i, float z) {
  const Candidate c{z, 0.0f, i};
  if (count == top_n &&
      !ranks_before(c, Candidate{top[count - 1].logprob, 0.0f, top[count - 1].id}))
    return count;
  int j = count < top_n ? count++ : top_n - 1;
  while (j > 0 && ranks_before(c, Candidate{top[j - 1].logprob, 0.0f, top[j - 1].id})) {
    top[j] = top[j - 1];
    --j;
  }
  top[j] = TopLogprob{i, z};
  return count;
}

}  // namespace baton::kernels
