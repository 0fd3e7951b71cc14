// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Host products Y = X · W^T with W in its storage type: OpenBLAS for many rows,
///        a widening matrix-vector kernel for one row (decode), its instruction set chosen at
///        run time (host_simd.hpp).
#pragma once

#include <cblas.h>
#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "baton/backend/host_parallel.hpp"
#include "baton/backend/host_simd.hpp"
#include "baton/core/dtype.hpp"

namespace baton::host_ops {

/// Below this many multiply-adds a loop runs on one thread: forking a team costs more than it
/// saves on the small matrices of tiny models and short prompts.
inline constexpr long kParallelMinWork = 1L << 15;

/// Y[n, out] (= or +=) X[n, in] · W[out, in]^T, with row strides ldx / ldy.
/// `scratch` holds widened weight rows when W is 16-bit and n is large enough that a
/// matrix-matrix product pays for the widening; one-row products read W directly. Loops run
/// on `ctx`'s pool with its kernels, or on OpenMP with the CPU's best kernels when null.
template <StorageType S>
void matmul_nt(const float* x, int n, int in, int ldx, const S* w, int out, float* y, int ldy,
               bool accumulate, std::vector<float>& scratch, HostContext* ctx = nullptr) {
  constexpr int kMatvecRows = 2;  // up to this many tokens, stream the weights once per token
  if (n <= kMatvecRows) {
    const host_simd::Isa isa = ctx ? ctx->isa() : host_simd::best_isa();
    const bool par = static_cast<long>(out) * in >= kParallelMinWork;
    for (int t = 0; t < n; ++t) {
      const float* xt = x + static_cast<std::size_t>(t) * ldx;
      float* yt = y + static_cast<std::size_t>(t) * ldy;
      parallel_ranges(ctx, out, par, [&](long o0, long o1) {
        host_simd::gemv_rows(isa, w, xt, in, static_cast<int>(o0), static_cast<int>(o1), yt,
                             accumulate);
      });
    }
    return;
  }
  const float beta = accumulate ? 1.0f : 0.0f;
  if constexpr (std::is_same_v<S, f32>) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, in, 1.0f, x, ldx, w, in, beta, y,
                ldy);
  } else {
    // Widen a band of weight rows at a time (about 4 MiB) and multiply it with OpenBLAS.
    const int band = std::max(1, std::min(out, static_cast<int>((1u << 20) / std::max(in, 1))));
    scratch.resize(static_cast<std::size_t>(band) * in);
    for (int o0 = 0; o0 < out; o0 += band) {
      const int rows = std::min(band, out - o0);
      const S* src = w + static_cast<std::size_t>(o0) * in;
      const std::size_t count = static_cast<std::size_t>(rows) * in;
      float* dst = scratch.data();
      parallel_for(ctx, static_cast<long>(count), static_cast<long>(count) >= kParallelMinWork,
                   [&](long i) { dst[i] = widen(src[i]); });
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, rows, in, 1.0f, x, ldx, dst, in, beta,
                  y + o0, ldy);
    }
  }
}

/// Y[n, out] += scale · (X · A^T) · B^T: a LoRA update through the rank-r intermediate `t`.
inline void lora_update(const float* x, int n, int in, int ldx, const float* a, const float* b,
                        int rank, int out, float scale, float* y, int ldy, std::vector<float>& t) {
  t.resize(static_cast<std::size_t>(n) * rank);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, rank, in, 1.0f, x, ldx, a, in, 0.0f,
              t.data(), rank);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, rank, scale, t.data(), rank, b, rank,
              1.0f, y, ldy);
}

}  // namespace baton::host_ops
