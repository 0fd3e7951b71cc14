// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host backend's loops: on the HostContext's thread pool when the workspace is
///        bound to one, on an OpenMP team otherwise, serially when there is too little work.
#pragma once

#include <algorithm>

#include <omp.h>

#include "baton/backend/host_context.hpp"

namespace baton::host_ops {

/// Calls f(begin, end) over [0, n) in ranges. With a context, ranges of about n / (8 threads),
/// smaller at the loop's end, are claimed dynamically (a descheduled thread's share is taken
/// by the others); with OpenMP, one static range per thread.
template <class F>
void parallel_ranges(HostContext* ctx, long n, bool parallel, F&& f) {
  if (n <= 0) return;
  if (!parallel || n == 1) {
    f(0L, n);
    return;
  }
  if (ctx != nullptr) {
    // Ranges of n / (8 threads) while much is left, tapering to n / (64 threads) at the end,
    // so that the threads finish a loop nearly together (ThreadPool::parallel_for_tapered).
    const long threads = ctx->threads();
    const long grain = std::max(1L, n / (8L * threads)), unit = std::max(1L, n / (64L * threads));
    ctx->pool().parallel_for_tapered(n, grain, unit, f);
    return;
  }
#pragma omp parallel
  {
    const long nt = omp_get_num_threads(), id = omp_get_thread_num();
    const long b = n * id / nt, e = n * (id + 1) / nt;
    if (b < e) f(b, e);
  }
}

/// Calls f(i) for every i in [0, n) (see parallel_ranges).
template <class F>
void parallel_for(HostContext* ctx, long n, bool parallel, F&& f) {
  parallel_ranges(ctx, n, parallel, [&](long b, long e) {
    for (long i = b; i < e; ++i) f(i);
  });
}

}  // namespace baton::host_ops
