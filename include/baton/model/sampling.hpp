// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A request's sampling options (SamplingOptions, checked with field-named errors) and
///        the per-generation state a host decode loop samples with (Sampler): the scratch and
///        the generated-token counts, sized once per generation so no step allocates.
///        The math is kernels/sample.hpp; docs/sampling.md is the user's view.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/kernels/philox.hpp"
#include "baton/kernels/sample.hpp"
#include "baton/kernels/step_policy.hpp"
#include "baton/model/sample_scratch.hpp"

namespace baton {

/// How a generation chooses its tokens. The defaults are greedy decoding (the exact argmax).
struct SamplingOptions {         // NOLINT: aggregate
  kernels::SampleParams params;  ///< temperature, top-k/p, min-p, penalties
  std::uint64_t seed = 0;        ///< the generator's key (docs/sampling.md)
  std::uint64_t stream = 0;      ///< the request stream: one per stage of a relay
  /// The stage run within its request (its relay cycle - 1): the generator counter's second
  /// word, so each cycle of a looping stage draws afresh. Set by the relay, not by users.
  std::uint32_t run = 0;
  std::vector<kernels::BiasEntry> logit_bias;  ///< added to the logits first
  bool logprobs = false;                       ///< report each chosen token's log-probability
  int top_logprobs = 0;                        ///< and this many alternatives (0..20)
  /// The penalties read the last N generated tokens (llama.cpp's repeat_last_n): -1 every one,
  /// 0 none (the penalties are off).
  int repeat_last_n = -1;

  /// Whether choosing is the plain argmax of the chain's logits (today's greedy path, which a
  /// device loop runs): temperature 0, nothing added to or subtracted from the logits, no
  /// log-probabilities asked for.
  bool plain_greedy() const {
    const auto& p = params;
    return p.temperature <= 0.0f && logit_bias.empty() && !penalized() && !logprobs;
  }
  /// Whether the choice can differ from the argmax of the chain's logits (what an exact stage,
  /// StageCard::exact, refuses): temperature, logit_bias or a penalty.
  bool alters_choice() const {
    return params.temperature > 0.0f || !logit_bias.empty() || penalized();
  }
  /// Step `step`'s draw (kernels::draw_token): the options, the uniform's counter, and the
  /// alternatives to report (-1: no log-probabilities).
  kernels::TokenDraw draw(int step) const {
    return {
        params, seed, stream, static_cast<std::uint32_t>(step), run, logprobs ? top_logprobs : -1};
  }
  /// Whether a penalty reads the generated tokens.
  bool penalized() const {
    return repeat_last_n != 0 &&
           (params.repeat_penalty != 1.0f || params.presence_penalty != 0.0f ||
            params.frequency_penalty != 0.0f);
  }

  /// Throws usage_error naming the first field out of range (`where` prefixes the message,
  /// e.g. "stage 'reason': "); `vocab` bounds logit_bias's ids.
  void check(int vocab, std::string_view where = {}) const {
    const auto& p = params;
    auto bad = [&](const char* field, auto value, const char* want) {
      BATON_FAIL(usage_error, where, "sampling: ", field, " = ", value, " is out of range (", want,
                 ")");
    };
    if (!(std::isfinite(p.temperature) && p.temperature >= 0.0f))
      bad("temperature", p.temperature, "a finite value >= 0; 0 is greedy");
    if (p.top_k < 0) bad("top_k", p.top_k, ">= 0; 0 keeps every token");
    if (!(p.top_p >= 0.0f && p.top_p <= 1.0f)) bad("top_p", p.top_p, "0..1");
    if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) bad("min_p", p.min_p, "0..1");
    if (!(std::isfinite(p.repeat_penalty) && p.repeat_penalty > 0.0f))
      bad("repeat_penalty", p.repeat_penalty, "a finite value > 0; 1 is off");
    if (!(p.presence_penalty >= -2.0f && p.presence_penalty <= 2.0f))
      bad("presence_penalty", p.presence_penalty, "-2..2");
    if (!(p.frequency_penalty >= -2.0f && p.frequency_penalty <= 2.0f))
      bad("frequency_penalty", p.frequency_penalty, "-2..2");
    if (repeat_last_n < -1)
      bad("repeat_last_n", repeat_last_n, ">= -1; -1 reads every generated token, 0 none");
    if (top_logprobs < 0 || top_logprobs > kernels::kMaxTopLogprobs)
      bad("top_logprobs", top_logprobs, "0..20");
    for (const kernels::BiasEntry& b : logit_bias) {
      if (b.id < 0 || b.id >= vocab)
        BATON_FAIL(usage_error, where, "sampling: logit_bias names token ", b.id,
                   ", outside the vocabulary [0, ", vocab, ")");
      if (!(b.bias >= -100.0f && b.bias <= 100.0f))
        BATON_FAIL(usage_error, where, "sampling: logit_bias[", b.id, "] = ", b.bias,
                   " is out of range (-100..100)");
    }
  }
};

/// A chosen token's log-probability and its best alternatives (docs/sampling.md says which
/// distribution: after the chain's masks, logit_bias, the penalties and temperature; before
/// top-k/top-p/min-p). A token an interceptor supplied (no forward ran) has logprob 0 and no
/// alternatives.
struct TokenLogprobs {
  std::int32_t id = -1;
  float logprob = 0.0f;
  int n_top = 0;
  std::array<kernels::TopLogprob, kernels::kMaxTopLogprobs> top{};
};

