// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Dot product of a stored weight row (f32/bf16/f16) with an f32 vector, f32 accumulate.
#pragma once

#include "baton/core/dtype.hpp"
#include "baton/core/macros.hpp"

namespace baton::kernels {

/// Eight partial sums break the add dependency chain so the compiler vectorizes the loop; the
/// widening to f32 happens in registers, so 16-bit weights are read as 16-bit.
template <class W>
BATON_HD inline float dot_row(const W* BATON_RESTRICT w, const float* BATON_RESTRICT x, int n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) acc[j] += widen(w[i + j]) * x[i + j];
  }
  for (; i < n; ++i) acc[0] += widen(w[i]) * x[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace baton::kernels
