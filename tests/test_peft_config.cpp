// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// adapter_config.json -> AdapterConfig: list / regex / all-linear targets, layers_to_transform,
// rank and alpha patterns (PEFT's first-match-in-file-order rule), rsLoRA scales, PEFT tensor
// names, and every rejection by exception type and message.
//
// Mutation-checked while writing: matching list entries by plain suffix (without the '.'
// boundary), dropping the use_dora rejection, or using alpha / r under use_rslora each made
// a case below fail.
#include <doctest/doctest.h>

#include "support/expect_error.hpp"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "baton/io/peft_config.hpp"
#include "support/safetensors_writer.hpp"
#include "support/test_paths.hpp"

namespace fs = std::filesystem;
using baton::config_error;
using baton::format_error;
using baton::io_error;
using baton::LoraTarget;
using baton::usage_error;
using baton::io::AdapterConfig;
using baton::io::parse_adapter_config;
using nlohmann::json;

namespace {

constexpr std::string_view kSrc = "adapters/extract/adapter_config.json";

/// A typical adapter_config.json as PEFT 0.13-0.15 writes it.
json typical() {
  return json::parse(R"({
  "alpha_pattern": {},
  "auto_mapping": null,
  "base_model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct",
  "bias": "none",
  "eva_config": null,
  "exclude_modules": null,
  "fan_in_fan_out": false,
  "inference_mode": true,
  "init_lora_weights": true,
  "layer_replication": null,
  "layers_pattern": null,
  "layers_to_transform": null,
  "loftq_config": {},
  "lora_alpha": 32,
  "lora_bias": false,
  "lora_dropout": 0.05,
  "megatron_config": null,
  "megatron_core": "megatron.core",
  "modules_to_save": null,
  "peft_type": "LORA",
  "r": 16,
  "rank_pattern": {},
  "revision": null,
  "target_modules": ["v_proj", "q_proj", "k_proj", "o_proj"],
  "task_type": "CAUSAL_LM",
  "use_dora": false,
  "use_rslora": false
})");
}

AdapterConfig parse(const json& j) { return parse_adapter_config(j, kSrc); }

