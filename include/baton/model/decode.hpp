// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The decode loop: prefill a prompt, then one step per generated token —
///        forward → logits transform → choose → after-step → accept.
///
/// `Decoder` owns the loop's state (DecodeState: plain data that a device-resident loop can
/// keep in backend memory) and the step as separate operations; `run()` drives them with
/// hooks (DecodeHooks). `greedy_decode`, a relay Stage and `baton generate` all run this one
/// loop: they differ only in the hooks they pass.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "baton/model/backend_ops.hpp"
#include "baton/model/forward.hpp"

namespace baton {

/// Limits of one generation.
struct DecodeOptions {
  int max_new = 16;                    ///< tokens to generate at most
  std::vector<std::int32_t> stop_ids;  ///< generation ends when one of these is chosen
};

/// What a generation produced. A stop token ends the generation and is not part of `ids`.
struct DecodeResult {
  std::vector<std::int32_t> ids;
  bool stopped = false;       ///< ended on a stop id (else max_new was reached)
  std::int32_t stop_id = -1;  ///< the stop id chosen, when stopped
};

/// Former names, from when the loop was only greedy.
using GreedyOptions [[deprecated("use DecodeOptions")]] = DecodeOptions;
using GreedyResult [[deprecated("use DecodeResult")]] = DecodeResult;

/// The loop's state between steps: plain integers, so a device-resident loop can keep it in
/// backend memory and the host need not read it every step.
struct DecodeState {
  std::int32_t position = 0;     ///< next KV write position
  std::int32_t last_token = -1;  ///< the last accepted token
  std::int32_t steps = 0;        ///< tokens accepted (generated) so far
  std::int32_t done = 1;         ///< nonzero once a stop id was chosen or max_new reached
  std::int32_t pending = 0;      ///< nonzero while last_token still needs its forward
};

/// Hooks a run of the loop calls at every step; all optional (see NoDecodeHooks).
///   before(view) -> std::optional<int32>: may supply the step's token (skipping choose());
///   after(view, token): sees the logits and the token before it is accepted.
/// `view` is a StepView-like {step, position, logits}.
struct NoDecodeHooks {
  template <class View>
  std::optional<std::int32_t> before(const View&) {
    return std::nullopt;
  }
  template <class View>
  void after(const View&, std::int32_t) {}
};

/// One step as the hooks see it.
template <class LogitsView>
struct DecodeStepView {
  int step = 0;       ///< tokens generated so far in this request
  int position = 0;   ///< KV position the chosen token would be written at
  LogitsView logits;  ///< this step's logits (backend memory)
};

/// One generation in progress on one KV target.
///
/// Positions: the prompt goes to [start, start + n); each accepted token is fed back at the
/// next position by the next step's forward, except the last (nothing reads its K/V), so the
/// target ends at start + n + ids - 1. Every forward states the position it expects to write
/// at, and the cache checks it before writing.
template <class Model, class Slice, class Cache>
class Decoder {
 public:
  using backend = typename Model::backend;
  using ops = BackendOps<backend>;
  using logits_view = typename ops::logits_view;
  using step_view = DecodeStepView<logits_view>;

  Decoder(const Model& model, const Slice& slice, Cache& cache, Workspace<backend>& ws,
          KvTarget target, const DecodeOptions& opt)
      : model_(&model), slice_(&slice), cache_(&cache), ws_(&ws), target_(target), opt_(&opt) {
    result_.ids.reserve(opt.max_new > 0 ? opt.max_new : 0);
  }

  /// Appends the prompt at `start_pos`; its last row of logits is the first step's.
  void prefill(std::span<const std::int32_t> prompt, int start_pos) {
    logits_ =
        baton::forward(*model_, *ws_, *slice_, *cache_, target_, start_pos, prompt, Logits::last);
    state_.position = start_pos + static_cast<int>(prompt.size());
    state_.steps = 0;
    state_.pending = 0;
    state_.done = opt_->max_new <= 0;
  }

