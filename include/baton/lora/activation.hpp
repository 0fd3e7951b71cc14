// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Where an activated LoRA (aLoRA) adapter applies: the absolute position its update
///        starts at ("activation start"), found from the invocation tokens, and which of a
///        forward's tokens that makes adapted. The one home of the gating rule: the host's
///        forward, the host grid's and CUDA's all ask adapted_from_token().
///
/// The rule is PEFT's (peft >= 0.18, `LoraConfig(alora_invocation_tokens=[...])`): in the token
/// stream it is given, PEFT looks for the *last* place where the whole invocation sequence
/// occurs, and adapts every token from the first invocation token on (the invocation itself is
/// adapted; every earlier token gets the base model's computation, so its K/V are the base's).
/// Without an occurrence nothing is adapted: the adapter behaves as the base model.
/// PEFT states the start as an offset counted back from the end of that stream; with the KV cache
/// that is the same as an absolute position, which is what baton keeps.
///
/// During generation PEFT finds the occurrence once, in the prompt given to generate(), and
/// keeps it for every generated token: each decode step adapts its new token when the prompt held
/// the invocation and never when it did not, even if the generated tokens later spell the
/// invocation. baton's decode loop does the same: the start is fixed when the prompt is prefilled
/// (model/decode.hpp) and every generated token, lying after it, is adapted.
#pragma once

#include <cstdint>
#include <limits>
#include <span>

#include "baton/core/error.hpp"
#include "baton/core/macros.hpp"

namespace baton {

/// The activation start of an adapter that applies to no token (an aLoRA whose invocation is
/// absent): no position reaches it.
inline constexpr int kAdapterNever = std::numeric_limits<int>::max();

/// The activation start a forward takes by default: 0 for a plain LoRA slice (every token
/// adapted); for an activated slice it is an error, since the forward alone cannot see the
/// tokens before the ones it appends (forward() says so).
inline constexpr int kAdapterFromSlice = -1;

/// The absolute position where the last occurrence of `invocation` starts in the stream
/// `context` followed by `tokens`, with `context` starting at position `base`; kAdapterNever
/// when the whole sequence occurs nowhere (an empty invocation occurs nowhere either: an
/// adapter config with one is refused at load). An occurrence may straddle the two spans.
inline int alora_start(std::span<const std::int32_t> context, std::span<const std::int32_t> tokens,
                       std::span<const std::int32_t> invocation, int base = 0) {
  const std::size_t m = invocation.size(), n = context.size() + tokens.size();
  if (m == 0 || m > n) return kAdapterNever;
  const auto at = [&](std::size_t i) {
    return i < context.size() ? context[i] : tokens[i - context.size()];
  };
  // From the end backwards: the first match found is the last occurrence.
  for (std::size_t s = n - m + 1; s-- > 0;) {
    std::size_t j = 0;
    while (j < m && at(s + j) == invocation[j]) ++j;
    if (j == m) return base + static_cast<int>(s);
  }
  return kAdapterNever;
}

/// alora_start over one span of tokens starting at position `base`.
inline int alora_start(std::span<const std::int32_t> tokens,
                       std::span<const std::int32_t> invocation, int base = 0) {
  return alora_start({}, tokens, invocation, base);
}

namespace detail {
/// The activation start given for `slice` is one a forward can use: a position, kAdapterNever,
/// or kAdapterFromSlice for a plain slice (an activated one's start depends on tokens the
/// forward does not see, so it must be stated).
template <class Slice>
void check_adapter_from(const Slice& slice, int adapter_from, const char* who) {
  BATON_CHECK(adapter_from >= 0 || adapter_from == kAdapterFromSlice, usage_error, who,
              ": activation start ", adapter_from, " is negative");
  BATON_CHECK(adapter_from != kAdapterFromSlice || !slice.activated(), usage_error, who,
              ": slice '", slice.name(),
              "' is an activated LoRA (alora_invocation_tokens): pass its activation start "
              "(LoraSlice::activation_start over every token before and in this forward; "
              "kAdapterNever applies it nowhere)");
}

}  // namespace detail

/// The gate: of `n` tokens at positions first_pos, first_pos + 1, ..., the adapter's update
/// applies to those at or after `start` — tokens [k, n) with k returned here (0: all, n: none).
BATON_HD constexpr int adapted_from_token(int first_pos, int n, int start) {
  if (start <= first_pos) return 0;
  // start - first_pos > 0 here; compared as long long so kAdapterNever cannot overflow.
  const long long k = static_cast<long long>(start) - first_pos;
  return k >= n ? n : static_cast<int>(k);
}

}  // namespace baton
