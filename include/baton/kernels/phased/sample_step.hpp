// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The device loop's sampled choice: the host sampler's math (kernels/sample.hpp) run
///        from the loop state in backend memory, so a generation that samples stays on the
///        device as a greedy one does (one read at the end, no wait per step).
///
/// A sampled step queues, instead of the argmax partials (model/device_loop.hpp):
///   TransformRowKernel<Chain>, when the chain's device members alter the logits: the row
///     rewritten in place by transform_logit (what the host Decoder does to its row);
///   SampleChooseKernel: logit_bias, the penalties over the ids generated so far, then
///     kernels::draw_token (the uniform of (seed, stream, step, run), the token's
///     log-probabilities when asked: the host Sampler's one draw); the choice stored as the
///     one partial the accept step (DecodeStepKernel<Chain>) reduces, so stop ids, the chain's
///     advance, max_new and the write-position check stay that step's.
/// Everything the sampler computes, it computes as the host does (the same functions, the same
/// order, one thread), so on the host grid a sampled generation equals the host's bit for bit.
/// SampleRowsKernel is the same choice for the sampled rows of a batched forward, one block each.
/// On a GPU the choice runs on one thread of one block: correct, and slower than the split
/// argmax over a large vocabulary (docs/sampling.md gives the cost and what would split it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton/grid/grid.hpp"
#include "baton/kernels/argmax.hpp"
#include "baton/kernels/phased/argmax_split.hpp"
#include "baton/kernels/phased/decode_step.hpp"
#include "baton/kernels/philox.hpp"
#include "baton/kernels/sample.hpp"
#include "baton/kernels/step_policy.hpp"

