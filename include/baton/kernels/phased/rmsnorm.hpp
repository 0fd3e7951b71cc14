// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief RMSNorm of rows, one block per row: the block sums the squares, then every thread
///        scales its elements (kernels::rms_inverse, the host's math). Covers the model's norms
///        (one row per token) and Qwen3's per-head q/k norm (one row per head of a token, the
///        first `split` heads of each token with one weight, the rest with another).
#pragma once

#include <cstddef>

#include "baton/core/dtype.hpp"
#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/norm.hpp"

namespace baton::kernels {

template <class W>
struct RmsNormKernel {
  static constexpr unsigned kThreads = 128;
  static constexpr int kPhases = 2;
  /// Row r is head (r % heads) of token (r / heads): elements at
  /// x + (r / heads) * x_stride + (r % heads) * n, likewise for y (y may equal x).
  struct Args {
    const float* x = nullptr;
    float* y = nullptr;
    long x_stride = 0;
    long y_stride = 0;
    int n = 0;      ///< elements per row
    int heads = 1;  ///< rows per token
    int split = 1;  ///< heads [0, split) use w_first, [split, heads) use w_rest
    const W* w_first = nullptr;
    const W* w_rest = nullptr;
    float eps = 0.0f;
  };
  struct Shared {
    grid::BlockReduceStorage<float, kThreads> squares;
  };
  struct Regs {};
  static grid::LaunchConfig config(int rows) { return {static_cast<unsigned>(rows), 1, kThreads}; }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    const int token = static_cast<int>(at.block_x) / a.heads;
    const int head = static_cast<int>(at.block_x) % a.heads;
    const float* x = a.x + token * a.x_stride + static_cast<long>(head) * a.n;
    if constexpr (P == 0) {
      float ss = 0.0f;
      for (int i = static_cast<int>(at.thread); i < a.n; i += kThreads) ss += x[i] * x[i];
      grid::block_reduce(at, sh.squares, ss, grid::SumOp{});
    } else {
      float* y = a.y + token * a.y_stride + static_cast<long>(head) * a.n;
      const W* w = head < a.split ? a.w_first : a.w_rest;
      const float inv = rms_inverse(sh.squares.result, a.n, a.eps);
      for (int i = static_cast<int>(at.thread); i < a.n; i += kThreads) {
        y[i] = x[i] * inv * widen(w[i]);
      }
    }
  }
};

}  // namespace baton::kernels
