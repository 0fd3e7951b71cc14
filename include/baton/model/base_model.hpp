// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief BaseModel: the frozen weights of a Qwen2/Llama decoder, in the file's storage type.
///
/// q/k/v are fused into one [q + 2 kv, hidden] matrix and gate/up into one [2 ffn, hidden]
/// at load, so each is a single product. Norm weights and biases are tiny and kept in f32.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/core/dtype.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/io/safetensors.hpp"
#include "baton/kernels/rope.hpp"
#include "baton/model/config.hpp"

namespace baton {

/// How many rows of logits a forward produces.
enum class Logits {
  none,  ///< skip the head (pre-warming a prefix)
  last,  ///< the last token's row: what chooses the next token
  all    ///< every token's row (tests, scoring)
};

/// One transformer block's weights.
template <Backend B, StorageType S>
struct LayerWeights {
  typename B::template buffer<float> attn_norm;  ///< [hidden]
  typename B::template buffer<S> wqkv;           ///< [q + 2 kv, hidden]: q rows, k rows, v rows
  typename B::template buffer<float> bqkv;       ///< [q + 2 kv] or empty (no attention bias)
  typename B::template buffer<S> wo;             ///< [hidden, q]
  typename B::template buffer<float> mlp_norm;   ///< [hidden]
  typename B::template buffer<S> wgate_up;       ///< [2 ffn, hidden]: gate rows, then up rows
  typename B::template buffer<S> wdown;          ///< [hidden, ffn]
};

/// The frozen base model shared by every stage of a relay.
/// @tparam B backend holding the weights
/// @tparam S storage type of the large matrices (f32, bf16 or f16)
template <Backend B, StorageType S>
class BaseModel {
 public:
  using backend = B;
  using storage = S;

  /// Loads config.json and the safetensors weights of a Hugging Face model folder.
  /// Tensors of another float dtype are converted to S (narrowing rounds to nearest even).
  static BaseModel load(const std::filesystem::path& dir) {
    BaseModel m;
    m.config_ = io::load_model_config(dir);
    m.source_ = dir.string();
    const ModelConfig& c = m.config_;
    const io::TensorSource src = io::TensorSource::open_dir(dir);
    const auto z = [](int v) { return static_cast<std::size_t>(v); };
    const std::size_t hidden = z(c.hidden_size), ffn = z(c.intermediate_size);
    const std::size_t qd = z(c.q_dim()), kvd = z(c.kv_dim()), vocab = z(c.vocab_size);

    m.embed_ = m.template read<S>(src, "model.embed_tokens.weight", {vocab, hidden});
    m.final_norm_ = m.template read<float>(src, "model.norm.weight", {hidden});
    if (!c.tie_word_embeddings) {
      m.lm_head_ = m.template read<S>(src, "lm_head.weight", {vocab, hidden});
    }
    m.layers_.resize(c.num_layers);
    for (int i = 0; i < c.num_layers; ++i) {
      const std::string p = "model.layers." + std::to_string(i) + ".";
      LayerWeights<B, S>& L = m.layers_[i];
      L.attn_norm = m.template read<float>(src, p + "input_layernorm.weight", {hidden});
      L.mlp_norm = m.template read<float>(src, p + "post_attention_layernorm.weight", {hidden});
      L.wqkv = m.template concat<S>(src, {{p + "self_attn.q_proj.weight", {qd, hidden}},
                                          {p + "self_attn.k_proj.weight", {kvd, hidden}},
                                          {p + "self_attn.v_proj.weight", {kvd, hidden}}});
      if (c.attention_bias) {
        L.bqkv = m.template concat<float>(src, {{p + "self_attn.q_proj.bias", {qd}},
                                                {p + "self_attn.k_proj.bias", {kvd}},
                                                {p + "self_attn.v_proj.bias", {kvd}}});
      }
      L.wo = m.template read<S>(src, p + "self_attn.o_proj.weight", {hidden, qd});
      L.wgate_up = m.template concat<S>(src, {{p + "mlp.gate_proj.weight", {ffn, hidden}},
                                              {p + "mlp.up_proj.weight", {ffn, hidden}}});
      L.wdown = m.template read<S>(src, p + "mlp.down_proj.weight", {hidden, ffn});
    }
    const std::vector<double> inv =
        kernels::rope_inverse_frequencies(c.head_dim, c.rope_theta, c.rope_scaling);
    const std::vector<float> inv_f(inv.begin(), inv.end());
    m.inv_freq_ = B::upload(std::span<const float>(inv_f));
    return m;
  }

