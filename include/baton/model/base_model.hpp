// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief BaseModel: the frozen weights of a decoder of one model family, in the file's
///        storage type.
///
/// The family (model/family/) names the tensors and reads each layer (fusing q/k/v and
/// gate/up); BaseModel owns what every family shares: the config, embedding, final norm,
/// output head and RoPE frequencies. Norm weights and biases are tiny and kept in f32.
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/model_config.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/io/safetensors.hpp"
#include "baton/kernels/rope.hpp"
#include "baton/lora/lora_dims.hpp"
#include "baton/model/block_matrix.hpp"
#include "baton/model/family/family.hpp"
#include "baton/model/family/qwen2.hpp"
#include "baton/model/quantized_file.hpp"
#include "baton/model/weight_reader.hpp"

namespace baton {

/// The frozen base model shared by every stage of a relay.
/// @tparam B backend holding the weights
/// @tparam S storage of the large matrices: f32, bf16 or f16 (widened in every product), or
///         q8_0 / q4_0 (GGML's blocks, quantized at load: core/quant.hpp). Block storages hold
///         the embedding and the output head in the same blocks; a matrix whose rows are not
///         a multiple of 32 stays f16 (fallback_matrices() lists them).
/// @tparam F the model family (family::Qwen2 runs Qwen2 and Llama; family::Qwen3)
template <Backend B, WeightStorage S, ModelFamily F = family::Qwen2>
class BaseModel {
 public:
  using backend = B;
  using storage = S;
  using family = F;
  using layer_weights = typename F::template layer_weights<B, S>;
  using matrix = weight_matrix<B, S>;

  /// Loads config.json and the safetensors weights of a Hugging Face model folder.
  /// Tensors of another float dtype are converted to S (narrowing rounds to nearest even;
  /// a block storage quantizes them, core/quant.hpp).
  /// A folder of another family is a config_error that names the family to use.
  /// `limits` caps the JSON files read (config.json, a shard index).
  static BaseModel load(const std::filesystem::path& dir, const io::ReadLimits& limits = {}) {
    BaseModel m;
    m.config_ = io::load_model_config(dir, F::architectures, limits);
    m.source_ = dir.string();
    const ModelConfig& c = m.config_;
    bool ours = false;
    for (const std::string_view a : F::architectures) ours = ours || a == c.architecture_name;
    BATON_CHECK(ours, config_error, "model ", dir.string(), ": architecture \"",
                c.architecture_name, "\" is not run by model family '", F::name,
                "'; load it as BaseModel<B, S, family::X> with the family that runs it (see "
                "model/family/)");
    const io::TensorSource src = io::TensorSource::open_dir(dir, limits);
    check_layer_count(src, c);
    WeightReader<B> reader(src);
    // A block storage reads the blocks `baton quantize` wrote next to the checkpoint, if any.
    std::optional<io::SafetensorsFile> quantized;
    if constexpr (BlockStorage<S>) {
      quantized = open_quantized_file(dir, src, S::format);
      if (quantized) reader.use_quantized(&*quantized);
    }
    m.prequantized_ = quantized.has_value();
    const auto z = [](int v) { return static_cast<std::size_t>(v); };
    const std::size_t hidden = z(c.hidden_size), vocab = z(c.vocab_size);

    m.embed_ = reader.template matrix<S>(std::string(F::embedding_name), {vocab, hidden});
    m.final_norm_ = reader.template read<float>(std::string(F::final_norm_name), {hidden});
    if (!c.tie_word_embeddings) {
      m.lm_head_ = reader.template matrix<S>(std::string(F::head_name), {vocab, hidden});
    }
    // No reserve(num_layers): check_layer_count bounded it by the tensors present, and
    // growing as layers load keeps a hostile count from sizing anything.
    for (int i = 0; i < c.num_layers; ++i) {
      m.layers_.push_back(F::template load_layer<B, S>(reader, c, i));
    }
    check_all_used(reader, c);
    m.fallbacks_ = reader.fallbacks();
    const std::vector<double> inv =
        kernels::rope_inverse_frequencies(c.head_dim, c.rope_theta, c.rope_scaling);
    const std::vector<float> inv_f(inv.begin(), inv.end());
    m.inv_freq_ = B::upload(std::span<const float>(inv_f));
    return m;
  }