  // ---- the step, as separate operations --------------------------------------------------
  /// Feeds the last accepted token through the model (nothing to do right after prefill).
  void forward() {
    if (!state_.pending) return;
    logits_ = baton::forward(*model_, *ws_, *slice_, *cache_, target_, state_.position,
                             std::span<const std::int32_t>(&state_.last_token, 1), Logits::last);
    ++state_.position;
    state_.pending = 0;
  }
  /// Rewrites this step's logits before the choice (masks, penalties). A no-op until the
  /// interceptor issue gives it device interceptors.
  void transform_logits() {}
  /// The choice for this step: the largest logit, lowest id on a tie. Non-finite logits
  /// (NaN/Inf weights, an overflow) are a numeric_error: an id chosen from them would be
  /// nonsense printed as if it were output (baton's NaN policy, docs/security.md).
  std::int32_t choose() const {
    const std::int32_t id = ops::argmax(logits_);
    BATON_CHECK(id >= 0, numeric_error, "decode step ", state_.steps, " at position ",
                state_.position,
                ": the logits are not finite (NaN or Inf); the model or adapter "
                "weights hold non-finite values or the computation overflowed");
    return id;
  }
  /// Takes `token` as this step's output. A stop id ends the generation (not kept); reaching
  /// max_new ends it; otherwise the next forward() feeds it back.
  void accept(std::int32_t token) {
    if (state_.done) return;
    if (std::find(opt_->stop_ids.begin(), opt_->stop_ids.end(), token) != opt_->stop_ids.end()) {
      result_.stopped = true;
      result_.stop_id = token;
      state_.done = 1;
      return;
    }
    result_.ids.push_back(token);
    ++state_.steps;
    state_.last_token = token;
    state_.pending = 1;
    if (state_.steps >= opt_->max_new) state_.done = 1;
  }

  /// One whole step: forward → hooks.before → transform → choose (unless before supplied the
  /// token) → hooks.after → accept. Returns whether the generation goes on.
  template <class Hooks = NoDecodeHooks>
  bool step(Hooks&& hooks = {}) {
    if (state_.done) return false;
    forward();
    const step_view view{state_.steps, state_.position, logits_};
    const std::optional<std::int32_t> supplied = hooks.before(view);
    transform_logits();
    const std::int32_t token = supplied ? *supplied : choose();
    hooks.after(view, token);
    accept(token);
    return !state_.done;
  }
  /// Steps until done.
  template <class Hooks = NoDecodeHooks>
  void run(Hooks&& hooks = {}) {
    while (step(hooks)) {
    }
  }

  bool done() const { return state_.done != 0; }
  int position() const { return state_.position; }
  int steps() const { return state_.steps; }
  const DecodeState& state() const { return state_; }
  logits_view logits() const { return logits_; }
  const DecodeResult& result() const { return result_; }
  DecodeResult take_result() { return std::move(result_); }

 private:
  const Model* model_;
  const Slice* slice_;
  Cache* cache_;
  Workspace<backend>* ws_;
  KvTarget target_;
  const DecodeOptions* opt_;
  logits_view logits_{};
  DecodeState state_;
  DecodeResult result_;
};

/// Appends `prompt` to `target` at `start_pos` and generates greedily: the Decoder without
/// hooks.
template <class Model, class Slice, class Cache>
DecodeResult greedy_decode(const Model& model, Workspace<typename Model::backend>& ws,
                           const Slice& slice, Cache& cache, KvTarget target, int start_pos,
                           std::span<const std::int32_t> prompt, const DecodeOptions& opt) {
  if (opt.max_new <= 0) return {};
  Decoder<Model, Slice, Cache> d(model, slice, cache, ws, target, opt);
  d.prefill(prompt, start_pos);
  d.run();
  return d.take_result();
}

}  // namespace baton
