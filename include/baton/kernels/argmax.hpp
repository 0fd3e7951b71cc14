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

BATON_HD inline ArgmaxPair argmax_better(ArgmaxPair a, ArgmaxPair b) {
  if (b.value > a.value || (b.value == a.value && b.id < a.id)) return b;
  return a;
}

BATON_HD inline std::int32_t argmax(const float* logits, int n) {
  ArgmaxPair best{logits[0], 0};
  for (int i = 1; i < n; ++i) best = argmax_better(best, ArgmaxPair{logits[i], i});
  return best.id;
}

}  // namespace baton::kernels
