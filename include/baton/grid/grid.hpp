// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Phased kernels: a kernel body written as BATON_HD phases over explicit (block,
///        thread) indices, with a block barrier between consecutive phases, so the same body
///        runs as a CUDA kernel (grid/device_grid.cuh) and on the host grid (grid/host_grid.hpp).
///
/// A phased kernel K is a struct with
///   - `kThreads`: threads per block (a multiple of the warp size; CUB's block reductions
///     take it as a compile-time value), and `kPhases`: how many phases;
///   - `Args`: plain data passed by value to every thread (a kernel argument on the device);
///   - `Shared`: the block's shared memory (a trivial type: CUDA gives `__shared__` memory no
///     constructor, and the host grid fills it with a NaN pattern before each block, so a
///     phase that reads shared memory nobody wrote fails its test here);
///   - `Regs`: one thread's values that live across phases (registers on the device; one
///     instance per thread on the host grid, poisoned the same way);
///   - `template <int P> static BATON_HD void phase(const ThreadIndex&, Shared&, Regs&,
///     const Args&)`: phase P of one thread. Every thread runs every phase (no early return:
///     a barrier follows each phase), and a value written to shared memory in phase P may be
///     read by other threads from phase P + 1 on.
/// Kernels never read threadIdx/blockIdx: the indices come in as arguments (as CuTe does),
/// which is what lets the host execute the same body.
#pragma once

#include <concepts>
#include <cstddef>
#include <type_traits>

#include "baton/core/error.hpp"
#include "baton/core/macros.hpp"

namespace baton::grid {

inline constexpr unsigned kWarpSize = 32;

/// Static shared memory a block may use without opting in to more (the CUDA default limit).
inline constexpr std::size_t kMaxStaticShared = 48 * 1024;

/// A launch: a 2-D grid of 1-D blocks. Both runners take the same value.
struct LaunchConfig {
  unsigned grid_x = 1;
  unsigned grid_y = 1;
  unsigned block = 1;  ///< threads per block: must equal the kernel's kThreads
};

/// The indices one thread of a launch sees (blockIdx, gridDim, threadIdx, blockDim).
struct ThreadIndex {
  unsigned block_x = 0;
  unsigned block_y = 0;
  unsigned grid_x = 1;
  unsigned grid_y = 1;
  unsigned thread = 0;
  unsigned threads = 1;
  BATON_HD unsigned warp() const { return thread / kWarpSize; }
  BATON_HD unsigned lane() const { return thread % kWarpSize; }
};

/// The largest grid_y CUDA launches (grid_x may go to 2^31 - 1).
inline constexpr unsigned kMaxGridY = 65535;

/// Blocks of `threads` covering `n` items, at least 1 and at most `cap` (grid-stride loops
/// cover the rest).
constexpr unsigned blocks_for(std::size_t n, unsigned threads, unsigned cap = 65535) {
  const std::size_t b = (n + threads - 1) / threads;
  return b == 0 ? 1u : (b > cap ? cap : static_cast<unsigned>(b));
}

/// Throws usage_error unless `cfg` is a launch a GPU accepts for kernel threads `threads`
/// (both runners check it, so a shape the device would refuse fails on the host grid too).
inline void check_launch(const LaunchConfig& cfg, unsigned threads) {
  BATON_CHECK(cfg.block == threads, usage_error, "launch with ", cfg.block,
              " threads per block, but the kernel is written for ", threads);
  BATON_CHECK(
      cfg.grid_x >= 1 && cfg.grid_x <= 0x7fffffffu && cfg.grid_y >= 1 && cfg.grid_y <= kMaxGridY,
      usage_error, "launch grid ", cfg.grid_x, " x ", cfg.grid_y,
      " is outside what CUDA launches (x in [1, 2^31 - 1], y in [1, ", kMaxGridY, "])");
}

/// See the file comment.
template <class K>
concept PhasedKernel = requires {
  typename K::Args;
  typename K::Shared;
  typename K::Regs;
  { K::kThreads } -> std::convertible_to<unsigned>;
  { K::kPhases } -> std::convertible_to<int>;
}
&&(K::kThreads % kWarpSize == 0) && (K::kPhases >= 1) &&
    std::is_trivially_copyable_v<typename K::Args>&& std::is_trivial_v<
        typename K::Shared>&& std::is_trivial_v<typename K::Regs> &&
    (sizeof(typename K::Shared) <= kMaxStaticShared) &&
    requires(const ThreadIndex& at, typename K::Shared& sh, typename K::Regs& r,
             const typename K::Args& a) {
  K::template phase<0>(at, sh, r, a);
};

}  // namespace baton::grid
