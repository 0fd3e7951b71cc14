// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief ModelConfig: the architecture facts of a decoder checkpoint, as plain data.
///
/// Filled by baton::io::parse_model_config (io/hf_config.hpp) from a Hugging Face
/// config.json. It lives in core/ and includes nothing but core/error.hpp, so io/, kernels/,
/// kv/, lora/ and model/ all read it without including anything above themselves.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/error.hpp"

namespace baton {

/// The architectures baton's own families run (model/family/). A family added outside baton
/// reads `architecture_name` and sees `other` here.
enum class Architecture { qwen2, llama, qwen3, other };

/// Rotary-embedding frequency scaling (config.json "rope_scaling").
struct RopeScaling {
  /// none: plain RoPE; linear: positions divided by `factor`; llama3: inv_freq rescaled by
  /// wavelength band (factor, low/high_freq_factor, original_max_position_embeddings).
  enum class Type { none, linear, llama3 } type = Type::none;
  double factor = 1.0, low_freq_factor = 1.0, high_freq_factor = 4.0;
  int original_max_position_embeddings = 8192;
};

/// Everything the model code needs to know about a checkpoint's shapes and numerics.
struct ModelConfig {
  Architecture architecture = Architecture::qwen2;
  std::string architecture_name;  ///< config.json "architectures"[0], e.g. "Qwen2ForCausalLM"
  int vocab_size = 0, hidden_size = 0, intermediate_size = 0, num_layers = 0;
  int num_heads = 0, num_kv_heads = 0, head_dim = 0;  ///< head_dim explicit or hidden/heads
  double rms_norm_eps = 1e-6, rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool attention_bias = false;  ///< Qwen2: always true (q/k/v bias); others: "attention_bias"
  bool tie_word_embeddings = false;
  std::vector<std::int32_t> bos_token_ids,
      eos_token_ids;  ///< int or list in the file; may be empty
  int max_position_embeddings = 0;
  /// Positions a KV cache may hold: 0 means max_position_embeddings. Raised only through
  /// BaseModel::allow_positions, which checks that rope_scaling supports it.
  int position_limit = 0;
  std::string torch_dtype;  ///< as written ("" if absent)

  /// How many positions a KV cache of this model may hold (prefix + tail). A config built in
  /// code without max_position_embeddings (never one read from a file: validate() requires
  /// it) has no limit.
  long long max_positions() const {
    if (position_limit > 0) return position_limit;
    return max_position_embeddings > 0 ? max_position_embeddings : (1LL << 31) - 1;
  }

  int q_dim() const { return num_heads * head_dim; }
  int kv_dim() const { return num_kv_heads * head_dim; }

  /// Checks the invariants the model code relies on (positive sizes, GQA divisibility,
  /// products that fit in int, sane numerics, token ids inside the vocabulary). Throws
  /// config_error naming `source`, the config.json field and its value.
  void validate(std::string_view source) const {
    const auto positive = [&](int v, const char* field) {
      BATON_CHECK(v > 0, config_error, source, ": field '", field, "' = ", v, " must be positive");
    };
    positive(vocab_size, "vocab_size");
    positive(hidden_size, "hidden_size");
    positive(intermediate_size, "intermediate_size");
    positive(num_layers, "num_hidden_layers");
    positive(num_heads, "num_attention_heads");
    positive(num_kv_heads, "num_key_value_heads");
    positive(head_dim, "head_dim");
    positive(max_position_embeddings, "max_position_embeddings");
    BATON_CHECK(num_heads % num_kv_heads == 0, config_error, source,
                ": field 'num_attention_heads' = ", num_heads,
                " is not a multiple of 'num_key_value_heads' = ", num_kv_heads);
    // q_dim()/kv_dim() are int products; a hostile config must not make them wrap.
    constexpr long long kIntMax = std::numeric_limits<int>::max();
    BATON_CHECK(static_cast<long long>(num_heads) * head_dim <= kIntMax, config_error, source,
                ": num_attention_heads = ", num_heads, " x head_dim = ", head_dim,
                " overflows int");
    BATON_CHECK(head_dim % 2 == 0, config_error, source, ": field 'head_dim' = ", head_dim,
                " must be even (rotary pairs dimension i with i + head_dim/2)");
    BATON_CHECK(std::isfinite(rms_norm_eps) && rms_norm_eps > 0, config_error, source,
                ": field 'rms_norm_eps' = ", rms_norm_eps, " must be positive and finite");
    BATON_CHECK(std::isfinite(rope_theta) && rope_theta > 0, config_error, source,
                ": field 'rope_theta' = ", rope_theta, " must be positive and finite");
    if (rope_scaling.type != RopeScaling::Type::none) {
      BATON_CHECK(std::isfinite(rope_scaling.factor) && rope_scaling.factor > 0, config_error,
                  source, ": field 'rope_scaling.factor' = ", rope_scaling.factor,
                  " must be positive and finite");
    }
    if (rope_scaling.type == RopeScaling::Type::llama3) {
      BATON_CHECK(std::isfinite(rope_scaling.low_freq_factor) && rope_scaling.low_freq_factor > 0,
                  config_error, source,
                  ": field 'rope_scaling.low_freq_factor' = ", rope_scaling.low_freq_factor,
                  " must be positive and finite");
      // The llama3 band interpolation divides by (high - low): equal factors are undefined.
      BATON_CHECK(std::isfinite(rope_scaling.high_freq_factor) &&
                      rope_scaling.high_freq_factor > rope_scaling.low_freq_factor,
                  config_error, source,
                  ": field 'rope_scaling.high_freq_factor' = ", rope_scaling.high_freq_factor,
                  " must be greater than low_freq_factor = ", rope_scaling.low_freq_factor);
      BATON_CHECK(rope_scaling.original_max_position_embeddings > 0, config_error, source,
                  ": field 'rope_scaling.original_max_position_embeddings' = ",
                  rope_scaling.original_max_position_embeddings, " must be positive");
    }
    const auto ids_in_vocab = [&](const std::vector<std::int32_t>& ids, const char* field) {
      for (const std::int32_t id : ids) {
        BATON_CHECK(id >= 0 && id < vocab_size, config_error, source, ": field '", field,
                    "' holds token id ", id, ", outside the vocabulary [0, ", vocab_size, ")");
      }
    };
    ids_in_vocab(bos_token_ids, "bos_token_id");
    ids_in_vocab(eos_token_ids, "eos_token_id");
  }
};

}  // namespace baton
