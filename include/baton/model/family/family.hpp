// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The ModelFamily concept: what a model family states (tensor names, LoRA shapes,
///        layer weights, the layer schedule) so that BaseModel, LoraSlice and forward() can
///        run it on any backend. A family is a plain struct; adding one edits nothing in baton.
///
/// The schedule is written once, over the forward operations a backend provides (listed in
/// ForwardOpsArchetype below); the host backend implements them in model/host_ops.hpp, the CUDA
/// backend will in a .cuh. docs/model-family.md walks through adding a family.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <string_view>

#include "baton/backend/host.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/model_config.hpp"
#include "baton/lora/lora_dims.hpp"
#include "baton/model/weight_reader.hpp"

namespace baton {

/// The operations a layer schedule may call, as declarations only: the concept checks a
/// family's schedule against them, and a backend's forward operations provide them all.
/// Activations live in the backend's workspace; each operation covers every token of the
/// forward at once (n tokens at absolute positions first_pos ..).
///   x   [n, hidden]    residual stream      xn  [n, hidden]  normed block input
///   qkv [n, q + 2 kv]  fused projections    attn [n, q]      attention output
///   gate_up [n, 2 ffn], act [n, ffn]        logits [rows, vocab]
struct ForwardOpsArchetype {
  /// xn = rmsnorm(x) · weight, row by row.
  template <class W>
  void norm(const W& weight);
  /// qkv = xn · Wqkv^T (+ bias when not empty) + the slice's q, k and v LoRA updates.
  template <class W, class Bias>
  void qkv(const W& wqkv, const Bias& bqkv, int layer);
  /// RMSNorm of every q head with `q_weight` and every k head with `k_weight` ([head_dim]
  /// each), in place (Qwen3's q_norm / k_norm).
  template <class W>
  void head_norm(const W& q_weight, const W& k_weight);
  /// Rotates the q and k heads at their positions, then kv::append's k and v to the cache.
  void rope_append(int layer);
  /// attn = causal softmax(q k^T / sqrt(d)) v over everything the cache holds up to each token.
  void attention(int layer);
  /// x += attn · Wo^T + the slice's o update.
  template <class W>
  void output_projection(const W& wo, int layer);
  /// gate_up = xn · Wgate_up^T + the slice's gate and up updates.
  template <class W>
  void gate_up(const W& wgate_up, int layer);
  /// act = silu(gate) · up.
  void swiglu();
  /// x += act · Wdown^T + the slice's down update.
  template <class W>
  void down_projection(const W& wdown, int layer);
};

/// A model family: a struct with
///   - `name`, and `architectures`: the config.json class names it runs;
///   - tensor names outside the layers: `embedding_name`, `final_norm_name`, `head_name`;
///   - `layer_weights<B, S>`: one layer's weights (matrices as weight_matrix<B, S>, small
///     vectors in f32), with
///     `matrix_bytes()` (what one decode step reads, for bandwidth figures);
///   - `load_layer<B, S>(reader, config, layer)`: reads them (tensor names, fusions);
///   - `lora_shapes(config)`: the (in, out) widths of each projection an adapter may target;
///   - `layer(ops, weights, layer)`: the layer schedule over the forward operations.
template <class F>
concept ModelFamily = requires(const ModelConfig& c, const WeightReader<host>& reader,
                               ForwardOpsArchetype& ops,
                               const typename F::template layer_weights<host, f32>& w, int layer) {
  { F::name } -> std::convertible_to<std::string_view>;
  {std::span<const std::string_view>(F::architectures)};
  { F::embedding_name } -> std::convertible_to<std::string_view>;
  { F::final_norm_name } -> std::convertible_to<std::string_view>;
  { F::head_name } -> std::convertible_to<std::string_view>;
  { w.matrix_bytes() } -> std::same_as<std::size_t>;
  {
    F::template load_layer<host, f32>(reader, c, layer)
    } -> std::same_as<typename F::template layer_weights<host, f32>>;
  { F::lora_shapes(c) } -> std::same_as<LoraShapes>;
  F::layer(ops, w, layer);
};

}  // namespace baton
