// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The sampler's math, shared by every decode loop: logit_bias, the repetition,
///        presence and frequency penalties, temperature, top-k, top-p, min-p, the draw, and
///        the log-probabilities a request may ask for. docs/sampling.md states the order and
///        semantics; this file is the one place they are written.
///
/// Nothing here allocates: the caller supplies the scratch (SampleScratch). Nothing sorts the
/// vocabulary either: bounds that provably drop only tokens that cannot be kept leave a short
/// list (truncate() says which), top-k and top-p are selections on it (a quickselect by rank,
/// and one by cumulative mass: sample_select.hpp), a set too long to list stays in the row's
/// weights (sample_kept.hpp), and the draw walks the kept set in id order, so the token drawn
/// depends only on the kept set and the uniform — not on how a selection permuted the scratch.
/// The passes over the whole row are sample_passes.hpp's.
#pragma once

#include <cmath>
#include <cstdint>

#include "baton/core/macros.hpp"
#include "baton/kernels/philox.hpp"
#include "baton/kernels/sample_kept.hpp"

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

/// Applies temperature, top-k, top-p and min-p to `row` (n logits; -Inf entries are masked and
/// never kept) using `work`. Returns the kept set; count 0 when the row has a NaN or +Inf (no
/// token may be chosen from it, as argmax) or every entry is masked. temperature must be > 0.
///
/// Two passes over the row, then selections over a short list (or, for a set too long to
/// list, detail::dense_kept()). Every bound below only drops tokens that cannot be kept, so
/// the kept set is exactly the one a full sort would give:
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
///
/// `ranked` (not null): the weighing pass, where truncate() makes one (top-p or a dense set,
/// without top-k), also collects the best-ranked entries into it (RowPasses::top_ranked()'s, for
/// top_logprobs); KeptSet::ranked points to it when it did.
template <class Passes = RowPasses>
BATON_HD inline KeptSet truncate(const float* row, int n, const SampleParams& p,
                                 const SampleScratch& work, RankedTop* ranked = nullptr) {
  Candidate* scratch = work.candidates;
  KeptSet none{{0.0f, 0.0f, -1}, 0.0f, 0, scratch, 0};
  const bool top_k = p.top_k > 0 && p.top_k < n;
  // Pass 1: validity, the largest z, and (top-k) the least of top_k block maxima.
  float m = -INFINITY, floor_z = top_k ? INFINITY : -INFINITY;
  const int blocks = top_k ? p.top_k : 1;
  for (int b = 0; b < blocks; ++b) {
    const int begin = static_cast<int>(static_cast<long long>(n) * b / blocks);
    const int end = static_cast<int>(static_cast<long long>(n) * (b + 1) / blocks);
    const BlockScan s = Passes::block(row, begin, end);
    if (s.bad) return none;
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
      const float bound = 0.5f * (1.0f - p.top_p) / static_cast<float>(n);
      if (bound > floor_w) floor_w = bound;
    }
  }
  // Pass 2: the tokens that may be kept, in id order, with their weights; and the whole row's
  // total weight where top-p needs it (without top-k). Otherwise only the listed tokens'
  // weights are computed (the exp is this pass's cost). A set that may be long (no top-k)
  // keeps every weight, and stops listing past kListCap.
  const bool dense = !top_k && work.weights && work.bins;
  const bool weighed = dense || (!top_k && p.top_p < 1.0f);
  Candidate* list = scratch;
  int c = 0;
  double total = 0.0;
  if (weighed) {
    // A set that may be dense is counted first, and listed from its weights when it is short.
    c = Passes::weigh(row, n, p.temperature, m, floor_w, dense ? kListCap : n,
                      dense ? nullptr : list, dense ? work.weights : nullptr, &total,
                      dense ? work.block_masses() : nullptr, draw_block_size(n), ranked);
    if (dense && c > kListCap) {
      KeptSet s =
          detail::dense_kept<Passes>(row, n, p.temperature, p.top_p, p.min_p, work, m, total);
      s.ranked = ranked;
      return s;
    }
    if (dense) c = Passes::list_weighed(row, 0, n, p.temperature, work.weights, floor_w, list);
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
    c = c >= kBinnedSelectionFrom && work.bins ? select_top_mass_binned(sel, c, target, work.bins)
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
  KeptSet kept{worst_ranked(sel, c), m, c, list, listed};
  if (weighed) kept.row_weight = total;  // not top-p's over top-k: that one is renormalized
  if (weighed) kept.ranked = ranked;
  return kept;
}

