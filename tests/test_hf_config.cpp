// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// config.json -> ModelConfig: realistic Qwen2.5-0.5B and Llama-3.2-1B files (written from
// the published configs), and every rejection by exception type and message.
//
// Mutation-checked while writing: dropping the num_heads % num_kv_heads check, the
// mlp_bias rejection or the vocab-range check of eos ids made the matching case fail.
#include <doctest/doctest.h>

#include "support/expect_error.hpp"

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "baton/io/hf_config.hpp"
#include "support/safetensors_writer.hpp"
#include "support/test_paths.hpp"

namespace fs = std::filesystem;
using baton::Architecture;
using baton::config_error;
using baton::format_error;
using baton::io_error;
using baton::ModelConfig;
using baton::RopeScaling;
using baton::io::parse_model_config;
using nlohmann::json;

namespace {

constexpr std::string_view kSrc = "models/x/config.json";

/// Qwen/Qwen2.5-0.5B config.json as published (base model).
json qwen25_05b() {
  return json::parse(R"({
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 896,
  "initializer_range": 0.02,
  "intermediate_size": 4864,
  "max_position_embeddings": 32768,
  "max_window_layers": 24,
  "model_type": "qwen2",
  "num_attention_heads": 14,
  "num_hidden_layers": 24,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 32768,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})");
}

/// meta-llama/Llama-3.2-1B(-Instruct) config.json as published (Instruct's eos list).
json llama32_1b() {
  return json::parse(R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "head_dim": 64,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 8192,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 16,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 32.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0.dev0",
  "use_cache": true,
  "vocab_size": 128256
})");
}

