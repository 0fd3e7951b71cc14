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
#include <vector>

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
#include "baton/model/batch_row.hpp"
#include "baton/model/workspace.hpp"

namespace baton {

/// The forward operations on the host for one call (see ForwardOpsArchetype for what each
/// operation computes), over one row or a batch of rows (model/forward_batch.hpp): each row
/// appends its own tokens to its own cache target through its own adapter. The rows' tokens
/// are laid out one row after another, so every base product runs once over all of them
/// (the weights are read once per step, whatever the number of rows), while RoPE, the cache
/// append and attention run per row on its own target and positions. LoRA updates run once
/// per run of consecutive rows with the same adapter, so a caller that orders its rows by
/// adapter reads each adapter once (model/forward_batch.hpp).
template <class Model, class Slice, class Cache>
class HostForwardOps {
  using S = typename Model::storage;
  using Matrix = typename Model::matrix;
  using L = typename Cache::layout;
  template <class T>
  using buffer = host::buffer<T>;

 public:
  using row_type = BatchRow<Slice, Cache>;

  /// One row: `tokens` at `first_pos` of `target`, the last `logit_rows` tokens' logits, the
  /// slice's update from position `adapter_from` on (lora/activation.hpp).
  HostForwardOps(const Model& model, Workspace<host>& ws, const Slice& slice, Cache& cache,
                 KvTarget target, int first_pos, std::span<const std::int32_t> tokens,
                 int logit_rows, int adapter_from = kAdapterFromSlice)
      : HostForwardOps(
            model, ws, std::span<const row_type>(&single_, 1), logit_rows,
            row_type{&slice, &cache, target, first_pos, tokens, logit_rows > 0, adapter_from}) {}

  /// A batch: the last token's logits of every row with `logits` set, in row order.
  HostForwardOps(const Model& model, Workspace<host>& ws, std::span<const row_type> rows)
      : HostForwardOps(model, ws, rows, -1, row_type{}) {}

  HostForwardOps(const HostForwardOps&) = delete;  // the spans point into this object
  HostForwardOps& operator=(const HostForwardOps&) = delete;

