// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The decode loop: prefill a prompt, then choose and feed back one token per step.
///
/// `Decoder` is the loop's state and its two moves (prefill, accept); `greedy_decode` runs it
/// with argmax choices; a relay Stage runs the same Decoder and lets interceptors choose.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "baton/kernels/argmax.hpp"
#include "baton/model/host_forward.hpp"

namespace baton {

/// Limits of one generation.
struct GreedyOptions {
  int max_new = 16;                    ///< tokens to generate at most
  std::vector<std::int32_t> stop_ids;  ///< generation ends when one of these is chosen
};

/// What a generation produced. A stop token ends the generation and is not part of `ids`.
struct GreedyResult {
  std::vector<std::int32_t> ids;
  bool stopped = false;       ///< ended on a stop id (else max_new was reached)
  std::int32_t stop_id = -1;  ///< the stop id chosen, when stopped
};

/// One generation in progress on one KV target.
///
/// Positions: the prompt goes to [start, start + n); each accepted token is fed back at the
/// next position, except the last (nothing reads its K/V), so the target ends at
/// start + n + ids - 1. Every forward states the position it expects to write at, and the
/// cache checks it before writing.
template <class Model, class Slice, class Cache>
class Decoder {
 public:
  using backend = typename Model::backend;

  Decoder(const Model& model, const Slice& slice, Cache& cache, Workspace<backend>& ws,
          KvTarget target, const GreedyOptions& opt)
      : model_(&model), slice_(&slice), cache_(&cache), ws_(&ws), target_(target), opt_(&opt) {
    result_.ids.reserve(opt.max_new);
  }

  /// Appends the prompt at `start_pos` and computes the logits of the first step.
  void prefill(std::span<const std::int32_t> prompt, int start_pos) {
    logits_ = forward(*model_, *ws_, *slice_, *cache_, target_, start_pos, prompt, Logits::last);
    position_ = start_pos + static_cast<int>(prompt.size());
    done_ = opt_->max_new <= 0;
  }

  /// The greedy choice for the current step: largest logit, lowest id on a tie.
  std::int32_t greedy_choice() const {
    return kernels::argmax(logits_.data(), model_->config().vocab_size);
  }

  /// Takes `token` as this step's output. A stop id ends the generation (not kept); reaching
  /// max_new ends it; otherwise the token is fed back and the next logits computed.
  void accept(std::int32_t token) {
    if (done_) return;
    if (std::find(opt_->stop_ids.begin(), opt_->stop_ids.end(), token) != opt_->stop_ids.end()) {
      result_.stopped = true;
      result_.stop_id = token;
      done_ = true;
      return;
    }
    result_.ids.push_back(token);
    if (static_cast<int>(result_.ids.size()) >= opt_->max_new) {
      done_ = true;
      return;
    }
    logits_ = forward(*model_, *ws_, *slice_, *cache_, target_, position_,
                      std::span<const std::int32_t>(&result_.ids.back(), 1), Logits::last);
    ++position_;
  }

  bool done() const { return done_; }
  int position() const { return position_; }
  int steps() const { return static_cast<int>(result_.ids.size()); }
  std::span<const float> logits() const { return logits_; }
  const GreedyResult& result() const { return result_; }
  GreedyResult take_result() { return std::move(result_); }

 private:
  const Model* model_;
  const Slice* slice_;
  Cache* cache_;
  Workspace<backend>* ws_;
  KvTarget target_;
  const GreedyOptions* opt_;
  std::span<const float> logits_;
  int position_ = 0;
  bool done_ = true;
  GreedyResult result_;
};

/// Appends `prompt` to `target` at `start_pos` and generates greedily.
template <class Model, class Slice, class Cache>
GreedyResult greedy_decode(const Model& model, Workspace<typename Model::backend>& ws,
                           const Slice& slice, Cache& cache, KvTarget target, int start_pos,
                           std::span<const std::int32_t> prompt, const GreedyOptions& opt) {
  if (opt.max_new <= 0) return {};
  Decoder<Model, Slice, Cache> d(model, slice, cache, ws, target, opt);
  d.prefill(prompt, start_pos);
  while (!d.done()) d.accept(d.greedy_choice());
  return d.take_result();
}

}  // namespace baton
