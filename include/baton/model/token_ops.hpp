// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief TokenOps: the forward operations that run over all of a forward's tokens at once,
///        whichever row they belong to — the norms, the base products with their LoRA updates,
///        the per-head norm and SwiGLU — written once over an executor's fine-grained
///        operations, for every backend and for one row or many.
///
/// The forward operations of each backend derive from it and add the row-wise parts: the
/// embedding's ids, RoPE with the cache append, attention, the head, and which adapter applies
/// to which tokens (`lora`): HostForwardOps (model/host_ops.hpp), GridForwardOps (one row,
/// model/grid_ops.hpp) and GridBatchOps (many, model/grid_batch_ops.hpp).
///
/// An executor `Exec` (constructed from the workspace) provides
///   - `matmul(x, n, in, ldx, weights(W), out, bias, y, ldy, accumulate)`: y[n, out] (= or +=)
///     x[n, in] · W[out, in]^T (+ bias[out] when not null), f32 accumulation, for every
///     storage the model's matrices may have (`weights()`: model/block_matrix.hpp);
///   - `norm_rows(config, x, y, rows, w)`: RMSNorm of hidden-size rows;
///   - `head_norm(qkv, width, n, q_heads, kv_heads, d, q_w, k_w, eps)`: per-head RMSNorm;
///   - `swiglu(gate_up, act, n, f)`;
///   - `lora(module, x, ldx, y, ldy, n)`: adds a LoRA module's update for n rows.
/// The host's are loops over the shared BATON_HD math (HostExec, model/host_exec.hpp); the GPU's
/// and the host grid's launch the phased kernels (PhasedExecOps, model/phased_exec_ops.hpp).
#pragma once

#include "baton/core/model_config.hpp"
#include "baton/io/lora_target.hpp"
#include "baton/model/block_matrix.hpp"
#include "baton/model/workspace.hpp"

namespace baton {

/// @tparam Derived provides `lora(layer, target, x, ldx, y, ldy)`: adds its adapters' updates
///         for the forward's tokens to y after a base product.
/// @tparam D the model's head_dim (the per-head norm's width).
template <class Derived, class Model, class Exec, int D>
class TokenOps {
  using B = typename Model::backend;
  using Matrix = typename Model::matrix;
  template <class T>
  using buffer = typename B::template buffer<T>;

 public:
  void norm(const buffer<float>& weight) {
    exec_.norm_rows(c_, raw(ws_.x), raw(ws_.xn), n_, raw(weight));
  }

  void qkv(const Matrix& wqkv, const buffer<float>& bqkv, int layer) {
    const int H = c_.hidden_size, qd = c_.q_dim(), kvd = c_.kv_dim(), w = qkv_width();
    exec_.matmul(raw(ws_.xn), n_, H, H, weights(wqkv), w, bqkv.size() ? raw(bqkv) : nullptr,
                 raw(ws_.qkv), w, false);
    lora(layer, LoraTarget::q, raw(ws_.xn), H, raw(ws_.qkv), w);
    lora(layer, LoraTarget::k, raw(ws_.xn), H, raw(ws_.qkv) + qd, w);
    lora(layer, LoraTarget::v, raw(ws_.xn), H, raw(ws_.qkv) + qd + kvd, w);
  }

  void head_norm(const buffer<float>& q_weight, const buffer<float>& k_weight) {
    exec_.head_norm(raw(ws_.qkv), qkv_width(), n_, c_.num_heads, c_.num_kv_heads, D, raw(q_weight),
                    raw(k_weight), eps());
  }

  void output_projection(const Matrix& wo, int layer) {
    const int H = c_.hidden_size, qd = c_.q_dim();
    exec_.matmul(raw(ws_.attn), n_, qd, qd, weights(wo), H, nullptr, raw(ws_.x), H, true);
    lora(layer, LoraTarget::o, raw(ws_.attn), qd, raw(ws_.x), H);
  }

  void gate_up(const Matrix& wgate_up, int layer) {
    const int H = c_.hidden_size, F = c_.intermediate_size;
    exec_.matmul(raw(ws_.xn), n_, H, H, weights(wgate_up), 2 * F, nullptr, raw(ws_.gate_up), 2 * F,
                 false);
    lora(layer, LoraTarget::gate, raw(ws_.xn), H, raw(ws_.gate_up), 2 * F);
    lora(layer, LoraTarget::up, raw(ws_.xn), H, raw(ws_.gate_up) + F, 2 * F);
  }

  void swiglu() { exec_.swiglu(raw(ws_.gate_up), raw(ws_.act), n_, c_.intermediate_size); }

  void down_projection(const Matrix& wdown, int layer) {
    const int H = c_.hidden_size, F = c_.intermediate_size;
    exec_.matmul(raw(ws_.act), n_, F, F, weights(wdown), H, nullptr, raw(ws_.x), H, true);
    lora(layer, LoraTarget::down, raw(ws_.act), F, raw(ws_.x), H);
  }

 protected:
  /// A forward over `tokens` tokens (their activations' rows in `ws`; a derived class that
  /// counts its rows' tokens itself sets n_ before the first operation).
  TokenOps(const Model& model, Workspace<B>& ws, int tokens)
      : model_(model), c_(model.config()), ws_(ws), exec_(ws), n_(tokens) {}

  template <class Buf>
  static auto raw(Buf& b) {
    return raw_pointer(b.data());
  }
  int qkv_width() const { return c_.q_dim() + 2 * c_.kv_dim(); }
  float eps() const { return static_cast<float>(c_.rms_norm_eps); }

  const Model& model_;
  const ModelConfig& c_;
  Workspace<B>& ws_;
  Exec exec_;
  int n_;  ///< tokens in the forward (all rows')

 private:
  void lora(int layer, LoraTarget t, const float* x, int ldx, float* y, int ldy) {
    static_cast<Derived&>(*this).lora(layer, t, x, ldx, y, ldy);
  }
};

}  // namespace baton
