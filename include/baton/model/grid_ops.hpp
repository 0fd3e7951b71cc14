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
#include "baton/kernels/phased/argmax_split.hpp"
#include "baton/kernels/phased/attention_split.hpp"
#include "baton/kernels/phased/elementwise.hpp"
#include "baton/kernels/phased/embed.hpp"
#include "baton/kernels/phased/forward_inputs.hpp"
#include "baton/kernels/phased/lora_delta.hpp"
#include "baton/kernels/phased/rmsnorm.hpp"
#include "baton/kernels/phased/rmsnorm_split.hpp"
#include "baton/kernels/phased/rope_append.hpp"
#include "baton/kv/kv_view.hpp"
#include "baton/lora/activation.hpp"
#include "baton/model/forward.hpp"
#include "baton/model/token_ops.hpp"
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
/// from the host-known count, nothing queued from the host for its ids. A pass of a chunked
/// forward reads them from `offset` on and rewrites the descriptor for its own tokens.
struct InputsInScratch {
  int first_pos = 0;
  int tokens = 0;
  int offset = 0;
  bool write_desc = false;
};

/// Tokens one pass of a forward on `s` takes (GridScratch::chunk_tokens, within what one
/// launch grid holds).
template <class Scratch>
int pass_tokens(const Scratch& s) {
  BATON_CHECK(s.chunk_tokens >= 1, usage_error, "GridScratch::chunk_tokens must be >= 1 (got ",
              s.chunk_tokens, ")");
  return std::min(s.chunk_tokens, static_cast<int>(grid::kMaxGridY));
}

/// Products of several tokens with 16-bit weights widen them into f32 scratch first on the CUDA
/// backend (cuBLAS has no f32 x bf16 product), a tile of output rows at a time: at most this
/// many elements (64 MiB).
inline constexpr std::size_t kWidenTileElems = std::size_t{16} << 20;
/// The widened tile a model's products need: its largest matrix, up to kWidenTileElems.
inline std::size_t widened_tile_elems(const ModelConfig& c) {
  const auto z = [](long v) { return static_cast<std::size_t>(v); };
  const std::size_t H = z(c.hidden_size), F = z(c.intermediate_size);
  const std::size_t largest = std::max(
      {z(c.q_dim() + 2 * c.kv_dim()) * H, H * z(c.q_dim()), 2 * F * H, H * F, z(c.vocab_size) * H});
  return std::min(largest, kWidenTileElems);
}

/// What a workspace and its GridScratch hold for passes of up to `tokens` tokens (elements of
/// each buffer): the activations, the ids, the LoRA intermediate, the attention partials, the
/// chosen ids and the widened tile. docs/cuda.md states the formula.
struct GridScratchSizes {
  std::size_t activations = 0;  ///< f32 (Workspace::ActivationSizes::total)
  std::size_t desc = 0, tokens = 0, lora_u = 0, attn_max_sum = 0, attn_acc = 0, chosen = 0,
              widened = 0, norm_squares = 0, argmax_partials = 0;
  std::size_t attention_bytes() const { return (attn_max_sum + attn_acc) * sizeof(float); }
  std::size_t bytes() const {
    return (activations + lora_u + widened + norm_squares) * sizeof(float) + attention_bytes() +
           argmax_partials * sizeof(kernels::ArgmaxPair) + desc * sizeof(kernels::ForwardDesc) +
           (tokens + chosen) * sizeof(std::int32_t);
  }
};

