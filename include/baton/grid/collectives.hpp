// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Block and warp collectives for phased kernels, with two implementations behind one
///        interface: CUB's BlockReduce and warp shuffles on the device, a sequential fold on
///        the host grid.
///
/// The protocol is the same for both: every thread of the block (or warp) calls the
/// collective in the same phase; the result is read from the storage from the next phase on
/// (after the barrier). On the device CUB reduces and thread 0 (lane 0 for a warp) stores the
/// aggregate; on the host grid, which runs a block's threads one after another in index
/// order, thread 0 stores its value and every later thread folds its own in. Each
/// reduction uses its own storage (reusing one inside the phase that reads it would
/// overwrite the result on the host, and CUB's temporary storage on the device).
#pragma once

#include <cstdint>

#include "baton/core/macros.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/argmax.hpp"

#if BATON_DEVICE_COMPILER
#include <cub/block/block_reduce.cuh>
#endif

namespace baton::grid {

struct SumOp {
  BATON_HD float operator()(float a, float b) const { return a + b; }
};
/// Max that treats -INFINITY as the identity (masked positions carry it).
struct MaxOp {
  BATON_HD float operator()(float a, float b) const { return b > a ? b : a; }
};
/// kernels::argmax_better: the largest value, the lowest id on a tie, NaN first.
struct ArgmaxOp {
  BATON_HD kernels::ArgmaxPair operator()(kernels::ArgmaxPair a, kernels::ArgmaxPair b) const {
    return kernels::argmax_better(a, b);
  }
};

/// Shared memory of one block reduction of T over `Threads` threads.
template <class T, unsigned Threads>
struct BlockReduceStorage {
#if BATON_DEVICE_COMPILER
  typename cub::BlockReduce<T, static_cast<int>(Threads)>::TempStorage cub;
#endif
  T result;  ///< the block's aggregate, from the next phase on
};

/// Folds every thread's `value` with `op` (associative and commutative) into `s.result`.
template <unsigned Threads, class T, class Op>
BATON_HD inline void block_reduce(const ThreadIndex& at, BlockReduceStorage<T, Threads>& s, T value,
                                  Op op) {
#if defined(__CUDA_ARCH__)
  const T all = cub::BlockReduce<T, static_cast<int>(Threads)>(s.cub).Reduce(value, op);
  if (at.thread == 0) s.result = all;
#else
  s.result = at.thread == 0 ? value : op(s.result, value);
#endif
}

/// One float per warp of a block of `Threads`.
template <unsigned Threads>
struct WarpSlots {
  float value[Threads / kWarpSize];
};

/// Sums `value` over the 32 lanes of each warp into `s.value[warp]`. Every lane of the warp
/// must call it (the shuffle names the full mask).
template <unsigned Threads>
BATON_HD inline void warp_sum(const ThreadIndex& at, WarpSlots<Threads>& s, float value) {
#if defined(__CUDA_ARCH__)
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  if (at.lane() == 0) s.value[at.warp()] = value;
#else
  float& slot = s.value[at.warp()];
  slot = at.lane() == 0 ? value : slot + value;
#endif
}

}  // namespace baton::grid
