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
///     read by other threads from phase P + 1 on;
///   - optionally `static unsigned rounds(const LaunchConfig&, const Args&)` (host code, read
///     once per launch; 1 when absent): each block runs all its phases that many times, round
///     r seeing `ThreadIndex::round == r`, with a barrier after every phase as always (so also
///     between rounds). This is a grid-stride loop over blocks: the work item of (block, round)
///     is usually `round * grid_x + block_x`, so a grid capped at a launchable size still
///     covers any count. Nothing carries over from one round to the next: a round must read
///     no Shared or Regs value an earlier round wrote (the host grid poisons both before each
///     round, so such a read fails its test here).
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
  unsigned round = 0;  ///< which of the kernel's rounds() this block runs (0 without them)
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

/// Rounds (see the file comment) that let `blocks` blocks cover `items` work items, one item
/// per block and round: 0 when there are none.
constexpr unsigned rounds_for(std::size_t items, unsigned blocks) {
  return static_cast<unsigned>((items + blocks - 1) / blocks);
}

/// A row of `n` (>= 1) items cut into `count` slices of `chunk` items, one block each (the last
/// may be shorter; none is empty): at least `min_chunk` items per slice, so a short row stays in
/// one block, and at most `max_slices` slices, so one block can combine their partials.
struct Slices {
  int chunk = 1;
  int count = 1;
};
constexpr Slices slices_for(int n, int min_chunk, int max_slices) {
  int chunk = (n + max_slices - 1) / max_slices;
  if (chunk < min_chunk) chunk = min_chunk;
  return {chunk, (n + chunk - 1) / chunk};
}

/// Items [begin, end) of slice `i` of a row of `n` cut into slices of `chunk`.
struct SliceRange {
  int begin;
  int end;
};
BATON_HD inline SliceRange slice_range(int n, int chunk, unsigned i) {
  const int begin = static_cast<int>(i) * chunk;
  return {begin, n - begin < chunk ? n : begin + chunk};
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

/// Whether kernel K runs its phases for several rounds per block (see the file comment).
template <class K>
concept HasRounds = requires(const LaunchConfig& cfg, const typename K::Args& a) {
  { K::rounds(cfg, a) } -> std::convertible_to<unsigned>;
};

/// The rounds each block of `cfg` runs K for: K::rounds(cfg, args), or 1.
template <class K>
unsigned rounds_of(const LaunchConfig& cfg, const typename K::Args& args) {
  if constexpr (HasRounds<K>) {
    return static_cast<unsigned>(K::rounds(cfg, args));
  } else {
    return 1;
  }
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