  /// A model from weights already in backend memory (made there, e.g. the benchmark's random
  /// models): `layers` in F's layout, `lm_head` empty when the config ties it to `embed`.
  /// Every buffer's size is checked against `config` (shape_error naming the tensor).
  static BaseModel from_weights(ModelConfig config, std::string source, matrix embed,
                                matrix lm_head, typename B::template buffer<float> final_norm,
                                std::vector<layer_weights> layers) {
    config.validate(source);
    const ModelConfig& c = config;
    const auto z = [](long long v) { return static_cast<std::size_t>(v); };
    const auto expect = [&](std::size_t got, std::size_t want, std::string_view what) {
      BATON_CHECK(got == want, shape_error, "model ", source, ": ", what, " holds ", got,
                  " elements, the config says ", want);
    };
    expect(embed.size(), z(c.vocab_size) * z(c.hidden_size), F::embedding_name);
    expect(lm_head.size(), c.tie_word_embeddings ? 0 : z(c.vocab_size) * z(c.hidden_size),
           F::head_name);
    expect(final_norm.size(), z(c.hidden_size), F::final_norm_name);
    expect(layers.size(), z(c.num_layers), "the layer list");
    BaseModel m;
    m.config_ = std::move(config);
    m.source_ = std::move(source);
    m.embed_ = std::move(embed);
    m.lm_head_ = std::move(lm_head);
    m.final_norm_ = std::move(final_norm);
    m.layers_ = std::move(layers);
    const std::vector<double> inv = kernels::rope_inverse_frequencies(
        m.config_.head_dim, m.config_.rope_theta, m.config_.rope_scaling);
    const std::vector<float> inv_f(inv.begin(), inv.end());
    m.inv_freq_ = B::upload(std::span<const float>(inv_f));
    return m;
  }

  const ModelConfig& config() const { return config_; }

  /// Lets KV caches of this model hold up to `limit` positions, past
  /// max_position_embeddings only where config.json's rope_scaling extends the context: up
  /// to max_position_embeddings × rope_scaling.factor. config_error otherwise. The explicit
  /// opt-in for long contexts; without it the limit is max_position_embeddings.
  void allow_positions(int limit) {
    const ModelConfig& c = config_;
    const bool scaled = c.rope_scaling.type != RopeScaling::Type::none;
    const double most = scaled
                            ? static_cast<double>(c.max_position_embeddings) * c.rope_scaling.factor
                            : static_cast<double>(c.max_position_embeddings);
    BATON_CHECK(limit > 0 && static_cast<double>(limit) <= most, config_error, "model ", source_,
                ": allow_positions(", limit, ") is beyond what the model supports (",
                "max_position_embeddings = ", c.max_position_embeddings,
                scaled ? " × rope_scaling.factor" : " and config.json has no rope_scaling", ")");
    config_.position_limit = limit;
  }
  const std::string& source() const { return source_; }
  const layer_weights& layer(int i) const { return layers_[i]; }
  /// The (in, out) widths of each projection an adapter may target (LoraSlice::load checks
  /// adapters against them).
  LoraShapes lora_shapes() const { return F::lora_shapes(config_); }
  const matrix& embedding() const { return embed_; }
  /// The output head: the embedding matrix itself when the model ties them.
  const matrix& head() const { return config_.tie_word_embeddings ? embed_ : lm_head_; }
  const typename B::template buffer<float>& final_norm() const { return final_norm_; }
  /// RoPE inverse frequencies [head_dim / 2] (scaling applied) in backend memory.
  const typename B::template buffer<float>& inv_freq() const { return inv_freq_; }
  /// Bytes of weights one decode step reads (every matrix once, plus the head).
  std::size_t weight_bytes() const {
    std::size_t total = matrix_bytes(head());
    for (const auto& L : layers_) total += L.matrix_bytes();
    return total;
  }
  /// A block storage's matrices kept in f16 because their rows are not a multiple of 32
  /// (tensor names, fused ones joined by '+'); empty for the float storages.
  const std::vector<std::string>& fallback_matrices() const { return fallbacks_; }
  /// Whether load() read the blocks from `baton quantize`'s file rather than quantizing.
  bool prequantized() const { return prequantized_; }

