// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief HostExec: the executor operations TokenOps (model/token_ops.hpp) asks of the host
///        backend — the products (backend/host_matmul.hpp) and loops over the shared BATON_HD
///        math (kernels/), on the thread pool the workspace is bound to, or on OpenMP.
#pragma once

#include <cstddef>

#include "baton/backend/host.hpp"
#include "baton/backend/host_matmul.hpp"
#include "baton/backend/host_parallel.hpp"
#include "baton/core/model_config.hpp"
#include "baton/core/quant.hpp"
#include "baton/kernels/activation.hpp"
#include "baton/kernels/norm.hpp"
#include "baton/model/workspace.hpp"

namespace baton {

class HostExec {
 public:
  using backend = host;
  explicit HostExec(Workspace<host>& ws) : ws_(ws), ctx_(ws.extras.context) {}

  HostContext* context() const noexcept { return ctx_; }

  /// y[n, out] (= or +=) x[n, in] · W^T (+ bias), W in a float storage.
  template <StorageType S>
  void matmul(const float* x, int n, int in, int ldx, const S* w, int out, const float* bias,
              float* y, int ldy, bool accumulate) {
    host_ops::matmul_nt(x, n, in, ldx, w, out, y, ldy, accumulate, ctx_);
    add_bias(bias, n, out, y, ldy);
  }

  /// The same for a block-quantized matrix (activations quantized into the workspace's scratch).
  void matmul(const float* x, int n, int in, int ldx, BlockView w, int out, const float* bias,
              float* y, int ldy, bool accumulate) {
    host_ops::matmul_nt(x, n, in, ldx, w, out, y, ldy, accumulate, ctx_, ws_.quant_scratch);
    add_bias(bias, n, out, y, ldy);
  }

  void norm_rows(const ModelConfig& c, const float* x, float* y, int rows, const float* w) {
    const int H = c.hidden_size;
    const float eps = static_cast<float>(c.rms_norm_eps);
    host_ops::parallel_for(ctx_, rows, parallel(rows, H),
                           [&](long t) { kernels::rmsnorm_row(x + t * H, w, y + t * H, H, eps); });
  }

  void head_norm(float* qkv, int width, int n, int q_heads, int kv_heads, int d, const float* q_w,
                 const float* k_w, float eps) {
    host_ops::parallel_for(ctx_, n, parallel(n, width), [&](long t) {
      float* row = qkv + static_cast<std::size_t>(t) * width;
      // q heads then k heads are contiguous at the start of the row; normed in place.
      for (int h = 0; h < q_heads; ++h) kernels::rmsnorm_row(row + h * d, q_w, row + h * d, d, eps);
      for (int h = q_heads; h < q_heads + kv_heads; ++h)
        kernels::rmsnorm_row(row + h * d, k_w, row + h * d, d, eps);
    });
  }

  void swiglu(const float* gate_up, float* act, int n, int f) {
    host_ops::parallel_for(ctx_, n, parallel(n, f), [&](long t) {
      for (int i = 0; i < f; ++i)
        act[t * f + i] = kernels::swiglu(gate_up[t * 2 * f + i], gate_up[t * 2 * f + f + i]);
    });
  }

  template <class Module>
  void lora(const Module& m, const float* x, int ldx, float* y, int ldy, int n) {
    host_ops::lora_update(x, n, m.in, ldx, m.a.data(), m.b.data(), m.rank, m.out, m.scale, y, ldy,
                          ws_.lora_scratch, ctx_);
  }

  /// Whether a loop over `n` rows of `width` values is worth forking.
  static bool parallel(long n, long width) { return n * width >= host_ops::kParallelMinWork; }

 private:
  static void add_bias(const float* bias, int n, int out, float* y, int ldy) {
    if (bias == nullptr) return;
    for (int t = 0; t < n; ++t)
      for (int j = 0; j < out; ++j) y[static_cast<std::size_t>(t) * ldy + j] += bias[j];
  }

  Workspace<host>& ws_;
  HostContext* ctx_;
};

}  // namespace baton
