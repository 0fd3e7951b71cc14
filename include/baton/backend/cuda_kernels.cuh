// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief nvcc-only companions of the CUDA backend: launch helpers and small utility kernels.
///
/// `.cuh` because it defines `__global__` functions: only nvcc may compile it. Plain C++ code
/// includes baton/backend/cuda.hpp and calls device work through functions compiled in `.cu`
/// files.
#pragma once

#if !defined(__CUDACC__)
#error "baton/backend/cuda_kernels.cuh needs nvcc; plain C++ includes baton/backend/cuda.hpp"
#endif

#include <algorithm>
#include <cstddef>

#include "baton/backend/cuda.hpp"

namespace baton {

namespace cuda_detail {

/// Threads per block for the element-wise kernels: a multiple of the warp size that keeps
/// enough blocks resident on every SM.
inline constexpr unsigned kElementwiseThreads = 256;

/// Blocks for `n > 0` elements at `threads` per block, capped: the kernels use grid-stride
/// loops, so any grid size is correct and a bounded one avoids millions of tiny blocks.
inline unsigned grid_for(std::size_t n, unsigned threads) {
  constexpr std::size_t kMaxBlocks = 65535;
  return static_cast<unsigned>(std::min<std::size_t>((n + threads - 1) / threads, kMaxBlocks));
}

template <class T>
__global__ void fill_kernel(T* __restrict__ out, std::size_t n, T value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = value;
  }
}

}  // namespace cuda_detail

/// Sets `n` elements starting at `dst` to `value`, asynchronously on `stream`. Launch errors
/// (bad configuration, no device) throw device_error here; faults inside the kernel surface at
/// the next synchronizing call.
template <class T>
void fill(DevicePtr<T> dst, std::size_t n, T value, cudaStream_t stream = nullptr) {
  if (n == 0) return;
  const unsigned threads = cuda_detail::kElementwiseThreads;
  cuda_detail::fill_kernel<T>
      <<<cuda_detail::grid_for(n, threads), threads, 0, stream>>>(dst.get(), n, value);
  BATON_CUDA_CHECK(cudaGetLastError());
}

/// Sets every element of a device buffer to `value` (asynchronously on `stream`).
template <class T>
void fill(DeviceBuffer<T>& dst, T value, cudaStream_t stream = nullptr) {
  fill(dst.data(), dst.size(), value, stream);
}

}  // namespace baton
