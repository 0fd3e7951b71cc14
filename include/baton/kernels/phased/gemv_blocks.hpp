// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The batch-1 matrix-vector product y = W x (+ bias) (+ y) for a matrix of Q8_0 / Q4_0
///        blocks (core/quant.hpp), and the dequantization of a tile of rows to f32 (for cuBLAS's
///        multi-token products): GemvKernel's shape (gemv.hpp) for the block formats.
///
/// One warp per row; lane l takes blocks l, l + 32, ... of the row, dequantizes each in
/// registers and multiplies it with the f32 activations. The activations stay f32 here (the
/// host's decode kernels quantize them to 8 bits, host_quant.hpp): a GPU reads its weights far
/// faster than it multiplies them only when it is short of arithmetic, which decode is not, so
/// the rounding would buy nothing. A 34- or 18-byte block is not 16-byte aligned, so the loads
/// are the block's own (2-byte scale, then its bytes); coalescing is by neighbouring lanes
/// reading neighbouring blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton/core/quant.hpp"
#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/phased/descriptor.hpp"
#include "baton/kernels/phased/elementwise.hpp"

namespace baton::kernels {

/// One block's 32 weights times x[0, 32).
template <class Blk>
BATON_HD float block_dot(const Blk& q, const float* x) {
  float s = 0.0f;
  for (int i = 0; i < kQuantBlock; ++i)
    s += static_cast<float>(block_traits<Blk>::weight(q, i)) * x[i];
  return widen(q.d) * s;
}

struct GemvBlocksKernel {
  static constexpr unsigned kThreads = 256;
  static constexpr int kRowsPerBlock = kThreads / grid::kWarpSize;
  static constexpr int kPhases = 2;
  struct Args {
    BlockView w;                  ///< [rows, cols] in Q8_0 or Q4_0 blocks (cols % 32 == 0)
    const float* x = nullptr;     ///< [cols]
    float* y = nullptr;           ///< [rows]
    const float* bias = nullptr;  ///< [rows] or null
    int rows = 0;
    int cols = 0;
    int accumulate = 0;  ///< y += W x instead of y = W x
    /// When set and `idle->tokens == 0`, the launch does nothing (gemv.hpp says why).
    const ForwardDesc* idle = nullptr;
  };
  struct Shared {
    grid::WarpSlots<kThreads> sums;
  };
  struct Regs {};

  static grid::LaunchConfig config(int rows) {
    return {grid::blocks_for(static_cast<std::size_t>(rows), kRowsPerBlock), 1, kThreads};
  }
  static unsigned rounds(const grid::LaunchConfig& cfg, const Args& a) {
    const std::size_t rows = a.rows > 0 ? static_cast<std::size_t>(a.rows) : 0;
    return grid::rounds_for((rows + kRowsPerBlock - 1) / kRowsPerBlock, cfg.grid_x);
  }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if (a.idle && a.idle->tokens == 0) return;  // the same for every thread of the launch
    const long long group = static_cast<long long>(at.round) * at.grid_x + at.block_x;
    const long long row = group * kRowsPerBlock + at.warp();
    const int lane = static_cast<int>(at.lane());
    if constexpr (P == 0) {
      float s = 0.0f;
      if (row < a.rows) {
        const std::size_t cols = static_cast<std::size_t>(a.cols);
        const std::uint8_t* r =
            a.w.data + static_cast<std::size_t>(row) * block_row_bytes(a.w.format, cols);
        visit_format(a.w.format, [&](auto t) {
          using T = decltype(t);
          if constexpr (T::quantized) {  // (f16 matrices take GemvKernel<f16>)
            const auto* blocks = reinterpret_cast<const typename T::block*>(r);
            for (int b = lane; b < a.cols / kQuantBlock; b += static_cast<int>(grid::kWarpSize))
              s += block_dot(blocks[b], a.x + static_cast<std::size_t>(b) * kQuantBlock);
          }
        });
      }
      grid::warp_sum(at, sh.sums, s);  // every lane takes part, also past the last row
    } else if (lane == 0 && row < a.rows) {
      float v = sh.sums.value[at.warp()];
      if (a.bias) v += a.bias[row];
      a.y[row] = a.accumulate ? a.y[row] + v : v;
    }
  }
};

/// out[r, c] = W[r, c] in f32 for the `rows` rows of a block matrix of `cols` columns (the
/// CUDA backend's multi-token products multiply the dequantized tile with cuBLAS).
struct DequantizeKernel {
  static constexpr unsigned kThreads = kElementwiseThreads;
  static constexpr int kPhases = 1;
  struct Args {
    BlockView w;
    float* out = nullptr;
    std::size_t rows = 0, cols = 0;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config(std::size_t n) { return elementwise_config(n); }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    detail::grid_stride(at, a.rows * a.cols, [&](std::size_t e) {
      a.out[e] = block_element(a.w, e / a.cols, e % a.cols, a.cols);
    });
  }
};

}  // namespace baton::kernels