template <class Model, class Slice, class Cache, class Exec>
class GridForwardOps : public TokenOps<GridForwardOps<Model, Slice, Cache, Exec>, Model, Exec,
                                       Cache::layout::head_dim> {
  using Base =
      TokenOps<GridForwardOps<Model, Slice, Cache, Exec>, Model, Exec, Cache::layout::head_dim>;
  friend Base;  // it adds this pass's LoRA update after each product (lora)
  using B = typename Exec::backend;
  using S = typename Model::storage;
  using L = typename Cache::layout;
  static constexpr int D = L::head_dim;
  template <class T>
  using buffer = typename B::template buffer<T>;
  using Base::c_;
  using Base::eps;
  using Base::exec_;
  using Base::model_;
  using Base::n_;
  using Base::qkv_width;
  using Base::raw;
  using Base::ws_;

 public:
  /// One pass over `tokens` (ids from the host) at `first_pos`, with `logit_rows` rows of logits
  /// written from row `row_offset` of the workspace's logits on.
  GridForwardOps(const Model& model, Workspace<B>& ws, const Slice& slice, Cache& cache,
                 KvTarget target, int first_pos, std::span<const std::int32_t> tokens,
                 int logit_rows, int row_offset = 0)
      : GridForwardOps(model, ws, slice, cache, target, static_cast<int>(tokens.size()), logit_rows,
                       first_pos + static_cast<int>(tokens.size())) {
    // Checked before anything is queued: a launch refused half-way would leave some layers'
    // K/V written (the cache position would not move, but the prefix could be torn).
    check_size(n_);
    reserve(ws, model.config(), splits_, n_, row_offset + rows_);
    row_offset_ = row_offset;
    write_forward_inputs(exec_, s_, first_pos, tokens);
  }

  /// A pass whose ids a kernel wrote into the scratch (InputsInScratch), reserved for it
  /// beforehand (reserve(ws, cfg, splits, tokens, logit_rows, all ids)).
  GridForwardOps(const Model& model, Workspace<B>& ws, const Slice& slice, Cache& cache,
                 KvTarget target, InputsInScratch in, int logit_rows)
      : GridForwardOps(model, ws, slice, cache, target, in.tokens, logit_rows,
                       in.first_pos + in.tokens) {
    token_offset_ = in.offset;
    if (in.write_desc) {
      write_ids(exec_, raw(s_.tokens), {}, raw(s_.desc),
                kernels::ForwardDesc{in.first_pos, in.tokens});
    }
  }

  /// A one-token forward whose inputs are already in the scratch (InputsOnDevice). The
  /// scratch must have been reserved for it (reserve(ws, cfg, splits, 1, 1)): nothing here
  /// allocates.
  GridForwardOps(const Model& model, Workspace<B>& ws, const Slice& slice, Cache& cache,
                 KvTarget target, InputsOnDevice)
      : GridForwardOps(model, ws, slice, cache, target, 1, 1, cache.capacity(target)) {
    exec_.skip_when_idle(raw(s_.desc));
  }

  /// Refuses a pass of more tokens than one launch grid holds (before anything is queued).
  static void check_size(int tokens) {
    BATON_CHECK(tokens <= static_cast<int>(grid::kMaxGridY), capacity_error, "forward of ", tokens,
                " tokens: the CUDA kernels take at most ", grid::kMaxGridY,
                " tokens per pass (GridScratch::chunk_tokens)");
  }

  /// Grows `ws` and its scratch, through the workspace's counted path, for passes of up to
  /// `tokens` tokens with `rows` logits rows over `splits` attention splits, whose ids (up to
  /// `input_tokens` of them, for a forward a kernel fills in whole) live in the scratch.
  static void reserve(Workspace<B>& ws, const ModelConfig& c, int splits, int tokens, int rows,
                      int input_tokens = 0) {
    const GridScratchSizes z =
        scratch_sizes(c, splits, tokens, rows, input_tokens, Exec::widens_16bit_products);
    ws.ensure(c, tokens, rows);
    auto& e = ws.extras;
    auto& s = e.scratch();
    e.grow(s.desc, z.desc);
    e.grow(s.tokens, z.tokens);
    e.grow(s.lora_u, z.lora_u);
    e.grow(s.attn_max_sum, z.attn_max_sum);
    e.grow(s.attn_acc, z.attn_acc);
    e.grow(s.chosen, z.chosen);
    e.grow(s.widened, z.widened);
    e.grow(s.norm_squares, z.norm_squares);
    e.grow(s.argmax_partials, z.argmax_partials);
  }

  /// What reserve() sizes (`widens`: the executor widens 16-bit weights for multi-token
  /// products, as the CUDA one does).
  static GridScratchSizes scratch_sizes(const ModelConfig& c, int splits, int tokens, int rows,
                                        int input_tokens, bool widens) {
    const auto z = [](long v) { return static_cast<std::size_t>(v); };
    GridScratchSizes g;
    g.activations = Workspace<B>::sizes(c, tokens, rows).total();
    g.desc = 1;
    g.tokens = z(std::max(tokens, input_tokens));
    g.lora_u = z(tokens) * Slice::rank_bound;
    g.attn_max_sum = z(tokens) * z(c.num_heads) * z(splits) * 2;
    g.attn_acc = z(tokens) * z(c.num_heads) * z(splits) * D;
    g.chosen = z(rows);
    g.widened = widens && !std::is_same_v<S, f32> && tokens > 1 ? widened_tile_elems(c) : 0;
    g.norm_squares = z(tokens) * z(kernels::rms_split(c.hidden_size).count);
    g.argmax_partials = kernels::kMaxArgmaxPartials;
    return g;
  }

  /// A forward of `n` tokens at `first_pos` in passes of at most pass_tokens() tokens (a
  /// chunked prefill), each through every layer; every pass reads the K/V the earlier ones
  /// appended, so the result equals one pass over all n. `ids`: the host's ids, or empty when a
  /// kernel already wrote all n into the scratch (InputsInScratch). Logits: none, the last
  /// token's row, or every token's row (`rows`: 0, 1 or n). The slice's update applies from
  /// position `adapter_from` on (lora/activation.hpp). The caller commits the n positions.
  static auto run_passes(const Model& model, Workspace<B>& ws, const Slice& slice, Cache& cache,
                         KvTarget target, int first_pos, int n, std::span<const std::int32_t> ids,
                         int rows, int adapter_from = kAdapterFromSlice) {
    const ModelConfig& c = model.config();
    const int chunk = pass_tokens(ws.extras.scratch());
    const int per_pass = std::min(chunk, n);
    // Sized once for the largest pass (and every row), before anything is queued.
    reserve(ws, c, kernels::attention_splits(cache.capacity(target)), per_pass, std::max(rows, 1),
            ids.empty() ? n : 0);
    for (int off = 0; off < n; off += chunk) {
      const int m = std::min(chunk, n - off);
      const bool last = off + m == n;
      const int pass_rows = rows == n ? m : (last ? rows : 0);
      const auto run = [&](GridForwardOps& ops) {
        ops.set_adapted_from(adapted_from_token(first_pos + off, m, adapter_from));
        run_layers(ops, model);
        if (pass_rows > 0) (void)ops.head();
      };
      if (ids.empty()) {
        GridForwardOps ops(model, ws, slice, cache, target,
                           InputsInScratch{first_pos + off, m, off, off != 0 || m != n}, pass_rows);
        ops.row_offset_ = rows == n ? off : 0;
        run(ops);
      } else {
        GridForwardOps ops(model, ws, slice, cache, target, first_pos + off,
                           ids.subspan(static_cast<std::size_t>(off), static_cast<std::size_t>(m)),
                           pass_rows, rows == n ? off : 0);
        run(ops);
      }
    }
    Exec exec(ws);
    using View = decltype(exec.logits(nullptr, 0));
    if (rows == 0) return View{};
    return exec.logits(raw(ws.logits), static_cast<std::size_t>(rows) * c.vocab_size);
  }

  /// The slice's update applies to this pass's tokens [k, n) (lora/activation.hpp's
  /// adapted_from_token; 0 by default: all).
  void set_adapted_from(int k) { adapted_from_ = k; }

  void embed() {
    using K = kernels::EmbedKernel<S>;
    exec_.template launch<K>(
        K::config(n_),
        {weights(model_.embedding()), raw(s_.tokens) + token_offset_, raw(ws_.x), c_.hidden_size});
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
                        parts,
                        split_.span};
    exec_.template launch<KS>(KS::config(n_, c_.num_heads, splits_), a);
    exec_.template launch<KC>(KC::config(n_, c_.num_heads),
                              {parts, raw(ws_.attn), c_.q_dim(), c_.num_heads});
  }

  /// Final norm and head for the last `logit_rows` tokens (written from the pass's row offset
  /// on); the logits stay in backend memory.
  auto head() {
    const int H = c_.hidden_size, V = c_.vocab_size;
    const int first = n_ - rows_;
    float* out = raw(ws_.logits) + static_cast<std::size_t>(row_offset_) * V;
    norm_rows(raw(ws_.x) + static_cast<std::size_t>(first) * H, raw(ws_.xn), rows_,
              raw(model_.final_norm()));
    exec_.matmul(raw(ws_.xn), rows_, H, H, weights(model_.head()), V, nullptr, out, V, false);
    return exec_.logits(out, static_cast<std::size_t>(rows_) * V);
  }

 private:
  GridForwardOps(const Model& model, Workspace<B>& ws, const Slice& slice, Cache& cache,
                 KvTarget target, int tokens, int logit_rows, int read_upto)
      : Base(model, ws, tokens),
        s_(ws.extras.scratch()),
        slice_(slice),
        cache_(cache),
        target_(target),
        rows_(logit_rows),
        read_upto_(read_upto),
        split_(kernels::attention_split(cache.capacity(target))),
        splits_(split_.splits) {}

  void norm_rows(const float* x, float* y, int rows, const float* w) {
    exec_.norm_rows(c_, x, y, rows, w);
  }

  /// Adds the slice's update for (layer, target) to output columns [0, out) of y, on the
  /// pass's adapted tokens [adapted_from_, n).
  void lora(int layer, LoraTarget t, const float* x, int ldx, float* y, int ldy) {
    const auto* m = slice_.module(layer, t);
    if (m == nullptr || adapted_from_ >= n_) return;
    const std::size_t k = static_cast<std::size_t>(adapted_from_);
    exec_.lora(*m, x + k * ldx, ldx, y + k * ldy, ldy, n_ - adapted_from_);
  }

  std::remove_reference_t<decltype(std::declval<Workspace<B>&>().extras.scratch())>& s_;
  const Slice& slice_;
  Cache& cache_;
  KvTarget target_;
  int rows_;
  int read_upto_;  ///< positions the attention span covers (the descriptor masks the rest)
  kernels::AttentionSplit split_;
  int splits_;
  int token_offset_ = 0;  ///< where this pass's ids start in the scratch
  int row_offset_ = 0;    ///< where this pass's logits rows start
  int adapted_from_ = 0;  ///< the pass's first token the slice's update applies to
};

}  // namespace baton
