// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Greedy decoding on one KV target: prefill the prompt, then argmax one token at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "baton/kernels/argmax.hpp"
#include "baton/model/host_forward.hpp"

namespace baton {

/// Limits of one greedy generation.
struct GreedyOptions {
  int max_new = 16;                      ///< tokens to generate at most
  std::vector<std::int32_t> stop_ids;    ///< generation ends when one of these is chosen
};

/// What a greedy generation produced. A stop token ends the generation and is not part of `ids`.
struct GreedyResult {
  std::vector<std::int32_t> ids;
  bool stopped = false;        ///< ended on a stop id (else max_new was reached)
  std::int32_t stop_id = -1;   ///< the stop id chosen, when stopped
};

/// Appends `prompt` to `target` at `start_pos` and generates greedily (largest logit, lowest id
/// on ties). The chosen tokens are fed back through the cache; the last one is not (nothing
/// reads its K/V), so the target ends at start_pos + prompt + ids - 1.
template <class Model, class Slice, class Cache>
GreedyResult greedy_decode(const Model& model, Workspace<typename Model::backend>& ws,
                           const Slice& slice, Cache& cache, KvTarget target, int start_pos,
                           std::span<const std::int32_t> prompt, const GreedyOptions& opt) {
  GreedyResult r;
  if (opt.max_new <= 0) return r;
  r.ids.reserve(opt.max_new);
  std::span<const float> logits =
      forward(model, ws, slice, cache, target, start_pos, prompt, Logits::last);
  int pos = start_pos + static_cast<int>(prompt.size());
  const int vocab = model.config().vocab_size;
  for (;;) {
    const std::int32_t next = kernels::argmax(logits.data(), vocab);
    if (std::find(opt.stop_ids.begin(), opt.stop_ids.end(), next) != opt.stop_ids.end()) {
      r.stopped = true;
      r.stop_id = next;
      break;
    }
    r.ids.push_back(next);
    if (static_cast<int>(r.ids.size()) >= opt.max_new) break;
    logits = forward(model, ws, slice, cache, target, pos, std::span<const std::int32_t>(&r.ids.back(), 1),
                     Logits::last);
    ++pos;
  }
  return r;
}

}  // namespace baton
