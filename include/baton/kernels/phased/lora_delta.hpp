// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The LoRA update y += s · B (A x) of one projection, as two kernels: the shrink
///        u = A x (one block per (token, rank row), a block-wide dot product) and the expand
///        y += s · B u (one thread per output element, kernels::lora_up). Rank <= 256
///        (LoraSlice's bound), so u is small: [tokens, rank] floats of workspace.
#pragma once

#include <cstddef>

#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/lora.hpp"

namespace baton::kernels {

struct LoraShrinkKernel {
  static constexpr unsigned kThreads = 128;
  static constexpr int kPhases = 2;
  struct Args {
    const float* a = nullptr;  ///< [rank, in], row-major
    const float* x = nullptr;  ///< [n, ldx]
    int ldx = 0;
    int in = 0;
    int rank = 0;
    float* u = nullptr;  ///< [n, rank]
  };
  struct Shared {
    grid::BlockReduceStorage<float, kThreads> dot;
  };
  struct Regs {};
  static grid::LaunchConfig config(int tokens, int rank) {
    return {static_cast<unsigned>(tokens), static_cast<unsigned>(rank), kThreads};
  }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    const std::size_t t = at.block_x;
    const int j = static_cast<int>(at.block_y);
    if constexpr (P == 0) {
      const float* row = a.a + static_cast<std::size_t>(j) * a.in;
      const float* x = a.x + t * a.ldx;
      float s = 0.0f;
      for (int i = static_cast<int>(at.thread); i < a.in; i += kThreads) s += row[i] * x[i];
      grid::block_reduce(at, sh.dot, s, grid::SumOp{});
    } else if (at.thread == 0) {
      a.u[t * a.rank + j] = sh.dot.result;
    }
  }
};

struct LoraExpandKernel {
  static constexpr unsigned kThreads = 128;
  static constexpr int kPhases = 1;
  struct Args {
    const float* b = nullptr;  ///< [out, rank], row-major
    const float* u = nullptr;  ///< [n, rank]
    int rank = 0;
    int out = 0;
    float scale = 0.0f;
    float* y = nullptr;  ///< [n, ldy]: columns [0, out) are updated
    int ldy = 0;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config(int tokens, int out) {
    return {grid::blocks_for(static_cast<std::size_t>(out), kThreads),
            static_cast<unsigned>(tokens), kThreads};
  }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    const std::size_t t = at.block_y;
    const int o = static_cast<int>(at.block_x * kThreads + at.thread);
    if (o < a.out) a.y[t * a.ldy + o] += lora_up(a.b, a.u + t * a.rank, a.rank, o, a.scale);
  }
};

}  // namespace baton::kernels
