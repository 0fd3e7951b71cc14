// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief forward(): append a span of tokens to a KV target through a LoRA slice and produce
///        logits — the checks, then the family's layer schedule over the backend's operations.
///
/// Backend-generic: it includes no backend library. The operations come from BackendOps<B>
/// (model/backend_ops.hpp), which the backend's header provides (model/host_forward.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "baton/core/error.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/lora/activation.hpp"
#include "baton/lora/lora_slice.hpp"
#include "baton/model/backend_ops.hpp"
#include "baton/model/base_model.hpp"
#include "baton/model/workspace.hpp"

namespace baton {

/// The forward: the embedding of the tokens, then the family's layer schedule for each layer in
/// order, over any backend's forward operations for one row or many (model/token_ops.hpp). Every
/// forward runs through here: forward() and forward_batch() on every backend, a chunked pass on
/// the GPU and the host grid (GridForwardOps::run_passes), the device loop's step
/// (model/device_loop.hpp). The caller adds the head when it wants logits.
template <class Ops, class Model>
void run_layers(Ops& ops, const Model& model) {
  ops.embed();
  for (int layer = 0; layer < model.config().num_layers; ++layer)
    Model::family::layer(ops, model.layer(layer), layer);
}

/// How many rows of logits a forward produces.
enum class Logits {
  none,  ///< skip the head (pre-warming a prefix)
  last,  ///< the last token's row: what chooses the next token
  all    ///< every token's row (tests, scoring)
};

/// Appends `tokens` to `target` of `cache`, starting at `expected_pos`, and returns the logits
/// asked for by `mode` ([vocab] for `last`, [n, vocab] for `all`, empty for `none`), in the
/// workspace: valid until the next forward with `ws`.
///
/// Before anything is written: every id is checked against the vocabulary, the slice against
/// the model's layer count, and the cache's write contract (position == expected_pos, fits in
/// capacity). The cache position advances only after the whole forward succeeded.
///
/// `adapter_from`: where the slice's update starts (lora/activation.hpp): tokens at positions
/// >= it are adapted, earlier ones get the base model's computation. A plain slice leaves it at
/// kAdapterFromSlice (every token); an activated slice (aLoRA) needs its start, from
/// LoraSlice::activation_start over the whole stream so far (a usage_error otherwise).
/// The return type is BackendOps<B>::logits_view (std::span<const float> on the host).
namespace detail {
/// The checks every forward makes before queuing anything: tokens to append, a slice with the
/// model's layers and a usable activation start, and room at `expected_pos`
/// (KvBuffer::check_write).
template <int R, Backend B, KvLayout L>
void check_forward(const ModelConfig& c, const LoraSlice<R, B>& slice, KvBuffer<L, B>& cache,
                   KvTarget target, int expected_pos, int n, int adapter_from) {
  BATON_CHECK(n > 0, usage_error, "forward: no tokens to append to ", cache.describe(target));
  BATON_CHECK(slice.num_layers() == c.num_layers, shape_error, "forward: slice '", slice.name(),
              "' has ", slice.num_layers(), " layers, the model ", c.num_layers);
  check_adapter_from(slice, adapter_from, "forward");
  cache.check_write(target, expected_pos, n);
}
}  // namespace detail

template <Backend B, WeightStorage S, ModelFamily F, int R, KvLayout L>
auto forward(const BaseModel<B, S, F>& model, Workspace<B>& ws, const LoraSlice<R, B>& slice,
             KvBuffer<L, B>& cache, KvTarget target, int expected_pos,
             std::span<const std::int32_t> tokens, Logits mode,
             int adapter_from = kAdapterFromSlice) {
  static_assert(HasBackendOps<B>,
                "forward: no operations for this backend in this translation unit; include "
                "<baton/model/host_forward.hpp> for baton::host (or <baton/baton.hpp>)");
  const ModelConfig& c = model.config();
  const int n = static_cast<int>(tokens.size());
  for (int i = 0; i < n; ++i) {
    BATON_CHECK(tokens[i] >= 0 && tokens[i] < c.vocab_size, usage_error, "forward: token id ",
                tokens[i], " at index ", i, " is outside the vocabulary [0, ", c.vocab_size, ")");
  }
  detail::check_forward(c, slice, cache, target, expected_pos, n, adapter_from);

  const int rows = mode == Logits::all ? n : 1;
  using Ops = typename BackendOps<B>::template forward_ops<BaseModel<B, S, F>, LoraSlice<R, B>,
                                                           KvBuffer<L, B>>;
  if constexpr (requires { &Ops::run_passes; }) {
    // The phased-kernel forward (CUDA, host grid): a long input runs in bounded passes.
    auto out = Ops::run_passes(model, ws, slice, cache, target, expected_pos, n, tokens,
                               mode == Logits::none ? 0 : rows, adapter_from);
    cache.commit(target, n);
    return out;
  } else {
    Ops ops(model, ws, slice, cache, target, expected_pos, tokens, rows, adapter_from);
    run_layers(ops, model);
    cache.commit(target, n);
    if (mode == Logits::none) return typename BackendOps<B>::logits_view{};
    return ops.head();
  }
}

}  // namespace baton