  /// x = the embedding rows of the tokens, widened (or dequantized) to f32.
  void embed() {
    const int H = c_.hidden_size;
    const auto emb = weights(model_.embedding());
    float* x = ws_.x.data();
    for (const Span& r : spans_) {
      const std::int32_t* ids = r.row->tokens.data();
      host_ops::parallel_for(ctx_, r.n, par_tokens_, [&](long i) {
        const auto id = static_cast<std::size_t>(ids[i]);
        float* dst = x + static_cast<std::size_t>(r.t0 + i) * H;
        if constexpr (BlockStorage<S>) {
          dequantize_row(emb, id, static_cast<std::size_t>(H), dst);
        } else {
          const S* src = emb + id * H;
          for (int k = 0; k < H; ++k) dst[k] = widen(src[k]);
        }
      });
    }
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

  void qkv(const Matrix& wqkv, const buffer<float>& bqkv, int layer) {
    const int H = c_.hidden_size, qd = c_.q_dim(), kvd = c_.kv_dim(), w = qkv_width();
    const float* xn = ws_.xn.data();
    float* qkv = ws_.qkv.data();
    product(xn, n_, H, H, wqkv, w, qkv, w, false);
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
    for (const Span& r : spans_) {
      const KvAppend<L> dst = r.row->cache->append_view(r.row->target, layer);
      host_ops::parallel_for(ctx_, r.n, par_tokens_, [&](long i) {
        const int pos = r.row->position + static_cast<int>(i);
        float* row = qkv + static_cast<std::size_t>(r.t0 + i) * w;
        kernels::rope_rotate_heads(row, nq + nkv, D, pos, inv_freq);
        for (int h = 0; h < nkv; ++h)
          kv::append(dst, pos, h, row + qd + h * D, row + qd + kvd + h * D);
      });
    }
  }

  void attention(int layer) {
    const int D = c_.head_dim, nq = c_.num_heads;
    const host_simd::Isa isa = ctx_ ? ctx_->isa() : host_simd::best_isa();
    for (const Span& r : spans_) {
      const int first = r.row->position;
      const std::size_t t0 = static_cast<std::size_t>(r.t0);
      const kernels::AttentionParams<L> p{
          .kv = r.row->cache->read_span(r.row->target, layer, first + r.n),
          .q = ws_.qkv.data() + t0 * qkv_width(),
          .q_stride = qkv_width(),
          .out = ws_.attn.data() + t0 * c_.q_dim(),
          .out_stride = c_.q_dim(),
          .tokens = r.n,
          .q_heads = nq,
          .group = nq / c_.num_kv_heads,
          .first_pos = first,
          .scale = 1.0f / std::sqrt(static_cast<float>(D))};
      const bool par_attn =
          static_cast<long>(r.n) * nq * (first + r.n) * D >= host_ops::kParallelMinWork;
      // one index per (token, head), as OpenMP's collapse(2) had it
      host_ops::parallel_for(ctx_, static_cast<long>(r.n) * nq, par_attn, [&](long th) {
        host_ops::attend<L>(isa, p, static_cast<int>(th / nq), static_cast<int>(th % nq));
      });
    }
  }

  void output_projection(const Matrix& wo, int layer) {
    const int H = c_.hidden_size, qd = c_.q_dim();
    const float* attn = ws_.attn.data();
    float* x = ws_.x.data();
    product(attn, n_, qd, qd, wo, H, x, H, true);
    lora(layer, LoraTarget::o, attn, qd, x, H);
  }

  void gate_up(const Matrix& wgate_up, int layer) {
    const int H = c_.hidden_size, F = c_.intermediate_size;
    const float* xn = ws_.xn.data();
    float* gu = ws_.gate_up.data();
    product(xn, n_, H, H, wgate_up, 2 * F, gu, 2 * F, false);
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

  void down_projection(const Matrix& wdown, int layer) {
    const int H = c_.hidden_size, F = c_.intermediate_size;
    const float* act = ws_.act.data();
    float* x = ws_.x.data();
    product(act, n_, F, F, wdown, H, x, H, true);
    lora(layer, LoraTarget::down, act, F, x, H);
  }

  /// Final norm and head: one row: its last `logit_rows` tokens; a batch: the last token of
  /// every row that asks for logits, in row order.
  std::span<const float> head() {
    const int H = c_.hidden_size, V = c_.vocab_size;
    const float eps = static_cast<float>(c_.rms_norm_eps);
    const float* x = ws_.x.data();
    float* xn = ws_.xn.data();
    host_ops::parallel_for(ctx_, rows_, par_tokens_, [&](long r) {
      kernels::rmsnorm_row(x + static_cast<long>(logit_token(static_cast<int>(r))) * H,
                           model_.final_norm().data(), xn + r * H, H, eps);
    });
    product(xn, rows_, H, H, model_.head(), V, ws_.logits.data(), V, false);
    return std::span<const float>(ws_.logits.data(), static_cast<std::size_t>(rows_) * V);
  }

 private:
  /// A row's tokens in the activations: [t0, t0 + n).
  struct Span {
    const row_type* row;
    int t0, n;
  };

  /// `single_rows` >= 0: one row whose last `single_rows` tokens give logits; -1: a batch.
  HostForwardOps(const Model& model, Workspace<host>& ws, std::span<const row_type> rows,
                 int single_rows, row_type single)
      : model_(model), c_(model.config()), ws_(ws), single_(single), ctx_(ws.extras.context) {
    all_rows_ = single_rows >= 0 ? std::span<const row_type>(&single_, 1) : rows;
    if (single_rows >= 0) {  // no allocation: a decode step allocates nothing
      n_ = static_cast<int>(single_.tokens.size());
      single_span_ = {&single_, 0, n_};
      spans_ = std::span<const Span>(&single_span_, 1);
      rows_ = single_rows;
      single_first_ = n_ - single_rows;
    } else {
      batch_spans_.reserve(rows.size());
      for (const row_type& r : rows) {
        batch_spans_.push_back({&r, n_, static_cast<int>(r.tokens.size())});
        n_ += static_cast<int>(r.tokens.size());
        if (r.logits) logit_rows_.push_back(n_ - 1);
      }
      spans_ = batch_spans_;
      rows_ = static_cast<int>(logit_rows_.size());
    }
    ws.ensure(c_, n_, rows_);
    par_tokens_ = static_cast<long>(n_) * c_.hidden_size >= host_ops::kParallelMinWork;
  }

  int qkv_width() const { return c_.q_dim() + 2 * c_.kv_dim(); }

  /// y[n, out] (= or +=) x[n, in] · W^T with the base model's matrix in its storage.
  void product(const float* x, int n, int in, int ldx, const Matrix& w, int out, float* y, int ldy,
               bool accumulate) {
    if constexpr (BlockStorage<S>) {
      host_ops::matmul_nt(x, n, in, ldx, weights(w), out, y, ldy, accumulate, ctx_,
                          ws_.quant_scratch);
    } else {
      host_ops::matmul_nt(x, n, in, ldx, w.data(), out, y, ldy, accumulate, ctx_);
    }
  }
  /// The token whose hidden state gives logits row `r`.
  int logit_token(int r) const { return logit_rows_.empty() ? single_first_ + r : logit_rows_[r]; }

  /// Adds each row's update for (layer, target) to output columns [0, out) of y, on the row's
  /// adapted tokens: one product per run of them with the same adapter (for_each_lora_run).
  void lora(int layer, LoraTarget t, const float* x, int ldx, float* y, int ldy) {
    for_each_lora_run(all_rows_, [&](const Slice& slice, int first, int n) {
      if (const auto* m = slice.module(layer, t)) {
        const std::size_t off = static_cast<std::size_t>(first);
        host_ops::lora_update(x + off * ldx, n, m->in, ldx, m->a.data(), m->b.data(), m->rank,
                              m->out, m->scale, y + off * ldy, ldy, ws_.lora_scratch, ctx_);
      }
    });
  }

  const Model& model_;
  const ModelConfig& c_;
  Workspace<host>& ws_;
  row_type single_;                     ///< the one row of a single forward
  std::span<const row_type> all_rows_;  ///< single_, or the batch's rows
  Span single_span_{};
  std::vector<Span> batch_spans_;
  std::span<const Span> spans_;  ///< single_span_ or batch_spans_
  std::vector<int> logit_rows_;  ///< a batch: the last token of each row that asks for logits
  int single_first_ = 0;         ///< one row: its first token with logits
  int n_ = 0;                    ///< tokens of all rows
  int rows_ = 0;                 ///< rows of logits
  bool par_tokens_ = false;
  HostContext* ctx_;  ///< the loops' thread pool and kernels; null: OpenMP
};

/// The host backend's operations (see BackendOps).
template <>
struct BackendOps<host> {
  template <class Model, class Slice, class Cache>
  using forward_ops = HostForwardOps<Model, Slice, Cache>;
  /// forward_batch()'s operations: the same class, over many rows.
  template <class Model, class Slice, class Cache>
  using batch_ops = HostForwardOps<Model, Slice, Cache>;
  using logits_view = std::span<const float>;
  static std::int32_t argmax(logits_view row) {
    return kernels::argmax(row.data(), static_cast<int>(row.size()));
  }
};

}  // namespace baton
