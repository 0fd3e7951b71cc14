// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief family::Qwen2 — Qwen2 and Llama decoders: tensor names, LoRA shapes and the layer
///        schedule. Llama is the same block without q/k/v biases (attention_bias = false, so
///        the bias buffer stays empty) and with its rope scaling, which BaseModel folds into
///        the RoPE frequencies; nothing in the schedule differs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "baton/backend/backend.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/model_config.hpp"
#include "baton/lora/lora_dims.hpp"
#include "baton/model/block_matrix.hpp"
#include "baton/model/family/family.hpp"
#include "baton/model/weight_reader.hpp"

namespace baton::family {

/// Qwen2ForCausalLM and LlamaForCausalLM.
struct Qwen2 {
  static constexpr std::string_view name = "qwen2";
  static constexpr std::string_view architectures[] = {"Qwen2ForCausalLM", "LlamaForCausalLM"};
  static constexpr std::string_view embedding_name = "model.embed_tokens.weight";
  static constexpr std::string_view final_norm_name = "model.norm.weight";
  static constexpr std::string_view head_name = "lm_head.weight";

  /// One transformer block. q/k/v are fused into one [q + 2 kv, hidden] matrix and gate/up
  /// into one [2 ffn, hidden] at load, so each is a single product.
  template <Backend B, WeightStorage S>
  struct layer_weights {
    typename B::template buffer<float> attn_norm;  ///< [hidden]
    weight_matrix<B, S> wqkv;                      ///< [q + 2 kv, hidden]: q, k, v rows
    typename B::template buffer<float> bqkv;       ///< [q + 2 kv], or empty (no attention bias)
    weight_matrix<B, S> wo;                        ///< [hidden, q]
    typename B::template buffer<float> mlp_norm;   ///< [hidden]
    weight_matrix<B, S> wgate_up;                  ///< [2 ffn, hidden]: gate rows, then up rows
    weight_matrix<B, S> wdown;                     ///< [hidden, ffn]

    std::size_t matrix_bytes() const {
      return baton::matrix_bytes(wqkv) + baton::matrix_bytes(wo) + baton::matrix_bytes(wgate_up) +
             baton::matrix_bytes(wdown);
    }
  };

  /// Reads layer `i` ("model.layers.<i>." names), fusing q/k/v and gate/up.
  template <Backend B, WeightStorage S>
  static layer_weights<B, S> load_layer(const WeightReader<B>& r, const ModelConfig& c, int i) {
    const auto z = [](int v) { return static_cast<std::size_t>(v); };
    const std::size_t hidden = z(c.hidden_size), ffn = z(c.intermediate_size);
    const std::size_t qd = z(c.q_dim()), kvd = z(c.kv_dim());
    const std::string p = "model.layers." + std::to_string(i) + ".";
    layer_weights<B, S> w;
    w.attn_norm = r.template read<float>(p + "input_layernorm.weight", {hidden});
    w.mlp_norm = r.template read<float>(p + "post_attention_layernorm.weight", {hidden});
    w.wqkv = r.template matrix<S>({{p + "self_attn.q_proj.weight", {qd, hidden}},
                                   {p + "self_attn.k_proj.weight", {kvd, hidden}},
                                   {p + "self_attn.v_proj.weight", {kvd, hidden}}});
    if (c.attention_bias) {
      w.bqkv = r.template concat<float>({{p + "self_attn.q_proj.bias", {qd}},
                                         {p + "self_attn.k_proj.bias", {kvd}},
                                         {p + "self_attn.v_proj.bias", {kvd}}});
    }
    w.wo = r.template matrix<S>(p + "self_attn.o_proj.weight", {hidden, qd});
    w.wgate_up = r.template matrix<S>(
        {{p + "mlp.gate_proj.weight", {ffn, hidden}}, {p + "mlp.up_proj.weight", {ffn, hidden}}});
    w.wdown = r.template matrix<S>(p + "mlp.down_proj.weight", {hidden, ffn});
    return w;
  }

  /// The standard decoder projections: q/k/v/o and gate/up/down.
  static LoraShapes lora_shapes(const ModelConfig& c) { return decoder_lora_shapes(c); }

  /// Pre-norm attention block, then pre-norm SwiGLU MLP block, both added to the residual.
  template <class Ops, class W>
  static void layer(Ops& ops, const W& w, int layer) {
    ops.norm(w.attn_norm);
    ops.qkv(w.wqkv, w.bqkv, layer);
    ops.rope_append(layer);
    ops.attention(layer);
    ops.output_projection(w.wo, layer);
    mlp_block(ops, w, layer);
  }

  /// x += down(silu(gate(xn)) · up(xn)) with xn = rmsnorm(x): shared by families that keep
  /// this MLP (Qwen3).
  template <class Ops, class W>
  static void mlp_block(Ops& ops, const W& w, int layer) {
    ops.norm(w.mlp_norm);
    ops.gate_up(w.wgate_up, layer);
    ops.swiglu();
    ops.down_projection(w.wdown, layer);
  }
};

/// Llama is Qwen2 without biases plus its rope scaling (see the file comment).
using Llama = Qwen2;

static_assert(ModelFamily<Qwen2>);

}  // namespace baton::family
