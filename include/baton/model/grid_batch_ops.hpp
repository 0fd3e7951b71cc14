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
/// once; a row without one adds nothing). RoPE with the cache append and the attention run per
/// row, each on its own cache target with its own descriptor {position, tokens} (one per row in
/// the scratch): a launch per row and layer, which a grouped attention kernel could fold into one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/model/batch_row.hpp"
#include "baton/model/grid_ops.hpp"
#include "baton/model/grid_token_ops.hpp"

namespace baton {

template <class Model, class Slice, class Cache, class Exec>
class GridBatchOps : public GridTokenOps<GridBatchOps<Model, Slice, Cache, Exec>, Model, Exec,
                                         Cache::layout::head_dim> {
  using Base =
      GridTokenOps<GridBatchOps<Model, Slice, Cache, Exec>, Model, Exec, Cache::layout::head_dim>;
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
    int splits = 1;
    for (const row_type& r : rows_) {
      const int n = static_cast<int>(r.tokens.size());
      spans_.push_back({n_, n});
      n_ += n;
      if (r.logits) ++logit_rows_;
      splits = std::max(splits, kernels::attention_split(r.cache->capacity(r.target)).splits);
    }
    Single::check_size(n_);  // before anything is queued
    Single::reserve(ws, c_, splits, n_, std::max(logit_rows_, 1));
    ws.extras.grow(ws.extras.scratch().desc, rows_.size());
    auto& s = scratch();
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const row_type& r = rows_[i];
      write_ids(exec_, raw(s.tokens) + spans_[i].first, r.tokens, raw(s.desc) + i,
                kernels::ForwardDesc{r.position, spans_[i].n});
    }
  }

  GridBatchOps(const GridBatchOps&) = delete;
  GridBatchOps& operator=(const GridBatchOps&) = delete;

  void embed() {
    using K = kernels::EmbedKernel<S>;
    exec_.template launch<K>(K::config(n_), {raw(model_.embedding()), raw(scratch().tokens),
                                              raw(ws_.x), c_.hidden_size});
  }

  void rope_append(int layer) {
    using K = kernels::RopeAppendKernel<L>;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const row_type& r = rows_[i];
      typename K::Args a{raw(ws_.qkv) + offset(i, qkv_width()),
                         qkv_width(),
                         c_.num_heads,
                         c_.num_kv_heads,
                         raw(model_.inv_freq()),
                         r.cache->append_view(r.target, layer),
                         raw(scratch().desc) + i};
      exec_.template launch<K>(K::config(spans_[i].n), a);
    }
  }

  /// Each row attends over its own target up to its last new position; the rows share the
  /// partials scratch one after another (launches are ordered on the stream).
  void attention(int layer) {
    using KS = kernels::SplitAttentionKernel<L>;
    using KC = kernels::AttentionCombineKernel<D>;
    auto& s = scratch();
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const row_type& r = rows_[i];
      const int n = spans_[i].n;
      const kernels::AttentionSplit split = kernels::attention_split(r.cache->capacity(r.target));
      const kernels::AttentionPartials parts{raw(s.attn_max_sum), raw(s.attn_acc), split.splits};
      typename KS::Args a{r.cache->read_span(r.target, layer, r.position + n),
                          raw(ws_.qkv) + offset(i, qkv_width()),
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
          {parts, raw(ws_.attn) + offset(i, c_.q_dim()), c_.q_dim(), c_.num_heads});
    }
  }

  /// The final norm of each logits row's last token (gathered into consecutive rows), then one
  /// head product over them: [logit rows, vocab] from the workspace's first logits row.
  auto head() {
    const int H = c_.hidden_size, V = c_.vocab_size;
    float* out = raw(ws_.logits);
    int k = 0;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      if (!rows_[i].logits) continue;
      const std::size_t last = static_cast<std::size_t>(spans_[i].first + spans_[i].n - 1);
      grid_norm_rows(exec_, scratch(), c_, raw(ws_.x) + last * H,
                     raw(ws_.xn) + static_cast<std::size_t>(k) * H, 1, raw(model_.final_norm()));
      ++k;
    }
    if (k > 0)
      exec_.matmul(raw(ws_.xn), k, H, H, raw(model_.head()), V, nullptr, out, V, false);
    return exec_.logits(out, static_cast<std::size_t>(k) * V);
  }

 private:
  /// Where row i's tokens start in the batch's token order, and how many it has.
  struct RowSpan {
    int first = 0;
    int n = 0;
  };

  auto& scratch() { return ws_.extras.scratch(); }
  std::size_t offset(std::size_t row, int width) const {
    return static_cast<std::size_t>(spans_[row].first) * static_cast<std::size_t>(width);
  }

  /// Adds each run of same-adapter rows' update for (layer, target) to its rows of y.
  void lora(int layer, LoraTarget t, const float* x, int ldx, float* y, int ldy) {
    for (std::size_t i = 0; i < rows_.size();) {
      std::size_t j = i + 1;
      while (j < rows_.size() && rows_[j].slice == rows_[i].slice) ++j;
      const int first = spans_[i].first;
      const int n = spans_[j - 1].first + spans_[j - 1].n - first;
      if (rows_[i].slice != nullptr) {
        if (const auto* m = rows_[i].slice->module(layer, t)) {
          grid_lora(exec_, scratch(), *m, x + static_cast<std::size_t>(first) * ldx, ldx,
                    y + static_cast<std::size_t>(first) * ldy, ldy, n);
        }
      }
      i = j;
    }
  }

  std::span<const row_type> rows_;
  std::vector<RowSpan> spans_;  // (n_, the base's token count, sums them)
  int logit_rows_ = 0;          ///< rows that want logits
};

}  // namespace baton
