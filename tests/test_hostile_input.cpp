// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Hostile input (issue #9): every file baton reads is untrusted. Each case builds a small
// hostile input here (nothing checked in) and asserts that it ends in the right
// baton::error subclass, whose message names the file and the field or value and quotes at
// most a short excerpt. The numbers in the test names are the issue's.
//
// Mutation checks (2026-12-01): each applied alone to a copy of include/, this program rebuilt
// (-O1) and run under a 60 s timeout; every one is caught.
//   JsonChecker depth limit removed              -> case 1: SIGSEGV (dump() recursion)
//   read_text_file: regular-file check removed   -> case 4 fails (FIFO, /dev/zero, directory)
//   read_text_file: size cap removed             -> case 4 fails
//   BaseModel::check_layer_count removed         -> case 4 (layers) fails
//   KvBuffer position check removed              -> case 3 fails
//   argmax NaN propagation removed (plain >)     -> case 5 fails
//   tokenizer vocab id bound back to 2^30        -> case 4 (vocabulary) fails
//   parse through nlohmann's callback parser     -> case 2 runs past the 60 s timeout
//   BOM check removed / duplicate-key check off  -> case 6 fails
//   io::with_field catches nothing               -> case 7 (tokenizer field names): 14 checks fail
//   BaseModel::check_all_used not called         -> case 6 (unused tensors) fails
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/baton.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/io/json_util.hpp"
#include "baton/io/peft_config.hpp"
#include "baton/io/safetensors.hpp"
#include "baton/relay/config.hpp"
#include "baton/text/tokenizer.hpp"
#include "support/chatml_tokenizer.hpp"
#include "support/expect_error.hpp"
#include "support/host_model.hpp"
#include "support/safetensors_writer.hpp"
#include "support/sanitized.hpp"
#include "support/tiny_model.hpp"

using namespace baton;
using namespace baton::test;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

/// `depth` nested arrays: "[[[...]]]".
std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

/// A message quotes at most a short excerpt of the input, never the whole hostile value.
void check_short(const std::string& msg) {
  CHECK_MESSAGE(msg.size() < 600, "message of " << msg.size() << " bytes");
}

template <class E, class F>
std::string message(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("wrong exception type: " << e.what());
    return {};
  }
  FAIL_CHECK("no exception thrown");
  return {};
}

json tiny_config() {
  TinySpec s;
  return config_json(make_tiny_model(s));
}

using Cache = KvBuffer<layout::HeadMajor<f32, 8>, host>;
using Slice = LoraSlice<4, host>;

}  // namespace

