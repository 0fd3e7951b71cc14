// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief GridForwardOps: the forward operations (ForwardOpsArchetype) as launches of the
///        phased kernels in kernels/phased/, over an executor that runs them — on the GPU
///        (model/cuda_forward.cuh) or on the host grid (model/host_grid_forward.hpp). One
///        composition, two places to run it: the host grid checks this file's indexing,
///        strides and launch shapes against the golden outputs on machines without a GPU.
///
/// An executor `E` provides
///   - `E::backend`: the backend whose buffers the model, slice and cache hold;
///   - `E(Workspace<backend>&)`: binds to a workspace (and, on the GPU, its stream);
///   - `launch<K>(LaunchConfig, K::Args)`: runs a phased kernel;
///   - `matmul<S>(x, n, in, ldx, w, out, bias, y, ldy, accumulate)`: y[n, out] (= or +=)
///     x[n, in] · w[out, in]^T (+ bias[out] when not null), f32 accumulation.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include "baton/backend/backend.hpp"
#include "baton/core/error.hpp"
#include "baton/core/model_config.hpp"
#include "baton/grid/forward_scratch.hpp"
#include "baton/io/lora_target.hpp"
#include "baton/kernels/phased/attention_split.hpp"
#include "baton/kernels/phased/elementwise.hpp"
#include "baton/kernels/phased/embed.hpp"
#include "baton/kernels/phased/forward_inputs.hpp"
#include "baton/kernels/phased/lora_delta.hpp"
#include "baton/kernels/phased/rmsnorm.hpp"
#include "baton/kernels/phased/rmsnorm_split.hpp"
#include "baton/kernels/phased/rope_append.hpp"
#include "baton/kv/kv_view.hpp"
#include "baton/model/workspace.hpp"

namespace baton {

/// Queues `ids` into `dst` from kernel arguments (ForwardInputsKernel, kInlineTokens ids per
/// launch), and `value` into `desc` with the first launch when `desc` is not null: no host
/// staging buffer, no wait.
template <class Exec>
void write_ids(Exec& exec, std::int32_t* dst, std::span<const std::int32_t> ids,
               kernels::ForwardDesc* desc = nullptr, kernels::ForwardDesc value = {}) {
  using K = kernels::ForwardInputsKernel;
  const int n = static_cast<int>(ids.size());
  for (int off = 0; off < n || (off == 0 && desc); off += K::kInlineTokens) {
    typename K::Args a;
    a.value = value;
    a.desc = off == 0 ? desc : nullptr;
    a.count = std::min(K::kInlineTokens, n - off);
    for (int i = 0; i < a.count; ++i) a.tokens[i] = ids[off + i];
    a.offset = off;
    a.dst = dst;
    exec.template launch<K>(K::config(), a);
    if (n == 0) break;
  }
}

/// Queues the descriptor {first_pos, n} and the token ids into `s`.
template <class Exec, class Scratch>
void write_forward_inputs(Exec& exec, Scratch& s, int first_pos,
                          std::span<const std::int32_t> tokens) {
  write_ids(exec, raw_pointer(s.tokens.data()), tokens, raw_pointer(s.desc.data()),
            kernels::ForwardDesc{first_pos, static_cast<int>(tokens.size())});
}

/// Tag of a forward whose descriptor and token id a device step already wrote into the
/// scratch (model/device_loop.hpp): one token, nothing queued from the host, attention sized
/// for the target's whole capacity (the descriptor masks it), so its launches are the same at
/// every step and can be captured once.
struct InputsOnDevice {};

/// Tag of a forward of `tokens` ids that a device kernel already wrote into the scratch with
/// the descriptor {first_pos, tokens} (the relay's hand-off, model/device_prefill.hpp): sized
/// from the host-known count, nothing queued from the host for its inputs.
struct InputsInScratch {
  int first_pos = 0;
  int tokens = 0;
};

template <class Model, class Slice, class Cache, class Exec>
class GridForwardOps {
  using B = typename Exec::backend;
  using S = typename Model::storage;
  using L = typename Cache::layout;
  static constexpr int D = L::head_dim;
  template <class T>
  using buffer = typename B::template buffer<T>;

 public:
  GridForwardOps(const Model& model, Workspace<B>& ws, const Slice& slice, Cache& cache,
                 KvTarget target, int first_pos, std::span<const std::int32_t> tokens,
                 int logit_rows)
      : GridForwardOps(model, ws, slice, cache, target, static_cast<int>(tokens.size()), logit_rows,
                       first_pos + static_cast<int>(tokens.size())) {
    // Checked before anything is queued: a launch refused half-way would leave some layers'
    // K/V written (the cache position would not move, but the prefix could be torn).
    check_size(n_);
    reserve(ws, model.config(), splits_, n_, rows_);
    write_forward_inputs(exec_, s_, first_pos, tokens);
  }

