// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Launches a phased kernel (grid/grid.hpp) on the GPU: one `__global__` wrapper runs
///        the phases in order with `__syncthreads()` between them.
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
__global__ void __launch_bounds__(K::kThreads) phased_kernel(const typename K::Args args) {
  __shared__ typename K::Shared shared;
  typename K::Regs regs;
  const ThreadIndex at{blockIdx.x, blockIdx.y, gridDim.x, gridDim.y, threadIdx.x, blockDim.x};
  run_phases<K>(std::make_integer_sequence<int, K::kPhases>{}, at, shared, regs, args);
}

}  // namespace detail

/// Launches `K` over `cfg` on `stream`. Launch errors throw device_error here; faults inside
/// the kernel surface at the next wait.
template <PhasedKernel K>
void launch_on_device(const LaunchConfig& cfg, const typename K::Args& args, cudaStream_t stream) {
  check_launch(cfg, K::kThreads);
  detail::phased_kernel<K><<<dim3(cfg.grid_x, cfg.grid_y), K::kThreads, 0, stream>>>(args);
  BATON_CUDA_CHECK(cudaGetLastError());
}

}  // namespace baton::grid
