// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A random Qwen2-like bf16 model written to a folder tensor by tensor (never held
///        whole in memory), for the decode benchmarks (host and CUDA).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/dtype.hpp"
#include "baton/core/error.hpp"

namespace baton::bench {

/// The random model's shape (default: a 0.2B-parameter Qwen2-like decoder, ~400 MB in bf16).
struct RandomModelShape {
  int hidden = 1024, layers = 12, heads = 16, kv_heads = 4, head_dim = 64, ffn = 2816,
      vocab = 32000;
};

/// splitmix64: fast, good enough for weights nobody reads for meaning.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [-a, a].
  float uniform(float a) { return a * (static_cast<float>(next() >> 40) * 0x1p-23f - 1.0f); }
};

struct TensorPlan {
  std::string name;
  std::vector<std::int64_t> shape;
  float amplitude = 0;  ///< uniform [-a, a]; 0 with `constant` for norm weights
  float constant = 0;
};

inline std::vector<TensorPlan> plan_tensors(const RandomModelShape& o) {
  std::vector<TensorPlan> t;
  const std::int64_t H = o.hidden, F = o.ffn, V = o.vocab, Q = o.heads * o.head_dim,
                     KV = o.kv_heads * o.head_dim;
  // Uniform amplitude sqrt(3/in) gives unit-variance outputs for unit-variance inputs.
  const auto a = [](std::int64_t in) { return static_cast<float>(std::sqrt(3.0 / in)); };
  t.push_back({"model.embed_tokens.weight", {V, H}, 1.7f});
  t.push_back({"lm_head.weight", {V, H}, a(H)});
  t.push_back({"model.norm.weight", {H}, 0, 1.0f});
  for (int i = 0; i < o.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    t.push_back({p + "input_layernorm.weight", {H}, 0, 1.0f});
    t.push_back({p + "post_attention_layernorm.weight", {H}, 0, 1.0f});
    t.push_back({p + "self_attn.q_proj.weight", {Q, H}, a(H)});
    t.push_back({p + "self_attn.k_proj.weight", {KV, H}, a(H)});
    t.push_back({p + "self_attn.v_proj.weight", {KV, H}, a(H)});
    t.push_back({p + "self_attn.q_proj.bias", {Q}, 0.1f});
    t.push_back({p + "self_attn.k_proj.bias", {KV}, 0.1f});
    t.push_back({p + "self_attn.v_proj.bias", {KV}, 0.1f});
    t.push_back({p + "self_attn.o_proj.weight", {H, Q}, a(Q)});
    t.push_back({p + "mlp.gate_proj.weight", {F, H}, a(H)});
    t.push_back({p + "mlp.up_proj.weight", {F, H}, a(H)});
    t.push_back({p + "mlp.down_proj.weight", {H, F}, a(F) * 0.5f});
  }
  std::sort(t.begin(), t.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
  return t;
}

/// config.json + model.safetensors (bf16) of a random Qwen2 model; returns the file's bytes.
inline std::uint64_t write_random_model(const RandomModelShape& o,
                                        const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const nlohmann::json cfg = {{"architectures", {"Qwen2ForCausalLM"}},
                              {"model_type", "qwen2"},
                              {"vocab_size", o.vocab},
                              {"hidden_size", o.hidden},
                              {"intermediate_size", o.ffn},
                              {"num_hidden_layers", o.layers},
                              {"num_attention_heads", o.heads},
                              {"num_key_value_heads", o.kv_heads},
                              {"head_dim", o.head_dim},
                              {"rms_norm_eps", 1e-6},
                              {"rope_theta", 1000000.0},
                              {"hidden_act", "silu"},
                              {"tie_word_embeddings", false},
                              {"bos_token_id", 1},
                              {"eos_token_id", 2},
                              {"max_position_embeddings", 4096},
                              {"torch_dtype", "bfloat16"}};
  std::ofstream(dir / "config.json") << cfg.dump(2);

  const std::vector<TensorPlan> plan = plan_tensors(o);
  nlohmann::json header = nlohmann::json::object();
  std::uint64_t off = 0;
  for (const TensorPlan& t : plan) {
    std::uint64_t n = 1;
    for (auto d : t.shape) n *= static_cast<std::uint64_t>(d);
    header[t.name] = {{"dtype", "BF16"}, {"shape", t.shape}, {"data_offsets", {off, off + 2 * n}}};
    off += 2 * n;
  }
  header["__metadata__"] = {{"format", "pt"}};
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // 8-byte aligned data section
  std::ofstream out(dir / "model.safetensors", std::ios::binary | std::ios::trunc);
  const std::uint64_t len = text.size();
  unsigned char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<unsigned char>(len >> (8 * i));
  out.write(reinterpret_cast<const char*>(len_bytes), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  Rng rng{12345};
  std::vector<std::uint16_t> chunk(1 << 20);
  for (const TensorPlan& t : plan) {
    std::uint64_t left = 1;
    for (auto d : t.shape) left *= static_cast<std::uint64_t>(d);
    while (left > 0) {
      const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
      for (std::size_t i = 0; i < k; ++i) {
        const float v = t.amplitude > 0 ? t.constant + rng.uniform(t.amplitude) : t.constant;
        chunk[i] = to_bf16(v).bits;
      }
      out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(2 * k));
      left -= k;
    }
  }
  BATON_CHECK(out.good(), io_error, "writing ", (dir / "model.safetensors").string(),
              " failed (disk full?)");
  return 8 + len + off;
}

}  // namespace baton::bench