/// A step's token chosen by the caller from the step's row as the forward left it (the batch
/// scheduler's choices on a device, model/device_choice.hpp), with its log-probabilities when
/// the generation asks for them (else logprobs.id is -1).
struct StepChoice {
  std::int32_t id = -1;
  TokenLogprobs logprobs{};
};

/// One generation's sampling state on the host: the options, a scratch of one candidate per
/// vocabulary entry (SampleScratchBuffers) and the generated tokens' counts. Everything is
/// sized at construction.
class Sampler {
 public:
  Sampler() = default;
  Sampler(const SamplingOptions& options, int vocab, int max_new) : opt_(&options) {
    if (options.plain_greedy()) return;
    // Allocated, not written (SampleScratchBuffers): a generation whose rows are chosen in a
    // pool's scratches (the batch scheduler's threads) never maps it.
    if (options.params.temperature > 0.0f) own_ = SampleScratchBuffers(vocab);
    if (options.penalized()) {
      seen_.resize(static_cast<std::size_t>(std::max(max_new, 0)));
      if (options.repeat_last_n > 0)
        window_.resize(
            static_cast<std::size_t>(std::max(std::min(options.repeat_last_n, max_new), 0)));
    }
  }

  /// Whether choosing needs this sampler (else the plain argmax).
  bool active() const { return opt_ && !opt_->plain_greedy(); }
  const SamplingOptions* options() const { return opt_; }

  /// How a row's token is drawn once logit_bias and the penalties are in: kernels::draw_token,
  /// or a backend's version computing the same with faster passes
  /// (BackendOps<host>::draw_token).
  using TokenDrawer = std::int32_t (*)(const float*, int, const kernels::TokenDraw&,
                                       const kernels::SampleScratch&, const kernels::LogprobsOut&);

  /// Step `step`'s choice from `row` (the chain's logits, rewritten in place by logit_bias and
  /// the penalties) by `draw`, with its log-probabilities when the options ask for them; id -1
  /// when no token may be chosen. `work`: a scratch for the draw (a pool's,
  /// model/sample_scratch.hpp), else the generation's own; the choice is the same.
  StepChoice choose(std::span<float> row, int step,
                    TokenDrawer draw = &kernels::draw_token<kernels::RowPasses>,
                    const kernels::SampleScratch* work = nullptr) {
    const SamplingOptions& o = *opt_;
    const kernels::SamplerInputs in{o.logit_bias.data(), static_cast<int>(o.logit_bias.size()),
                                    seen_.data(), counted_.n_seen, o.draw(step)};
    StepChoice c;
    c.id =
        kernels::StepPhases::sample(row.data(), static_cast<int>(row.size()), in,
                                    work ? *work : own_.view(), logprobs_out(c), DrawThrough{draw});
    note_id(c);
    return c;
  }

  /// choose() for options that do not rewrite the row (no logit_bias, no penalties): the same
  /// choice, the row untouched. Generations may choose this way on different threads at once,
  /// each with its own Sampler.
  StepChoice choose_as_is(std::span<const float> row, int step,
                          TokenDrawer draw = &kernels::draw_token<kernels::RowPasses>,
                          const kernels::SampleScratch* work = nullptr) {
    BATON_CHECK(opt_->logit_bias.empty() && !opt_->penalized(), usage_error,
                "Sampler: choose_as_is() with options that rewrite the row (logit_bias, "
                "penalties)");
    StepChoice c;
    c.id = kernels::StepPhases::sample_as_is(row.data(), static_cast<int>(row.size()),
                                             opt_->draw(step), work ? *work : own_.view(),
                                             logprobs_out(c), DrawThrough{draw});
    note_id(c);
    return c;
  }

  /// The penalties' counts so far: each distinct generated id in the window, with its count.
  std::span<const kernels::SeenToken> seen() const {
    return {seen_.data(), static_cast<std::size_t>(counted_.n_seen)};
  }

  /// Counts an accepted token for the penalties (generated tokens only: the prompt never
  /// counts, docs/sampling.md says why; kernels::count_generated, the device loop's rule too).
  /// No allocation: room for max_new distinct ids and the last repeat_last_n.
  void accepted(std::int32_t token) {
    if (!opt_ || !opt_->penalized()) return;
    kernels::count_generated({seen_.data(), window_.data(), std::max(opt_->repeat_last_n, 0)},
                             counted_, token);
  }

 private:
  /// A TokenDrawer as the sample phase calls its draw (a pointer: the device compiler does not
  /// look through it, and the host only ever calls it).
  struct DrawThrough {
    TokenDrawer fn;
    BATON_HD std::int32_t operator()(const float* row, int n, const kernels::TokenDraw& d,
                                     const kernels::SampleScratch& s,
                                     const kernels::LogprobsOut& out) const {
      return fn(row, n, d, s, out);
    }
  };
  static kernels::LogprobsOut logprobs_out(StepChoice& c) {
    return {&c.logprobs.logprob, c.logprobs.top.data(), &c.logprobs.n_top};
  }
  /// Notes `c`'s id in its log-probabilities when the options ask for them.
  void note_id(StepChoice& c) const {
    if (c.id >= 0 && opt_->logprobs) c.logprobs.id = c.id;
  }

  const SamplingOptions* opt_ = nullptr;
  SampleScratchBuffers own_;              ///< the draw's scratch, when the caller lends none
  std::vector<kernels::SeenToken> seen_;  ///< [max_new]: the distinct accepted ids, counted
  std::vector<std::int32_t> window_;      ///< the last repeat_last_n accepted tokens (a ring)
  kernels::PenaltyCursor counted_;        ///< how much of both is filled
};

}  // namespace baton
