// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Hugging Face config.json -> baton::ModelConfig, for Qwen2, Llama and Qwen3 checkpoints
///        (and the architectures a family added outside baton names).
///
/// Anything that would change the computation and that baton does not implement is rejected
/// by name (another activation, sliding-window attention, MLP bias, rope types other than
/// linear/llama3), instead of being silently ignored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"
#include "baton/core/model_config.hpp"
#include "baton/io/json_util.hpp"

namespace baton::io {

namespace detail {

/// eos/bos: an int, a list of ints, or null/absent (empty).
inline std::vector<std::int32_t> token_ids(const FieldReader<>& f, std::string_view key) {
  std::vector<std::int32_t> ids;
  const nlohmann::json* v = f.get(key);
  if (!v) return ids;
  const auto one = [&](const nlohmann::json& x) {
    if (!x.is_number_integer()) f.fail(key, *v, "is not a token id or a list of token ids");
    // Negative ids and ids past int32 are rejected here; the vocab bound is validate()'s.
    const auto id = non_negative_integer(x);
    if (!id || *id > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
      f.fail(key, *v, "holds a token id outside [0, 2^31)");
    }
    ids.push_back(static_cast<std::int32_t>(*id));
  };
  if (v->is_array()) {
    for (const auto& x : *v) one(x);
  } else {
    one(*v);
  }
  return ids;
}

/// Fills `out` from a rope_scaling / rope_parameters object.
inline void parse_rope(const nlohmann::json& r, std::string_view source, const std::string& field,
                       RopeScaling& out) {
  const FieldReader<> f(r, source, field + ".");
  const auto rope_type = f.string("rope_type");
  const auto legacy_type = f.string("type");
  // Newer files say rope_type, older ones type; both present and different is ambiguous.
  if (rope_type && legacy_type && *rope_type != *legacy_type) {
    BATON_FAIL(config_error, source, ": field '", field, "' has rope_type \"",
               detail::excerpt(*rope_type), "\" but type \"", detail::excerpt(*legacy_type), "\"");
  }
  const std::string type = rope_type ? *rope_type : legacy_type.value_or("default");
  if (type == "default") {
    out = RopeScaling{};
  } else if (type == "linear") {
    out = RopeScaling{};
    out.type = RopeScaling::Type::linear;
    out.factor = f.number_or("factor", 1.0, /*required=*/true);
  } else if (type == "llama3") {
    out.type = RopeScaling::Type::llama3;
    out.factor = f.number_or("factor", 0, true);
    out.low_freq_factor = f.number_or("low_freq_factor", 0, true);
    out.high_freq_factor = f.number_or("high_freq_factor", 0, true);
    out.original_max_position_embeddings = f.int_or("original_max_position_embeddings", 0, true);
  } else {
    BATON_FAIL(config_error, source, ": field '", field, "' has rope type \"",
               detail::excerpt(type),
               "\", which baton does not implement (supported: default, linear, llama3)");
  }
}

}  // namespace detail

/// The "architectures" class names of the families baton ships (model/family/).
inline constexpr std::string_view kBuiltinArchitectures[] = {"Qwen2ForCausalLM", "LlamaForCausalLM",
                                                             "Qwen3ForCausalLM"};

/// Builds and validates a ModelConfig from a parsed config.json; config_error naming
/// `source`, the field and its value on anything unsupported, missing or inconsistent.
/// Required: architectures, vocab_size, hidden_size, intermediate_size, num_hidden_layers,
/// num_attention_heads, max_position_embeddings (and head_dim for Qwen3, whose default
/// baton does not guess). `model_type` is not consulted. `extra_architectures` are accepted
/// besides the built-in ones (a family added outside baton passes its own names); they get
/// `Architecture::other` and the generic rules (attention_bias read from the file).
inline ModelConfig parse_model_config(const nlohmann::json& j, std::string_view source,
                                      std::span<const std::string_view> extra_architectures = {}) {
  BATON_CHECK(j.is_object(), config_error, source, ": config is not a JSON object");
  const FieldReader<> f(j, source);
  ModelConfig c;

  f.require("architectures");
  const nlohmann::json& arch = *f.get("architectures");
  if (!arch.is_array() || arch.empty() || !arch[0].is_string()) {
    f.fail("architectures", arch, "is not a non-empty list of class names");
  }
  c.architecture_name = arch[0].get<std::string>();
  if (c.architecture_name == "Qwen2ForCausalLM") {
    c.architecture = Architecture::qwen2;
  } else if (c.architecture_name == "LlamaForCausalLM") {
    c.architecture = Architecture::llama;
  } else if (c.architecture_name == "Qwen3ForCausalLM") {
    c.architecture = Architecture::qwen3;
  } else {
    bool extra = false;
    for (const std::string_view a : extra_architectures) extra = extra || a == c.architecture_name;
    BATON_CHECK(extra, config_error, source, ": unknown architecture \"",
                detail::excerpt(c.architecture_name),
                "\" (baton runs Qwen2ForCausalLM, LlamaForCausalLM and Qwen3ForCausalLM; a "
                "family added outside baton names its own)");
    c.architecture = Architecture::other;
  }
  BATON_CHECK(arch.size() == 1, config_error, source,
              ": field 'architectures' = ", detail::show(arch), " names more than one class");

  c.vocab_size = f.required_int("vocab_size");
  c.hidden_size = f.required_int("hidden_size");
  c.intermediate_size = f.required_int("intermediate_size");
  c.num_layers = f.required_int("num_hidden_layers");
  c.num_heads = f.required_int("num_attention_heads");
  c.num_kv_heads = f.int_or("num_key_value_heads", c.num_heads);
  c.max_position_embeddings = f.required_int("max_position_embeddings");
  BATON_CHECK(c.num_heads > 0, config_error, source,
              ": field 'num_attention_heads' = ", c.num_heads, " must be positive");
  BATON_CHECK(c.hidden_size > 0, config_error, source, ": field 'hidden_size' = ", c.hidden_size,
              " must be positive");
  BATON_CHECK(c.architecture != Architecture::qwen3 || f.has("head_dim"), config_error, source,
              ": \"", c.architecture_name,
              "\" needs an explicit 'head_dim' (transformers would assume 128; baton does not "
              "guess)");
  if (f.has("head_dim")) {
    // An explicit head_dim is authoritative: it need not equal hidden_size / heads.
    c.head_dim = f.required_int("head_dim");
  } else {
    BATON_CHECK(c.hidden_size % c.num_heads == 0, config_error, source,
                ": head_dim is absent and hidden_size = ", c.hidden_size,
                " is not a multiple of num_attention_heads = ", c.num_heads);
    c.head_dim = c.hidden_size / c.num_heads;
  }
  c.rms_norm_eps = f.number_or("rms_norm_eps", 1e-6);
  c.rope_theta = f.number_or("rope_theta", 10000.0);
  c.tie_word_embeddings = f.bool_or("tie_word_embeddings", false);
  c.torch_dtype = f.string("torch_dtype").value_or(f.string("dtype").value_or(""));
  c.bos_token_ids = detail::token_ids(f, "bos_token_id");
  c.eos_token_ids = detail::token_ids(f, "eos_token_id");

  const std::string act = f.string("hidden_act").value_or("silu");
  if (act != "silu") {
    f.fail("hidden_act", *f.get("hidden_act"), "is not supported (baton implements silu only)");
  }

  if (c.architecture == Architecture::qwen2 || c.architecture == Architecture::qwen3) {
    // Qwen2 always has q/k/v biases (and none on o_proj); Qwen3 reads attention_bias.
    c.attention_bias = c.architecture == Architecture::qwen2 || f.bool_or("attention_bias", false);
    if (f.bool_or("use_sliding_window", false)) {
      f.fail("use_sliding_window", *f.get("use_sliding_window"),
             "is not supported (baton implements full causal attention only)");
    }
  } else {
    c.attention_bias = f.bool_or("attention_bias", false);
    if (f.bool_or("mlp_bias", false)) {
      f.fail("mlp_bias", *f.get("mlp_bias"), "is not supported (baton's MLP has no bias)");
    }
  }

  if (const nlohmann::json* r = f.get("rope_scaling")) {
    if (!r->is_object()) f.fail("rope_scaling", *r, "is neither null nor an object");
    detail::parse_rope(*r, source, "rope_scaling", c.rope_scaling);
  }
  // transformers v5 files carry rope_theta and the scaling inside "rope_parameters".
  if (const nlohmann::json* r = f.get("rope_parameters")) {
    if (!r->is_object()) f.fail("rope_parameters", *r, "is neither null nor an object");
    BATON_CHECK(!f.has("rope_scaling"), config_error, source,
                ": both 'rope_scaling' and 'rope_parameters' are present; only one may be");
    detail::parse_rope(*r, source, "rope_parameters", c.rope_scaling);
    const FieldReader<> rp(*r, source, "rope_parameters.");
    if (const auto theta = rp.number("rope_theta")) {
      BATON_CHECK(!f.has("rope_theta") || *f.number("rope_theta") == *theta, config_error, source,
                  ": rope_theta = ", c.rope_theta,
                  " disagrees with rope_parameters.rope_theta = ", *theta);
      c.rope_theta = *theta;
    }
  }

  c.validate(source);
  return c;
}

/// Reads and parses `model_dir`/config.json (format_error for malformed JSON or duplicate
/// keys, io_error if unreadable, config_error for unsupported/invalid content).
inline ModelConfig load_model_config(const std::filesystem::path& model_dir,
                                     std::span<const std::string_view> extra_architectures = {},
                                     const ReadLimits& limits = {}) {
  const std::filesystem::path file = model_dir / "config.json";
  return parse_model_config(read_json_file(file, limits.config_bytes, limits.json_depth),
                            file.string(), extra_architectures);
}

}  // namespace baton::io
