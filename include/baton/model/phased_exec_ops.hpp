// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief PhasedExecOps: the executor operations TokenOps (model/token_ops.hpp) asks of an
///        executor, written once as launches of the phased kernels for both executors that run
///        them — the GPU's (CudaExec, model/cuda_forward.cuh) and the host grid's
///        (HostGridExec, model/host_grid_forward.hpp). The host backend's executor
///        (HostExec, model/host_exec.hpp) provides the same operations as loops.
#pragma once

#include <cstddef>

#include "baton/core/model_config.hpp"
#include "baton/kernels/phased/elementwise.hpp"
#include "baton/kernels/phased/lora_delta.hpp"
#include "baton/kernels/phased/rmsnorm.hpp"
#include "baton/kernels/phased/rmsnorm_split.hpp"

namespace baton {

/// RMSNorm of `rows` hidden-size rows of x into y (weights w), split over several blocks per
/// row (kernels/phased/rmsnorm_split.hpp); the sums of squares go through the scratch.
template <class Exec, class Scratch>
void grid_norm_rows(Exec& exec, Scratch& s, const ModelConfig& c, const float* x, float* y,
                    int rows, const float* w) {
  using KS = kernels::RmsSquaresKernel;
  using KN = kernels::RmsScaleKernel<float>;
  const int H = c.hidden_size, chunk = kernels::rms_split(H).chunk;
  const grid::LaunchConfig cfg = kernels::rms_split_config(rows, H);
  float* squares = raw_pointer(s.norm_squares.data());
  const float eps = static_cast<float>(c.rms_norm_eps);
  exec.template launch<KS>(cfg, {x, H, H, chunk, squares});
  exec.template launch<KN>(cfg, {x, y, H, H, H, chunk, squares, w, eps});
}

/// The operations of an executor that runs phased kernels: `Derived` provides
/// `launch<K>(config, args)` and `scratch()` (the workspace's GridScratch).
template <class Derived>
class PhasedExecOps {
 public:
  /// y = rmsnorm(x) · w for `rows` hidden-size rows.
  void norm_rows(const ModelConfig& c, const float* x, float* y, int rows, const float* w) {
    grid_norm_rows(self(), self().scratch(), c, x, y, rows, w);
  }

  /// RMSNorm, in place, of every head of `n` rows of qkv (`width` values a row): the first
  /// `q_heads` heads with q_w, the next `kv_heads` with k_w (`d` values each).
  void head_norm(float* qkv, int width, int n, int q_heads, int kv_heads, int d, const float* q_w,
                 const float* k_w, float eps) {
    using K = kernels::RmsNormKernel<float>;
    const int heads = q_heads + kv_heads;
    self().template launch<K>(K::config(n * heads),
                              {qkv, qkv, width, width, d, heads, q_heads, q_w, k_w, eps});
  }

  /// act[n, f] = silu(gate) · up from gate_up[n, 2f].
  void swiglu(const float* gate_up, float* act, int n, int f) {
    using K = kernels::SwigluKernel;
    self().template launch<K>(K::config(n, f), {gate_up, act, n, f});
  }

  /// Adds module m's update (scale · B·A·x) for `n` rows of x to output columns [0, m.out) of
  /// y, through the scratch's LoRA intermediate.
  template <class Module>
  void lora(const Module& m, const float* x, int ldx, float* y, int ldy, int n) {
    using KS = kernels::LoraShrinkKernel;
    using KE = kernels::LoraExpandKernel;
    float* u = raw_pointer(self().scratch().lora_u.data());
    self().template launch<KS>(KS::config(n, m.rank),
                               {raw_pointer(m.a.data()), x, ldx, m.in, m.rank, u});
    self().template launch<KE>(KE::config(n, m.out),
                               {raw_pointer(m.b.data()), u, m.rank, m.out, m.scale, y, ldy});
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace baton
