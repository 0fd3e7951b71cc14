// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The LoRA update of one projection output element, for kernels that fuse it.
#pragma once

#include "baton/core/macros.hpp"

namespace baton::kernels {

/// The rank-r down-projection t = A x of one token (A row-major [r, in]).
BATON_HD inline void lora_down(const float* a, const float* x, int rank, int in, float* t) {
  for (int j = 0; j < rank; ++j) {
    float s = 0.0f;
    for (int i = 0; i < in; ++i) s += a[j * in + i] * x[i];
    t[j] = s;
  }
}

/// scale · (B t)[o] for one output element (B row-major [out, r]).
BATON_HD inline float lora_up(const float* b, const float* t, int rank, int o, float scale) {
  float s = 0.0f;
  for (int j = 0; j < rank; ++j) s += b[o * rank + j] * t[j];
  return scale * s;
}

}  // namespace baton::kernels
