// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief GridTokenOps: the forward operations that run over all of a pass's tokens at once,
///        whichever row they belong to — the norms, the base products, the per-head norm and
///        SwiGLU — as phased-kernel launches and executor products. GridForwardOps (one row,
///        model/grid_ops.hpp) and GridBatchOps (many, model/grid_batch_ops.hpp) derive from it
///        and add the row-wise parts: the embedding's ids, RoPE/append, attention, the head,
///        and the LoRA update after each product (one adapter, or one per run of rows).
#pragma once

#include <cstddef>

#include "baton/core/model_config.hpp"
#include "baton/io/lora_target.hpp"
#include "baton/kernels/phased/elementwise.hpp"
#include "baton/kernels/phased/lora_delta.hpp"
#include "baton/kernels/phased/rmsnorm.hpp"
#include "baton/kernels/phased/rmsnorm_split.hpp"
#include "baton/model/block_matrix.hpp"
#include "baton/model/workspace.hpp"

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

/// Adds module m's update (scale · B·A·x) for `n` rows of x to output columns [0, m.out) of y,
/// through the scratch's LoRA intermediate.
template <class Exec, class Scratch, class Module>
void grid_lora(Exec& exec, Scratch& s, const Module& m, const float* x, int ldx, float* y, int ldy,
               int n) {
  using KS = kernels::LoraShrinkKernel;
  using KE = kernels::LoraExpandKernel;
  float* u = raw_pointer(s.lora_u.data());
  exec.template launch<KS>(KS::config(n, m.rank), {raw_pointer(m.a.data()), x, ldx, m.in, m.rank, u});
  exec.template launch<KE>(KE::config(n, m.out),
                           {raw_pointer(m.b.data()), u, m.rank, m.out, m.scale, y, ldy});
}

/// @tparam Derived provides `lora(layer, target, x, ldx, y, ldy)`: adds its adapters' updates
///         for the pass's tokens to y after a base product.
/// @tparam D the model's head_dim (the per-head norm's width).
template <class Derived, class Model, class Exec, int D>
class GridTokenOps {
  using B = typename Exec::backend;
  using S = typename Model::storage;
  using Matrix = typename Model::matrix;
  template <class T>
  using buffer = typename B::template buffer<T>;

 public:
  void norm(const buffer<float>& weight) {
    grid_norm_rows(exec_, ws_.extras.scratch(), c_, raw(ws_.x), raw(ws_.xn), n_, raw(weight));
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
    using K = kernels::RmsNormKernel<float>;
    const int heads = c_.num_heads + c_.num_kv_heads;
    typename K::Args a{raw(ws_.qkv), raw(ws_.qkv), qkv_width(),   qkv_width(),   D,
                       heads,        c_.num_heads, raw(q_weight), raw(k_weight), eps()};
    exec_.template launch<K>(K::config(n_ * heads), a);
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

  void swiglu() {
    using K = kernels::SwigluKernel;
    const int F = c_.intermediate_size;
    exec_.template launch<K>(K::config(n_, F), {raw(ws_.gate_up), raw(ws_.act), n_, F});
  }

  void down_projection(const Matrix& wdown, int layer) {
    const int H = c_.hidden_size, F = c_.intermediate_size;
    exec_.matmul(raw(ws_.act), n_, F, F, weights(wdown), H, nullptr, raw(ws_.x), H, true);
    lora(layer, LoraTarget::down, raw(ws_.act), F, raw(ws_.x), H);
  }

 protected:
  /// A pass over `tokens` tokens (their activations' rows in `ws`).
  GridTokenOps(const Model& model, Workspace<B>& ws, int tokens)
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
  int n_;  ///< tokens in the pass

 private:
  void lora(int layer, LoraTarget t, const float* x, int ldx, float* y, int ldy) {
    static_cast<Derived&>(*this).lora(layer, t, x, ldx, y, ldy);
  }
};

}  // namespace baton
