// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Helpers of the tests that compare two forwards on llama.cpp's golden models: a copy of a
// golden model with a longer position limit (so a slot can be long enough for its attention to
// split in several parts), and the relative difference of two rows of logits.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "support/test_paths.hpp"

namespace baton::test {

/// Golden model `name` copied under BATON_TEST_TMP with max_position_embeddings = `limit`
/// (nothing else changes; the golden models have no rope scaling), in a folder of `user`'s own
/// (tests run side by side: one must not rewrite a file another is reading).
inline std::filesystem::path golden_with_positions(const std::string& name, int limit,
                                                   const std::string& user) {
  const std::filesystem::path root = BATON_GOLDEN_DIR;
  const std::filesystem::path dir =
      std::filesystem::path(BATON_TEST_TMP) / (user + "-" + name + "-" + std::to_string(limit));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(root / name / "model.safetensors", dir / "model.safetensors",
                             std::filesystem::copy_options::overwrite_existing);
  std::ifstream in(root / name / "config.json");
  nlohmann::json cfg = nlohmann::json::parse(in);
  cfg["max_position_embeddings"] = limit;
  std::ofstream(dir / "config.json") << cfg.dump();
  return dir;
}

/// The largest |a - b| / max(1, |b|) over two rows of logits of the same size.
inline double worst_relative_diff(std::span<const float> a, std::span<const float> b) {
  REQUIRE(a.size() == b.size());
  double w = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    w = std::max(w, std::abs(static_cast<double>(a[i]) - b[i]) /
                        std::max(1.0, std::abs(static_cast<double>(b[i]))));
  return w;
}

}  // namespace baton::test
