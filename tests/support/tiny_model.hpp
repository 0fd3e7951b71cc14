// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Tiny random models and PEFT adapters that the tests write themselves. The tensors stay in
// memory too (as the exact values stored, after any bf16/f16 rounding), so the naive
// reference model computes from the same numbers without reading the files.
#pragma once

#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/model_config.hpp"
#include "support/safetensors_writer.hpp"

namespace baton::test {

using Tensors = std::map<std::string, std::vector<float>>;
using Shapes = std::map<std::string, std::vector<std::int64_t>>;

/// A model description for the writer. head_dim_in_config=false leaves it implied.
struct TinySpec {
  Architecture arch = Architecture::qwen2;
  int vocab = 96, hidden = 32, layers = 2, heads = 4, kv_heads = 2, head_dim = 8, ffn = 48;
  bool tie = false;
  bool head_dim_in_config = true;
  double rope_theta = 10000.0, eps = 1e-6;
  RopeScaling rope_scaling{};
  std::string dtype = "F32";  // storage: F32, BF16, F16
  unsigned seed = 1;
};

struct TinyModel {
  TinySpec spec;
  ModelConfig cfg;
  Tensors tensors;  // values exactly as stored in the file
  Shapes shapes;
};

inline float round_to_storage(float v, const std::string& dtype) {
  if (dtype == "BF16") return widen(to_bf16(v));
  if (dtype == "F16") return widen(to_f16(v));
  return v;
}

namespace detail {
inline void fill_normal(std::vector<float>& v, std::mt19937& rng, double mean, double stddev) {
  std::normal_distribution<double> nd(mean, stddev);
  for (float& x : v) x = static_cast<float>(nd(rng));
}
}  // namespace detail

/// Draws the weights of `s`. Scales keep activations O(1) and logits spread (std of a few
/// units), so greedy steps are far from ties and every part of the block matters.
inline TinyModel make_tiny_model(const TinySpec& s) {
  TinyModel m;
  m.spec = s;
  ModelConfig& c = m.cfg;
  c.architecture = s.arch;
  c.architecture_name = s.arch == Architecture::qwen2   ? "Qwen2ForCausalLM"
                        : s.arch == Architecture::qwen3 ? "Qwen3ForCausalLM"
                                                        : "LlamaForCausalLM";
  c.vocab_size = s.vocab;
  c.hidden_size = s.hidden;
  c.intermediate_size = s.ffn;
  c.num_layers = s.layers;
  c.num_heads = s.heads;
  c.num_kv_heads = s.kv_heads;
  c.head_dim = s.head_dim;
  c.rms_norm_eps = s.eps;
  c.rope_theta = s.rope_theta;
  c.rope_scaling = s.rope_scaling;
  c.attention_bias = s.arch == Architecture::qwen2;
  c.tie_word_embeddings = s.tie;
  c.bos_token_ids = {1};
  c.eos_token_ids = {2};
  c.max_position_embeddings = 4096;
  std::mt19937 rng(s.seed);
  const auto add = [&](const std::string& name, std::vector<std::int64_t> shape, double mean,
                       double stddev) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    std::vector<float> v(n);
    detail::fill_normal(v, rng, mean, stddev);
    // Norm weights and biases are stored in the file's dtype too (the loader widens them).
    for (float& x : v) x = round_to_storage(x, s.dtype);
    m.tensors[name] = std::move(v);
    m.shapes[name] = std::move(shape);
  };
  const int qd = s.heads * s.head_dim, kvd = s.kv_heads * s.head_dim;
  add("model.embed_tokens.weight", {s.vocab, s.hidden}, 0.0, 1.0);
  for (int i = 0; i < s.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    add(p + "input_layernorm.weight", {s.hidden}, 1.0, 0.15);
    add(p + "post_attention_layernorm.weight", {s.hidden}, 1.0, 0.15);
    // q/k scaled up so attention scores have a spread of a few units (softmax not uniform).
    add(p + "self_attn.q_proj.weight", {qd, s.hidden}, 0.0, 2.0 / std::sqrt(s.hidden));
    add(p + "self_attn.k_proj.weight", {kvd, s.hidden}, 0.0, 2.0 / std::sqrt(s.hidden));
    add(p + "self_attn.v_proj.weight", {kvd, s.hidden}, 0.0, 1.0 / std::sqrt(s.hidden));
    add(p + "self_attn.o_proj.weight", {s.hidden, qd}, 0.0, 1.0 / std::sqrt(qd));
    if (c.attention_bias) {
      add(p + "self_attn.q_proj.bias", {qd}, 0.0, 0.5);
      add(p + "self_attn.k_proj.bias", {kvd}, 0.0, 0.5);
      add(p + "self_attn.v_proj.bias", {kvd}, 0.0, 0.5);
    }
    if (s.arch == Architecture::qwen3) {
      // Per-head norms (one [head_dim] weight each for q and k), drawn like the other norms.
      add(p + "self_attn.q_norm.weight", {s.head_dim}, 1.0, 0.15);
      add(p + "self_attn.k_norm.weight", {s.head_dim}, 1.0, 0.15);
    }
    add(p + "mlp.gate_proj.weight", {s.ffn, s.hidden}, 0.0, 1.5 / std::sqrt(s.hidden));
    add(p + "mlp.up_proj.weight", {s.ffn, s.hidden}, 0.0, 1.5 / std::sqrt(s.hidden));
    add(p + "mlp.down_proj.weight", {s.hidden, s.ffn}, 0.0, 3.0 / std::sqrt(s.ffn));
  }
  add("model.norm.weight", {s.hidden}, 1.0, 0.15);
  if (!s.tie) add("lm_head.weight", {s.vocab, s.hidden}, 0.0, 4.0 / std::sqrt(s.hidden));
  return m;
}

