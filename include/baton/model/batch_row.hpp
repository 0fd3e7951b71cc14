// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief BatchRow: one row of a batched forward — its own adapter, cache target, position
///        and tokens (model/forward_batch.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "baton/kv/kv_buffer.hpp"

namespace baton {

/// One row of a batched forward: `tokens` appended to `target` of `cache` at `position` (the
/// cache checks it, as forward() does), through `slice` (null: the base model alone). With
/// `logits`, the row's last token gives a row of logits.
template <class Slice, class Cache>
struct BatchRow {
  const Slice* slice = nullptr;
  Cache* cache = nullptr;
  KvTarget target = KvTarget::prefix();
  int position = 0;
  std::span<const std::int32_t> tokens;
  bool logits = true;
};

}  // namespace baton
