// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Helpers shared by the host model tests: temp folders and a one-call greedy run.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "baton/model/decode.hpp"
#include "baton/model/host_forward.hpp"
#include "support/test_paths.hpp"

namespace baton::test {

/// A fresh folder under the test temp dir, named for the caller.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path d = std::filesystem::path(BATON_TEST_TMP) / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

/// Deterministic prompt ids spread over the vocabulary (`seed` picks the sequence).
inline std::vector<std::int32_t> test_prompt(int vocab, int n, unsigned seed) {
  std::vector<std::int32_t> p(n);
  for (int i = 0; i < n; ++i)
    p[i] = static_cast<std::int32_t>((seed * 7919u + i * 104729u) % vocab);
  return p;
}

/// max |got[t * vocab + v] - want[t][v]| over every row of `want`.
inline double max_logit_diff(std::span<const float> got,
                             const std::vector<std::vector<double>>& want, int vocab) {
  double worst = 0;
  for (std::size_t t = 0; t < want.size(); ++t)
    for (int v = 0; v < vocab; ++v)
      worst = std::max(worst, std::abs(got[t * vocab + v] - want[t][v]));
  return worst;
}

/// Loads nothing; runs prompt + greedy generation on slot 0 of a fresh cache (empty prefix).
template <class Cache, class Model, class Slice>
std::vector<std::int32_t> cached_greedy(const Model& model, const Slice& slice,
                                        const std::vector<std::int32_t>& prompt, int max_new,
                                        std::vector<std::int32_t> stop = {}) {
  // 256 positions, or fewer where the model's max_position_embeddings is smaller.
  const int capacity = static_cast<int>(std::min<long long>(256, model.config().max_positions()));
  Cache cache(model.config(), KvShape{.prefix_capacity = 0, .tail_capacity = capacity, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<typename Model::backend> ws;
  return greedy_decode(model, ws, slice, cache, KvTarget::in_slot(0), 0,
                       std::span<const std::int32_t>(prompt),
                       DecodeOptions{max_new, std::move(stop)})
      .ids;
}

}  // namespace baton::test
