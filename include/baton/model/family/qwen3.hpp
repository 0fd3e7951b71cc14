// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief family::Qwen3 — the Qwen2 block plus an RMSNorm of every q and k head (q_norm,
///        k_norm: [head_dim] weights shared by all heads) before RoPE; no q/k/v bias unless
///        the config asks for one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "baton/backend/backend.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/model_config.hpp"
#include "baton/lora/lora_dims.hpp"
#include "baton/model/family/family.hpp"
#include "baton/model/family/qwen2.hpp"
#include "baton/model/weight_reader.hpp"

namespace baton::family {

/// Qwen3ForCausalLM (dense).
struct Qwen3 {
  static constexpr std::string_view name = "qwen3";
  static constexpr std::string_view architectures[] = {"Qwen3ForCausalLM"};
  static constexpr std::string_view embedding_name = Qwen2::embedding_name;
  static constexpr std::string_view final_norm_name = Qwen2::final_norm_name;
  static constexpr std::string_view head_name = Qwen2::head_name;

  /// Qwen2's weights plus the two per-head norms.
  template <Backend B, WeightStorage S>
  struct layer_weights : Qwen2::layer_weights<B, S> {
    typename B::template buffer<float> q_norm;  ///< [head_dim], applied to every q head
    typename B::template buffer<float> k_norm;  ///< [head_dim], applied to every k head
  };

  template <Backend B, WeightStorage S>
  static layer_weights<B, S> load_layer(const WeightReader<B>& r, const ModelConfig& c, int i) {
    layer_weights<B, S> w{Qwen2::load_layer<B, S>(r, c, i)};
    const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
    const std::size_t d = static_cast<std::size_t>(c.head_dim);
    w.q_norm = r.template read<float>(p + "q_norm.weight", {d});
    w.k_norm = r.template read<float>(p + "k_norm.weight", {d});
    return w;
  }

  static LoraShapes lora_shapes(const ModelConfig& c) { return decoder_lora_shapes(c); }

  /// Qwen2's schedule with the head norms between the q/k/v projection and RoPE.
  template <class Ops, class W>
  static void layer(Ops& ops, const W& w, int layer) {
    ops.norm(w.attn_norm);
    ops.qkv(w.wqkv, w.bqkv, layer);
    ops.head_norm(w.q_norm, w.k_norm);
    ops.rope_append(layer);
    ops.attention(layer);
    ops.output_projection(w.wo, layer);
    Qwen2::mlp_block(ops, w, layer);
  }
};

static_assert(ModelFamily<Qwen3>);

}  // namespace baton::family
