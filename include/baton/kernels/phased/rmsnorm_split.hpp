// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief RMSNorm of hidden-size rows over several blocks per row: each block of
///        RmsSquaresKernel sums the squares of one slice of a row, then each block of
///        RmsScaleKernel adds up its row's slice sums (every block of the row the same ones)
///        and scales its own slice, with kernels::rms_inverse, the host's math.
///
/// Why split: with one block per row (RmsNormKernel), a decode step's norm of a 4096-wide row
/// is 128 threads on one SM going through 32 elements each, twice (squares, then scale), while
/// the other SMs wait between two GEMVs. Split, the row's slices run on as many SMs at once,
/// for one more (short) launch. RmsNormKernel stays for Qwen3's per-head q/k norm, whose rows
/// are one head (64-256 elements) and many per token.
#pragma once

#include <cstddef>

#include "baton/core/dtype.hpp"
#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/norm.hpp"

namespace baton::kernels {

/// Threads per block of both kernels; also the most slices a row has (one per thread of the
/// block that adds up the slice sums).
inline constexpr unsigned kRmsSplitThreads = 128;

/// How a row of `n` (>= 1) elements is split: at least four elements per thread (a short row
/// stays in one block), at most one slice per thread of the scale kernel.
constexpr grid::Slices rms_split(int n) {
  return grid::slices_for(n, 4 * static_cast<int>(kRmsSplitThreads),
                          static_cast<int>(kRmsSplitThreads));
}

/// The launch of both kernels: (slices, rows) blocks (rows <= grid::kMaxGridY).
inline grid::LaunchConfig rms_split_config(int rows, int n) {
  return {static_cast<unsigned>(rms_split(n).count), static_cast<unsigned>(rows), kRmsSplitThreads};
}

/// squares[row * slices + s] = the sum of x[row * x_stride + i]^2 over slice s.
struct RmsSquaresKernel {
  static constexpr unsigned kThreads = kRmsSplitThreads;
  static constexpr int kPhases = 2;
  struct Args {
    const float* x = nullptr;
    long x_stride = 0;
    int n = 0;                 ///< elements per row
    int chunk = 0;             ///< rms_split(n).chunk
    float* squares = nullptr;  ///< [rows, slices]
  };
  struct Shared {
    grid::BlockReduceStorage<float, kThreads> squares;
  };
  struct Regs {};
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if constexpr (P == 0) {
      const float* x = a.x + static_cast<long>(at.block_y) * a.x_stride;
      const grid::SliceRange s = grid::slice_range(a.n, a.chunk, at.block_x);
      float ss = 0.0f;
      for (int i = s.begin + static_cast<int>(at.thread); i < s.end; i += kThreads)
        ss += x[i] * x[i];
      grid::block_reduce(at, sh.squares, ss, grid::SumOp{});
    } else if (at.thread == 0) {
      a.squares[static_cast<std::size_t>(at.block_y) * at.grid_x + at.block_x] = sh.squares.result;
    }
  }
};

/// y[row, i] = x[row, i] * rms_inverse(sum of the row's slice sums) * w[i] over slice
/// block_x of row block_y (y may equal x).
template <class W>
struct RmsScaleKernel {
  static constexpr unsigned kThreads = kRmsSplitThreads;
  static constexpr int kPhases = 2;
  struct Args {
    const float* x = nullptr;
    float* y = nullptr;
    long x_stride = 0;
    long y_stride = 0;
    int n = 0;
    int chunk = 0;                   ///< rms_split(n).chunk
    const float* squares = nullptr;  ///< RmsSquaresKernel's, [rows, slices]
    const W* w = nullptr;
    float eps = 0.0f;
  };
  struct Shared {
    grid::BlockReduceStorage<float, kThreads> total;
  };
  struct Regs {};
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if constexpr (P == 0) {
      const float* row = a.squares + static_cast<std::size_t>(at.block_y) * at.grid_x;
      grid::block_reduce(at, sh.total, at.thread < at.grid_x ? row[at.thread] : 0.0f,
                         grid::SumOp{});
    } else {
      const float* x = a.x + static_cast<long>(at.block_y) * a.x_stride;
      float* y = a.y + static_cast<long>(at.block_y) * a.y_stride;
      const float inv = rms_inverse(sh.total.result, a.n, a.eps);
      const grid::SliceRange s = grid::slice_range(a.n, a.chunk, at.block_x);
      for (int i = s.begin + static_cast<int>(at.thread); i < s.end; i += kThreads)
        y[i] = x[i] * inv * widen(a.w[i]);
    }
  }
};

}  // namespace baton::kernels