  const ModelConfig& config() const { return config_; }
  const std::string& source() const { return source_; }
  const LayerWeights<B, S>& layer(int i) const { return layers_[i]; }
  const typename B::template buffer<S>& embedding() const { return embed_; }
  /// The output head: the embedding matrix itself when the model ties them.
  const typename B::template buffer<S>& head() const {
    return config_.tie_word_embeddings ? embed_ : lm_head_;
  }
  const typename B::template buffer<float>& final_norm() const { return final_norm_; }
  /// RoPE inverse frequencies [head_dim / 2] (scaling applied) in backend memory.
  const typename B::template buffer<float>& inv_freq() const { return inv_freq_; }
  /// Bytes of weights one decode step reads (every matrix once, plus the head).
  std::size_t weight_bytes() const {
    std::size_t total = head().size() * sizeof(S);
    for (const auto& L : layers_)
      total += (L.wqkv.size() + L.wo.size() + L.wgate_up.size() + L.wdown.size()) * sizeof(S);
    return total;
  }

 private:
  BaseModel() = default;

  template <class T>
  static typename B::template buffer<T> read(const io::TensorSource& src, const std::string& name,
                                             std::initializer_list<std::size_t> shape) {
    const std::vector<T> host = src.template read<T>(name, std::span<const std::size_t>(shape));
    return B::upload(std::span<const T>(host));
  }

  struct Part {
    std::string name;
    std::vector<std::size_t> shape;
  };
  /// Reads tensors one after another into one buffer (row concatenation).
  template <class T>
  static typename B::template buffer<T> concat(const io::TensorSource& src,
                                               const std::vector<Part>& parts) {
    std::size_t total = 0;
    for (const Part& p : parts) {
      std::size_t n = 1;
      for (std::size_t d : p.shape) n *= d;
      total += n;
    }
    std::vector<T> host(total);
    std::size_t off = 0;
    for (const Part& p : parts) {
      std::size_t n = 1;
      for (std::size_t d : p.shape) n *= d;
      src.template read_into<T>(p.name, std::span<const std::size_t>(p.shape),
                                std::span<T>(host.data() + off, n));
      off += n;
    }
    return B::upload(std::span<const T>(host));
  }

  ModelConfig config_;
  std::string source_;
  typename B::template buffer<S> embed_;
  typename B::template buffer<S> lm_head_;
  typename B::template buffer<float> final_norm_;
  typename B::template buffer<float> inv_freq_;
  std::vector<LayerWeights<B, S>> layers_;
};

/// Loads a model folder keeping weights in S: `load_model<host, bf16>("Qwen2.5-0.5B/")`.
template <Backend B, StorageType S>
BaseModel<B, S> load_model(const std::filesystem::path& dir) {
  return BaseModel<B, S>::load(dir);
}

/// The storage type a model folder's weights have (that of its embedding table).
inline dtype stored_dtype(const std::filesystem::path& dir) {
  const io::TensorSource src = io::TensorSource::open_dir(dir);
  const io::TensorInfo& t = src.info("model.embed_tokens.weight");
  BATON_CHECK(t.type.has_value(), shape_error, "model ", dir.string(),
              ": model.embed_tokens.weight has dtype ", t.dtype_name,
              "; baton computes with F32, BF16 or F16 weights");
  return *t.type;
}

}  // namespace baton