fs::path fresh_dir(const std::string& name) {
#ifdef BATON_TEST_TMP
  const fs::path dir = fs::path(BATON_TEST_TMP) / "io_hf_config" / name;
#else
  const fs::path dir = fs::temp_directory_path() / "baton_io_hf_config" / name;
#endif
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("Qwen2.5-0.5B config.json") {
  const ModelConfig c = parse_model_config(qwen25_05b(), kSrc);
  CHECK(c.architecture == Architecture::qwen2);
  CHECK(c.architecture_name == "Qwen2ForCausalLM");
  CHECK(c.vocab_size == 151936);
  CHECK(c.hidden_size == 896);
  CHECK(c.intermediate_size == 4864);
  CHECK(c.num_layers == 24);
  CHECK(c.num_heads == 14);
  CHECK(c.num_kv_heads == 2);
  CHECK(c.head_dim == 64);  // derived: 896 / 14
  CHECK(c.q_dim() == 896);
  CHECK(c.kv_dim() == 128);
  CHECK(c.rms_norm_eps == 1e-6);
  CHECK(c.rope_theta == 1e6);
  CHECK(c.rope_scaling.type == RopeScaling::Type::none);
  CHECK(c.attention_bias);  // Qwen2: q/k/v biases always
  CHECK(c.tie_word_embeddings);
  CHECK(c.bos_token_ids == std::vector<std::int32_t>{151643});
  CHECK(c.eos_token_ids == std::vector<std::int32_t>{151643});
  CHECK(c.max_position_embeddings == 32768);
  CHECK(c.torch_dtype == "bfloat16");
}

TEST_CASE("Llama-3.2-1B config.json, and load_model_config from a folder") {
  const fs::path dir = fresh_dir("llama");
  baton::test::write_json(dir / "config.json", llama32_1b());
  const ModelConfig c = baton::io::load_model_config(dir);
  CHECK(c.architecture == Architecture::llama);
  CHECK(c.architecture_name == "LlamaForCausalLM");
  CHECK(c.vocab_size == 128256);
  CHECK(c.hidden_size == 2048);
  CHECK(c.intermediate_size == 8192);
  CHECK(c.num_layers == 16);
  CHECK(c.num_heads == 32);
  CHECK(c.num_kv_heads == 8);
  CHECK(c.head_dim == 64);
  CHECK(c.kv_dim() == 512);
  CHECK(c.rms_norm_eps == 1e-5);
  CHECK(c.rope_theta == 500000.0);
  CHECK(c.rope_scaling.type == RopeScaling::Type::llama3);
  CHECK(c.rope_scaling.factor == 32.0);
  CHECK(c.rope_scaling.low_freq_factor == 1.0);
  CHECK(c.rope_scaling.high_freq_factor == 4.0);
  CHECK(c.rope_scaling.original_max_position_embeddings == 8192);
  CHECK_FALSE(c.attention_bias);
  CHECK(c.tie_word_embeddings);
  CHECK(c.bos_token_ids == std::vector<std::int32_t>{128000});
  CHECK(c.eos_token_ids == std::vector<std::int32_t>{128001, 128008, 128009});
  CHECK(c.max_position_embeddings == 131072);
  CHECK(c.torch_dtype == "bfloat16");
}

TEST_CASE("optional fields: defaults, null, explicit head_dim, attention_bias, dtype") {
  json j = qwen25_05b();
  j.erase("num_key_value_heads");
  j.erase("rms_norm_eps");
  j.erase("rope_theta");
  j.erase("tie_word_embeddings");
  j.erase("torch_dtype");
  j.erase("hidden_act");
  j["bos_token_id"] = nullptr;
  j.erase("eos_token_id");
  ModelConfig c = parse_model_config(j, kSrc);
  CHECK(c.num_kv_heads == 14);  // absent: one KV head per query head
  CHECK(c.rms_norm_eps == 1e-6);
  CHECK(c.rope_theta == 10000.0);
  CHECK_FALSE(c.tie_word_embeddings);
  CHECK(c.torch_dtype.empty());
  CHECK(c.bos_token_ids.empty());
  CHECK(c.eos_token_ids.empty());

  j["num_key_value_heads"] = nullptr;  // null counts as absent
  j["dtype"] = "float32";              // newer transformers' spelling
  c = parse_model_config(j, kSrc);
  CHECK(c.num_kv_heads == 14);
  CHECK(c.torch_dtype == "float32");

  // An explicit head_dim need not equal hidden_size / heads.
  j = qwen25_05b();
  j["head_dim"] = 128;
  c = parse_model_config(j, kSrc);
  CHECK(c.head_dim == 128);
  CHECK(c.q_dim() == 1792);
  j["hidden_size"] = 900;  // 900 % 14 != 0 is fine when head_dim is explicit
  CHECK(parse_model_config(j, kSrc).head_dim == 128);

  j = llama32_1b();
  j["attention_bias"] = true;
  CHECK(parse_model_config(j, kSrc).attention_bias);
  j["eos_token_id"] = 128001;
  CHECK(parse_model_config(j, kSrc).eos_token_ids == std::vector<std::int32_t>{128001});
  j["eos_token_id"] = json::array();
  CHECK(parse_model_config(j, kSrc).eos_token_ids.empty());
  j["model_type"] = "qwen2";  // disagreement with architectures is ignored
  CHECK(parse_model_config(j, kSrc).architecture == Architecture::llama);
}

TEST_CASE("architecture errors") {
  json j = qwen25_05b();
  j["architectures"] = {"MistralForCausalLM"};
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), kSrc,
               "unknown architecture \"MistralForCausalLM\"");
  j["architectures"] = {"Qwen3ForCausalLM"};
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "\"Qwen3ForCausalLM\"");
  j["architectures"] = "Qwen2ForCausalLM";
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'architectures'",
               "not a non-empty list");
  j["architectures"] = json::array();
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'architectures' = []");
  j["architectures"] = {"Qwen2ForCausalLM", "LlamaForCausalLM"};
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "more than one");
  j.erase("architectures");
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), kSrc,
               "missing required field 'architectures'");
  EXPECT_ERROR(config_error, parse_model_config(json::array(), kSrc), "not a JSON object");
}

