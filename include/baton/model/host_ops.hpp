// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host backend's forward operations: OpenMP loops over the shared BATON_HD math
///        (kernels/, kv/append.hpp) and OpenBLAS products (backend/host_matmul.hpp).
///
/// One HostForwardOps lives for one forward call: it binds the model, workspace, slice, cache
/// and the span of tokens, and each operation covers all n tokens at once. Token-parallel loops
/// fork only when there is enough work (host_ops::kParallelMinWork), on the HostContext the
/// workspace is bound to (`ws.extras.bind(ctx)`), or on OpenMP when it is bound to none.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "baton/backend/host.hpp"
#include "baton/backend/host_attention.hpp"
#include "baton/backend/host_matmul.hpp"
#include "baton/backend/host_parallel.hpp"
#include "baton/core/model_config.hpp"
#include "baton/io/lora_target.hpp"
#include "baton/kernels/activation.hpp"
#include "baton/kernels/argmax.hpp"
#include "baton/kernels/attention.hpp"
#include "baton/kernels/norm.hpp"
#include "baton/kernels/rope.hpp"
#include "baton/kv/append.hpp"
#include "baton/model/backend_ops.hpp"
#include "baton/model/workspace.hpp"

namespace baton {

/// The forward operations on the host for one call (see ForwardOpsArchetype for what each
/// operation computes).
template <class Model, class Slice, class Cache>
class HostForwardOps {
  using S = typename Model::storage;
  using L = typename Cache::layout;
  template <class T>
  using buffer = host::buffer<T>;

 public:
  HostForwardOps(const Model& model, Workspace<host>& ws, const Slice& slice, Cache& cache,
                 KvTarget target, int first_pos, std::span<const std::int32_t> tokens,
                 int logit_rows)
      : model_(model),
        c_(model.config()),
        ws_(ws),
        slice_(slice),
        cache_(cache),
        target_(target),
        first_pos_(first_pos),
        tokens_(tokens),
        n_(static_cast<int>(tokens.size())),
        rows_(logit_rows),
        ctx_(ws.extras.context) {
    ws.ensure(c_, n_, rows_);
    par_tokens_ = static_cast<long>(n_) * c_.hidden_size >= host_ops::kParallelMinWork;
  }

  /// x = the embedding rows of the tokens, widened to f32.
  void embed() {
    const int H = c_.hidden_size;
    const S* emb = model_.embedding().data();
    float* x = ws_.x.data();
    host_ops::parallel_for(ctx_, n_, par_tokens_, [&](long t) {
      const S* row = emb + static_cast<std::size_t>(tokens_[t]) * H;
      for (int i = 0; i < H; ++i) x[static_cast<std::size_t>(t) * H + i] = widen(row[i]);
    });
  }

  void norm(const buffer<float>& weight) {
    const int H = c_.hidden_size;
    const float eps = static_cast<float>(c_.rms_norm_eps);
    const float* x = ws_.x.data();
    float* xn = ws_.xn.data();
    host_ops::parallel_for(ctx_, n_, par_tokens_, [&](long t) {
      kernels::rmsnorm_row(x + t * H, weight.data(), xn + t * H, H, eps);
    });
  }

  void qkv(const buffer<S>& wqkv, const buffer<float>& bqkv, int layer) {
    const int H = c_.hidden_size, qd = c_.q_dim(), kvd = c_.kv_dim(), w = qkv_width();
    const float* xn = ws_.xn.data();
    float* qkv = ws_.qkv.data();
    host_ops::matmul_nt(xn, n_, H, H, wqkv.data(), w, qkv, w, false, ctx_);
    if (!bqkv.empty()) {
      for (int t = 0; t < n_; ++t)
        for (int j = 0; j < w; ++j) qkv[t * w + j] += bqkv[j];
    }
    lora(layer, LoraTarget::q, xn, H, qkv, w);
    lora(layer, LoraTarget::k, xn, H, qkv + qd, w);
    lora(layer, LoraTarget::v, xn, H, qkv + qd + kvd, w);
  }

  void head_norm(const buffer<float>& q_weight, const buffer<float>& k_weight) {
    const int D = c_.head_dim, nq = c_.num_heads, nkv = c_.num_kv_heads, w = qkv_width();
    const float eps = static_cast<float>(c_.rms_norm_eps);
    float* qkv = ws_.qkv.data();
    host_ops::parallel_for(ctx_, n_, par_tokens_, [&](long t) {
      float* row = qkv + static_cast<std::size_t>(t) * w;
      // q heads then k heads are contiguous at the start of the row; normed in place.
      for (int h = 0; h < nq; ++h)
        kernels::rmsnorm_row(row + h * D, q_weight.data(), row + h * D, D, eps);
      for (int h = nq; h < nq + nkv; ++h)
        kernels::rmsnorm_row(row + h * D, k_weight.data(), row + h * D, D, eps);
    });
  }

  void rope_append(int layer) {
    const int D = c_.head_dim, nq = c_.num_heads, nkv = c_.num_kv_heads;
    const int qd = c_.q_dim(), kvd = c_.kv_dim(), w = qkv_width();
    const float* inv_freq = model_.inv_freq().data();
    float* qkv = ws_.qkv.data();
    const KvAppend<L> dst = cache_.append_view(target_, layer);
    host_ops::parallel_for(ctx_, n_, par_tokens_, [&](long t) {
      const int pos = first_pos_ + static_cast<int>(t);
      float* row = qkv + static_cast<std::size_t>(t) * w;
      for (int h = 0; h < nq + nkv; ++h) kernels::rope_rotate_head(row + h * D, D, pos, inv_freq);
      for (int h = 0; h < nkv; ++h)
        kv::append(dst, pos, h, row + qd + h * D, row + qd + kvd + h * D);
    });
  }