inline RawTensor raw_tensor(const std::string& dtype, std::vector<std::int64_t> shape,
                            const std::vector<float>& v) {
  if (dtype == "BF16") return bf16_tensor(std::move(shape), v);
  if (dtype == "F16") return f16_tensor(std::move(shape), v);
  return f32_tensor(std::move(shape), v);
}

inline nlohmann::json config_json(const TinyModel& m) {
  const ModelConfig& c = m.cfg;
  nlohmann::json j = {{"architectures", {c.architecture_name}},
                      {"model_type", c.architecture == Architecture::qwen2   ? "qwen2"
                                     : c.architecture == Architecture::qwen3 ? "qwen3"
                                                                             : "llama"},
                      {"vocab_size", c.vocab_size},
                      {"hidden_size", c.hidden_size},
                      {"intermediate_size", c.intermediate_size},
                      {"num_hidden_layers", c.num_layers},
                      {"num_attention_heads", c.num_heads},
                      {"num_key_value_heads", c.num_kv_heads},
                      {"rms_norm_eps", c.rms_norm_eps},
                      {"rope_theta", c.rope_theta},
                      {"hidden_act", "silu"},
                      {"tie_word_embeddings", c.tie_word_embeddings},
                      {"bos_token_id", c.bos_token_ids.at(0)},
                      {"eos_token_id", c.eos_token_ids},
                      {"max_position_embeddings", c.max_position_embeddings},
                      {"torch_dtype", m.spec.dtype == "BF16"  ? "bfloat16"
                                      : m.spec.dtype == "F16" ? "float16"
                                                              : "float32"}};
  if (m.spec.head_dim_in_config) j["head_dim"] = c.head_dim;
  if (c.architecture != Architecture::qwen2) j["attention_bias"] = false;
  if (c.rope_scaling.type == RopeScaling::Type::llama3) {
    j["rope_scaling"] = {
        {"rope_type", "llama3"},
        {"factor", c.rope_scaling.factor},
        {"low_freq_factor", c.rope_scaling.low_freq_factor},
        {"high_freq_factor", c.rope_scaling.high_freq_factor},
        {"original_max_position_embeddings", c.rope_scaling.original_max_position_embeddings}};
  } else if (c.rope_scaling.type == RopeScaling::Type::linear) {
    j["rope_scaling"] = {{"type", "linear"}, {"factor", c.rope_scaling.factor}};
  }
  return j;
}