TEST_CASE("required fields, types and sizes") {
  for (const char* field : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                            "num_attention_heads", "max_position_embeddings"}) {
    CAPTURE(field);
    json j = qwen25_05b();
    j.erase(field);
    EXPECT_ERROR(config_error, parse_model_config(j, kSrc), kSrc,
                 std::string("missing required field '") + field + "'");
    j[field] = nullptr;
    EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "missing required field");
  }
  for (const char* field :
       {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
        "num_attention_heads", "num_key_value_heads", "head_dim", "max_position_embeddings"}) {
    for (const int v : {0, -2}) {
      CAPTURE(field);
      CAPTURE(v);
      json j = qwen25_05b();
      j[field] = v;
      EXPECT_ERROR(config_error, parse_model_config(j, kSrc), kSrc, std::string("'") + field,
                   std::to_string(v));
    }
  }
  json j = qwen25_05b();
  j["hidden_size"] = "896";
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'hidden_size' = \"896\"",
               "not an integer");
  j["hidden_size"] = 896.5;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'hidden_size' = 896.5",
               "not an integer");
  j["hidden_size"] = 1LL << 40;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'hidden_size' = 1099511627776",
               "32-bit");
  j = qwen25_05b();
  j["tie_word_embeddings"] = "yes";
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'tie_word_embeddings'", "not a boolean");
  j = qwen25_05b();
  j["rms_norm_eps"] = "1e-6";
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'rms_norm_eps'", "not a number");
  j["rms_norm_eps"] = -1e-6;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'rms_norm_eps'", "positive");
  j = qwen25_05b();
  j["rope_theta"] = 0;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'rope_theta' = 0");
  j = qwen25_05b();
  j["torch_dtype"] = 16;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'torch_dtype' = 16", "not a string");
}

TEST_CASE("head and head_dim consistency") {
  json j = qwen25_05b();
  j["num_key_value_heads"] = 3;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), kSrc, "'num_attention_heads' = 14",
               "'num_key_value_heads' = 3");
  j = qwen25_05b();
  j["hidden_size"] = 900;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "head_dim is absent", "hidden_size = 900",
               "num_attention_heads = 14");
  j = qwen25_05b();
  j["head_dim"] = 63;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'head_dim' = 63", "even");
  j = qwen25_05b();
  j["num_attention_heads"] = 65536;
  j["num_key_value_heads"] = 1;
  j["head_dim"] = 65536;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "overflows int");
}

TEST_CASE("unsupported computation is rejected by name") {
  json j = qwen25_05b();
  j["hidden_act"] = "gelu";
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), kSrc, "'hidden_act' = \"gelu\"");
  j = qwen25_05b();
  j["use_sliding_window"] = true;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'use_sliding_window' = true");
  j = llama32_1b();
  j["mlp_bias"] = true;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'mlp_bias' = true");
}

