// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host backend's forward operations: the row-wise parts (embedding, RoPE with the
///        cache append, attention, head, which adapter applies where) over the rows of one
///        forward; the token-wise parts are TokenOps' (model/token_ops.hpp) on HostExec.
///
/// One HostForwardOps lives for one forward call: it binds the model, workspace and rows (one
/// row is a batch of one: the same operations, the same arithmetic), and each operation covers
/// all their tokens at once. Token-parallel loops fork only when there is enough work
/// (host_ops::kParallelMinWork), on the HostContext the workspace is bound to
/// (`ws.extras.bind(ctx)`), or on OpenMP when it is bound to none.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "baton/backend/host.hpp"
#include "baton/backend/host_attention.hpp"
#include "baton/backend/host_parallel.hpp"
#include "baton/backend/host_sample.hpp"
#include "baton/backend/host_sample_avx512.hpp"
#include "baton/core/model_config.hpp"
#include "baton/io/lora_target.hpp"
#include "baton/kernels/argmax.hpp"
#include "baton/kernels/attention.hpp"
#include "baton/kernels/norm.hpp"
#include "baton/kernels/rope.hpp"
#include "baton/kv/append.hpp"
#include "baton/model/backend_ops.hpp"
#include "baton/model/batch_row.hpp"
#include "baton/model/host_exec.hpp"
#include "baton/model/token_ops.hpp"
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
class HostForwardOps : public TokenOps<HostForwardOps<Model, Slice, Cache>, Model, HostExec,
                                       Cache::layout::head_dim> {
  using Base =
      TokenOps<HostForwardOps<Model, Slice, Cache>, Model, HostExec, Cache::layout::head_dim>;
  friend Base;  // it adds the rows' LoRA updates after each product (lora)
  using S = typename Model::storage;
  using L = typename Cache::layout;
  using Base::c_;
  using Base::exec_;
  using Base::model_;
  using Base::n_;
  using Base::qkv_width;
  using Base::ws_;

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
    exec_.matmul(xn, rows_, H, H, weights(model_.head()), V, nullptr, ws_.logits.data(), V, false);
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
      : Base(model, ws, 0), single_(single), ctx_(ws.extras.context) {
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

  /// The token whose hidden state gives logits row `r`.
  int logit_token(int r) const { return logit_rows_.empty() ? single_first_ + r : logit_rows_[r]; }

  /// Adds each row's update for (layer, target) to output columns [0, out) of y, on the row's
  /// adapted tokens: one product per run of them with the same adapter (for_each_lora_run).
  void lora(int layer, LoraTarget t, const float* x, int ldx, float* y, int ldy) {
    for_each_lora_run(all_rows_, [&](const Slice& slice, int first, int n) {
      if (const auto* m = slice.module(layer, t)) {
        const std::size_t off = static_cast<std::size_t>(first);
        exec_.lora(*m, x + off * ldx, ldx, y + off * ldy, ldy, n);
      }
    });
  }

  row_type single_;                     ///< the one row of a single forward
  std::span<const row_type> all_rows_;  ///< single_, or the batch's rows
  Span single_span_{};
  std::vector<Span> batch_spans_;
  std::span<const Span> spans_;  ///< single_span_ or batch_spans_
  std::vector<int> logit_rows_;  ///< a batch: the last token of each row that asks for logits
  int single_first_ = 0;         ///< one row: its first token with logits
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
  /// Calls f(i) for every i in [0, n) on `ws`'s thread pool (on OpenMP when it has none): the
  /// batch scheduler's rows chosen in parallel, each by its own generation's sampler.
  template <class F>
  static void for_each_row(Workspace<host>& ws, long n, F&& f) {
    host_ops::parallel_for(ws.extras.context, n, n > 1, f);
  }
  /// kernels::draw_token with the passes over the row on vectors where the CPU has AVX-512 or
  /// AVX2 (the same token and log-probabilities, the exact argmax at temperature 0); the
  /// Decoder's sampler calls it (Sampler::TokenDrawer).
  static std::int32_t draw_token(const float* row, int n, const kernels::TokenDraw& d,
                                 const kernels::SampleScratch& scratch,
                                 const kernels::LogprobsOut& out) {
    if (host_simd::sample_passes_on_avx512())
      return kernels::draw_token<host_simd::Avx512RowPasses>(row, n, d, scratch, out);
    return host_simd::sample_passes_on_avx2()
               ? kernels::draw_token<host_simd::Avx2RowPasses>(row, n, d, scratch, out)
               : kernels::draw_token(row, n, d, scratch, out);
  }
};

}  // namespace baton
