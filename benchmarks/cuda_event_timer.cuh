// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Timing launches on a context's stream with CUDA events, for decode_bench's CUDA half.
#pragma once

#if !defined(__CUDACC__)
#error "cuda_event_timer.cuh needs nvcc"
#endif

#include <algorithm>
#include <vector>

#include "baton/backend/cuda.hpp"

namespace baton::bench {

/// Seconds the launches `body()` queues on `ctx`'s stream take, between two events: the median
/// of `runs` (>= 1) runs after one warm-up run (one wait per run).
template <class Body>
double median_event_seconds(CudaContext& ctx, int runs, Body&& body) {
  cudaEvent_t t0, t1;
  BATON_CUDA_CHECK(cudaEventCreate(&t0));
  BATON_CUDA_CHECK(cudaEventCreate(&t1));
  std::vector<double> times;
  for (int r = 0; r <= runs; ++r) {
    BATON_CUDA_CHECK(cudaEventRecord(t0, ctx.stream()));
    body();
    BATON_CUDA_CHECK(cudaEventRecord(t1, ctx.stream()));
    ctx.synchronize();
    float ms = 0;
    BATON_CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (r > 0) times.push_back(ms * 1e-3);
  }
  (void)cudaEventDestroy(t0);
  (void)cudaEventDestroy(t1);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace baton::bench
