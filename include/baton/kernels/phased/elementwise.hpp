// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Element-wise kernels over grid-stride loops: SwiGLU, a bias row added to every
///        token, and widening a stored matrix to f32 (the operand of an f32 GEMM in prefill).
#pragma once

#include <cstddef>

#include "baton/core/dtype.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/activation.hpp"

namespace baton::kernels {

/// Threads per block of the element-wise kernels, and the grid they are launched with.
inline constexpr unsigned kElementwiseThreads = 256;
inline grid::LaunchConfig elementwise_config(std::size_t n) {
  return {grid::blocks_for(n, kElementwiseThreads, 4096), 1, kElementwiseThreads};
}

namespace detail {
/// The grid-stride loop every element-wise kernel runs: f(i) for i in [0, n).
template <class F>
BATON_HD inline void grid_stride(const grid::ThreadIndex& at, std::size_t n, F&& f) {
  const std::size_t stride = static_cast<std::size_t>(at.grid_x) * at.threads;
  for (std::size_t i = static_cast<std::size_t>(at.block_x) * at.threads + at.thread; i < n;
       i += stride)
    f(i);
}
}  // namespace detail

/// act[t, i] = silu(gu[t, i]) * gu[t, F + i] for gate_up rows [gate | up].
struct SwigluKernel {
  static constexpr unsigned kThreads = kElementwiseThreads;
  static constexpr int kPhases = 1;
  struct Args {
    const float* gate_up = nullptr;  ///< [n, 2F]
    float* act = nullptr;            ///< [n, F]
    int tokens = 0;
    int ffn = 0;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config(int tokens, int ffn) {
    return elementwise_config(static_cast<std::size_t>(tokens) * ffn);
  }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    const std::size_t F = static_cast<std::size_t>(a.ffn);
    detail::grid_stride(at, static_cast<std::size_t>(a.tokens) * F, [&](std::size_t e) {
      const std::size_t t = e / F, i = e % F;
      a.act[e] = swiglu(a.gate_up[t * 2 * F + i], a.gate_up[t * 2 * F + F + i]);
    });
  }
};

/// y[t, j] += bias[j] for j < cols, rows of stride ld.
struct BiasAddKernel {
  static constexpr unsigned kThreads = kElementwiseThreads;
  static constexpr int kPhases = 1;
  struct Args {
    float* y = nullptr;
    const float* bias = nullptr;
    int rows = 0;
    int cols = 0;
    int ld = 0;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config(int rows, int cols) {
    return elementwise_config(static_cast<std::size_t>(rows) * cols);
  }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    const std::size_t C = static_cast<std::size_t>(a.cols);
    detail::grid_stride(at, static_cast<std::size_t>(a.rows) * C,
                        [&](std::size_t e) { a.y[(e / C) * a.ld + e % C] += a.bias[e % C]; });
  }
};

/// out[i] = widen(in[i]).
template <StorageType S>
struct WidenKernel {
  static constexpr unsigned kThreads = kElementwiseThreads;
  static constexpr int kPhases = 1;
  struct Args {
    const S* in = nullptr;
    float* out = nullptr;
    std::size_t n = 0;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config(std::size_t n) { return elementwise_config(n); }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    detail::grid_stride(at, a.n, [&](std::size_t i) { a.out[i] = widen(a.in[i]); });
  }
};

}  // namespace baton::kernels
