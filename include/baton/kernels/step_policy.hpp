// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The decode step's policy, in one place: the chain's masks, then the sampler, then
///        the accept. Every loop runs these phases in this order —
///          the host Decoder (model/decode.hpp), which also runs each row of the batch
///          scheduler's steps;
///          the device loop's kernels (kernels/phased/argmax_split.hpp, sample_step.hpp,
///          decode_step.hpp);
///          a batch's sampled rows chosen on a device (SampleRowsKernel);
///        so a change to a phase changes them all, and the host and the host grid agree bit
///        for bit.
///
/// One step of a generation in state `st` (kernels/accept.hpp) whose forward left a row of
/// logits:
///   1. mask     — the chain's device members rewrite each logit (transform_logit). Its host
///                 members' transforms follow on the host (intercept/chain.hpp); a device loop
///                 has none.
///   2. sample   — logit_bias, then the penalties over the ids generated so far, then the draw
///                 (kernels::draw_token: temperature, top-k, top-p, min-p, the uniform of
///                 (seed, stream, step, run); the exact argmax at temperature 0), with the
///                 token's log-probabilities when asked. A plain greedy step on a device takes
///                 the argmax of the masked row in split partials instead: the same id.
///   3. advance  — the chain's device members see the id; the first that asks to stop is named.
///                 Its host members' after_step follow on the host.
///   4. accept   — accept_step: a stop id ends the generation unkept, an asked-for stop or
///                 max_new ends it after the id, else the id waits to be fed back. The penalties
///                 count it before the next sample (count_generated).
#pragma once

#include <cstdint>

#include "baton/core/macros.hpp"
#include "baton/kernels/accept.hpp"
#include "baton/kernels/sample.hpp"

namespace baton::kernels {

/// What the sample phase reads besides the row: the entries that rewrite it and the draw.
struct SamplerInputs {
  const BiasEntry* bias = nullptr;  ///< logit_bias entries (ids checked by the caller)
  int n_bias = 0;
  const SeenToken* seen = nullptr;  ///< the generated ids counted for the penalties
  int n_seen = 0;
  TokenDraw draw{};  ///< the options, the uniform's counter, the log-probabilities asked for
};

/// kernels::draw_token over `Passes` as a callable: how the device draws (and the host without
/// faster passes; the host's vector passes come through BackendOps<host>::draw_token).
template <class Passes = RowPasses>
struct DrawWithPasses {
  BATON_HD std::int32_t operator()(const float* row, int n, const TokenDraw& d,
                                   const SampleScratch& scratch, const LogprobsOut& out) const {
    return draw_token<Passes>(row, n, d, scratch, out);
  }
};

/// The phases that read no interceptor state (sample, accept), so the kernels that choose for
/// a batch's rows (one request each, with chains of their own) and the device loop's sampled
/// choice take them without naming a chain.
struct StepPhases {
  /// Phase 2: rewrites `row` in place (logit_bias, then the penalties) and draws from it with
  /// `draw` (DrawWithPasses, or a callable computing the same faster), the log-probabilities
  /// into `out` when in.draw asks for them. -1 when no token may be chosen.
  template <class Draw = DrawWithPasses<>>
  BATON_HD static std::int32_t sample(float* row, int n, const SamplerInputs& in,
                                      const SampleScratch& scratch, const LogprobsOut& out,
                                      const Draw& draw = {}) {
    apply_logit_bias(row, in.bias, in.n_bias);
    apply_penalties(row, in.seen, in.n_seen, in.draw.params);
    return draw(row, n, in.draw, scratch, out);
  }
  /// Phase 2 for a row that nothing rewrites (no logit_bias, no penalties): the same draw, the
  /// row read only, so rows a request's choices share stay as they are.
  template <class Draw = DrawWithPasses<>>
  BATON_HD static std::int32_t sample_as_is(const float* row, int n, const TokenDraw& d,
                                            const SampleScratch& scratch, const LogprobsOut& out,
                                            const Draw& draw = {}) {
    return draw(row, n, d, scratch, out);
  }

  /// Phase 4: takes `id` into `st` (accept_step; `stopper` >= 0 when a member asked to stop
  /// after it).
  BATON_HD static Accepted accept(StepState& st, std::int32_t id, int stopper,
                                  const std::int32_t* stop_ids, int n_stop) {
    return accept_step(st, id, stopper, stop_ids, n_stop);
  }
};

/// The step's phases for a generation whose interceptor chain is `Chain` (an
/// InterceptorChain: intercept/chain.hpp); see the file comment for the order.
template <class Chain>
struct StepPolicy : StepPhases {
  using params_type = typename Chain::device_params;
  using state_type = typename Chain::device_state;

  // The members' states come by pointer: null for a chain without device members, which no
  // phase reads then.

  /// Phase 1, one logit: what the chain's device members make of logit `logit` of token `id`.
  BATON_HD static float mask(const params_type& p, const state_type* s, std::int32_t id,
                             float logit) {
    if constexpr (Chain::alters_on_device) {
      return Chain::transform_logit(p, *s, id, logit);
    } else {
      (void)p, (void)s, (void)id;
      return logit;
    }
  }
  /// Phase 1 over ids [begin, end) of `row`, every `stride`-th from `begin` (a thread's share of
  /// a slice; 1 on the host).
  BATON_HD static void mask_row(const params_type& p, const state_type* s, float* row, int begin,
                                int end, int stride = 1) {
    if constexpr (Chain::alters_on_device) {
      for (int id = begin; id < end; id += stride) row[id] = mask(p, s, id, row[id]);
    } else {
      (void)p, (void)s, (void)row, (void)begin, (void)end, (void)stride;
    }
  }

  /// Phase 3: the chain's device members see `id` (none for an invalid one, -1). Returns the
  /// index of the first member that asks to stop after it, -1 when none does.
  BATON_HD static int advance(const params_type& p, state_type* s, std::int32_t id) {
    if constexpr (Chain::has_device_members) {
      return id >= 0 ? Chain::advance(p, *s, id) : -1;
    } else {
      (void)p, (void)s, (void)id;
      return -1;
    }
  }
};

}  // namespace baton::kernels
