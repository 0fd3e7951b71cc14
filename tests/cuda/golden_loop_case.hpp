// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// What the device-loop and hand-off tests on the GPU share: golden qwen-c's folder, the
// prefix and request ids they decode, and the cache layout (K/V in f32, head_dim 8).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "baton/kv/layout.hpp"
#include "support/golden_runs.hpp"
#include "support/test_paths.hpp"

namespace baton::test::golden_loop {

using L = layout::HeadMajor<f32, 8>;
inline const std::vector<std::int32_t> kPrefix = {5, 77, 300, 12, 9, 150, 42, 7};
inline const std::vector<std::int32_t> kRequest = {11, 200, 13, 30, 310};

inline std::filesystem::path golden() { return BATON_GOLDEN_DIR; }

}  // namespace baton::test::golden_loop
