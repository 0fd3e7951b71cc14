// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The sampler's math, shared by every decode loop: logit_bias, the repetition,
///        presence and frequency penalties, temperature, top-k, top-p, min-p, the draw, and
///        the log-probabilities a request may ask for. docs/sampling.md states the order and
///        semantics; this file is the one place they are written.
///
/// Nothing here allocates: the caller supplies a scratch of one Candidate per vocabulary
/// entry. Nothing sorts the vocabulary either: top-k and top-p are selections (a quickselect
/// by rank, and one by cumulative mass), and the draw walks the row in id order, so the token
/// drawn depends only on the kept set and the uniform — not on how the selection permuted the
/// scratch.
#pragma once

#include <cmath>
#include <cstdint>

#include "baton/core/macros.hpp"
#include "baton/kernels/argmax.hpp"

namespace baton::kernels {

/// The numeric part of a request's sampling options (plain data, so a device can hold it).
/// The defaults change nothing: temperature 0 is the exact argmax.
struct SampleParams {
  float temperature = 0.0f;        ///< 0: argmax; else logits are divided by it
  int top_k = 0;                   ///< keep the k most likely tokens (0: all)
  float top_p = 1.0f;              ///< keep the smallest top set holding this mass (1: all)
  float min_p = 0.0f;              ///< keep tokens at least min_p times the top one's probability
  float repeat_penalty = 1.0f;     ///< HF repetition_penalty / llama.cpp repeat_penalty (1: off)
  float presence_penalty = 0.0f;   ///< OpenAI presence_penalty
  float frequency_penalty = 0.0f;  ///< OpenAI frequency_penalty
};

/// One logit_bias entry: `bias` is added to token `id`'s logit.
struct BiasEntry {
  std::int32_t id;
  float bias;
};

/// A token the generation produced, and how many times: what the penalties read.
struct SeenToken {
  std::int32_t id;
  std::int32_t count;
};

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

/// Adds each entry's bias to its token's logit (ids are checked by the caller,
/// SamplingOptions::check).
BATON_HD inline void apply_logit_bias(float* row, const BiasEntry* bias, int n_bias) {
  for (int k = 0; k < n_bias; ++k) row[bias[k].id] += bias[k].bias;
}

/// The penalties over the tokens generated so far: the repetition penalty divides a positive
/// logit and multiplies a negative one (HF's RepetitionPenaltyLogitsProcessor, llama.cpp's
/// penalties sampler), once per distinct token; then OpenAI's presence and frequency
/// penalties subtract `presence` once and `frequency` per occurrence.
BATON_HD inline void apply_penalties(float* row, const SeenToken* seen, int n_seen,
                                     const SampleParams& p) {
  for (int k = 0; k < n_seen; ++k) {
    float& l = row[seen[k].id];
    if (p.repeat_penalty != 1.0f) l = l > 0.0f ? l / p.repeat_penalty : l * p.repeat_penalty;
    l -= static_cast<float>(seen[k].count) * p.frequency_penalty + p.presence_penalty;
  }
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

/// Where a row stands after the truncations: the kept set is every token ranked at or before
/// `cut`; `max_z` is the largest scaled logit (weights are exp(z - max_z)).
struct KeptSet {
  Candidate cut;
  float max_z;
  int count;  ///< tokens kept; 0 when no token may be drawn (all masked, or a NaN/+Inf row)
};

/// The scaled logit of one entry: logit / temperature.
BATON_HD inline float scaled_logit(float logit, float temperature) { return logit / temperature; }

/// Applies temperature, top-k, top-p and min-p to `row` (n logits; -Inf entries are masked and
/// never kept) using `scratch` (n Candidates). Returns the kept set; count 0 when the row has
/// a NaN or +Inf (no token may be chosen from it, as argmax) or every entry is masked.
/// temperature must be > 0.
BATON_HD inline KeptSet truncate(const float* row, int n, const SampleParams& p,
                                 Candidate* scratch) {
  KeptSet none{{0.0f, 0.0f, -1}, 0.0f, 0};
  float m = -INFINITY;
  for (int i = 0; i < n; ++i) {
    const float l = row[i];
    if (l != l || l == INFINITY) return none;
    const float z = scaled_logit(l, p.temperature);
    if (z > m) m = z;
  }
  if (m == -INFINITY) return none;
  int c = 0;
  for (int i = 0; i < n; ++i) {
    const float z = scaled_logit(row[i], p.temperature);
    if (z == -INFINITY) continue;
    scratch[c++] = Candidate{z, expf(z - m), i};
  }
  if (p.top_k > 0 && p.top_k < c) {
    select_top_k(scratch, c, p.top_k);
    c = p.top_k;
  }
  if (p.top_p < 1.0f && c > 1) {
    // Top-p's mass is over what top-k kept, renormalized (as HF and llama.cpp chain them).
    double total = 0.0;
    for (int i = 0; i < c; ++i) total += scratch[i].w;
    c = select_top_mass(scratch, c, static_cast<double>(p.top_p) * total);
  }
  // min-p last: the tokens at least min_p times as likely as the top one (whose weight is 1;
  // a ratio the truncations above leave unchanged). Not first: top-p's mass counts the tokens
  // min-p drops.
  if (p.min_p > 0.0f) {
    int kept_count = 0;
    for (int i = 0; i < c; ++i)
      if (scratch[i].w >= p.min_p) scratch[kept_count++] = scratch[i];
    c = kept_count;  // >= 1: the top token has weight 1
  }
  Candidate cut = scratch[0];
  for (int i = 1; i < c; ++i)
    if (ranks_before(cut, scratch[i])) cut = scratch[i];
  return {cut, m, c};
}

/// Whether row entry `id` (scaled logit z) is in the kept set.
BATON_HD inline bool kept(const KeptSet& s, float z, std::int32_t id) {
  if (z == -INFINITY) return false;
  const Candidate c{z, 0.0f, id};
  return c.id == s.cut.id || ranks_before(c, s.cut);
}

/// Draws from the kept set with uniform `u` in [0, 1): the inverse of the kept weights'
/// cumulative sum, walked in id order. Returns -1 for an empty set.
BATON_HD inline std::int32_t draw(const float* row, int n, const SampleParams& p, const KeptSet& s,
                                  double u) {
  if (s.count == 0) return -1;
  double total = 0.0;
  for (int i = 0; i < n; ++i) {
    const float z = scaled_logit(row[i], p.temperature);
    if (kept(s, z, i)) total += expf(z - s.max_z);
  }
  const double target = u * total;
  double acc = 0.0;
  std::int32_t last = -1;
  for (int i = 0; i < n; ++i) {
    const float z = scaled_logit(row[i], p.temperature);
    if (!kept(s, z, i)) continue;
    acc += expf(z - s.max_z);
    last = i;
    if (acc > target) return i;
  }
  return last;  // rounding left target at the very top: the last kept token
}

/// The sampling step's choice from `row` (logit_bias and penalties already applied): the exact
/// argmax at temperature 0, else a draw with `u` from the truncated distribution. -1 when no
/// token may be chosen (a NaN or +Inf logit, or every token masked).
BATON_HD inline std::int32_t sample_row(const float* row, int n, const SampleParams& p, double u,
                                        Candidate* scratch) {
  if (p.temperature <= 0.0f) return argmax(row, n);
  return draw(row, n, p, truncate(row, n, p, scratch), u);
}

/// The most tokens a top-logprobs list holds (OpenAI's bound on top_logprobs).
inline constexpr int kMaxTopLogprobs = 20;

/// One entry of a top-logprobs list.
struct TopLogprob {
  std::int32_t id;
  float logprob;
};

/// Log-probabilities under the distribution the truncations cut: log-softmax of row/T (T = 1
/// at temperature 0), masked (-Inf) entries excluded. Writes the chosen token's and, in rank
/// order, the `top_n` best (fewer when fewer are allowed); returns how many it wrote to `top`.
BATON_HD inline int log_probs(const float* row, int n, float temperature, std::int32_t chosen,
                              int top_n, float* chosen_logprob, TopLogprob* top) {
  const float t = temperature > 0.0f ? temperature : 1.0f;
  float m = -INFINITY;
  for (int i = 0; i < n; ++i) {
    const float z = scaled_logit(row[i], t);
    if (z > m) m = z;
  }
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += expf(scaled_logit(row[i], t) - m);
  const float lse = m + static_cast<float>(log(sum));
  *chosen_logprob = scaled_logit(row[chosen], t) - lse;
  // The best top_n by rank: an insertion into a short sorted list (most entries fail the first
  // comparison with its last).
  int count = 0;
  for (int i = 0; i < n && top_n > 0; ++i) {
    const float z = scaled_logit(row[i], t);
    if (z == -INFINITY) continue;
    const Candidate c{z, 0.0f, i};
    if (count == top_n &&
        !ranks_before(c, Candidate{top[count - 1].logprob, 0.0f, top[count - 1].id}))
      continue;
    int j = count < top_n ? count++ : top_n - 1;
    while (j > 0 && ranks_before(c, Candidate{top[j - 1].logprob, 0.0f, top[j - 1].id})) {
      top[j] = top[j - 1];
      --j;
    }
    top[j] = TopLogprob{i, z};  // z for now: the ranks compare scaled logits
  }
  for (int k = 0; k < count; ++k) top[k].logprob -= lse;
  return count;
}

}  // namespace baton::kernels
