// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief BatchRow: one row of a batched forward — its own adapter, cache target, position
///        and tokens (model/forward_batch.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "baton/kv/kv_buffer.hpp"
#include "baton/lora/activation.hpp"

namespace baton {

/// One row of a batched forward: `tokens` appended to `target` of `cache` at `position` (the
/// cache checks it, as forward() does), through `slice` (null: the base model alone). With
/// `logits`, the row's last token gives a row of logits. `adapter_from`: the activation start
/// of an activated slice (lora/activation.hpp: the update applies to the row's tokens at
/// positions >= it; kAdapterNever: to none); kAdapterFromSlice, for a plain slice only: all.
template <class Slice, class Cache>
struct BatchRow {
  const Slice* slice = nullptr;
  Cache* cache = nullptr;
  KvTarget target = KvTarget::prefix();
  int position = 0;
  std::span<const std::int32_t> tokens;
  bool logits = true;
  int adapter_from = kAdapterFromSlice;
};

/// The LoRA runs of rows whose tokens lie one after another (a batched forward's activations):
/// calls f(slice, first, count) for each run of tokens [first, first + count) that one adapter
/// updates. A row's adapted tokens are a suffix of its own (adapted_from_token), so a run joins
/// neighbouring rows with the same slice as long as each next row is adapted from its first
/// token; one product per run reads each adapter once for rows ordered by adapter. Rows without
/// a slice, and rows none of whose tokens are adapted, add nothing.
template <class Slice, class Cache, class F>
void for_each_lora_run(std::span<const BatchRow<Slice, Cache>> rows, F&& f) {
  const auto size = [](const BatchRow<Slice, Cache>& r) {
    return static_cast<int>(r.tokens.size());
  };
  const auto skip = [&](const BatchRow<Slice, Cache>& r) {
    return adapted_from_token(r.position, size(r), r.adapter_from);
  };
  int t0 = 0;
  for (std::size_t i = 0; i < rows.size();) {
    const Slice* slice = rows[i].slice;
    const int first = t0 + skip(rows[i]);
    int end = t0 + size(rows[i]);
    for (++i; i < rows.size() && rows[i].slice == slice && skip(rows[i]) == 0; ++i)
      end += size(rows[i]);
    if (slice != nullptr && first < end) f(*slice, first, end - first);
    t0 = end;
  }
}

}  // namespace baton
