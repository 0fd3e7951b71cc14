// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Greedy choice: the largest logit, the lowest id on an exact tie.
#pragma once

#include <cstdint>

#include "baton/core/macros.hpp"

namespace baton::kernels {

/// A (value, id) candidate; `better` is the reduction operator a CUDA block reduce also uses,
/// so host and device agree on ties.
struct ArgmaxPair {
  float value;
  std::int32_t id;
};

/// NaN beats every number (lowest id among NaNs), so a NaN anywhere in the row is what the
/// reduction ends on and the caller sees it in the winning value: a plain `>` would skip NaN
/// and silently choose from the rest (or return id 0 for an all-NaN row).
BATON_HD inline ArgmaxPair argmax_better(ArgmaxPair a, ArgmaxPair b) {
  const bool a_nan = a.value != a.value, b_nan = b.value != b.value;
  if (a_nan || b_nan) return (b_nan && (!a_nan || b.id < a.id)) ? b : a;
  if (b.value > a.value || (b.value == a.value && b.id < a.id)) return b;
  return a;
}

/// The winner's id, or -1 when its value is not finite (a NaN anywhere in the row, or +Inf
/// on top): no token may be chosen from such logits.
BATON_HD inline std::int32_t argmax_id(ArgmaxPair best) {
  const float v = best.value;
  const bool finite = v == v && v - v == 0.0f;  // false for NaN and ±Inf (no <cmath> on device)
  return finite ? best.id : -1;
}

/// The largest logit's id, lowest on a tie; -1 for non-finite rows (argmax_id).
BATON_HD inline std::int32_t argmax(const float* logits, int n) {
  ArgmaxPair best{logits[0], 0};
  for (int i = 1; i < n; ++i) best = argmax_better(best, ArgmaxPair{logits[i], i});
  return argmax_id(best);
}

}  // namespace baton::kernels
