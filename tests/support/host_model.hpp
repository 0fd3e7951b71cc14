// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Helpers shared by the host model tests: temp folders and a one-call greedy run.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "baton/model/decode.hpp"

namespace baton::test {

/// A fresh folder under the test temp dir, named for the caller.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path d = std::filesystem::path(BATON_TEST_TMP) / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

/// Loads nothing; runs prompt + greedy generation on slot 0 of a fresh cache (empty prefix).
template <class Cache, class Model, class Slice>
std::vector<std::int32_t> cached_greedy(const Model& model, const Slice& slice,
                                        const std::vector<std::int32_t>& prompt, int max_new,
                                        std::vector<std::int32_t> stop = {}) {
  Cache cache(model.config(), KvShape{.prefix_capacity = 0, .tail_capacity = 256, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<typename Model::backend> ws;
  return greedy_decode(model, ws, slice, cache, KvTarget::in_slot(0), 0,
                       std::span<const std::int32_t>(prompt),
                       GreedyOptions{max_new, std::move(stop)})
      .ids;
}

}  // namespace baton::test