namespace baton::kernels {

/// logit_bias entries a sampled device step carries in its arguments (more: the stepped loop).
inline constexpr int kMaxDeviceBias = 64;

/// One step's log-probabilities as the loop stores them after its ids (all 32-bit words, so
/// the one read brings them back with the state).
struct LogprobRecord {
  std::int32_t id;
  float logprob;
  std::int32_t n_top;
  TopLogprob top[kMaxTopLogprobs];
};
inline constexpr int kLogprobWords = sizeof(LogprobRecord) / sizeof(std::int32_t);
static_assert(sizeof(LogprobRecord) == kLogprobWords * sizeof(std::int32_t));

/// Rewrites a logits row in place by the step's mask phase (StepPolicy<Chain>::mask_row), in
/// slices as the argmax partials read it (argmax_split). Skipped when `*skip` (the loop's done) is
/// set.
template <class Chain>
struct TransformRowKernel {
  static constexpr unsigned kThreads = 256;
  static constexpr int kPhases = 1;
  struct Args {
    float* logits = nullptr;  ///< [n]
    int n = 0;
    int chunk = 0;  ///< argmax_split(n).chunk
    typename Chain::device_params params{};
    const typename Chain::device_state* chain_state = nullptr;
    const std::int32_t* skip = nullptr;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config(int n) {
    return {static_cast<unsigned>(argmax_split(n).count), 1, kThreads};
  }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    if (a.skip && *a.skip) return;
    const grid::SliceRange s = grid::slice_range(a.n, a.chunk, at.block_x);
    StepPolicy<Chain>::mask_row(a.params, a.chain_state, a.logits,
                                s.begin + static_cast<int>(at.thread), s.end, kThreads);
  }
};

/// One block; thread 0 chooses the step's token by the host Sampler's rule (see the file
/// comment) and stores it in `pick` for DecodeStepKernel (value 0 for an id, -Inf for none).
struct SampleChooseKernel {
  static constexpr unsigned kThreads = 32;
  static constexpr int kPhases = 1;
  struct Args {
    float* logits = nullptr;  ///< [n], rewritten in place (bias, penalties)
    int n = 0;
    std::int32_t* loop = nullptr;  ///< DeviceLoopState, [max_new] ids, [max_new] LogprobRecords
    int max_new = 0;
    TokenDraw draw{};  ///< the options and the uniform's counter (its step: the loop's)
    BiasEntry bias[kMaxDeviceBias] = {};
    int n_bias = 0;
    bool penalized = false;
    PenaltyCounts counts{};  ///< seen [max_new], window [min(repeat_last_n, max_new)]
    SampleScratch
        scratch{};  ///< candidates [sample_scratch_size(n)], weights [n], bins [kSampleBins]
    ArgmaxPair* pick = nullptr;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config() { return {1, 1, kThreads}; }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    DeviceLoopState& st = *reinterpret_cast<DeviceLoopState*>(a.loop);
    if (at.thread != 0 || st.step.done) return;
    const std::int32_t* ids = a.loop + kLoopStateWords;
    if (a.penalized)  // the ids accepted since the last step join the counts
      for (; st.counted < st.step.steps; ++st.counted)
        count_generated(a.counts, st.penalties, ids[st.counted]);
    SamplerInputs in{a.bias, a.n_bias, a.counts.seen, st.penalties.n_seen, a.draw};
    in.draw.step = static_cast<std::uint32_t>(st.step.steps);
    LogprobsOut out{};  // the step's record, after the ids (room for max_new)
    LogprobRecord* r = nullptr;
    if (in.draw.top_logprobs >= 0 && st.step.steps < a.max_new) {
      r = reinterpret_cast<LogprobRecord*>(a.loop + kLoopStateWords + a.max_new +
                                           st.step.steps * kLogprobWords);
      out = {&r->logprob, r->top, &r->n_top};
    }
    const std::int32_t id = StepPhases::sample(a.logits, a.n, in, a.scratch, out);
    if (r && id >= 0) r->id = id;
    *a.pick = ArgmaxPair{id >= 0 ? 0.0f : -INFINITY, id};  // -Inf: argmax_id gives -1
  }
};

/// One sampled row of a batched forward, as the batch scheduler hands it to SampleRowsKernel:
/// which row, the request's draw at this step, and what rewrites the row before the draw.
struct RowSampling {
  int row = 0;     ///< the logits row of the batched forward
  TokenDraw draw;  ///< the request's draw at this step (SamplingOptions::draw)
  /// The request's logit_bias entries and penalty counts, in backend memory (choose_rows stages
  /// them there; null when none). A row with any is rewritten in a copy: the batch's rows stay
  /// as the forward left them (a request's choices may share one).
  const BiasEntry* bias = nullptr;
  int n_bias = 0;
  const SeenToken* seen = nullptr;
  int n_seen = 0;
  BATON_HD bool rewrites() const { return n_bias > 0 || n_seen > 0; }
};

/// Sampled rows one SampleRowsKernel launch takes: each has a scratch of sample_scratch_size(n)
/// candidates, so this bounds the working memory (16 x 3.6 MB at a vocabulary of 152k).
inline constexpr int kMaxSampledRows = 16;

/// The sampled rows of a batched forward chosen where the logits are, by the step's sample
/// phase (StepPhases::sample, as the host Sampler and the device loop's SampleChooseKernel
/// choose): block b copies row rows[b] to copies[b] when it has logit_bias or penalty counts
/// (phase 0, every thread), then its thread 0 rewrites that copy and draws from it, or draws from
/// the row as it is, and stores the id in ids[b] and, when asked, its LogprobRecord in
/// records[b]. So a batch's sampled rows come back with its greedy ones in one read
/// (model/device_choice.hpp).
struct SampleRowsKernel {
  static constexpr unsigned kThreads = 32;
  static constexpr int kPhases = 2;
  struct Args {
    const float* logits = nullptr;  ///< [rows of the batch][n]
    int n = 0;
    RowSampling rows[kMaxSampledRows] = {};
    int count = 0;
    float* copies = nullptr;           ///< [count][n] when a row rewrites, else unused
    Candidate* candidates = nullptr;   ///< [count][sample_scratch_size(n)]
    float* weights = nullptr;          ///< [count][n]
    double* bins = nullptr;            ///< [count][kSampleBins]
    std::int32_t* ids = nullptr;       ///< [count]
    LogprobRecord* records = nullptr;  ///< [count]
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config(int count) {
    return {static_cast<unsigned>(count), 1, kThreads};
  }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    const int b = static_cast<int>(at.block_x);
    if (b >= a.count) return;
    const RowSampling& r = a.rows[b];
    const float* row = a.logits + static_cast<std::size_t>(r.row) * static_cast<std::size_t>(a.n);
    float* copy = r.rewrites()
                      ? a.copies + static_cast<std::size_t>(b) * static_cast<std::size_t>(a.n)
                      : nullptr;
    if constexpr (P == 0) {
      if (copy)
        for (int i = static_cast<int>(at.thread); i < a.n; i += static_cast<int>(kThreads))
          copy[i] = row[i];
      return;
    }
    if (at.thread != 0) return;
    const SampleScratch scratch{
        a.candidates +
            static_cast<std::size_t>(b) * static_cast<std::size_t>(sample_scratch_size(a.n)),
        a.weights + static_cast<std::size_t>(b) * static_cast<std::size_t>(a.n),
        a.bins + static_cast<std::size_t>(b) * static_cast<std::size_t>(kSampleBins)};
    LogprobRecord* rec = r.draw.top_logprobs >= 0 ? &a.records[b] : nullptr;
    const LogprobsOut out = rec ? LogprobsOut{&rec->logprob, rec->top, &rec->n_top} : LogprobsOut{};
    const std::int32_t id =
        copy ? StepPhases::sample(copy, a.n, {r.bias, r.n_bias, r.seen, r.n_seen, r.draw}, scratch,
                                  out)
             : StepPhases::sample_as_is(row, a.n, r.draw, scratch, out);
    a.ids[b] = id;
    if (rec && id >= 0) rec->id = id;
  }
};

}  // namespace baton::kernels