 private:
  BaseModel() = default;

  /// config.json's num_hidden_layers against the "model.layers.{i}." tensors present, before
  /// anything is allocated: a count of 10^7 over a 2-layer file must fail by naming both,
  /// not after sizing per-layer tables by it; extra layers would be silently unused.
  static void check_layer_count(const io::TensorSource& src, const ModelConfig& c) {
    constexpr std::string_view prefix = "model.layers.";
    long long highest = -1;
    for (const std::string& name : src.names()) {
      if (!name.starts_with(prefix)) continue;
      long long i = 0;
      std::size_t k = prefix.size();
      for (; k < name.size() && name[k] >= '0' && name[k] <= '9' && i < (1LL << 40); ++k) {
        i = i * 10 + (name[k] - '0');
      }
      if (k > prefix.size()) highest = std::max(highest, i);
    }
    BATON_CHECK(highest + 1 == c.num_layers, shape_error, "model ", src.where(),
                ": config.json num_hidden_layers = ", c.num_layers, " but the weights hold ",
                highest + 1, " layers (model.layers.0 .. model.layers.", highest, ")");
  }

  /// Every tensor of the checkpoint must be one the family read: a tensor left over means
  /// the weights say more than config.json (q/k/v biases under attention_bias = false, a
  /// head under tie_word_embeddings = true that differs from the embedding, another
  /// architecture's extras), and dropping it silently would run a different model. Two
  /// leftovers are what Hugging Face itself ignores: the rotary `inv_freq` buffers older
  /// exports persisted (recomputed from config.json), and `lm_head.weight` beside tied
  /// embeddings (transformers ties it to the embedding at load).
  static void check_all_used(const WeightReader<B>& reader, const ModelConfig& c) {
    std::vector<std::string> extra;
    for (std::string& n : reader.unused()) {
      if (n.ends_with(".rotary_emb.inv_freq")) continue;
      if (c.tie_word_embeddings && n == F::head_name) continue;
      extra.push_back(std::move(n));
    }
    if (extra.empty()) return;
    std::string list;
    for (std::size_t i = 0; i < extra.size() && i < 5; ++i)
      list += (i ? ", '" : "'") + io::detail::excerpt(extra[i]) + "'";
    if (extra.size() > 5) list += ", ...";
    BATON_FAIL(format_error, "model ", reader.source().where(), ": ", extra.size(),
               " tensor(s) that model family '", F::name,
               "' with this config.json does not use: ", list,
               " (weights of another architecture, or a config.json that does not "
               "describe them, e.g. attention_bias or tie_word_embeddings)");
  }

  ModelConfig config_;
  std::string source_;
  matrix embed_;
  matrix lm_head_;
  typename B::template buffer<float> final_norm_;
  typename B::template buffer<float> inv_freq_;
  std::vector<layer_weights> layers_;
  std::vector<std::string> fallbacks_;
  bool prequantized_ = false;
};

/// Loads a model folder keeping weights in S: `load_model<host, bf16>("Qwen2.5-0.5B/")`, or
/// `load_model<host, bf16, family::Qwen3>("Qwen3-0.6B/")`.
template <Backend B, WeightStorage S, ModelFamily F = family::Qwen2>
BaseModel<B, S, F> load_model(const std::filesystem::path& dir, const io::ReadLimits& limits = {}) {
  return BaseModel<B, S, F>::load(dir, limits);
}

/// The storage type a model folder's weights have (that of its embedding table).
template <ModelFamily F = family::Qwen2>
dtype stored_dtype(const std::filesystem::path& dir) {
  const io::TensorSource src = io::TensorSource::open_dir(dir);
  const std::string name(F::embedding_name);
  const io::TensorInfo& t = src.info(name);
  BATON_CHECK(t.type.has_value(), shape_error, "model ", dir.string(), ": ", name, " has dtype ",
              t.dtype_name, "; baton computes with F32, BF16 or F16 weights");
  return *t.type;
}

}  // namespace baton
