// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Host products Y = X · W^T with W in its storage type, one arithmetic for any number
///        of rows (a row's result never depends on the rows beside it: docs/batching.md):
///        host_dot.hpp's kernels for f32 / bf16 / f16 weights (bf16 products on AVX512-BF16 or
///        AMX where the context has them), the integer kernels for Q8_0 / Q4_0 blocks; the
///        instruction set chosen at run time, on the HostContext's pool.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "baton/backend/host_context.hpp"
#include "baton/backend/host_dot.hpp"
#include "baton/backend/host_gemm_amx.hpp"
#include "baton/backend/host_parallel.hpp"
#include "baton/backend/host_quant.hpp"
#include "baton/backend/host_quant_groups.hpp"
#include "baton/backend/host_simd.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/quant.hpp"

namespace baton::host_ops {

/// Below this many multiply-adds a loop runs on one thread: forking a team costs more than it
/// saves on the small matrices of tiny models and short prompts.
inline constexpr long kParallelMinWork = 1L << 15;

namespace detail {
/// matmul_nt's bf16 products (ctx->bf16_products()): whole blocks of 32 output rows on the AMX
/// tiles where the context has them, the rest (or all) on vdpbf16ps over the rows rounded once.
inline void matmul_bf16_products(const float* x, int n, int in, int ldx, const bf16* w, int out,
                                 float* y, int ldy, bool accumulate, HostContext& ctx, bool par) {
  const int done =
      ctx.amx() ? host_gemm::amx::gemm_nt_rows(&ctx, par, x, n, in, ldx, w, out, y, ldy, accumulate)
                : 0;
  if (done == out) return;
  bf16* xb = ctx.split_rows(static_cast<std::size_t>(n) * host_dot::split_row_length(in));
  parallel_ranges(
      &ctx, n, par && static_cast<long>(n) * in >= kParallelMinWork, [&](long t0, long t1) {
        host_dot::split_rows_bf16(x, ldx, in, static_cast<int>(t0), static_cast<int>(t1), xb);
      });
  const bf16* rest = w + static_cast<std::size_t>(done) * in;
  parallel_ranges(&ctx, out - done, par, [&](long o0, long o1) {
    host_dot::product_bf16(rest, xb, n, in, static_cast<int>(o0), static_cast<int>(o1), y + done,
                           ldy, accumulate);
  });
}
}  // namespace detail

/// Y[n, out] (= or +=) X[n, in] · W[out, in]^T, with row strides ldx / ldy, in host_dot.hpp's
/// one arithmetic whatever n is: a decode step's single row, a batch's rows and a prefill
/// chunk's all sum each output the same way. Loops run on `ctx`'s pool with its kernels, or on
/// OpenMP with the CPU's best kernels when null (bf16 products need a context).
template <StorageType S>
void matmul_nt(const float* x, int n, int in, int ldx, const S* w, int out, float* y, int ldy,
               bool accumulate, HostContext* ctx = nullptr) {
  if (n <= 0 || out <= 0) return;
  if (in <= 0) {  // an empty sum: zero, or Y unchanged
    if (!accumulate)
      for (int t = 0; t < n; ++t) std::fill_n(y + static_cast<std::size_t>(t) * ldy, out, 0.0f);
    return;
  }
  const host_simd::Isa isa = ctx ? ctx->isa() : host_simd::best_isa();
  const bool par = static_cast<long>(n) * out * in >= kParallelMinWork;
  if constexpr (std::is_same_v<S, bf16>) {
    if (ctx != nullptr && ctx->bf16_products())
      return detail::matmul_bf16_products(x, n, in, ldx, w, out, y, ldy, accumulate, *ctx, par);
  }
  parallel_ranges(ctx, out, par, [&](long o0, long o1) {
    host_dot::product(isa, w, x, ldx, n, in, static_cast<int>(o0), static_cast<int>(o1), y, ldy,
                      accumulate);
  });
}

/// matmul_nt for a block-quantized model's matrix (`w.format`: Q8_0 / Q4_0 blocks, grouped or
/// row by row, or the f16 of a matrix whose rows are not whole blocks): the activations
/// quantized to 8 bits per 32-block, integer products, whatever n is. The grouped layout (the
/// host's, for rows a multiple of 8): host_quant_groups.hpp's kernels; the row layout:
/// host_quant.hpp's.
inline void matmul_nt(const float* x, int n, int in, int ldx, BlockView w, int out, float* y,
                      int ldy, bool accumulate, HostContext* ctx, QuantizedActivations& scratch) {
  if (w.format == BlockFormat::f16)
    return matmul_nt(x, n, in, ldx, reinterpret_cast<const f16*>(w.data), out, y, ldy, accumulate,
                     ctx);
  if (n <= 0 || out <= 0) return;
  const host_simd::Isa isa = ctx ? ctx->isa() : host_simd::best_isa();
  const bool par = static_cast<long>(n) * out * in >= kParallelMinWork;
  host_quant::quantize_rows(isa, x, n, in, ldx, scratch);
  if (is_grouped(w.format)) {
    parallel_ranges(ctx, out / kGroupRows, par, [&](long g0, long g1) {
      host_quant::gemm_groups(isa, w, scratch, 0, n, in, static_cast<int>(g0), static_cast<int>(g1),
                              y, ldy, accumulate);
    });
    return;
  }
  parallel_ranges(ctx, out, par, [&](long o0, long o1) {
    host_quant::gemv_rows(isa, w, scratch, n, in, static_cast<int>(o0), static_cast<int>(o1), y,
                          ldy, accumulate);
  });
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
