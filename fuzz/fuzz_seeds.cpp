// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Writes the fuzzers' seed corpora into DIR/<target>/, generated with the tests' own helpers
// (tests/support), so the seeds follow the formats as the tests do. scripts/fuzz.sh adds the
// small fixture files (tests/golden) beside them.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/chatml_tokenizer.hpp"
#include "support/safetensors_writer.hpp"
#include "support/tiny_model.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  const fs::path out = argv[1];
  using namespace baton::test;

  // safetensors: a tiny model and adapter, and the edge forms (scalar, zero-size, metadata).
  for (const bool tie : {false, true}) {
    TinySpec s;
    s.vocab = 16;
    s.hidden = 8;
    s.heads = 2;
    s.kv_heads = 1;
    s.head_dim = 4;
    s.ffn = 8;
    s.layers = 1;
    s.tie = tie;
    const TinyModel m = make_tiny_model(s);
    const fs::path dir = out / "tmp" / (tie ? "tied" : "untied");
    write_tiny_model(m, dir);
    fs::create_directories(out / "safetensors");
    fs::copy_file(dir / "model.safetensors",
                  out / "safetensors" / (std::string("tiny_") + (tie ? "tied" : "untied")),
                  fs::copy_options::overwrite_existing);
    write(out / "hf_config" / (std::string("tiny_") + (tie ? "tied" : "untied")),
          config_json(m).dump(2));
  }
  write_safetensors(out / "safetensors" / "edge",
                    {{"scalar", f32_tensor({}, {1.5f})},
                     {"empty", f32_tensor({0, 4}, {})},
                     {"half", f16_tensor({2}, {1.0f, -2.0f})},
                     {"brain", bf16_tensor({2}, {0.5f, 3.0f})}},
                    {{"format", "pt"}});
  {
    TinySpec s;
    s.rope_scaling.type = baton::RopeScaling::Type::llama3;
    s.rope_scaling.factor = 8;
    s.rope_scaling.low_freq_factor = 1;
    s.rope_scaling.high_freq_factor = 4;
    s.rope_scaling.original_max_position_embeddings = 64;
    s.arch = baton::Architecture::llama;
    write(out / "hf_config" / "llama3_scaled", config_json(make_tiny_model(s)).dump());
  }

  // adapter_config.json, as write_tiny_adapter writes it, plus the pattern forms.
  json adapter = {{"peft_type", "LORA"},
                  {"task_type", "CAUSAL_LM"},
                  {"r", 4},
                  {"lora_alpha", 8},
                  {"use_rslora", false},
                  {"target_modules", {"q_proj", "v_proj"}},
                  {"bias", "none"},
                  {"fan_in_fan_out", false},
                  {"lora_dropout", 0.0},
                  {"modules_to_save", nullptr},
                  {"use_dora", false},
                  {"base_model_name_or_path", "tiny"}};
  write(out / "peft_config" / "list", adapter.dump(2));
  adapter["target_modules"] = ".*\\.(q_proj|v_proj)";
  adapter["rank_pattern"] = {{"q_proj", 8}};
  adapter["alpha_pattern"] = {{"layers.0.self_attn.v_proj", 16}};
  write(out / "peft_config" / "regex_patterns", adapter.dump());

  // tokenizer.json: the tests' ChatML byte-level BPE.
  int vocab = 0;
  write(out / "tokenizer" / "chatml", chatml_tokenizer_json(vocab).dump());

  // relay files: the two-stage relay of test_relay_config, and one with every field.
  const json two = {{"model", "m"},
                    {"stages",
                     {{{"name", "a"}, {"input", {{{"request", true}}}}, {"max_new", 4}},
                      {{"name", "b"}, {"input", {{{"out", "a"}}}}, {"max_new", 4}}}}};
  write(out / "relay" / "two_stage", two.dump(2));
  json full = two;
  full["tokenizer"] = "tokenizer.json";
  full["stages"][0]["adapter"] = "adapters/a";
  full["stages"][0]["prefix"] = {1, 2, 3};
  full["stages"][0]["stop"] = {2};
  full["stages"][1]["input"] = {{{"ids", {5}}}, {{"out", "a"}}, {{"text", "\nFacts:"}}};
  full["stages"][1]["system"] = "You reason.";
  full["stages"][1]["examples"] = {{"q", "a"}};
  full["gate"] = {{"starts_with", {7}}};
  full["max_cycles"] = 3;
  write(out / "relay" / "full", full.dump(2));
  // ... and the grammar field, both kinds (relay files parse it; compiling needs a tokenizer).
  json with_grammar = two;
  with_grammar["stages"][0]["grammar"] = {{"regex", "[0-9]{1,3} [+*-] [0-9]{1,3}"}};
  with_grammar["stages"][1]["grammar"] = {
      {"json_schema",
       {{"type", "object"},
        {"properties", {{"ok", {{"type", "boolean"}}}, {"n", {{"type", "integer"}}}}},
        {"required", {"ok"}}}}};
  write(out / "relay" / "grammar", with_grammar.dump(2));

  // http: requests as clients send them (the first byte of each file picks the piece size).
  const std::string post =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
  write(out / "http" / "plain", "\x07GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  write(out / "http" / "length", "\x10" + post + "Content-Length: 2\r\n\r\n{}");
  write(out / "http" / "chunked", "\x03" + post +
                                      "Transfer-Encoding: chunked\r\n\r\n2;x=y\r\n{}\r\n0\r\n"
                                      "Trailer: z\r\n\r\n");
  write(out / "http" / "expect",
        "\x01" + post + "Expect: 100-continue\r\nContent-Length: 0\r\n\r\n");

  fs::remove_all(out / "tmp");
  return 0;
}
