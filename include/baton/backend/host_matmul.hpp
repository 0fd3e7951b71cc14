// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Host products Y = X · W^T with W in its storage type: a widening matrix-vector
///        kernel for one or two rows (decode, host_simd.hpp), baton's blocked matrix-matrix
///        product for more (prefill, host_gemm.hpp); both with their instruction set chosen at
///        run time, on the HostContext's pool.
#pragma once

#include <cstddef>
#include <vector>

#include "baton/backend/host_gemm.hpp"
#include "baton/backend/host_parallel.hpp"
#include "baton/backend/host_quant.hpp"
#include "baton/backend/host_quant_groups.hpp"
#include "baton/backend/host_simd.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/quant.hpp"

namespace baton::host_ops {

/// Rows up to which a product streams W row by row (matrix-vector kernels sharing each weight
/// among the rows) rather than through the blocked product: decode steps and small batches of
/// them. Measured on a 2-core AVX-512 host (bf16 weights, shapes of a 1024-wide model, best of
/// 20): the two break even at 8 rows, and the blocked product is 1.4-2x faster at 16 rows and
/// 2-2.5x at 32 (the matrix-vector kernels load an activation vector for every multiply-add).
inline constexpr int kMatvecRows = 8;

/// Below this many multiply-adds a loop runs on one thread: forking a team costs more than it
/// saves on the small matrices of tiny models and short prompts.
inline constexpr long kParallelMinWork = 1L << 15;

/// Y[n, out] (= or +=) X[n, in] · W[out, in]^T, with row strides ldx / ldy. Up to kMatvecRows
/// rows stream W once (matrix-vector kernels, each weight widened once for every row); more go
/// through the blocked product, which widens 16-bit weights one packed panel at a time. Loops run
/// on `ctx`'s pool with its kernels, or on OpenMP with the CPU's best kernels when null.
template <StorageType S>
void matmul_nt(const float* x, int n, int in, int ldx, const S* w, int out, float* y, int ldy,
               bool accumulate, HostContext* ctx = nullptr) {
  const host_simd::Isa isa = ctx ? ctx->isa() : host_simd::best_isa();
  // With bf16 products (AVX512-BF16), more than two rows take the blocked product, which is
  // where those products are.
  const bool bf16_products = ctx && ctx->bf16_products();
  if (n <= 2 || (n <= kMatvecRows && !bf16_products)) {
    // Up to kMatvecRows rows (a decode step, or a small batch of them): W streams once, every
    // row's products sharing each weight as it is widened; a row's result does not depend on
    // the rows beside it (gemv_multi_rows). Past kMatvecRows a row's sums run in the blocked
    // product's order: a row batched with many others differs from the row alone in the last
    // bits, so tokens agree except where two logits nearly tie.
    const bool par = static_cast<long>(n) * out * in >= kParallelMinWork;
    parallel_ranges(ctx, out, par, [&](long o0, long o1) {
      host_simd::gemv_multi_rows(isa, w, x, ldx, n, in, static_cast<int>(o0), static_cast<int>(o1),
                                 y, ldy, accumulate);
    });
    return;
  }
  const bool par = static_cast<long>(n) * out * in >= kParallelMinWork;
  host_gemm::gemm_nt(isa, ctx, par, x, n, in, ldx, w, out, y, ldy, accumulate);
}

/// matmul_nt for a block-quantized model's matrix (`w.format`: Q8_0 / Q4_0 blocks, grouped or
/// row by row, or the f16 of a matrix whose rows are not whole blocks). The grouped layout (the
/// host's, for rows a multiple of 8) takes every product through the integer kernels of
/// host_quant_groups.hpp, the rows quantized into `scratch`. The row layout: up to kMatvecRows
/// rows, host_quant.hpp's integer kernels; more, the blocked product, dequantizing the weights
/// into its panels.
inline void matmul_nt(const float* x, int n, int in, int ldx, BlockView w, int out, float* y,
                      int ldy, bool accumulate, HostContext* ctx, QuantizedActivations& scratch) {
  if (w.format == BlockFormat::f16)
    return matmul_nt(x, n, in, ldx, reinterpret_cast<const f16*>(w.data), out, y, ldy, accumulate,
                     ctx);
  const host_simd::Isa isa = ctx ? ctx->isa() : host_simd::best_isa();
  const bool par = static_cast<long>(n) * out * in >= kParallelMinWork;
  if (is_grouped(w.format)) {
    host_quant::quantize_rows(isa, x, n, in, ldx, scratch);
    parallel_ranges(ctx, out / kGroupRows, par, [&](long g0, long g1) {
      host_quant::gemm_groups(isa, w, scratch, 0, n, in, static_cast<int>(g0), static_cast<int>(g1),
                              y, ldy, accumulate);
    });
    return;
  }
  if (n <= kMatvecRows) {
    host_quant::quantize_rows(isa, x, n, in, ldx, scratch);
    parallel_ranges(ctx, out, par, [&](long o0, long o1) {
      host_quant::gemv_rows(isa, w, scratch, n, in, static_cast<int>(o0), static_cast<int>(o1), y,
                            ldy, accumulate);
    });
    return;
  }
  host_gemm::gemm_nt(isa, ctx, par, x, n, in, ldx, w, out, y, ldy, accumulate);
}

/// Y[n, out] += scale · (X · A^T) · B^T: a LoRA update through the rank-r intermediate `t`
/// (scaled before the second product).
inline void lora_update(const float* x, int n, int in, int ldx, const float* a, const float* b,
                        int rank, int out, float scale, float* y, int ldy, std::vector<float>& t,
                        HostContext* ctx = nullptr) {
  t.resize(static_cast<std::size_t>(n) * rank);
  matmul_nt(x, n, in, ldx, a, rank, t.data(), rank, false, ctx);
  for (float& v : t) v *= scale;
  matmul_nt(t.data(), n, rank, rank, b, out, y, ldy, true, ctx);
}

}  // namespace baton::host_ops
