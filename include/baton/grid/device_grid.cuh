// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Launches a phased kernel (grid/grid.hpp) on the GPU: one `__global__` wrapper runs
///        the phases in order with `__syncthreads()` after each, for every round the kernel
///        asks for (rounds_of, computed on the host and passed as an argument).
#pragma once

#if !defined(__CUDACC__)
#error "baton/grid/device_grid.cuh needs nvcc; host code runs kernels with grid/host_grid.hpp"
#endif

#include <utility>

#include "baton/backend/cuda.hpp"
#include "baton/grid/grid.hpp"

namespace baton::grid {

namespace detail {

template <class K, int... P>
__device__ void run_phases(std::integer_sequence<int, P...>, const ThreadIndex& at,
                           typename K::Shared& shared, typename K::Regs& regs,
                           const typename K::Args& args) {
  ((K::template phase<P>(at, shared, regs, args), __syncthreads()), ...);
}

template <class K>
__global__ void __launch_bounds__(K::kThreads)
    phased_kernel(const typename K::Args args, const unsigned rounds) {
  __shared__ typename K::Shared shared;
  typename K::Regs regs;
  ThreadIndex at{blockIdx.x, blockIdx.y, gridDim.x, gridDim.y, threadIdx.x, blockDim.x};
  // The last phase's barrier separates one round from the next.
  for (unsigned r = 0; r < rounds; ++r) {
    at.round = r;
    run_phases<K>(std::make_integer_sequence<int, K::kPhases>{}, at, shared, regs, args);
  }
}

}  // namespace detail

/// Launches `K` over `cfg` on `stream`. Launch errors throw device_error here; faults inside
/// the kernel surface at the next wait.
template <PhasedKernel K>
void launch_on_device(const LaunchConfig& cfg, const typename K::Args& args, cudaStream_t stream) {
  check_launch(cfg, K::kThreads);
  detail::phased_kernel<K>
      <<<dim3(cfg.grid_x, cfg.grid_y), K::kThreads, 0, stream>>>(args, rounds_of<K>(cfg, args));
  BATON_CUDA_CHECK(cudaGetLastError());
}

/// Blocks of `K` one multiprocessor holds at once (registers, shared memory, threads: the
/// occupancy calculator on the wrapper that launch_on_device runs).
template <PhasedKernel K>
int resident_blocks_per_sm() {
  int blocks = 0;
  BATON_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, detail::phased_kernel<K>,
                                                                 static_cast<int>(K::kThreads), 0));
  return blocks;
}

}  // namespace baton::grid