  void attention(int layer) {
    const int D = c_.head_dim, nq = c_.num_heads;
    const kernels::AttentionParams<L> p{.kv = cache_.read_span(target_, layer, first_pos_ + n_),
                                        .q = ws_.qkv.data(),
                                        .q_stride = qkv_width(),
                                        .out = ws_.attn.data(),
                                        .out_stride = c_.q_dim(),
                                        .tokens = n_,
                                        .q_heads = nq,
                                        .group = nq / c_.num_kv_heads,
                                        .first_pos = first_pos_,
                                        .scale = 1.0f / std::sqrt(static_cast<float>(D))};
    const bool par_attn =
        static_cast<long>(n_) * nq * (first_pos_ + n_) * D >= host_ops::kParallelMinWork;
    const host_simd::Isa isa = ctx_ ? ctx_->isa() : host_simd::best_isa();
    // one index per (token, head), as OpenMP's collapse(2) had it
    host_ops::parallel_for(ctx_, static_cast<long>(n_) * nq, par_attn, [&](long th) {
      host_ops::attend<L>(isa, p, static_cast<int>(th / nq), static_cast<int>(th % nq));
    });
  }

  void output_projection(const buffer<S>& wo, int layer) {
    const int H = c_.hidden_size, qd = c_.q_dim();
    const float* attn = ws_.attn.data();
    float* x = ws_.x.data();
    host_ops::matmul_nt(attn, n_, qd, qd, wo.data(), H, x, H, true, ctx_);
    lora(layer, LoraTarget::o, attn, qd, x, H);
  }

  void gate_up(const buffer<S>& wgate_up, int layer) {
    const int H = c_.hidden_size, F = c_.intermediate_size;
    const float* xn = ws_.xn.data();
    float* gu = ws_.gate_up.data();
    host_ops::matmul_nt(xn, n_, H, H, wgate_up.data(), 2 * F, gu, 2 * F, false, ctx_);
    lora(layer, LoraTarget::gate, xn, H, gu, 2 * F);
    lora(layer, LoraTarget::up, xn, H, gu + F, 2 * F);
  }

  void swiglu() {
    const int F = c_.intermediate_size;
    const float* gu = ws_.gate_up.data();
    float* act = ws_.act.data();
    host_ops::parallel_for(
        ctx_, n_, static_cast<long>(n_) * F >= host_ops::kParallelMinWork, [&](long t) {
          for (int i = 0; i < F; ++i)
            act[t * F + i] = kernels::swiglu(gu[t * 2 * F + i], gu[t * 2 * F + F + i]);
        });
  }

  void down_projection(const buffer<S>& wdown, int layer) {
    const int H = c_.hidden_size, F = c_.intermediate_size;
    const float* act = ws_.act.data();
    float* x = ws_.x.data();
    host_ops::matmul_nt(act, n_, F, F, wdown.data(), H, x, H, true, ctx_);
    lora(layer, LoraTarget::down, act, F, x, H);
  }

  /// Final norm and head for the last `logit_rows` tokens only.
  std::span<const float> head() {
    const int H = c_.hidden_size, V = c_.vocab_size;
    const float eps = static_cast<float>(c_.rms_norm_eps);
    const float* x = ws_.x.data();
    float* xn = ws_.xn.data();
    const int first = n_ - rows_;
    host_ops::parallel_for(ctx_, rows_, par_tokens_, [&](long r) {
      const long t = first + r;
      kernels::rmsnorm_row(x + t * H, model_.final_norm().data(), xn + r * H, H, eps);
    });
    host_ops::matmul_nt(xn, rows_, H, H, model_.head().data(), V, ws_.logits.data(), V, false,
                        ctx_);
    return std::span<const float>(ws_.logits.data(), static_cast<std::size_t>(rows_) * V);
  }

 private:
  int qkv_width() const { return c_.q_dim() + 2 * c_.kv_dim(); }

  /// Adds the slice's update for (layer, target) to output columns [0, out) of y.
  void lora(int layer, LoraTarget t, const float* x, int ldx, float* y, int ldy) {
    if (const auto* m = slice_.module(layer, t)) {
      host_ops::lora_update(x, n_, m->in, ldx, m->a.data(), m->b.data(), m->rank, m->out, m->scale,
                            y, ldy, ws_.lora_scratch, ctx_);
    }
  }

  const Model& model_;
  const ModelConfig& c_;
  Workspace<host>& ws_;
  const Slice& slice_;
  Cache& cache_;
  KvTarget target_;
  int first_pos_;
  std::span<const std::int32_t> tokens_;
  int n_;
  int rows_;
  bool par_tokens_ = false;
  HostContext* ctx_;  ///< the loops' thread pool and kernels; null: OpenMP
};

/// The host backend's operations (see BackendOps).
template <>
struct BackendOps<host> {
  template <class Model, class Slice, class Cache>
  using forward_ops = HostForwardOps<Model, Slice, Cache>;
  using logits_view = std::span<const float>;
  static std::int32_t argmax(logits_view row) {
    return kernels::argmax(row.data(), static_cast<int>(row.size()));
  }
};

}  // namespace baton
