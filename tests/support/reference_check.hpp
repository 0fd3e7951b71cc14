// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The model-against-reference check shared by test_model and test_family: write a tiny model
// (and adapter), load it through a family, compare every logits row of one prefill with the
// naive reference, and cached greedy decode with the reference's no-cache decode.
#pragma once

#include <doctest/doctest.h>

#include <span>
#include <string>
#include <vector>

#include "baton/model/host_forward.hpp"
#include "reference/naive_model.hpp"
#include "support/host_model.hpp"
#include "support/tiny_model.hpp"

namespace baton::test {

/// Runs the two checks for `tm` (+ `ta`) in storage S, cache type Cache (whose backend runs
/// the model) and family F; logits must be within `tol` of the reference. Returns the largest
/// |logit - reference|.
template <class Cache, class S, class F = family::Qwen2>
double check_against_reference(const TinyModel& tm, const TinyAdapter* ta, const std::string& tag,
                               double tol) {
  using B = typename Cache::backend;
  const auto dir = fresh_dir("model_" + tag);
  write_tiny_model(tm, dir / "model");
  const auto model = load_model<B, S, F>(dir / "model");
  auto slice = LoraSlice<16, B>::none(model.config());
  if (ta) {
    write_tiny_adapter(*ta, dir / "adapter");
    slice = LoraSlice<16, B>::load(dir / "adapter", model);
  }
  const NaiveModel ref(tm, ta);
  const auto prompt = test_prompt(tm.cfg.vocab_size, 13, 5);

  // Every position's logits from one prefill.
  Cache cache(model.config(), KvShape{.prefix_capacity = 0, .tail_capacity = 64, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<B> ws;
  const auto got = forward(model, ws, slice, cache, KvTarget::in_slot(0), 0,
                           std::span<const std::int32_t>(prompt), Logits::all);
  const auto want = ref.logits(std::vector<int>(prompt.begin(), prompt.end()));
  const double max_diff = max_logit_diff(got, want, tm.cfg.vocab_size);
  INFO(tag << ": max |logit - reference| = " << max_diff);
  CHECK(max_diff < tol);

  // Cached greedy decode equals the no-cache reference decode, token for token.
  const auto cached = cached_greedy<Cache>(model, slice, prompt, 12);
  const auto refd = ref.greedy(std::vector<int>(prompt.begin(), prompt.end()), 12);
  CHECK(std::vector<int>(cached.begin(), cached.end()) == refd);
  return max_diff;
}

}  // namespace baton::test