  /// A forward whose ids and descriptor a kernel wrote into the scratch (InputsInScratch),
  /// reserved for it beforehand (reserve(ws, cfg, splits, tokens, logit_rows)).
  GridForwardOps(const Model& model, Workspace<B>& ws, const Slice& slice, Cache& cache,
                 KvTarget target, InputsInScratch in, int logit_rows)
      : GridForwardOps(model, ws, slice, cache, target, in.tokens, logit_rows,
                       in.first_pos + in.tokens) {}

  /// A one-token forward whose inputs are already in the scratch (InputsOnDevice). The
  /// scratch must have been reserved for it (reserve(ws, cfg, splits, 1, 1)): nothing here
  /// allocates.
  GridForwardOps(const Model& model, Workspace<B>& ws, const Slice& slice, Cache& cache,
                 KvTarget target, InputsOnDevice)
      : GridForwardOps(model, ws, slice, cache, target, 1, 1, cache.capacity(target)) {
    exec_.skip_when_idle(raw(s_.desc));
  }

  /// Refuses a forward of more tokens than one launch grid holds (before anything is queued).
  static void check_size(int tokens) {
    BATON_CHECK(tokens <= static_cast<int>(grid::kMaxGridY), capacity_error, "forward of ", tokens,
                " tokens: the CUDA kernels take at most ", grid::kMaxGridY,
                " tokens per forward (split the prefill)");
  }

  /// Grows `ws` and its scratch for a forward of `tokens` tokens with `rows` logits rows over
  /// `splits` attention splits.
  static void reserve(Workspace<B>& ws, const ModelConfig& c, int splits, int tokens, int rows) {
    ws.ensure(c, tokens, rows);
    auto& s = ws.extras.scratch();
    const auto z = [](long v) { return static_cast<std::size_t>(v); };
    s.grow(s.desc, 1);
    s.grow(s.tokens, z(tokens));
    s.grow(s.lora_u, z(tokens) * Slice::rank_bound);
    s.grow(s.attn_max_sum, z(tokens) * c.num_heads * splits * 2);
    s.grow(s.attn_acc, z(tokens) * c.num_heads * splits * D);
    s.grow(s.chosen, z(rows));
    s.grow(s.norm_squares, z(tokens) * kernels::rms_split(c.hidden_size).count);
  }

  void embed() {
    using K = kernels::EmbedKernel<S>;
    exec_.template launch<K>(K::config(n_),
                             {raw(model_.embedding()), raw(s_.tokens), raw(ws_.x), c_.hidden_size});
  }

  void norm(const buffer<float>& weight) { norm_rows(raw(ws_.x), raw(ws_.xn), n_, raw(weight)); }