/// Writes config.json + model.safetensors into `dir` (created).
inline void write_tiny_model(const TinyModel& m, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  TensorMap raw;
  for (const auto& [name, v] : m.tensors)
    raw[name] = raw_tensor(m.spec.dtype, m.shapes.at(name), v);
  write_safetensors(dir / "model.safetensors", raw, {{"format", "pt"}});
  write_json(dir / "config.json", config_json(m));
}

/// A PEFT LoRA adapter description.
struct TinyAdapterSpec {
  int r = 4;
  double alpha = 8;
  bool rslora = false;
  std::vector<std::string> targets = {"q_proj", "v_proj"};
  unsigned seed = 7;
  double strength = 0.5;        // std of scale·B·A·x entries, roughly
  std::vector<int> invocation;  // an activated LoRA's alora_invocation_tokens (empty: plain)
};

struct TinyAdapter {
  TinyAdapterSpec spec;
  double scale = 0;
  Tensors tensors;  // PEFT names -> values (f32)
  Shapes shapes;
};

inline std::pair<int, int> tiny_target_dims(const ModelConfig& c, const std::string& t) {
  if (t == "q_proj") return {c.hidden_size, c.q_dim()};
  if (t == "k_proj" || t == "v_proj") return {c.hidden_size, c.kv_dim()};
  if (t == "o_proj") return {c.q_dim(), c.hidden_size};
  if (t == "down_proj") return {c.intermediate_size, c.hidden_size};
  return {c.hidden_size, c.intermediate_size};  // gate_proj, up_proj
}

inline std::string tiny_parent(const std::string& t) {
  return t == "gate_proj" || t == "up_proj" || t == "down_proj" ? "mlp" : "self_attn";
}

inline TinyAdapter make_tiny_adapter(const ModelConfig& c, const TinyAdapterSpec& s) {
  TinyAdapter a;
  a.spec = s;
  a.scale = s.rslora ? s.alpha / std::sqrt(static_cast<double>(s.r)) : s.alpha / s.r;
  std::mt19937 rng(s.seed);
  for (int i = 0; i < c.num_layers; ++i) {
    for (const std::string& t : s.targets) {
      const auto [in, out] = tiny_target_dims(c, t);
      const std::string p = "base_model.model.model.layers." + std::to_string(i) + "." +
                            tiny_parent(t) + "." + t + ".";
      std::vector<float> A(static_cast<std::size_t>(s.r) * in),
          B(static_cast<std::size_t>(out) * s.r);
      detail::fill_normal(A, rng, 0.0, 1.0 / std::sqrt(in));
      // With A x of unit-ish entries, scale·B·(A x) has std ≈ scale·σ_B·sqrt(r).
      detail::fill_normal(B, rng, 0.0, s.strength / (a.scale * std::sqrt(s.r)));
      a.tensors[p + "lora_A.weight"] = std::move(A);
      a.shapes[p + "lora_A.weight"] = {s.r, in};
      a.tensors[p + "lora_B.weight"] = std::move(B);
      a.shapes[p + "lora_B.weight"] = {out, s.r};
    }
  }
  return a;
}

inline void write_tiny_adapter(const TinyAdapter& a, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  TensorMap raw;
  for (const auto& [name, v] : a.tensors) raw[name] = f32_tensor(a.shapes.at(name), v);
  write_safetensors(dir / "adapter_model.safetensors", raw, {{"format", "pt"}});
  nlohmann::json config = {{"peft_type", "LORA"},
                           {"task_type", "CAUSAL_LM"},
                           {"r", a.spec.r},
                           {"lora_alpha", a.spec.alpha},
                           {"use_rslora", a.spec.rslora},
                           {"target_modules", a.spec.targets},
                           {"bias", "none"},
                           {"fan_in_fan_out", false},
                           {"lora_dropout", 0.0},
                           {"modules_to_save", nullptr},
                           {"use_dora", false},
                           {"base_model_name_or_path", "tiny"}};
  if (!a.spec.invocation.empty()) config["alora_invocation_tokens"] = a.spec.invocation;
  write_json(dir / "adapter_config.json", config);
}

}  // namespace baton::test