fs::path fresh_dir(const std::string& name) {
#ifdef BATON_TEST_TMP
  const fs::path dir = fs::path(BATON_TEST_TMP) / "io_peft_config" / name;
#else
  const fs::path dir = fs::temp_directory_path() / "baton_io_peft_config" / name;
#endif
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

static_assert(baton::lora_target_name(LoraTarget::q) == "q_proj");
static_assert(baton::lora_target_name(LoraTarget::down) == "down_proj");
static_assert(baton::lora_target_parent(LoraTarget::o) == "self_attn");
static_assert(baton::lora_target_parent(LoraTarget::gate) == "mlp");
static_assert(baton::lora_target_from_name("up_proj") == LoraTarget::up);
static_assert(!baton::lora_target_from_name("lm_head"));

TEST_CASE("PEFT tensor names and module paths") {
  CHECK(baton::io::lora_tensor_name(0, LoraTarget::q, 'A') ==
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
  CHECK(baton::io::lora_tensor_name(11, LoraTarget::down, 'B') ==
        "base_model.model.model.layers.11.mlp.down_proj.lora_B.weight");
  CHECK(AdapterConfig::module_path(3, LoraTarget::gate) == "model.layers.3.mlp.gate_proj");
  EXPECT_ERROR(usage_error, baton::io::lora_tensor_name(0, LoraTarget::q, 'C'), "'C'");
  EXPECT_ERROR(usage_error, AdapterConfig::module_path(-1, LoraTarget::q), "-1");
}

TEST_CASE("typical config: list targets, scale alpha / r") {
  const AdapterConfig c = parse(typical());
  CHECK(c.source == kSrc);
  CHECK(c.r == 16);
  CHECK(c.lora_alpha == 32);
  CHECK_FALSE(c.use_rslora);
  CHECK(c.base_model_name_or_path == "Qwen/Qwen2.5-0.5B-Instruct");
  CHECK(c.target_kind == AdapterConfig::TargetKind::list);
  for (int layer : {0, 5, 23}) {
    CHECK(c.targets(layer, LoraTarget::q));
    CHECK(c.targets(layer, LoraTarget::k));
    CHECK(c.targets(layer, LoraTarget::v));
    CHECK(c.targets(layer, LoraTarget::o));
    CHECK_FALSE(c.targets(layer, LoraTarget::gate));
    CHECK_FALSE(c.targets(layer, LoraTarget::up));
    CHECK_FALSE(c.targets(layer, LoraTarget::down));
    CHECK(c.rank_for(layer, LoraTarget::q) == 16);
    CHECK(c.alpha_for(layer, LoraTarget::q) == 32);
    CHECK(c.scale_for(layer, LoraTarget::q) == 2.0);  // alpha / r, deliberately != 1
  }
  CHECK(c.max_rank(24) == 16);
  // A copy keeps working (the compiled regexes are shared).
  const AdapterConfig copy = c;
  CHECK(copy.targets(1, LoraTarget::v));
}

TEST_CASE("list entries: longer suffixes and layer-specific paths, at '.' boundaries") {
  json j = typical();
  j["target_modules"] = {"self_attn.q_proj", "model.layers.1.mlp.down_proj",
                         "layers.2.mlp.up_proj"};
  const AdapterConfig c = parse(j);
  CHECK(c.targets(0, LoraTarget::q));
  CHECK(c.targets(7, LoraTarget::q));
  CHECK_FALSE(c.targets(0, LoraTarget::down));
  CHECK(c.targets(1, LoraTarget::down));
  CHECK_FALSE(c.targets(11, LoraTarget::down));  // "1.mlp.down_proj" must not match layer 11
  CHECK(c.targets(2, LoraTarget::up));
  CHECK_FALSE(c.targets(12, LoraTarget::up));
  CHECK(c.max_rank(2) == 16);

  // "2.mlp.up_proj" is a plain-text suffix of layer 12's path too; only the '.' boundary
  // keeps it to layer 2, as PEFT's key.endswith("." + name) does.
  j["target_modules"] = {"2.mlp.up_proj"};
  const AdapterConfig two = parse(j);
  CHECK(two.targets(2, LoraTarget::up));
  CHECK_FALSE(two.targets(12, LoraTarget::up));
}

TEST_CASE("regex target string: full match against the module path") {
  json j = typical();
  j["target_modules"] = R"(.*\.layers\.[01]\.self_attn\.(q|v)_proj)";
  const AdapterConfig c = parse(j);
  CHECK(c.target_kind == AdapterConfig::TargetKind::regex);
  CHECK(c.targets(0, LoraTarget::q));
  CHECK(c.targets(1, LoraTarget::v));
  CHECK_FALSE(c.targets(1, LoraTarget::k));
  CHECK_FALSE(c.targets(2, LoraTarget::q));
  CHECK_FALSE(c.targets(10, LoraTarget::q));  // full match: "1" is not "10"

  j["target_modules"] = "q_proj";  // a string is a regex, and must match the whole path
  const AdapterConfig whole = parse(j);
  CHECK_FALSE(whole.targets(0, LoraTarget::q));
  j["target_modules"] = ".*(gate|up|down)_proj";
  const AdapterConfig mlp = parse(j);
  CHECK(mlp.targets(4, LoraTarget::gate));
  CHECK(mlp.targets(4, LoraTarget::down));
  CHECK_FALSE(mlp.targets(4, LoraTarget::o));
}

TEST_CASE("regexes from a file: Python syntax, linear-time matching, unsupported syntax named") {
  json j = typical();
  // Python's named groups, as PEFT users may write them.
  j["target_modules"] = R"(.*\.(?P<proj>q|k)_proj)";
  const AdapterConfig named = parse(j);
  CHECK(named.targets(3, LoraTarget::k));
  CHECK_FALSE(named.targets(3, LoraTarget::v));
  // Patterns that take a backtracking engine exponential time on a non-matching path: each
  // is answered at once (an automaton reads the path once).
  for (const char* slow : {"(.*.*)*x", "((a|.)*)*x", "(.+.+)+\\.lm_head"}) {
    CAPTURE(slow);
    j["target_modules"] = slow;
    const AdapterConfig c = parse(j);
    CHECK_FALSE(c.targets(7, LoraTarget::q));
  }
  j["target_modules"] = ".*(?=q_proj)q_proj";  // look-ahead: rejected with the reason
  EXPECT_ERROR(config_error, parse(j), kSrc, "'target_modules'", "look");
  j["target_modules"] = ".*q_proj**";  // Python: "multiple repeat"
  EXPECT_ERROR(config_error, parse(j), kSrc, "'target_modules'", "multiple repeat");
  j["target_modules"] = "(.{1000}){1000}";  // an automaton too big to build
  EXPECT_ERROR(config_error, parse(j), kSrc, "'target_modules'", "states");
  j = typical();
  j["rank_pattern"] = {{"(?P<p>up|down)_proj", 2}};
  CHECK(parse(j).rank_for(0, LoraTarget::down) == 2);
}

TEST_CASE("all-linear targets the seven projections of every layer") {
  json j = typical();
  j["target_modules"] = "all-linear";
  const AdapterConfig c = parse(j);
  CHECK(c.target_kind == AdapterConfig::TargetKind::all_linear);
  for (const LoraTarget t : baton::kLoraTargets) CHECK(c.targets(9, t));
  j["target_modules"] = "ALL-LINEAR";  // PEFT compares case-insensitively
  CHECK(parse(j).target_kind == AdapterConfig::TargetKind::all_linear);
}

TEST_CASE("layers_to_transform restricts list targets") {
  json j = typical();
  j["layers_to_transform"] = {0, 2};
  AdapterConfig c = parse(j);
  CHECK(c.targets(0, LoraTarget::q));
  CHECK_FALSE(c.targets(1, LoraTarget::q));
  CHECK(c.targets(2, LoraTarget::o));
  CHECK_FALSE(c.targets(2, LoraTarget::gate));
  j["layers_to_transform"] = 1;  // a single int is allowed
  c = parse(j);
  CHECK(c.targets(1, LoraTarget::q));
  CHECK_FALSE(c.targets(0, LoraTarget::q));
  j["layers_pattern"] = "layers";
  CHECK(parse(j).targets(1, LoraTarget::k));
  j["layers_pattern"] = {"layers"};
  CHECK(parse(j).targets(1, LoraTarget::k));

  j["layers_pattern"] = "h";
  EXPECT_ERROR(config_error, parse(j), kSrc, "'layers_pattern' = \"h\"");
  j.erase("layers_pattern");
  j["layers_to_transform"] = {0, -1};
  EXPECT_ERROR(config_error, parse(j), "'layers_to_transform' = [0,-1]");
  j["layers_to_transform"] = {0};
  j["target_modules"] = ".*q_proj";
  EXPECT_ERROR(config_error, parse(j), "'layers_to_transform'", "string target_modules");
  j["target_modules"] = "all-linear";
  EXPECT_ERROR(config_error, parse(j), "'layers_to_transform'", "string target_modules");
}

TEST_CASE("rank_pattern and alpha_pattern: PEFT key matching") {
  json j = typical();
  j["target_modules"] = "all-linear";
  j["rank_pattern"] = {{"q_proj", 8}, {"model.layers.1.mlp.down_proj", 4}, {"layers\\.2\\..*", 2}};
  j["alpha_pattern"] = {{"v_proj", 64}, {"mlp.gate_proj", 8.5}};
  const AdapterConfig c = parse(j);
  CHECK(c.rank_for(0, LoraTarget::q) == 8);
  CHECK(c.rank_for(5, LoraTarget::q) == 8);
  CHECK(c.rank_for(5, LoraTarget::k) == 16);
  CHECK(c.rank_for(1, LoraTarget::down) == 4);
  CHECK(c.rank_for(11, LoraTarget::down) == 16);  // '.' boundary: layer 11 is not layer 1
  CHECK(c.rank_for(2, LoraTarget::up) == 2);      // a regex key
  CHECK(c.rank_for(2, LoraTarget::q) == 2);       // sorted order: "layers\.2\..*" before "q_proj"
  CHECK(c.alpha_for(3, LoraTarget::v) == 64);
  CHECK(c.alpha_for(3, LoraTarget::gate) == 8.5);
  CHECK(c.alpha_for(3, LoraTarget::up) == 32);
  CHECK(c.scale_for(0, LoraTarget::q) == 32.0 / 8);
  CHECK(c.scale_for(0, LoraTarget::v) == 64.0 / 16);
  CHECK(c.scale_for(1, LoraTarget::down) == 32.0 / 4);
  CHECK(c.max_rank(3) == 16);

  // A key matches only at a '.' boundary: "proj" does not match "q_proj".
  j["rank_pattern"] = {{"proj", 2}};
  CHECK(parse(j).rank_for(0, LoraTarget::q) == 16);
  // rsLoRA: alpha / sqrt(r), with the module's own rank.
  j["rank_pattern"] = {{"q_proj", 4}};
  j["use_rslora"] = true;
  const AdapterConfig rs = parse(j);
  CHECK(rs.scale_for(0, LoraTarget::k) == doctest::Approx(32.0 / 4.0));  // sqrt(16) = 4
  CHECK(rs.scale_for(0, LoraTarget::q) == doctest::Approx(32.0 / 2.0));  // sqrt(4) = 2
  CHECK(rs.scale_for(0, LoraTarget::v) == doctest::Approx(64.0 / 4.0));
}

TEST_CASE("pattern keys are tried in file order when the order is known") {
  const fs::path dir = fresh_dir("order");
  // PEFT takes the first key (in file order) that matches: here "q_proj" shadows the
  // layer-specific key for layer 3, however odd that is.
  nlohmann::ordered_json o = nlohmann::ordered_json::parse(typical().dump());
  o["rank_pattern"] = nlohmann::ordered_json::object();
  o["rank_pattern"]["q_proj"] = 8;
  o["rank_pattern"]["layers.3.self_attn.q_proj"] = 4;
  baton::test::write_text(dir / "adapter_config.json", o.dump(2));
  const AdapterConfig in_file_order = baton::io::load_adapter_config(dir);
  CHECK(in_file_order.rank_pattern_order ==
        std::vector<std::string>{"q_proj", "layers.3.self_attn.q_proj"});
  CHECK(in_file_order.rank_for(3, LoraTarget::q) == 8);
  // Through nlohmann::json the keys come sorted, so the layer-specific key is tried first.
  const AdapterConfig sorted = parse(json::parse(o.dump()));
  CHECK(sorted.rank_for(3, LoraTarget::q) == 4);
  CHECK(sorted.rank_for(2, LoraTarget::q) == 8);
}

TEST_CASE("unsupported options are rejected by name") {
  const auto with = [](const char* key, json value) {
    json j = typical();
    j[key] = std::move(value);
    return j;
  };
  EXPECT_ERROR(config_error, parse(with("use_dora", true)), kSrc, "'use_dora' = true");
  EXPECT_ERROR(config_error, parse(with("modules_to_save", {"lm_head", "score"})),
               "'modules_to_save'", "lm_head", "score");
  EXPECT_ERROR(config_error, parse(with("fan_in_fan_out", true)), "'fan_in_fan_out' = true");
  EXPECT_ERROR(config_error, parse(with("layer_replication", {{0, 4}, {2, 6}})),
               "'layer_replication'");
  EXPECT_ERROR(config_error, parse(with("use_qalora", true)), "'use_qalora' = true");
  EXPECT_ERROR(config_error, parse(with("lora_bias", true)), "'lora_bias' = true");
  EXPECT_ERROR(config_error, parse(with("trainable_token_indices", {1, 2})),
               "'trainable_token_indices'");
  EXPECT_ERROR(config_error, parse(with("exclude_modules", {"q_proj"})), "'exclude_modules'");
  EXPECT_ERROR(config_error, parse(with("bias", "all")), "'bias' = \"all\"");
  EXPECT_ERROR(config_error, parse(with("bias", "lora_only")), "'bias' = \"lora_only\"");
  EXPECT_ERROR(config_error, parse(with("init_lora_weights", "pissa_niter_4")),
               "'init_lora_weights' = \"pissa_niter_4\"");
  EXPECT_ERROR(config_error, parse(with("init_lora_weights", "olora")), "\"olora\"");

  // Their "off" values are fine.
  CHECK(parse(with("modules_to_save", json::array())).r == 16);
  CHECK(parse(with("use_dora", false)).r == 16);
  CHECK(parse(with("exclude_modules", json::array())).r == 16);
  CHECK(parse(with("init_lora_weights", "gaussian")).r == 16);
  CHECK(parse(with("init_lora_weights", false)).r == 16);
}

TEST_CASE("alora_invocation_tokens: an activated LoRA's invocation, or a plain LoRA") {
  const auto with = [](json value) {
    json j = typical();
    j["alora_invocation_tokens"] = std::move(value);
    return j;
  };
  CHECK(parse(typical()).alora_invocation_tokens.empty());
  CHECK(parse(with(nullptr)).alora_invocation_tokens.empty());  // PEFT writes null for LoRA
  CHECK(parse(with({151644, 77091, 0})).alora_invocation_tokens ==
        std::vector<std::int32_t>{151644, 77091, 0});
  CHECK(parse(with({7})).alora_invocation_tokens == std::vector<std::int32_t>{7});
  EXPECT_ERROR(config_error, parse(with(json::array())), kSrc,
               "field 'alora_invocation_tokens' = []", "is empty");
  EXPECT_ERROR(config_error, parse(with({5, -1})), kSrc, "'alora_invocation_tokens' = [5,-1]",
               "non-negative token ids");
  EXPECT_ERROR(config_error, parse(with({5, 2.5})), "'alora_invocation_tokens'",
               "non-negative token ids");
  EXPECT_ERROR(config_error, parse(with({"<|assistant|>"})), "'alora_invocation_tokens'",
               "non-negative token ids");
  EXPECT_ERROR(config_error, parse(with(std::uint64_t{1} << 40)), "'alora_invocation_tokens'",
               "not a list of token ids");
  EXPECT_ERROR(config_error, parse(with({std::uint64_t{1} << 31})), "'alora_invocation_tokens'",
               "non-negative token ids");
  EXPECT_ERROR(config_error, parse(with("12 13")), "'alora_invocation_tokens' = \"12 13\"",
               "not a list");
}

TEST_CASE("targets outside the seven projections are rejected by name") {
  json j = typical();
  for (const char* bad :
       {"lm_head", "embed_tokens", "model.embed_tokens", "c_attn", "q_proj.x", "mlp.q_proj",
        "self_attn.gate_proj", "layers.x.mlp.up_proj", "decoder.layers.0.mlp.up_proj", "norm"}) {
    CAPTURE(bad);
    j["target_modules"] = {"q_proj", bad};
    EXPECT_ERROR(config_error, parse(j), kSrc, std::string("target module '") + bad + "'");
  }
  j["target_modules"] = ".*";  // would adapt lm_head too
  EXPECT_ERROR(config_error, parse(j), "regex \".*\"", "'lm_head'");
  j["target_modules"] = ".*embed_tokens|.*q_proj";
  EXPECT_ERROR(config_error, parse(j), "'model.embed_tokens'");
  j["target_modules"] = "(q_proj";
  EXPECT_ERROR(config_error, parse(j), "'target_modules'", "\"(q_proj\"", "regex");
  j["target_modules"] = json::array();
  EXPECT_ERROR(config_error, parse(j), "'target_modules' = []", "targets nothing");
  j["target_modules"] = 7;
  EXPECT_ERROR(config_error, parse(j), "'target_modules' = 7");
  j["target_modules"] = {"q_proj", 3};
  EXPECT_ERROR(config_error, parse(j), "'target_modules'", "strings");
  j.erase("target_modules");
  EXPECT_ERROR(config_error, parse(j), "missing required field 'target_modules'");
}

TEST_CASE("peft_type, r, alpha and pattern values") {
  json j = typical();
  j["peft_type"] = "IA3";
  EXPECT_ERROR(config_error, parse(j), kSrc, "'peft_type' = \"IA3\"");
  j.erase("peft_type");
  EXPECT_ERROR(config_error, parse(j), "missing required field 'peft_type'");
  j = typical();
  j["r"] = 0;
  EXPECT_ERROR(config_error, parse(j), "'r' = 0", "at least 1");
  j["r"] = -4;
  EXPECT_ERROR(config_error, parse(j), "'r' = -4");
  j["r"] = "8";
  EXPECT_ERROR(config_error, parse(j), "'r' = \"8\"", "not an integer");
  j.erase("r");
  EXPECT_ERROR(config_error, parse(j), "missing required field 'r'");
  j = typical();
  j["lora_alpha"] = "32";
  EXPECT_ERROR(config_error, parse(j), "'lora_alpha' = \"32\"", "not a number");
  j["lora_alpha"] = 16.5;
  CHECK(parse(j).lora_alpha == 16.5);
  j["use_rslora"] = "yes";
  EXPECT_ERROR(config_error, parse(j), "'use_rslora'", "not a boolean");
  j = typical();
  j["rank_pattern"] = {{"q_proj", 0}};
  EXPECT_ERROR(config_error, parse(j), "'rank_pattern' entry 'q_proj' = 0");
  j["rank_pattern"] = {{"(q_proj", 4}};
  EXPECT_ERROR(config_error, parse(j), "'rank_pattern'", "(q_proj", "regex");
  j["rank_pattern"] = {{"q_proj", 4}};
  j["alpha_pattern"] = {{"q_proj", "big"}};
  EXPECT_ERROR(config_error, parse(j), "'alpha_pattern' entry 'q_proj' = \"big\"");
  j["alpha_pattern"] = json::array();
  EXPECT_ERROR(config_error, parse(j), "'alpha_pattern'", "not an object");
  EXPECT_ERROR(config_error, parse(json::array()), "not a JSON object");
}

TEST_CASE("load_adapter_config: files") {
  const fs::path dir = fresh_dir("files");
  const std::string file = (dir / "adapter_config.json").string();
  EXPECT_ERROR(io_error, baton::io::load_adapter_config(dir), file);
  baton::test::write_json(dir / "adapter_config.json", typical());
  const AdapterConfig c = baton::io::load_adapter_config(dir);
  CHECK(c.source == file);
  CHECK(c.targets(0, LoraTarget::v));
  std::string text = typical().dump();
  text.insert(1, R"("r": 64, )");
  baton::test::write_text(dir / "adapter_config.json", text);
  EXPECT_ERROR(format_error, baton::io::load_adapter_config(dir), file, "duplicate key 'r'");
  baton::test::write_text(dir / "adapter_config.json", "{\"r\": 8");
  EXPECT_ERROR(format_error, baton::io::load_adapter_config(dir), file, "invalid JSON");
  json j = typical();
  j["use_dora"] = true;
  baton::test::write_json(dir / "adapter_config.json", j);
  EXPECT_ERROR(config_error, baton::io::load_adapter_config(dir), file, "'use_dora'");
}

TEST_CASE("a hand-built config works without compile()") {
  AdapterConfig c;
  c.r = 8;
  c.lora_alpha = 16;
  c.target_kind = AdapterConfig::TargetKind::regex;
  c.target_regex = ".*\\.q_proj";
  c.rank_pattern = {{"layers.0.self_attn.q_proj", 2}};
  c.rank_pattern_order = {"layers.0.self_attn.q_proj"};
  CHECK(c.targets(0, LoraTarget::q));
  CHECK_FALSE(c.targets(0, LoraTarget::k));
  CHECK(c.rank_for(0, LoraTarget::q) == 2);
  CHECK(c.rank_for(1, LoraTarget::q) == 8);
  c.compile();
  CHECK(c.matchers != nullptr);
  CHECK(c.scale_for(0, LoraTarget::q) == 8.0);
}