  void qkv(const buffer<S>& wqkv, const buffer<float>& bqkv, int layer) {
    const int H = c_.hidden_size, qd = c_.q_dim(), kvd = c_.kv_dim(), w = qkv_width();
    exec_.matmul(raw(ws_.xn), n_, H, H, raw(wqkv), w, bqkv.size() ? raw(bqkv) : nullptr,
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

  void rope_append(int layer) {
    using K = kernels::RopeAppendKernel<L>;
    typename K::Args a{raw(ws_.qkv),
                       qkv_width(),
                       c_.num_heads,
                       c_.num_kv_heads,
                       raw(model_.inv_freq()),
                       cache_.append_view(target_, layer),
                       raw(s_.desc)};
    exec_.template launch<K>(K::config(n_), a);
  }

  void attention(int layer) {
    using KS = kernels::SplitAttentionKernel<L>;
    using KC = kernels::AttentionCombineKernel<D>;
    const kernels::AttentionPartials parts{raw(s_.attn_max_sum), raw(s_.attn_acc), splits_};
    typename KS::Args a{cache_.read_span(target_, layer, read_upto_),
                        raw(ws_.qkv),
                        qkv_width(),
                        c_.num_heads,
                        c_.num_heads / c_.num_kv_heads,
                        1.0f / std::sqrt(static_cast<float>(D)),
                        raw(s_.desc),
                        parts};
    exec_.template launch<KS>(KS::config(n_, c_.num_heads, splits_), a);
    exec_.template launch<KC>(KC::config(n_, c_.num_heads),
                              {parts, raw(ws_.attn), c_.q_dim(), c_.num_heads});
  }

  void output_projection(const buffer<S>& wo, int layer) {
    const int H = c_.hidden_size, qd = c_.q_dim();
    exec_.matmul(raw(ws_.attn), n_, qd, qd, raw(wo), H, nullptr, raw(ws_.x), H, true);
    lora(layer, LoraTarget::o, raw(ws_.attn), qd, raw(ws_.x), H);
  }

  void gate_up(const buffer<S>& wgate_up, int layer) {
    const int H = c_.hidden_size, F = c_.intermediate_size;
    exec_.matmul(raw(ws_.xn), n_, H, H, raw(wgate_up), 2 * F, nullptr, raw(ws_.gate_up), 2 * F,
                 false);
    lora(layer, LoraTarget::gate, raw(ws_.xn), H, raw(ws_.gate_up), 2 * F);
    lora(layer, LoraTarget::up, raw(ws_.xn), H, raw(ws_.gate_up) + F, 2 * F);
  }

  void swiglu() {
    using K = kernels::SwigluKernel;
    const int F = c_.intermediate_size;
    exec_.template launch<K>(K::config(n_, F), {raw(ws_.gate_up), raw(ws_.act), n_, F});
  }

  void down_projection(const buffer<S>& wdown, int layer) {
    const int H = c_.hidden_size, F = c_.intermediate_size;
    exec_.matmul(raw(ws_.act), n_, F, F, raw(wdown), H, nullptr, raw(ws_.x), H, true);
    lora(layer, LoraTarget::down, raw(ws_.act), F, raw(ws_.x), H);
  }

  /// Final norm and head for the last `logit_rows` tokens; the logits stay in backend memory.
  auto head() {
    const int H = c_.hidden_size, V = c_.vocab_size;
    const int first = n_ - rows_;
    norm_rows(raw(ws_.x) + static_cast<std::size_t>(first) * H, raw(ws_.xn), rows_,
              raw(model_.final_norm()));
    exec_.matmul(raw(ws_.xn), rows_, H, H, raw(model_.head()), V, nullptr, raw(ws_.logits), V,
                 false);
    return exec_.logits(raw(ws_.logits), static_cast<std::size_t>(rows_) * V);
  }

 private:
  GridForwardOps(const Model& model, Workspace<B>& ws, const Slice& slice, Cache& cache,
                 KvTarget target, int tokens, int logit_rows, int read_upto)
      : model_(model),
        c_(model.config()),
        ws_(ws),
        s_(ws.extras.scratch()),
        exec_(ws),
        slice_(slice),
        cache_(cache),
        target_(target),
        n_(tokens),
        rows_(logit_rows),
        read_upto_(read_upto),
        splits_(kernels::attention_splits(cache.capacity(target))) {}

  template <class Buf>
  static auto raw(Buf& b) {
    return raw_pointer(b.data());
  }
  int qkv_width() const { return c_.q_dim() + 2 * c_.kv_dim(); }
  float eps() const { return static_cast<float>(c_.rms_norm_eps); }

  /// The hidden-size norms, split over several blocks per row (kernels/phased/rmsnorm_split.hpp).
  void norm_rows(const float* x, float* y, int rows, const float* w) {
    using KS = kernels::RmsSquaresKernel;
    using KN = kernels::RmsScaleKernel<float>;
    const int H = c_.hidden_size, chunk = kernels::rms_split(H).chunk;
    const grid::LaunchConfig cfg = kernels::rms_split_config(rows, H);
    float* squares = raw(s_.norm_squares);
    exec_.template launch<KS>(cfg, {x, H, H, chunk, squares});
    exec_.template launch<KN>(cfg, {x, y, H, H, H, chunk, squares, w, eps()});
  }

  /// Adds the slice's update for (layer, target) to output columns [0, out) of y.
  void lora(int layer, LoraTarget t, const float* x, int ldx, float* y, int ldy) {
    const auto* m = slice_.module(layer, t);
    if (!m) return;
    using KS = kernels::LoraShrinkKernel;
    using KE = kernels::LoraExpandKernel;
    float* u = raw(s_.lora_u);
    exec_.template launch<KS>(KS::config(n_, m->rank), {raw(m->a), x, ldx, m->in, m->rank, u});
    exec_.template launch<KE>(KE::config(n_, m->out),
                              {raw(m->b), u, m->rank, m->out, m->scale, y, ldy});
  }

  const Model& model_;
  const ModelConfig& c_;
  Workspace<B>& ws_;
  std::remove_reference_t<decltype(std::declval<Workspace<B>&>().extras.scratch())>& s_;
  Exec exec_;
  const Slice& slice_;
  Cache& cache_;
  KvTarget target_;
  int n_;
  int rows_;
  int read_upto_;  ///< positions the attention span covers (the descriptor masks the rest)
  int splits_;
};

}  // namespace baton
