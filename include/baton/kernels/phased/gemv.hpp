// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The batch-1 matrix-vector product y = W x (+ bias) (+ y): bandwidth-bound, so every
///        weight byte is read once, 128 bits at a time, by one warp per row (coalesced across
///        lanes), widened to f32 in registers and accumulated in f32 (cuBLAS has no plain bf16
///        GEMV). Rows whose width or address does not allow 16-byte loads take a scalar loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "baton/core/dtype.hpp"
#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/phased/descriptor.hpp"

namespace baton::kernels {

namespace detail {
/// Copies 16 bytes (both addresses 16-byte aligned): one 128-bit load on the device.
BATON_HD inline void load16(const void* src, void* dst) {
#if defined(__CUDA_ARCH__)
  *static_cast<uint4*>(dst) = *static_cast<const uint4*>(src);
#else
  std::memcpy(dst, src, 16);
#endif
}
}  // namespace detail

template <StorageType W>
struct GemvKernel {
  static constexpr unsigned kThreads = 256;
  static constexpr int kRowsPerBlock = kThreads / grid::kWarpSize;
  static constexpr int kPhases = 2;
  static constexpr int kPack = 16 / static_cast<int>(sizeof(W));  ///< elements per 128 bits
  struct Args {
    const W* w = nullptr;         ///< [rows, cols], row-major
    const float* x = nullptr;     ///< [cols]
    float* y = nullptr;           ///< [rows]
    const float* bias = nullptr;  ///< [rows] or null
    int rows = 0;
    int cols = 0;
    int accumulate = 0;  ///< y += W x instead of y = W x
    int vectorized = 0;  ///< 128-bit loads (see can_vectorize)
    /// When set and `idle->tokens == 0`, the launch does nothing: a device-loop forward queued
    /// after the loop ended (model/device_loop.hpp) then reads no weights.
    const ForwardDesc* idle = nullptr;
  };
  struct Shared {
    grid::WarpSlots<kThreads> sums;
  };
  struct Regs {};

  static grid::LaunchConfig config(int rows) {
    return {grid::blocks_for(static_cast<std::size_t>(rows), kRowsPerBlock), 1, kThreads};
  }
  /// 16-byte loads need both operands 16-byte aligned and rows a whole number of 16 bytes.
  static bool can_vectorize(const W* w, const float* x, int cols) {
    const auto aligned = [](const void* p) {
      return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
    };
    return aligned(w) && aligned(x) && (static_cast<std::size_t>(cols) * sizeof(W)) % 16 == 0;
  }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if (a.idle && a.idle->tokens == 0) return;  // the same for every thread of the launch
    const int row = static_cast<int>(at.block_x) * kRowsPerBlock + static_cast<int>(at.warp());
    const int lane = static_cast<int>(at.lane());
    if constexpr (P == 0) {
      float s = 0.0f;
      if (row < a.rows) {
        const W* wr = a.w + static_cast<std::size_t>(row) * a.cols;
        if (a.vectorized) {
          for (int i = lane * kPack; i < a.cols; i += grid::kWarpSize * kPack) {
            alignas(16) W wv[kPack];
            alignas(16) float xv[kPack];
            detail::load16(wr + i, wv);
            for (int c = 0; c < kPack; c += 4) detail::load16(a.x + i + c, xv + c);
            for (int c = 0; c < kPack; ++c) s += widen(wv[c]) * xv[c];
          }
        } else {
          for (int i = lane; i < a.cols; i += grid::kWarpSize) s += widen(wr[i]) * a.x[i];
        }
      }
      grid::warp_sum(at, sh.sums, s);  // every lane takes part, also past the last row
    } else if (lane == 0 && row < a.rows) {
      float v = sh.sums.value[at.warp()];
      if (a.bias) v += a.bias[row];
      a.y[row] = a.accumulate ? a.y[row] + v : v;
    }
  }
};

}  // namespace baton::kernels
