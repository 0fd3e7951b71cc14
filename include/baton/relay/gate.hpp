// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Gates: predicates on the last stage's output that decide whether the relay passes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace baton {

/// A gate sees the gating stage's output ids and says pass (true) or fail.
using Gate = std::function<bool(std::span<const std::int32_t>)>;

/// Passes when the output begins with `prefix`.
inline Gate starts_with(std::vector<std::int32_t> prefix) {
  return [p = std::move(prefix)](std::span<const std::int32_t> out) {
    return out.size() >= p.size() && std::equal(p.begin(), p.end(), out.begin());
  };
}

/// Passes when `needle` occurs anywhere in the output (an empty needle always passes).
inline Gate contains(std::vector<std::int32_t> needle) {
  return [n = std::move(needle)](std::span<const std::int32_t> out) {
    return std::search(out.begin(), out.end(), n.begin(), n.end()) != out.end();
  };
}

/// A gate that never passes: run every cycle (benchmarks, fixed-depth relays).
inline Gate never() {
  return [](std::span<const std::int32_t>) { return false; };
}

}  // namespace baton
