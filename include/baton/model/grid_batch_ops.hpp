// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief GridBatchOps: forward_batch()'s operations (model/forward_batch.hpp) as launches of
///        the phased kernels, over the executors GridForwardOps runs on — the GPU (CudaExec:
///        cuBLAS GEMM for the base products) or the host grid (HostGridExec), which is how
///        this composition is tested without a GPU.
///
/// All rows' tokens lie one after another in the scratch (`tokens`, and the activations' rows),
/// so the embedding, the norms, the SwiGLU and every base product run once over all of them:
/// each weight is read once per step, whatever the number of rows. The LoRA update runs once
/// per run of neighbouring rows with the same adapter (rows sorted by adapter read each adapter
/// once; a row without one adds nothing; an activated adapter updates only a row's tokens from
/// its activation start on). RoPE with the cache append and the attention run per
/// row, each on its own cache target with its own descriptor {position, tokens} (one per row in
/// the scratch): a launch per row and layer, which a grouped attention kernel could fold into one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>

#include "baton/model/batch_row.hpp"
#include "baton/model/grid_ops.hpp"
#include "baton/model/token_ops.hpp"

namespace baton {

template <class Model, class Slice, class Cache, class Exec>
class GridBatchOps : public TokenOps<GridBatchOps<Model, Slice, Cache, Exec>, Model, Exec,
                                     Cache::layout::head_dim> {
  using Base =
      TokenOps<GridBatchOps<Model, Slice, Cache, Exec>, Model, Exec, Cache::layout::head_dim>;
  friend Base;  // it adds each run of rows' LoRA update after each product (lora)
  using B = typename Exec::backend;
  using S = typename Model::storage;
  using L = typename Cache::layout;
  static constexpr int D = L::head_dim;
  using Single = GridForwardOps<Model, Slice, Cache, Exec>;
  using Base::c_;
  using Base::exec_;
  using Base::model_;
  using Base::n_;
  using Base::qkv_width;
  using Base::raw;
  using Base::ws_;

 public:
  using row_type = BatchRow<Slice, Cache>;

  /// A batch: the last token's logits of every row with `logits` set, in row order. Sizes the
  /// workspace and queues every row's ids and descriptor before the first launch.
  GridBatchOps(const Model& model, Workspace<B>& ws, std::span<const row_type> rows)
      : Base(model, ws, 0), rows_(rows) {
    int splits = 1, logit_rows = 0;
    for (const row_type& r : rows_) {
      n_ += tokens(r);
      if (r.logits) ++logit_rows;
      splits = std::max(splits, kernels::attention_split(r.cache->capacity(r.target)).splits);
    }
    Single::check_size(n_);  // before anything is queued
    Single::reserve(ws, c_, splits, n_, std::max(logit_rows, 1));
    ws.extras.grow(ws.extras.scratch().desc, rows_.size());
    auto& s = scratch();
    for_each_row([&](std::size_t i, const row_type& r, int first, int n) {
      write_ids(exec_, raw(s.tokens) + first, r.tokens, raw(s.desc) + i,
                kernels::ForwardDesc{r.position, n});
    });
  }

  GridBatchOps(const GridBatchOps&) = delete;
  GridBatchOps& operator=(const GridBatchOps&) = delete;

  void embed() {
    using K = kernels::EmbedKernel<S>;
    exec_.template launch<K>(K::config(n_), {weights(model_.embedding()), raw(scratch().tokens),
                                             raw(ws_.x), c_.hidden_size});
  }

  void rope_append(int layer) {
    using K = kernels::RopeAppendKernel<L>;
    for_each_row([&](std::size_t i, const row_type& r, int first, int n) {
      typename K::Args a{raw(ws_.qkv) + at(first, qkv_width()),
                         qkv_width(),
                         c_.num_heads,
                         c_.num_kv_heads,
                         raw(model_.inv_freq()),
                         r.cache->append_view(r.target, layer),
                         raw(scratch().desc) + i};
      exec_.template launch<K>(K::config(n), a);
    });
  }

  /// Each row attends over its own target up to its last new position; the rows share the
  /// partials scratch one after another (launches are ordered on the stream).
  void attention(int layer) {
    using KS = kernels::SplitAttentionKernel<L>;
    using KC = kernels::AttentionCombineKernel<D>;
    auto& s = scratch();
    for_each_row([&](std::size_t i, const row_type& r, int first, int n) {
      const kernels::AttentionSplit split = kernels::attention_split(r.cache->capacity(r.target));
      const kernels::AttentionPartials parts{raw(s.attn_max_sum), raw(s.attn_acc), split.splits};
      typename KS::Args a{r.cache->read_span(r.target, layer, r.position + n),
                          raw(ws_.qkv) + at(first, qkv_width()),
                          qkv_width(),
                          c_.num_heads,
                          c_.num_heads / c_.num_kv_heads,
                          1.0f / std::sqrt(static_cast<float>(D)),
                          raw(s.desc) + i,
                          parts,
                          split.span};
      exec_.template launch<KS>(KS::config(n, c_.num_heads, split.splits), a);
      exec_.template launch<KC>(
          KC::config(n, c_.num_heads),
          {parts, raw(ws_.attn) + at(first, c_.q_dim()), c_.q_dim(), c_.num_heads});
    });
  }

  /// The final norm of each logits row's last token (gathered into consecutive rows), then one
  /// head product over them: [logit rows, vocab] from the workspace's first logits row.
  auto head() {
    const int H = c_.hidden_size, V = c_.vocab_size;
    float* out = raw(ws_.logits);
    int k = 0;
    for_each_row([&](std::size_t, const row_type& r, int first, int n) {
      if (!r.logits) return;
      exec_.norm_rows(c_, raw(ws_.x) + at(first + n - 1, H), raw(ws_.xn) + at(k, H), 1,
                      raw(model_.final_norm()));
      ++k;
    });
    if (k > 0)
      exec_.matmul(raw(ws_.xn), k, H, H, weights(model_.head()), V, nullptr, out, V, false);
    return exec_.logits(out, static_cast<std::size_t>(k) * V);
  }

 private:
  auto& scratch() { return ws_.extras.scratch(); }
  /// Where token `t` of the batch starts in a buffer of `width` values per token.
  static std::size_t at(int t, int width) {
    return static_cast<std::size_t>(t) * static_cast<std::size_t>(width);
  }
  static int tokens(const row_type& r) { return static_cast<int>(r.tokens.size()); }

  /// Calls f(i, row, first, n) for each row in order: its index, and where its tokens lie in
  /// the batch (rows' tokens follow one another, so the offsets are running sums).
  template <class F>
  void for_each_row(F&& f) const {
    int first = 0;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      f(i, rows_[i], first, tokens(rows_[i]));
      first += tokens(rows_[i]);
    }
  }

  /// Adds each run of same-adapter rows' update for (layer, target) to its adapted tokens' rows
  /// of y (for_each_lora_run).
  void lora(int layer, LoraTarget t, const float* x, int ldx, float* y, int ldy) {
    for_each_lora_run(rows_, [&](const Slice& slice, int first, int n) {
      if (const auto* m = slice.module(layer, t))
        exec_.lora(*m, x + at(first, ldx), ldx, y + at(first, ldy), ldy, n);
    });
  }

  std::span<const row_type> rows_;  // (n_, the base's token count, sums their tokens)
};

}  // namespace baton