TEST_CASE("1. deep nesting is refused while parsing, in every JSON input") {
  const fs::path dir = fresh_dir("hostile_nesting");
  const std::string deep = nested(100'000);

  // config.json: a deep value in a field an error message would print.
  std::string cfg = tiny_config().dump();
  cfg.insert(1, "\"hidden_act\": " + deep + ", ");
  write_text(dir / "config.json", cfg);
  check_short(message<format_error>([&] { (void)io::load_model_config(dir); }));
  CHECK(message<format_error>([&] {
          (void)io::load_model_config(dir);
        }).find((dir / "config.json").string() + ": JSON nests deeper than 64 levels") !=
        std::string::npos);

  // adapter_config.json
  write_text(dir / "adapter_config.json", "{\"r\": " + deep + "}");
  EXPECT_ERROR(format_error, io::load_adapter_config(dir), (dir / "adapter_config.json").string(),
               "nests deeper than 64");

  // a safetensors header field
  write_header_and_data(dir / "h.safetensors", "{\"w\": {\"dtype\": " + deep +
                                                   ", \"shape\": [], \"data_offsets\": [0, 0]}}");
  EXPECT_ERROR(format_error, io::SafetensorsFile::open(dir / "h.safetensors"), "h.safetensors",
               "nests deeper than 64");

  // the index's weight_map
  const fs::path idx = fresh_dir("hostile_nesting_index");
  write_text(idx / "model.safetensors.index.json", "{\"weight_map\": {\"a\": " + deep + "}}");
  EXPECT_ERROR(format_error, io::TensorSource::open_dir(idx), "model.safetensors.index.json",
               "nests deeper than 64");

  // a relay file's gate
  write_text(dir / "relay.json", "{\"model\": \"m\", \"gate\": {\"contains\": " + deep + "}}");
  EXPECT_ERROR(format_error, load_relay_spec(dir / "relay.json"), "relay.json",
               "nests deeper than 64");

  // tokenizer.json: a Sequence pre-tokenizer nested 29,000 deep (the tokenizer copies
  // Sequences recursively)
  int vocab = 0;
  json tok = chatml_tokenizer_json(vocab);
  std::string seq;
  for (int i = 0; i < 29'000; ++i) seq += R"({"type": "Sequence", "pretokenizers": [)";
  seq += R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": false})";
  for (int i = 0; i < 29'000; ++i) seq += "]}";
  tok["pre_tokenizer"] = "PLACEHOLDER";
  std::string text = tok.dump();
  text.replace(text.find("\"PLACEHOLDER\""), 13, seq);
  write_text(dir / "tokenizer.json", text);
  EXPECT_ERROR(format_error, Tokenizer::from_file(dir / "tokenizer.json"), "tokenizer.json",
               "nests deeper than 64");

  // Just below the limit is fine; at the limit + 1 it is not.
  CHECK_NOTHROW(io::parse_json_strict(nested(64), "x"));
  EXPECT_ERROR(format_error, io::parse_json_strict(nested(65), "x"), "nests deeper than 64");
}

TEST_CASE("1. messages quote a short excerpt, not the whole value") {
  const fs::path dir = fresh_dir("hostile_excerpt");
  json cfg = tiny_config();
  cfg["hidden_act"] = std::string(50'000, 'x');
  write_json(dir / "config.json", cfg);
  const std::string msg = message<config_error>([&] { (void)io::load_model_config(dir); });
  CHECK(msg.find("hidden_act") != std::string::npos);
  check_short(msg);

  cfg = tiny_config();
  cfg["hidden_act"] = json::array();
  for (int i = 0; i < 20'000; ++i) cfg["hidden_act"].push_back(i);
  write_json(dir / "config.json", cfg);
  check_short(message<config_error>([&] { (void)io::load_model_config(dir); }));
}

TEST_CASE("4. files must be regular files of bounded size") {
  const fs::path dir = fresh_dir("hostile_files");
  // A directory where config.json should be.
  fs::create_directories(dir / "config.json");
  EXPECT_ERROR(io_error, io::load_model_config(dir), (dir / "config.json").string(),
               "not a regular file", "directory");
  fs::remove(dir / "config.json");

  // A FIFO would block forever on open/read.
  REQUIRE(::mkfifo((dir / "config.json").c_str(), 0600) == 0);
  EXPECT_ERROR(io_error, io::load_model_config(dir), (dir / "config.json").string(),
               "not a regular file");
  fs::remove(dir / "config.json");

  // A FIFO where model.safetensors should be (it is mapped, not read: checked after open).
  REQUIRE(::mkfifo((dir / "model.safetensors").c_str(), 0600) == 0);
  EXPECT_ERROR(io_error, io::SafetensorsFile::open(dir / "model.safetensors"),
               (dir / "model.safetensors").string(), "not a regular file");
  EXPECT_ERROR(io_error, io::SafetensorsFile::open(dir), dir.string(), "not a regular file");

  // /dev/zero never ends.
  EXPECT_ERROR(io_error, io::read_text_file("/dev/zero"), "/dev/zero", "not a regular file");
  EXPECT_ERROR(io_error, Tokenizer::from_file("/dev/zero"), "/dev/zero", "not a regular file");
  EXPECT_ERROR(io_error, load_relay_spec("/dev/zero"), "/dev/zero", "not a regular file");

  // A (sparse) file past the cap is refused before it is read.
  {
    std::ofstream(dir / "config.json") << "{}";
    fs::resize_file(dir / "config.json", io::kMaxConfigBytes + 1);
  }
  EXPECT_ERROR(io_error, io::load_model_config(dir), (dir / "config.json").string(),
               "more than the limit of 16777216 bytes");
  fs::resize_file(dir / "config.json", 1);
  CHECK(io::read_text_file(dir / "config.json", 1) == "{");
}

TEST_CASE("4. sizes from config.json are checked against the tensors before allocating") {
  TinySpec s;
  const TinyModel tm = make_tiny_model(s);
  const fs::path dir = fresh_dir("hostile_layers");
  write_tiny_model(tm, dir);
  json cfg = config_json(tm);
  cfg["num_hidden_layers"] = 10'000'000;
  write_json(dir / "config.json", cfg);
  EXPECT_ERROR(shape_error, (load_model<host, f32>(dir)), dir.string(),
               "num_hidden_layers = 10000000 but the weights hold 2 layers");
  cfg["num_hidden_layers"] = 1;  // fewer layers than the file holds: not silently truncated
  write_json(dir / "config.json", cfg);
  EXPECT_ERROR(shape_error, (load_model<host, f32>(dir)),
               "num_hidden_layers = 1 but the weights hold 2 layers");
}

TEST_CASE("4. a tokenizer vocabulary id is bounded by the vocabulary before it sizes anything") {
  const fs::path dir = fresh_dir("hostile_vocab");
  int vocab = 0;
  json tok = chatml_tokenizer_json(vocab);
  tok["model"]["vocab"]["zz"] = 1 << 26;
  write_json(dir / "tokenizer.json", tok);
  EXPECT_ERROR(format_error, Tokenizer::from_file(dir / "tokenizer.json"), "tokenizer.json",
               "model.vocab[\"zz\"] = 67108864 is not a valid id");
}

TEST_CASE("2. a header with 80,000 tensors parses in linear time") {
  // Quadratic parsing took minutes here; ctest's TIMEOUT on this program catches a relapse.
  // (Under the sanitizers, a tenth of the size: the same parse, checked for memory.)
  const fs::path dir = fresh_dir("hostile_wide");
  const std::size_t tensors = sanitized_size(80'000);
  std::string h = "{";
  for (std::size_t i = 0; i < tensors; ++i) {
    h +=
        "\"t" + std::to_string(i) + R"(": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]},)";
  }
  h.back() = '}';
  write_header_and_data(dir / "wide.safetensors", h);
  const auto f = io::SafetensorsFile::open(dir / "wide.safetensors");
  CHECK(f.tensors().size() == tensors);

  // config.json with a 400k-entry unknown field.
  json cfg = tiny_config();
  cfg["junk"] = json::array();
  for (std::size_t i = 0; i < sanitized_size(400'000); ++i)
    cfg["junk"].push_back(json::object({{"k", i}}));
  write_json(dir / "config.json", cfg);
  CHECK_NOTHROW((void)io::load_model_config(dir));
}

TEST_CASE("3. positions are bounded by max_position_embeddings") {
  TinySpec s;
  TinyModel tm = make_tiny_model(s);
  tm.cfg.max_position_embeddings = 64;
  const fs::path dir = fresh_dir("hostile_positions");
  write_tiny_model(tm, dir);
  auto model = load_model<host, f32>(dir);
  EXPECT_ERROR(
      capacity_error,
      Cache(model.config(), KvShape{.prefix_capacity = 16, .tail_capacity = 49, .slots = 1}),
      "16 + tail_capacity 49 = 65 positions exceed the model's limit of 64",
      "max_position_embeddings = 64");
  CHECK_NOTHROW(
      Cache(model.config(), KvShape{.prefix_capacity = 16, .tail_capacity = 48, .slots = 1}));
  // No int overflow on the way: the sum is computed wide.
  EXPECT_ERROR(capacity_error,
               Cache(model.config(), KvShape{.prefix_capacity = std::numeric_limits<int>::max(),
                                             .tail_capacity = std::numeric_limits<int>::max(),
                                             .slots = 1}),
               "4294967294 positions");
  // Raising the limit needs rope_scaling.
  EXPECT_ERROR(config_error, model.allow_positions(65), "allow_positions(65)", "no rope_scaling");

  tm.cfg.rope_scaling.type = RopeScaling::Type::linear;
  tm.cfg.rope_scaling.factor = 2.0;
  write_tiny_model(tm, dir);
  auto scaled = load_model<host, f32>(dir);
  scaled.allow_positions(128);
  CHECK_NOTHROW(
      Cache(scaled.config(), KvShape{.prefix_capacity = 0, .tail_capacity = 128, .slots = 1}));
  EXPECT_ERROR(config_error, scaled.allow_positions(129), "allow_positions(129)");
}

TEST_CASE("5. non-finite logits end the decode loop with numeric_error, choosing nothing") {
  // The argmax sees a NaN wherever it is.
  const std::vector<float> row{1.0f, std::nanf(""), 3.0f};
  CHECK(kernels::argmax(row.data(), 3) == -1);
  const std::vector<float> first{std::nanf(""), 1.0f, 3.0f};
  CHECK(kernels::argmax(first.data(), 3) == -1);
  const std::vector<float> inf{1.0f, std::numeric_limits<float>::infinity(), 3.0f};
  CHECK(kernels::argmax(inf.data(), 3) == -1);
  const std::vector<float> neg_inf{-std::numeric_limits<float>::infinity(), 2.0f, 2.0f};
  CHECK(kernels::argmax(neg_inf.data(), 3) == 1);

  TinySpec s;
  for (const char* tensor : {"lm_head.weight", "model.embed_tokens.weight"}) {
    INFO(tensor);
    TinyModel tm = make_tiny_model(s);
    tm.tensors[tensor][5] = std::nanf("");
    const fs::path dir = fresh_dir("hostile_nan");
    write_tiny_model(tm, dir);
    const auto model = load_model<host, f32>(dir);
    const std::vector<std::int32_t> prompt{0, 1, 2, 3};
    const std::string msg = message<numeric_error>(
        [&] { (void)cached_greedy<Cache>(model, Slice::none(model.config()), prompt, 5); });
    CHECK(msg.find("logits are not finite") != std::string::npos);
  }

  // A NaN adapter, and one whose huge scale overflows.
  TinyModel tm = make_tiny_model(s);
  const fs::path mdir = fresh_dir("hostile_nan_adapter_model");
  write_tiny_model(tm, mdir);
  const auto model = load_model<host, f32>(mdir);
  TinyAdapter ta = make_tiny_adapter(tm.cfg, {});
  ta.tensors.begin()->second[0] = std::nanf("");
  const fs::path adir = fresh_dir("hostile_nan_adapter");
  write_tiny_adapter(ta, adir);
  const Slice slice = Slice::load(adir, model);
  EXPECT_ERROR(numeric_error,
               (cached_greedy<Cache>(model, slice, std::vector<std::int32_t>{1, 2, 3}, 5)),
               "not finite");

  // lora_alpha: 1e308 is a finite number, but the update it scales overflows.
  const TinyAdapter fine = make_tiny_adapter(tm.cfg, {});
  const fs::path hdir = fresh_dir("hostile_huge_alpha");
  write_tiny_adapter(fine, hdir);
  json acfg = json::parse(std::ifstream(hdir / "adapter_config.json"));
  acfg["lora_alpha"] = 1e308;
  write_json(hdir / "adapter_config.json", acfg);
  const Slice huge = Slice::load(hdir, model);
  EXPECT_ERROR(numeric_error,
               (cached_greedy<Cache>(model, huge, std::vector<std::int32_t>{1, 2, 3}, 5)),
               "not finite");
}

TEST_CASE("6. strict JSON everywhere: duplicate keys, trailing bytes, BOM") {
  const fs::path dir = fresh_dir("hostile_strict");
  int vocab = 0;
  const json tok = chatml_tokenizer_json(vocab);
  std::string text = tok.dump();
  // A second "normalizer" must not silently win.
  text.insert(1, R"("normalizer": {"type": "NFC"}, )");
  text.insert(1, R"("normalizer": null, )");
  write_text(dir / "tokenizer.json", text);
  EXPECT_ERROR(format_error, Tokenizer::from_file(dir / "tokenizer.json"), "tokenizer.json",
               "duplicate key 'normalizer'");
  // Trailing NUL and junk.
  write_text(dir / "tokenizer.json", tok.dump() + std::string(1, '\0'));
  EXPECT_ERROR(format_error, Tokenizer::from_file(dir / "tokenizer.json"), "NUL byte");
  write_text(dir / "tokenizer.json", tok.dump() + " junk");
  EXPECT_ERROR(format_error, Tokenizer::from_file(dir / "tokenizer.json"), "invalid JSON");
  // A BOM is refused in every file alike.
  write_text(dir / "tokenizer.json", "\xEF\xBB\xBF" + tok.dump());
  EXPECT_ERROR(format_error, Tokenizer::from_file(dir / "tokenizer.json"), "byte order mark");
  write_text(dir / "config.json", "\xEF\xBB\xBF" + tiny_config().dump());
  EXPECT_ERROR(format_error, io::load_model_config(dir), "config.json", "byte order mark");
  write_text(dir / "relay.json", "\xEF\xBB\xBF{}");
  EXPECT_ERROR(format_error, load_relay_spec(dir / "relay.json"), "relay.json", "byte order mark");
}

TEST_CASE("7. a dispatch error lists every supported value") {
  EXPECT_ERROR(config_error, (dispatch_exact<64, 128>("head_dim", 256, [](auto) {})),
               "head_dim = 256 is not instantiated; supported: 64, 128");
  EXPECT_ERROR(config_error, (dispatch_exact<64, 128>("head_dim", 256, [](auto v) { return v(); })),
               "supported: 64, 128");
}

TEST_CASE("7. a value of the wrong type in tokenizer.json names its field") {
  const fs::path dir = fresh_dir("hostile_tok_types");
  int vocab = 0;
  const json good = chatml_tokenizer_json(vocab);
  const auto expect_field = [&](json tok, const std::string& field) {
    write_json(dir / "tokenizer.json", tok);
    const std::string msg =
        message<format_error>([&] { (void)Tokenizer::from_file(dir / "tokenizer.json"); });
    CHECK_MESSAGE(msg.find("tokenizer.json") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find("field '" + field + "'") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find("json.exception") == std::string::npos, msg);  // nlohmann's tag cut
    check_short(msg);
  };
  json t = good;
  t["added_tokens"][1]["content"] = 5;
  expect_field(t, "added_tokens[1]");
  t = good;
  t["added_tokens"][0]["special"] = "yes";
  expect_field(t, "added_tokens[0]");
  t = good;
  t["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = json::array({1, 2});
  expect_field(t, "pre_tokenizer.pretokenizers[0]");
  t = good;
  t["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = 3;
  expect_field(t, "pre_tokenizer.pretokenizers[1]");
  t = good;
  t["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", 7}}}}};
  write_json(dir / "tokenizer.json", t);
  EXPECT_ERROR(format_error, Tokenizer::from_file(dir / "tokenizer.json"),
               "normalizer.normalizers[0] must be null or an object with a \"type\"");
  t = good;
  t["model"]["ignore_merges"] = "no";
  expect_field(t, "model");
  t = good;
  t["decoder"]["type"] = 1;
  expect_field(t, "decoder");
  t = good;
  t["post_processor"] = {{"type", "Sequence"},
                         {"processors", {{{"type", "TemplateProcessing"}, {"single", 4}}}}};
  expect_field(t, "post_processor.processors[0]");
  // The untouched file still loads: the checks are not refusing valid input.
  write_json(dir / "tokenizer.json", good);
  CHECK(Tokenizer::from_file(dir / "tokenizer.json").encode("the star").size() > 0);
}

TEST_CASE("6. a tensor the model does not use is an error, not silently dropped") {
  TinySpec s;
  const fs::path dir = fresh_dir("hostile_unused");
  const auto write_with = [&](const std::string& extra, std::vector<std::int64_t> shape) {
    TinyModel tm = make_tiny_model(s);
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    tm.tensors[extra] = std::vector<float>(n, 0.5f);
    tm.shapes[extra] = shape;
    write_tiny_model(tm, dir);
  };
  // q/k/v biases in the file while config.json says the model has none (Llama).
  s.arch = Architecture::llama;
  write_with("model.layers.0.self_attn.q_proj.bias", {s.heads * s.head_dim});
  EXPECT_ERROR(format_error, (load_model<host, f32>(dir)), dir.string(),
               "1 tensor(s) that model family 'qwen2' with this config.json does not use",
               "'model.layers.0.self_attn.q_proj.bias'");
  // Another architecture's extra tensor.
  s.arch = Architecture::qwen2;
  write_with("model.layers.1.mlp.expert_gate.weight", {4, 4});
  EXPECT_ERROR(format_error, (load_model<host, f32>(dir)),
               "'model.layers.1.mlp.expert_gate.weight'");
  // What Hugging Face itself ignores loads: a persisted rotary buffer, a head beside tied
  // embeddings.
  write_with("model.layers.0.self_attn.rotary_emb.inv_freq", {s.head_dim / 2});
  CHECK_NOTHROW((void)load_model<host, f32>(dir));
  s.tie = true;
  write_with("lm_head.weight", {s.vocab, s.hidden});
  CHECK_NOTHROW((void)load_model<host, f32>(dir));
}

TEST_CASE("6. an adapter naming another base model is reported, and can be made an error") {
  TinySpec s;
  const TinyModel tm = make_tiny_model(s);
  const fs::path root = fresh_dir("hostile_base_name");
  write_tiny_model(tm, root / "tiny");  // the tiny adapters say base_model_name_or_path "tiny"
  write_tiny_model(tm, root / "other-model");
  write_tiny_adapter(make_tiny_adapter(tm.cfg, TinyAdapterSpec{}), root / "adapter");
  const auto same = load_model<host, f32>(root / "tiny");
  const auto other = load_model<host, f32>(root / "other-model");
  const Slice for_same = Slice::load(root / "adapter", same);
  const Slice for_other = Slice::load(root / "adapter", other);  // shapes fit: it loads
  CHECK(for_same.base_model() == "tiny");
  CHECK_FALSE(base_model_mismatch(for_same, same).has_value());
  const auto why = base_model_mismatch(for_other, other);
  REQUIRE(why.has_value());
  CHECK(why->find("\"tiny\"") != std::string::npos);
  CHECK(why->find("other-model") != std::string::npos);
  CHECK_NOTHROW(require_same_base(for_same, same));
  EXPECT_ERROR(config_error, require_same_base(for_other, other), "trained on \"tiny\"",
               "other-model");
  // Hub ids and trailing slashes compare by their last component, case aside.
  CHECK(model_basename("Qwen/Qwen2.5-0.5B-Instruct/") == "qwen2.5-0.5b-instruct");
  CHECK(model_basename("models\\Tiny") == "tiny");
  CHECK_FALSE(base_model_mismatch(Slice::none(tm.cfg), other).has_value());  // no adapter
}

TEST_CASE("4. the read limits are the caller's to raise or lower, per loader") {
  TinySpec s;
  const TinyModel tm = make_tiny_model(s);
  const fs::path dir = fresh_dir("hostile_limits");
  write_tiny_model(tm, dir / "model");
  write_tiny_adapter(make_tiny_adapter(tm.cfg, TinyAdapterSpec{}), dir / "adapter");
  int vocab = 0;
  write_json(dir / "tokenizer.json", chatml_tokenizer_json(vocab));
  write_json(dir / "relay.json", json{{"model", "model"}, {"stages", json::array()}});

  const io::ReadLimits tiny_files{.config_bytes = 8, .tokenizer_bytes = 8};
  EXPECT_ERROR(io_error, (load_model<host, f32>(dir / "model", tiny_files)), "config.json",
               "more than the limit of 8 bytes");
  const auto model = load_model<host, f32>(dir / "model");
  EXPECT_ERROR(io_error, Slice::load(dir / "adapter", model, tiny_files), "adapter_config.json",
               "more than the limit of 8 bytes");
  EXPECT_ERROR(io_error, Tokenizer::from_file(dir / "tokenizer.json", tiny_files), "tokenizer.json",
               "more than the limit of 8 bytes");
  EXPECT_ERROR(io_error, load_relay_spec(dir / "relay.json", tiny_files), "relay.json",
               "more than the limit of 8 bytes");

  // Nesting past the default limit in an ignored field: refused by default, read when raised.
  json cfg = config_json(tm);
  cfg["notes"] = json::parse(nested(70));
  write_json(dir / "model" / "config.json", cfg);
  EXPECT_ERROR(format_error, (load_model<host, f32>(dir / "model")), "deeper than 64 levels");
  CHECK_NOTHROW((void)load_model<host, f32>(dir / "model", io::ReadLimits{.json_depth = 80}));
}
