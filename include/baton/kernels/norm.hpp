// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief RMSNorm math, shared by the host loops and the CUDA kernels.
#pragma once

#include <cmath>

#include "baton/core/dtype.hpp"
#include "baton/core/macros.hpp"

namespace baton::kernels {

/// 1 / sqrt(mean(x^2) + eps) from a row's sum of squares (accumulated in f32).
BATON_HD inline float rms_inverse(float sum_squares, int n, float eps) {
  return 1.0f / sqrtf(sum_squares / static_cast<float>(n) + eps);
}

/// y = x * inv * w for one row of `n` elements (host reference loop; the CUDA kernel
/// reduces the sum of squares across a block and applies the same two functions).
template <class W>
BATON_HD inline void rmsnorm_row(const float* x, const W* w, float* y, int n, float eps) {
  float ss = 0.0f;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  const float inv = rms_inverse(ss, n, eps);
  for (int i = 0; i < n; ++i) y[i] = x[i] * inv * widen(w[i]);
}

}  // namespace baton::kernels