TEST_CASE("rope_scaling forms") {
  json j = llama32_1b();
  j["rope_scaling"] = nullptr;
  CHECK(parse_model_config(j, kSrc).rope_scaling.type == RopeScaling::Type::none);
  j.erase("rope_scaling");
  CHECK(parse_model_config(j, kSrc).rope_scaling.type == RopeScaling::Type::none);
  j["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};  // older spelling
  RopeScaling r = parse_model_config(j, kSrc).rope_scaling;
  CHECK(r.type == RopeScaling::Type::linear);
  CHECK(r.factor == 2.0);
  j["rope_scaling"] = {{"rope_type", "linear"}, {"type", "linear"}, {"factor", 4}};
  CHECK(parse_model_config(j, kSrc).rope_scaling.factor == 4.0);
  j["rope_scaling"] = {{"rope_type", "default"}};
  CHECK(parse_model_config(j, kSrc).rope_scaling.type == RopeScaling::Type::none);

  // transformers v5: rope_parameters carries rope_theta and the scaling.
  j = llama32_1b();
  j["rope_parameters"] = j["rope_scaling"];
  j["rope_parameters"]["rope_theta"] = 500000.0;
  j.erase("rope_scaling");
  j.erase("rope_theta");
  const ModelConfig c = parse_model_config(j, kSrc);
  CHECK(c.rope_theta == 500000.0);
  CHECK(c.rope_scaling.type == RopeScaling::Type::llama3);
}

TEST_CASE("rope_scaling errors") {
  json j = llama32_1b();
  for (const char* type : {"dynamic", "yarn", "longrope", "su", "ntk"}) {
    CAPTURE(type);
    j["rope_scaling"] = {{"rope_type", type}, {"factor", 2.0}};
    EXPECT_ERROR(config_error, parse_model_config(j, kSrc), kSrc,
                 std::string("rope type \"") + type + "\"");
  }
  j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "\"yarn\"");
  j["rope_scaling"] = {{"rope_type", "linear"}};
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'rope_scaling.factor'");
  j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 0}};
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'rope_scaling.factor' = 0");
  j["rope_scaling"] = {{"rope_type", "linear"}, {"type", "dynamic"}, {"factor", 2}};
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "\"linear\"", "\"dynamic\"");
  j["rope_scaling"] = "llama3";
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'rope_scaling' = \"llama3\"");
  for (const char* field :
       {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}) {
    CAPTURE(field);
    j = llama32_1b();
    j["rope_scaling"].erase(field);
    EXPECT_ERROR(config_error, parse_model_config(j, kSrc),
                 std::string("missing required field 'rope_scaling.") + field + "'");
  }
  j = llama32_1b();
  j["rope_scaling"]["high_freq_factor"] = 1.0;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "high_freq_factor' = 1",
               "low_freq_factor = 1");
  j = llama32_1b();
  j["rope_parameters"] = {{"rope_type", "default"}};
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "both 'rope_scaling' and");
  j.erase("rope_scaling");
  j["rope_parameters"]["rope_theta"] = 10000.0;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "disagrees");
}

TEST_CASE("bos/eos token ids") {
  json j = llama32_1b();
  j["eos_token_id"] = {128001, 128256};
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), kSrc, "'eos_token_id'", "128256",
               "[0, 128256)");
  j["eos_token_id"] = -1;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'eos_token_id' = -1");
  j["eos_token_id"] = "</s>";
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'eos_token_id' = \"</s>\"");
  j["eos_token_id"] = {1, 2.5};
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'eos_token_id' = [1,2.5]");
  j["eos_token_id"] = 1;
  j["bos_token_id"] = 999999;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'bos_token_id'", "999999");
  j["bos_token_id"] = 1LL << 35;
  EXPECT_ERROR(config_error, parse_model_config(j, kSrc), "'bos_token_id'", "2^31");
}

TEST_CASE("load_model_config: file errors") {
  const fs::path dir = fresh_dir("files");
  EXPECT_ERROR(io_error, baton::io::load_model_config(dir), (dir / "config.json").string());
  baton::test::write_text(dir / "config.json", "{\"hidden_size\": 896,");
  EXPECT_ERROR(format_error, baton::io::load_model_config(dir), (dir / "config.json").string(),
               "invalid JSON");
  std::string text = qwen25_05b().dump();
  text.insert(1, "\"hidden_size\": 1024, ");  // a second hidden_size: which one is meant?
  baton::test::write_text(dir / "config.json", text);
  EXPECT_ERROR(format_error, baton::io::load_model_config(dir), "duplicate key 'hidden_size'");
  json j = qwen25_05b();
  j["num_key_value_heads"] = 5;
  baton::test::write_json(dir / "config.json", j);
  EXPECT_ERROR(config_error, baton::io::load_model_config(dir), (dir / "config.json").string(),
               "'num_key_value_heads' = 5");
}

TEST_CASE("ModelConfig::validate on a hand-built config") {
  ModelConfig c;
  EXPECT_ERROR(config_error, c.validate("hand"), "hand", "'vocab_size' = 0");
  c = parse_model_config(qwen25_05b(), kSrc);
  c.validate("again");
  c.eos_token_ids.push_back(c.vocab_size);
  EXPECT_ERROR(config_error, c.validate("again"), "again", "'eos_token_id'", "151936");
}
