// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The batch-1 matrix-vector product y = W x (+ bias) (+ y): bandwidth-bound, so every
///        weight byte is read once, 128 bits at a time, by one warp per row (coalesced across
///        lanes), widened to f32 in registers and accumulated in f32 (cuBLAS has no plain bf16
///        GEMV). Rows whose width or address does not allow 16-byte loads take a scalar loop.
///
/// Why four loads in flight per lane. Reading at HBM speed needs enough bytes in flight to
/// cover the memory latency (Little's law): at H200's ~4.8 TB/s and an assumed 0.8 us under
/// load (decode_bench says why), about 3.8 MB, ~29 KB per SM over 132 SMs. The matrices with
/// the fewest rows decide: the 8B model's o_proj and down_proj have 4096 rows, so 512 blocks of 8
/// rows, ~3.9 per SM, all resident in one wave with nothing queued behind them to hide the
/// latency. One 16-byte load per lane gives them 3.9 x 256 x 16 B ~ 16 KB per SM, about half
/// the need; `kUnroll` = 4 independent loads (each with its own accumulator, so no add waits on
/// another load) give ~64 KB, enough with room for a longer latency. Several rows per warp
/// would not help those matrices: it divides the blocks by as much as it multiplies the loads
/// per warp. Deeper unrolling costs registers, and the 512 blocks must stay at 4 resident per
/// SM to run in one wave (64 registers per thread at most): ptxas -v for sm_90 (nvcc 13) gives
/// 38 (bf16), 43 (f16) and 44 (f32) with the four weight loads issued back to back in the PTX.
/// decode_bench reports the resident blocks and the bytes in flight per matrix from the
/// occupancy calculator, next to the measured bandwidth.
///
/// The grid is capped at 65,535 blocks (grid::blocks_for); rows past 65,535 x 8 are reached by
/// rounds (grid/grid.hpp): block b of round r takes the rows of group r * grid_x + b.
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
  static constexpr int kUnroll = 4;  ///< 16-byte weight loads in flight per lane (file comment)
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
  /// Enough rounds for every group of kRowsPerBlock rows (grid/grid.hpp).
  static unsigned rounds(const grid::LaunchConfig& cfg, const Args& a) {
    const std::size_t rows = a.rows > 0 ? static_cast<std::size_t>(a.rows) : 0;
    return grid::rounds_for((rows + kRowsPerBlock - 1) / kRowsPerBlock, cfg.grid_x);
  }
  /// 16-byte loads need both operands 16-byte aligned and rows a whole number of 16 bytes.
  static bool can_vectorize(const W* w, const float* x, int cols) {
    const auto aligned = [](const void* p) {
      return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
    };
    return aligned(w) && aligned(x) && (static_cast<std::size_t>(cols) * sizeof(W)) % 16 == 0;
  }
  /// 16-byte weight loads one lane has in flight at a time on a row of `cols` (0 on the
  /// scalar path, whose loads are narrower): what decode_bench's bytes-in-flight figure uses.
  static int loads_in_flight(int cols, bool vectorized) {
    if (!vectorized) return 0;
    const int per_lane = (cols / kPack + grid::kWarpSize - 1) / static_cast<int>(grid::kWarpSize);
    return per_lane < kUnroll ? per_lane : kUnroll;
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
        const W* wr = a.w + static_cast<std::size_t>(row) * static_cast<std::size_t>(a.cols);
        s = a.vectorized ? dot_packed(wr, a.x, a.cols, lane) : dot_scalar(wr, a.x, a.cols, lane);
      }
      grid::warp_sum(at, sh.sums, s);  // every lane takes part, also past the last row
    } else if (lane == 0 && row < a.rows) {
      float v = sh.sums.value[at.warp()];
      if (a.bias) v += a.bias[row];
      a.y[row] = a.accumulate ? a.y[row] + v : v;
    }
  }

 private:
  /// kPack loaded weights times the same elements of x (16-byte aligned).
  BATON_HD static float dot_pack(const W* wv, const float* x) {
    alignas(16) float xv[kPack];
    for (int c = 0; c < kPack; c += 4) detail::load16(x + c, xv + c);
    float s = 0.0f;
    for (int c = 0; c < kPack; ++c) s += widen(wv[c]) * xv[c];
    return s;
  }

  /// One lane's share of a 16-byte-aligned row: packs lane, lane + 32, ... The main loop
  /// issues kUnroll independent loads before using any; the remainder loop takes the last
  /// packs (fewer than kUnroll x 32) one at a time.
  BATON_HD static float dot_packed(const W* wr, const float* x, int cols, int lane) {
    constexpr int kStride = static_cast<int>(grid::kWarpSize);  // packs between a lane's loads
    const int packs = cols / kPack;
    float acc[kUnroll] = {};
    int p = lane;
    for (; p + (kUnroll - 1) * kStride < packs; p += kUnroll * kStride) {
      alignas(16) W wv[kUnroll][kPack];
      for (int u = 0; u < kUnroll; ++u) detail::load16(wr + (p + u * kStride) * kPack, wv[u]);
      for (int u = 0; u < kUnroll; ++u) acc[u] += dot_pack(wv[u], x + (p + u * kStride) * kPack);
    }
    for (; p < packs; p += kStride) {
      alignas(16) W wv[kPack];
      detail::load16(wr + p * kPack, wv);
      acc[0] += dot_pack(wv, x + p * kPack);
    }
    float s = 0.0f;
    for (int u = 0; u < kUnroll; ++u) s += acc[u];
    return s;
  }

  /// Rows that are not a whole number of 16 bytes, or not 16-byte aligned: one element per
  /// lane at a time.
  BATON_HD static float dot_scalar(const W* wr, const float* x, int cols, int lane) {
    float s = 0.0f;
    for (int i = lane; i < cols; i += grid::kWarpSize) s += widen(wr[i]) * x[i];
    return s;
  }
};

}  // namespace baton::kernels
