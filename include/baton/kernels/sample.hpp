// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The sampler's math, shared by every decode loop: logit_bias, the repetition,
///        presence and frequency penalties, temperature, top-k, top-p, min-p, the draw, and
///        the log-probabilities a request may ask for. docs/sampling.md states the order and
///        semantics; this file is the one place they are written.
///
/// Nothing here allocates: the caller supplies a scratch of two Candidates per vocabulary
/// entry. Nothing sorts the vocabulary either: bounds that provably drop only tokens that
/// cannot be kept leave a short list (truncate() says which), top-k and top-p are selections on
/// it (a quickselect by rank, and one by cumulative mass), and the draw walks the list in id
/// order, so the token drawn depends only on the kept set and the uniform — not on how the
/// selection permuted the scratch.
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

/// Where the penalties' counts live (caller memory, sized once per generation): `seen` holds
/// each distinct generated id with its count (room for max_new), `window` the last
/// `window_cap` ids as a ring when repeat_last_n is N > 0 (room for min(N, max_new); 0: every
/// generated token counts).
struct PenaltyCounts {
  SeenToken* seen = nullptr;
  std::int32_t* window = nullptr;
  int window_cap = 0;
};

/// How far the counts are filled: plain integers, so a device loop keeps them in its state.
struct PenaltyCursor {
  std::int32_t n_seen = 0;       ///< distinct ids in `seen`
  std::int32_t window_fill = 0;  ///< ids in the window, up to window_cap
  std::int32_t window_at = 0;    ///< the window's oldest entry, once full
};