/// The sampling step's choice from `row` (logit_bias and penalties already applied): the exact
/// argmax at temperature 0, else a draw with `u` from the truncated distribution. -1 when no
/// token may be chosen (a NaN or +Inf logit, or every token masked). `kept`, when given,
/// receives the truncation (left as it is at temperature 0).
template <class Passes = RowPasses>
BATON_HD inline std::int32_t sample_row(const float* row, int n, const SampleParams& p, double u,
                                        const SampleScratch& scratch, KeptSet* kept = nullptr,
                                        RankedTop* ranked = nullptr) {
  if (p.temperature <= 0.0f) return Passes::argmax(row, n);
  const KeptSet s = truncate<Passes>(row, n, p, scratch, ranked);
  if (kept) *kept = s;
  return draw<Passes>(s, u);
}

/// The softmax's log-normalizer at temperature `t` over the row: max z plus log of the weights'
/// sum (sample_exp's, summed as weigh() sums them); `known`, when truncate() already weighed the
/// row at the same temperature (its row_weight > 0), spares the two passes.
template <class Passes = RowPasses>
BATON_HD inline float log_normalizer(const float* row, int n, float t, const KeptSet* known) {
  float m;
  double sum = 0.0;
  if (known && known->row_weight > 0.0) {
    m = known->max_z;
    sum = known->row_weight;
  } else {
    m = scaled_logit(Passes::block(row, 0, n).max, t);
    Passes::weigh(row, n, t, m, INFINITY, 0, nullptr, nullptr, &sum, nullptr, 0,
                  nullptr);  // lists nothing
  }
  return m + static_cast<float>(log(sum));
}

/// Log-probabilities under the distribution the truncations cut: log-softmax of row/T (T = 1
/// at temperature 0), masked (-Inf) entries excluded, the sum of exp from the sampler's own
/// weights (sample_exp, summed as weigh()'s total). Writes the chosen token's and, in rank
/// order, the `top_n` best (fewer when fewer are allowed); returns how many it wrote to `top`.
/// `Passes`: as truncate()'s.
template <class Passes = RowPasses>
BATON_HD inline int log_probs(const float* row, int n, float temperature, std::int32_t chosen,
                              int top_n, float* chosen_logprob, TopLogprob* top,
                              const KeptSet* known = nullptr) {
  const float t = temperature > 0.0f ? temperature : 1.0f;
  const KeptSet* same_t = temperature > 0.0f ? known : nullptr;
  const float lse = log_normalizer<Passes>(row, n, t, same_t);
  *chosen_logprob = scaled_logit(row[chosen], t) - lse;
  // The top entries: collected into `top` by truncate()'s weighing pass, or a pass of their own.
  const int count = top_n <= 0                 ? 0
                    : same_t && same_t->ranked ? same_t->ranked->count
                                               : Passes::top_ranked(row, n, t, top_n, top);
  for (int k = 0; k < count; ++k) top[k].logprob -= lse;
  return count;
}

/// One step's draw as every loop describes it: the options, the uniform's counter (seed, stream,
/// step, run) and how many alternatives to report with the token's log-probability (-1: none).
struct TokenDraw {
  SampleParams params{};
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  std::uint32_t step = 0;
  std::uint32_t run = 0;
  int top_logprobs = -1;
};

/// Where a draw's log-probabilities go (a host TokenLogprobs' fields, a device LogprobRecord's).
struct LogprobsOut {
  float* logprob = nullptr;
  TopLogprob* top = nullptr;  ///< [kMaxTopLogprobs]
  int* n_top = nullptr;
};

/// One step's choice, as every loop makes it — the host Sampler, the device loop's step
/// (SampleChooseKernel) and a batched step's rows (SampleRowsKernel): the draw from `row` (the
/// chain's logits with logit_bias and the penalties in) with the uniform of (seed, stream, step,
/// run), the exact argmax at temperature 0; and, when the draw asks for them and `out` has
/// room, the chosen token's log-probabilities. -1 when no token may be chosen.
template <class Passes = RowPasses>
BATON_HD inline std::int32_t draw_token(const float* row, int n, const TokenDraw& d,
                                        const SampleScratch& scratch, const LogprobsOut& out = {}) {
  const double u =
      d.params.temperature > 0.0f ? sample_uniform(d.seed, d.stream, d.step, d.run) : 0.0;
  KeptSet kept{};  // its row weight, for the log-probabilities (0 at temperature 0: none)
  // The alternatives, when asked, are ranked on the truncation's weighing pass.
  RankedTop ranked{out.top, d.top_logprobs, 0};
  const bool rank = d.top_logprobs > 0 && out.logprob && out.top;
  const std::int32_t id =
      sample_row<Passes>(row, n, d.params, u, scratch, &kept, rank ? &ranked : nullptr);
  if (id >= 0 && d.top_logprobs >= 0 && out.logprob)
    *out.n_top = log_probs<Passes>(row, n, d.params.temperature, id, d.top_logprobs, out.logprob,
                                   out.top, &kept);
  return id;
}

}  // namespace baton::kernels