/// Counts a generated token for the penalties: with a window of N, the token generated N
/// before it stops counting (a token no longer counted is not penalized). The one rule, run by
/// the host's Sampler and by the device loop's sampling step.
BATON_HD inline void count_generated(const PenaltyCounts& c, PenaltyCursor& at,
                                     std::int32_t token) {
  auto uncount = [&](std::int32_t id) {
    for (int k = 0; k < at.n_seen; ++k) {
      if (c.seen[k].id != id) continue;
      if (--c.seen[k].count == 0) c.seen[k] = c.seen[--at.n_seen];
      return;
    }
  };
  if (c.window_cap > 0) {
    if (at.window_fill < c.window_cap) {
      c.window[at.window_fill++] = token;
    } else {  // the window is full: its oldest token leaves it
      uncount(c.window[at.window_at]);
      c.window[at.window_at] = token;
      at.window_at = (at.window_at + 1) % c.window_cap;
    }
  }
  for (int k = 0; k < at.n_seen; ++k)
    if (c.seen[k].id == token) {
      ++c.seen[k].count;
      return;
    }
  c.seen[at.n_seen++] = SeenToken{token, 1};
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

/// Bins by weight for long lists: a weight in [0, 1] by its float's exponent and top three
/// mantissa bits (a higher bin holds strictly heavier, so strictly better-ranked, candidates).
inline constexpr int kMassBins = 1024;
BATON_HD inline int mass_bin(float w) {
  std::uint32_t bits = 0;
  __builtin_memcpy(&bits, &w, 4);
  return static_cast<int>(bits >> 20);  // 1.0f is 0x3F800000: bin 1016
}

/// select_top_mass() for a long list of weights in [0, 1]: one pass sums the mass of each bin,
/// the bin where the cumulative mass from the top crosses `target` is found, the bins above it
/// move to the front, and select_top_mass() runs on that bin alone. The same L and the same
/// set (the bins only order what ranks apart for certain). `bin_mass`: kMassBins, the
/// caller's (no stack arrays on a device).
BATON_HD inline int select_top_mass_binned(Candidate* a, int n, double target, double* bin_mass) {
  if (target <= 0.0) return select_top_mass(a, n, target);
  for (int b = 0; b < kMassBins; ++b) bin_mass[b] = 0.0;
  for (int i = 0; i < n; ++i) bin_mass[mass_bin(a[i].w)] += a[i].w;
  double above = 0.0;  // the mass of the bins above `cross`
  int cross = kMassBins - 1;
  while (cross > 0 && above + bin_mass[cross] < target) {
    above += bin_mass[cross];
    --cross;
  }
  // Bins above `cross` to the front, then `cross` itself.
  int store = 0;
  for (int i = 0; i < n; ++i)
    if (mass_bin(a[i].w) > cross) detail::swap_candidates(a[i], a[store++]);
  const int first = store;
  for (int i = first; i < n; ++i)
    if (mass_bin(a[i].w) == cross) detail::swap_candidates(a[i], a[store++]);
  if (store == first) return first > 0 ? first : (n > 0 ? 1 : 0);  // rounding: all of it
  return first + select_top_mass(a + first, store - first, target - above);
}

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

/// Lanes of the sum of a row's weights: entry i adds to lane i % 8, and the lanes are added
/// pairwise in one fixed order, so a vector pass sums exactly as the scalar one.
inline constexpr int kWeightLanes = 8;
BATON_HD inline double add_lanes(const double* lane) {
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/// One block of truncate()'s first pass: its largest entry, how many entries are not -Inf, and
/// whether one is NaN or +Inf (then no token may be chosen from the row).
struct BlockScan {
  float max;
  int finite;
  bool bad;
};

/// The passes over a whole row that truncate() and sample_row() make, written once here for
/// every decode loop. A host substitutes vector versions that compute exactly the same
/// (backend/host_sample.hpp); the selections, which run on the short list, stay here.
struct RowPasses {
  /// row[begin, end) as BlockScan says.
  BATON_HD static BlockScan block(const float* row, int begin, int end) {
    BlockScan s{-INFINITY, 0, false};
    for (int i = begin; i < end; ++i) {
      const float l = row[i];
      s.bad |= (l != l) | (l == INFINITY);
      s.finite += l != -INFINITY;
      if (l > s.max) s.max = l;
    }
    return s;
  }
  /// Appends to `list`, in id order, every entry of row[begin, end) whose scaled logit
  /// z = row[i] / t is not -Inf, is at least `floor_z` and whose weight w = sample_exp(z - m) is
  /// at least `floor_w`; returns how many. (The row holds no NaN or +Inf.)
  BATON_HD static int list_at_least(const float* row, int begin, int end, float t, float floor_z,
                                    float m, float floor_w, Candidate* list) {
    int c = 0;
    for (int i = begin; i < end; ++i) {
      const float z = row[i] / t;
      if (z == -INFINITY || z < floor_z) continue;
      const float w = sample_exp(z - m);
      if (w >= floor_w) list[c++] = Candidate{z, w, i};
    }
    return c;
  }
  /// list_at_least() over the whole row without a bound on z, and the total weight of the row
  /// (top-p's mass; summed in kWeightLanes lanes) into `total`.
  BATON_HD static int weigh(const float* row, int n, float t, float m, float floor_w,
                            Candidate* list, double* total) {
    double lane[kWeightLanes] = {};
    const int c = weigh_range(row, 0, n, t, m, floor_w, list, lane);
    *total = add_lanes(lane);
    return c;
  }
  /// weigh() over row[begin, end), each weight added to lane[i % kWeightLanes] (a vector pass's
  /// tail continues its lanes here).
  BATON_HD static int weigh_range(const float* row, int begin, int end, float t, float m,
                                  float floor_w, Candidate* list, double* lane) {
    int c = 0;
    for (int i = begin; i < end; ++i) {
      const float z = row[i] / t;
      const float w = sample_exp(z - m);  // 0 for a masked (-Inf) entry
      lane[i % kWeightLanes] += w;
      if (z != -INFINITY && w >= floor_w) list[c++] = Candidate{z, w, i};
    }
    return c;
  }
  /// The exact argmax (kernels::argmax).
  BATON_HD static std::int32_t argmax(const float* row, int n) { return kernels::argmax(row, n); }
};

/// Where a row stands after the truncations: the kept set is every token ranked at or before
/// `cut`; `max_z` is the largest scaled logit (weights are exp(z - max_z)). `list` holds, in id
/// order, every token that may be kept (a superset of the kept set; its weights computed), so a
/// draw walks it instead of the row.
struct KeptSet {
  Candidate cut;
  float max_z;
  int count;  ///< tokens kept; 0 when no token may be drawn (all masked, or a NaN/+Inf row)
  const Candidate* list = nullptr;
  int listed = 0;
};

/// The scaled logit of one entry: logit / temperature.
BATON_HD inline float scaled_logit(float logit, float temperature) { return logit / temperature; }

/// Candidates a sampling call's scratch holds for a row of n logits: the list of possible
/// tokens and a copy the selections permute.
BATON_HD constexpr int sample_scratch_size(int n) { return 2 * n; }

/// What a sampling call works in, the caller's (nothing here allocates).
struct SampleScratch {
  Candidate* candidates = nullptr;  ///< sample_scratch_size(n)
  double* bin_mass = nullptr;       ///< kMassBins (top-p over a long list)
};

/// Lists longer than this take the binned top-p selection.
inline constexpr int kBinnedSelectionFrom = 512;

/// Applies temperature, top-k, top-p and min-p to `row` (n logits; -Inf entries are masked and
/// never kept) using `scratch` (sample_scratch_size(n) Candidates). Returns the kept set; count
/// 0 when the row has a NaN or +Inf (no token may be chosen from it, as argmax) or every entry
/// is masked. temperature must be > 0. Without bins in `work`, top-p selects without them.
///
/// Two passes over the row, then selections over a short list. Every bound below only drops
/// tokens that cannot be kept, so the kept set is exactly the one a full sort would give:
///  - top-k: the least of k block maxima is at or below the k-th largest z (each block's
///    maximum is a distinct token at least that large), so tokens under it are not in the top k;
///  - top-p (without top-k; with it, top-p's mass is over the top k alone): every weight is
///    <= 1 and the top token's is 1, so the total W >= 1, and the tokens of weight below
///    (1 - p) / n weigh less than (1 - p) <= (1 - p) W together: the tokens above that bound
///    already hold at least p W, and they are ranked before every token below it;
///  - min-p (without top-k): a token of weight below min_p (the top token's being 1) is never
///    kept; if the tokens above it hold less than top-p's target, top-p keeps them all and min-p
///    then keeps exactly them, as it would have from the longer top-p set.
///
/// `Passes`: the passes over the whole row (RowPasses, or a host's vector versions of them).
template <class Passes = RowPasses>
BATON_HD inline KeptSet truncate(const float* row, int n, const SampleParams& p,
                                 const SampleScratch& work) {
  Candidate* scratch = work.candidates;
  KeptSet none{{0.0f, 0.0f, -1}, 0.0f, 0, scratch, 0};
  const bool top_k = p.top_k > 0 && p.top_k < n;
  // Pass 1: validity, the largest z, and (top-k) the least of top_k block maxima.
  float m = -INFINITY, floor_z = top_k ? INFINITY : -INFINITY;
  int finite = 0;
  const int blocks = top_k ? p.top_k : 1;
  for (int b = 0; b < blocks; ++b) {
    const int begin = static_cast<int>(static_cast<long long>(n) * b / blocks);
    const int end = static_cast<int>(static_cast<long long>(n) * (b + 1) / blocks);
    const BlockScan s = Passes::block(row, begin, end);
    if (s.bad) return none;
    finite += s.finite;
    // On the logits: dividing by a positive temperature keeps the order.
    const float block_z = scaled_logit(s.max, p.temperature);
    if (block_z > m) m = block_z;
    if (top_k && block_z < floor_z) floor_z = block_z;
  }
  if (m == -INFINITY) return none;
  // Weights under floor_w are dropped (not with top-k: its k best may weigh anything, and
  // top-p's mass after it counts them). Half the top-p bound, for the rounding of the sums.
  float floor_w = 0.0f;
  if (!top_k) {
    floor_w = p.min_p;
    if (p.top_p < 1.0f) {
      const float bound = 0.5f * (1.0f - p.top_p) / static_cast<float>(finite);
      if (bound > floor_w) floor_w = bound;
    }
  }
  // Pass 2: the tokens that may be kept, in id order, with their weights; and the whole row's
  // total weight where top-p needs it (without top-k). Otherwise only the listed tokens'
  // weights are computed (the exp is this pass's cost).
  Candidate* list = scratch;
  int c = 0;
  double total = 0.0;
  if (!top_k && p.top_p < 1.0f) {
    c = Passes::weigh(row, n, p.temperature, m, floor_w, list, &total);
  } else {
    c = Passes::list_at_least(row, 0, n, p.temperature, floor_z, m, floor_w, list);
  }
  // The selections permute a copy; the list stays in id order for the draw.
  Candidate* sel = scratch + n;
  for (int i = 0; i < c; ++i) sel[i] = list[i];
  const int listed = c;
  if (top_k && p.top_k < c) {
    select_top_k(sel, c, p.top_k);
    c = p.top_k;
  }
  if (p.top_p < 1.0f && c > 1) {
    // Top-p's mass is over what top-k kept, renormalized (as HF and llama.cpp chain them).
    if (top_k) {
      total = 0.0;
      for (int i = 0; i < c; ++i) total += sel[i].w;
    }
    const double target = static_cast<double>(p.top_p) * total;
    c = c >= kBinnedSelectionFrom && work.bin_mass
            ? select_top_mass_binned(sel, c, target, work.bin_mass)
            : select_top_mass(sel, c, target);
  }
  // min-p last: the tokens at least min_p times as likely as the top one (whose weight is 1;
  // a ratio the truncations above leave unchanged). Not first: top-p's mass counts the tokens
  // min-p drops (the total above is the whole row's, whatever the list holds).
  if (p.min_p > 0.0f) {
    int kept_count = 0;
    for (int i = 0; i < c; ++i)
      if (sel[i].w >= p.min_p) sel[kept_count++] = sel[i];
    c = kept_count;  // >= 1: the top token has weight 1
  }
  Candidate cut = sel[0];
  for (int i = 1; i < c; ++i)
    if (ranks_before(cut, sel[i])) cut = sel[i];
  return {cut, m, c, list, listed};
}

/// A listed candidate's weight if it is kept (ranked at or before `cut`), else 0. No branch:
/// kept and dropped tokens alternate unpredictably in id order. (The list holds no masked token.)
BATON_HD inline double kept_weight(const Candidate& cut, const Candidate& c) {
  const bool in = (c.z > cut.z) | ((c.z == cut.z) & (c.id <= cut.id));
  return in ? static_cast<double>(c.w) : 0.0;
}

/// Draws from the kept set with uniform `u` in [0, 1): the inverse of the kept weights'
/// cumulative sum, walked in id order (the list, which holds every kept token). Returns -1 for an
/// empty set; when rounding leaves the sum under the target, the last kept token of weight > 0.
BATON_HD inline std::int32_t draw(const KeptSet& s, double u) {
  if (s.count == 0) return -1;
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

/// The sampling step's choice from `row` (logit_bias and penalties already applied): the exact
/// argmax at temperature 0, else a draw with `u` from the truncated distribution. -1 when no
/// token may be chosen (a NaN or +Inf logit, or every token masked).
template <class Passes = RowPasses>
BATON_HD inline std::int32_t sample_row(const float* row, int n, const SampleParams& p, double u,
                                        const SampleScratch& scratch) {
  if (p.temperature <= 0.0f) return Passes::argmax(row, n);
  return draw(truncate<Passes>(row, n, p, scratch), u);
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
