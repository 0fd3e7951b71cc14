// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Loading and request errors of the host model, cache and slice: each is asserted by exception
// type and by what its message names (file, tensor, field, the values). After every failing
// call the test checks that nothing was corrupted: cache positions are unchanged and a
// following correct request gives exactly the tokens of the naive no-cache reference
// (tests/reference/naive_model.hpp). Runs under the ASan + UBSan preset too, so a check that
// came after a write would show up as a write past a buffer there.
//
// Mutation check (2026-11-29). Each mutation applied alone to a private copy of the tree (model,
// kv, lora and kernel headers as of 2f9d3a3, i.e. before 77ff5a6's OpenMP thresholds, which do
// not touch the mutated lines), the three test programs rebuilt and run, the code restored.
// "FAIL n/m": failing test cases of that program; golden counts runs.
//
//   mutation                                   test_model        test_golden   this file
//   none (baseline)                            pass 4/4          pass 32/32    pass 6/6
//   (a) reset_prefix keeps prefix_len_         FAIL 1/4 (1)      pass          FAIL 1/6 (2)
//   (b) check_write: position check removed    pass              pass          FAIL 2/6 (3)
//   (c) rope pos + 1 for q and k               pass              pass          pass      (4)
//   (c') rope pos + 1 for keys only            FAIL 3/4          FAIL 32/32    FAIL 5/6
//   (c'') token position + 1 (rope + KV slot)  FAIL 3/4          FAIL 32/32    FAIL 5/6
//   (d) GQA map h % nkv instead of h / group   FAIL 2/4 (5)      FAIL 24/32    FAIL 5/6
//   (e) LoRA scale = 1 (alpha/r ignored)       FAIL 1/4 (6)      FAIL 16/32    FAIL 4/6
//   (f) llama3 smoothing band removed          FAIL 2/4          pass          pass
//
//   (1) "prefix + slot": the second pre-warm throws position_error (expects 0, finds 9).
//   (2) "slots cannot be used before ...": positions after reset_prefix are {6, open}.
//   (3) "a write at the wrong position" (nothing thrown) and the pre-warm at the wrong
//       position; the unchecked writes land outside their block and the run ends in SIGSEGV.
//       Nothing in test_model or test_golden writes at a wrong position.
//   (4) An equivalent mutant: attention scores depend only on the difference of the q and k
//       positions, so shifting both changes nothing beyond rounding (golden max diff 6.7e-5
//       vs 6.4e-5). Only an offset between q and k, or a shifted KV slot, is a bug: (c'), (c'').
//   (5) the Qwen2-style (GQA) subcases and "prefix + slot"; the golden qwen-c family is GQA,
//       qwen-e (MHA, 8 runs) is immune by construction.
//   (6) every subcase (each runs an adapter); golden: the two qwen-c adapters (scale 4) on
//       qwen-c and qwen-c-bf16; qwen-e-lora-1 has alpha/r = 1 and cannot tell.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <ostream>
#include <string>
#include <typeinfo>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/kv/kv_buffer.hpp"
#include "baton/model/decode.hpp"
#include "baton/model/forward_batch.hpp"
#include "baton/model/host_forward.hpp"
#include "reference/naive_model.hpp"
#include "support/host_model.hpp"
#include "support/tiny_model.hpp"

using namespace baton;
using namespace baton::test;
namespace fs = std::filesystem;

namespace {

// ---- the fixture: one small GQA model with bias and an untied head, one adapter ----------

TinySpec model_spec() {
  TinySpec s;  // qwen2: bias, 4 heads / 2 kv heads (GQA), head_dim 8, untied lm_head
  s.seed = 31;
  return s;
}

/// alpha / r = 2 (not 1), on attention and MLP projections: a lost scale changes the tokens.
TinyAdapterSpec adapter_spec() {
  return {.r = 4, .alpha = 8, .targets = {"q_proj", "v_proj", "o_proj", "down_proj"}, .seed = 5};
}

struct Fixture {
  TinyModel tm = make_tiny_model(model_spec());
  TinyAdapter ta = make_tiny_adapter(tm.cfg, adapter_spec());
  fs::path root = fresh_dir("model_errors");
  fs::path model_dir = root / "model";
  fs::path adapter_dir = root / "adapter";
  Fixture() {
    write_tiny_model(tm, model_dir);
    write_tiny_adapter(ta, adapter_dir);
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

using Cache = KvBuffer<layout::HeadMajor<f32, 8>, host>;
using Slice = LoraSlice<4, host>;

std::vector<std::int32_t> ids(std::initializer_list<int> v) { return {v.begin(), v.end()}; }
std::vector<int> as_int(const std::vector<std::int32_t>& v) { return {v.begin(), v.end()}; }
std::vector<int> concat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---- asserting an error: its exact type and what the message names ------------------------

/// Runs `f`, which must throw exactly E; returns the message ("" after a failed check).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    CHECK_MESSAGE(typeid(e) == typeid(E),
                  "threw a subclass " << std::string(typeid(e).name()) << " of the expected type");
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("expected " << std::string(typeid(E).name()) << ", got "
                           << std::string(typeid(e).name()) << ": " << e.what());
    return {};
  }
  FAIL_CHECK("expected " << std::string(typeid(E).name()) << ", nothing was thrown");
  return {};
}

void check_mentions(const std::string& msg, std::initializer_list<std::string> parts) {
  for (const std::string& p : parts) {
    CHECK_MESSAGE(msg.find(p) != std::string::npos, "message lacks \"" << p << "\": " << msg);
  }
}

// ---- writing broken model folders -------------------------------------------------------

TensorMap raw_tensors(const TinyModel& m) {
  TensorMap raw;
  for (const auto& [name, v] : m.tensors)
    raw[name] = raw_tensor(m.spec.dtype, m.shapes.at(name), v);
  return raw;
}

/// A copy of the fixture's model folder, for a test to break.
fs::path copy_model(const std::string& name) {
  const fs::path d = fixture().root / name;
  fs::remove_all(d);
  fs::copy(fixture().model_dir, d, fs::copy_options::recursive);
  return d;
}

/// Writes `header` (a JSON object) and the tensors' bytes back to back in map order.
void write_with_header(const fs::path& file, const nlohmann::json& header, const TensorMap& raw) {
  std::vector<std::uint8_t> data;
  for (const auto& [name, t] : raw) data.insert(data.end(), t.bytes.begin(), t.bytes.end());
  write_header_and_data(file, header.dump(), data);
}

/// A correct load + request still gives the reference tokens: whatever failed before left
/// no state behind (there is none to leave on the load path, and this keeps it so).
void check_clean_load_still_works() {
  const Fixture& f = fixture();
  const auto model = load_model<host, f32>(f.model_dir);
  const auto slice = Slice::load(f.adapter_dir, model.config());
  const auto prompt = ids({3, 14, 15, 92, 65, 35});
  const auto got = cached_greedy<Cache>(model, slice, prompt, 8);
  CHECK(as_int(got) == NaiveModel(f.tm, &f.ta).greedy(as_int(prompt), 8));
}

// ---- a live cache: a pre-warmed prefix, one slot mid-request, one free -------------------

struct Positions {
  int prefix = 0;
  bool frozen = false;
  std::vector<int> slots;
  bool operator==(const Positions&) const = default;
};

/// So a failed comparison prints the positions, not "{?}".
std::ostream& operator<<(std::ostream& out, const Positions& p) {
  out << "{prefix " << p.prefix << (p.frozen ? " frozen" : " open") << ", slots";
  for (const int s : p.slots) out << " " << s;
  return out << "}";
}

Positions positions(const Cache& c) {
  Positions p{c.prefix_length(), c.prefix_frozen(), {}};
  for (int s = 0; s < c.num_slots(); ++s) p.slots.push_back(c.position(KvTarget::in_slot(s)));
  return p;
}

/// The model, the adapter slice and a cache with prefix P (6 tokens) pre-warmed, slot 1 holding
/// request R1 (3 tokens), slot 0 rewound. Tail capacity 16 per slot.
struct Live {
  const Fixture& f = fixture();
  BaseModel<host, f32> model = load_model<host, f32>(f.model_dir);
  Slice slice = Slice::load(f.adapter_dir, model.config());
  NaiveModel ref{f.tm, &f.ta};
  Cache cache{model.config(), KvShape{.prefix_capacity = 8, .tail_capacity = 16, .slots = 2}};
  Workspace<host> ws;
  std::vector<std::int32_t> prefix = ids({7, 1, 88, 42, 5, 60});
  std::vector<std::int32_t> r1 = ids({11, 12, 13});

  Live() {
    cache.reset_prefix();
    forward(model, ws, slice, cache, KvTarget::prefix(), 0, std::span<const std::int32_t>(prefix),
            Logits::none);
    cache.freeze_prefix();
    cache.rewind(1);
    forward(model, ws, slice, cache, KvTarget::in_slot(1), 6, std::span<const std::int32_t>(r1),
            Logits::none);
    cache.rewind(0);
  }

  auto run(KvTarget t, int pos, const std::vector<std::int32_t>& tokens, int max_new = 8) {
    return greedy_decode(model, ws, slice, cache, t, pos, std::span<const std::int32_t>(tokens),
                         DecodeOptions{max_new, {}});
  }

  /// Positions are `before`, and both slots still decode exactly like the reference: slot 0
  /// a fresh request, slot 1 continuing its request (its K/V and the prefix's intact).
  void check_intact(const Positions& before) {
    CHECK(positions(cache) == before);
    const auto request = ids({20, 21, 22, 23});
    cache.rewind(0);
    CHECK(as_int(run(KvTarget::in_slot(0), 6, request).ids) ==
          ref.greedy(concat(as_int(prefix), as_int(request)), 8));
    const auto more = ids({30, 31});
    CHECK(as_int(run(KvTarget::in_slot(1), 9, more).ids) ==
          ref.greedy(concat(concat(as_int(prefix), as_int(r1)), as_int(more)), 8));
  }
};

}  // namespace

// =========================================================================================
// Loading: a model folder whose safetensors file is malformed (format_error)
// =========================================================================================

TEST_CASE("a malformed model.safetensors is a format_error naming the file and the values") {
  const Fixture& f = fixture();
  const TensorMap raw = raw_tensors(f.tm);
  const nlohmann::json header = safetensors_header(raw, {{"format", "pt"}});
  std::size_t data_size = 0;
  for (const auto& [name, t] : raw) data_size += t.bytes.size();

  SUBCASE("truncated data section") {
    const fs::path dir = copy_model("truncated");
    const fs::path file = dir / "model.safetensors";
    fs::resize_file(file, fs::file_size(file) - 10);
    // The last tensor in the file (map order) is the one that no longer fits.
    const std::string& last = raw.rbegin()->first;
    const std::string msg = message_of<format_error>([&] { load_model<host, f32>(dir); });
    check_mentions(
        msg, {file.string(), "'" + last + "'", "data_offsets end " + std::to_string(data_size),
              "past the data section (" + std::to_string(data_size - 10) + " bytes)"});
  }
  SUBCASE("header length past the end of the file") {
    const fs::path dir = copy_model("header_len");
    const fs::path file = dir / "model.safetensors";
    std::vector<std::uint8_t> data;
    for (const auto& [name, t] : raw) data.insert(data.end(), t.bytes.begin(), t.bytes.end());
    const std::string text = header.dump();
    const std::uint64_t claimed = text.size() + data.size() + 1;  // one byte more than exists
    write_raw_safetensors(file, claimed, text, data);
    const std::uint64_t size = 8 + text.size() + data.size();
    const std::string msg = message_of<format_error>([&] { load_model<host, f32>(dir); });
    check_mentions(msg, {file.string(), "header length " + std::to_string(claimed),
                         "runs past the end of the file (file size " + std::to_string(size)});
  }
  SUBCASE("overlapping tensors") {
    const fs::path dir = copy_model("overlap");
    const fs::path file = dir / "model.safetensors";
    // Move one tensor's range 4 bytes down, into the tensor stored before it.
    const std::string moved = "model.layers.0.mlp.down_proj.weight";
    nlohmann::json h = header;
    const std::uint64_t b = h[moved]["data_offsets"][0], e = h[moved]["data_offsets"][1];
    std::string before;
    for (const auto& [name, entry] : h.items())
      if (name != "__metadata__" && entry["data_offsets"][1] == b) before = name;
    REQUIRE(!before.empty());
    h[moved]["data_offsets"] = {b - 4, e - 4};
    write_with_header(file, h, raw);
    const std::string msg = message_of<format_error>([&] { load_model<host, f32>(dir); });
    check_mentions(msg, {file.string(), "'" + moved + "'",
                         "[" + std::to_string(b - 4) + ", " + std::to_string(e - 4) + ")",
                         "overlaps tensor '" + before + "'"});
  }
  SUBCASE("unknown dtype") {
    const fs::path dir = copy_model("unknown_dtype");
    const fs::path file = dir / "model.safetensors";
    nlohmann::json h = header;
    h["model.layers.1.mlp.up_proj.weight"]["dtype"] = "Q4_K";
    write_with_header(file, h, raw);
    const std::string msg = message_of<format_error>([&] { load_model<host, f32>(dir); });
    check_mentions(msg,
                   {file.string(), "'model.layers.1.mlp.up_proj.weight'", "unknown dtype", "Q4_K"});
  }
  check_clean_load_still_works();
}

// =========================================================================================
// Loading: well-formed files whose tensors do not fit the config (shape_error, format_error)
// =========================================================================================

TEST_CASE("model tensors that do not fit the config name the tensor and both shapes or dtypes") {
  const Fixture& f = fixture();
  SUBCASE("a transposed k_proj: shape mismatch") {
    TinyModel tm = f.tm;
    const std::string name = "model.layers.1.self_attn.k_proj.weight";
    REQUIRE(tm.shapes[name] == std::vector<std::int64_t>{16, 32});
    tm.shapes[name] = {32, 16};  // same bytes, the shape an [in, out] exporter would write
    const fs::path dir = fixture().root / "transposed";
    fs::remove_all(dir);
    write_tiny_model(tm, dir);
    const std::string msg = message_of<shape_error>([&] { load_model<host, f32>(dir); });
    check_mentions(msg, {(dir / "model.safetensors").string(), "'" + name + "'",
                         "has shape [32, 16], expected [16, 32]"});
  }
  SUBCASE("an I32 tensor where a weight is expected: dtype mismatch") {
    const fs::path dir = copy_model("i32");
    TensorMap raw = raw_tensors(f.tm);
    raw["model.norm.weight"].dtype = "I32";  // 4-byte elements: the byte range stays valid
    write_safetensors(dir / "model.safetensors", raw);
    const std::string msg = message_of<shape_error>([&] { load_model<host, f32>(dir); });
    check_mentions(msg, {(dir / "model.safetensors").string(), "'model.norm.weight'", "dtype I32",
                         "F32, BF16 and F16"});
  }
  SUBCASE("lm_head.weight missing from an untied model") {
    REQUIRE_FALSE(f.tm.cfg.tie_word_embeddings);
    const fs::path dir = copy_model("no_head");
    TensorMap raw = raw_tensors(f.tm);
    raw.erase("lm_head.weight");
    write_safetensors(dir / "model.safetensors", raw);
    const std::string msg = message_of<format_error>([&] { load_model<host, f32>(dir); });
    check_mentions(msg, {"missing tensor 'lm_head.weight'", dir.string()});
  }
  check_clean_load_still_works();
}

// =========================================================================================
// Loading: adapters that do not fit the slice or the model
// =========================================================================================

TEST_CASE("adapters that do not fit say what mismatched") {
  const Fixture& f = fixture();
  const auto model = load_model<host, f32>(f.model_dir);

  SUBCASE("rank above the slice's bound") {
    const TinyAdapter a8 =
        make_tiny_adapter(f.tm.cfg, {.r = 8, .alpha = 16, .targets = {"v_proj"}});
    const fs::path dir = f.root / "adapter_r8";
    fs::remove_all(dir);
    write_tiny_adapter(a8, dir);
    const std::string msg = message_of<shape_error>([&] { Slice::load(dir, model.config()); });
    check_mentions(msg, {dir.string(), "adapter_config.json's 'r'", "= 8", "v_proj",
                         "exceeds the largest rank 4", "LoraSlice<4>"});
    // A larger bound takes it.
    CHECK_NOTHROW(LoraSlice<8, host>::load(dir, model.config()));
  }
  SUBCASE("an adapter made for another hidden size") {
    TinySpec other = model_spec();
    other.hidden = 48;  // heads and head_dim as before, so only the hidden-side dims differ
    const TinyModel om = make_tiny_model(other);
    const fs::path dir = f.root / "adapter_h48";
    fs::remove_all(dir);
    write_tiny_adapter(make_tiny_adapter(om.cfg, adapter_spec()), dir);
    const std::string msg = message_of<shape_error>([&] { Slice::load(dir, model.config()); });
    check_mentions(msg, {(dir / "adapter_model.safetensors").string(),
                         "'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight'",
                         "has shape [4, 48], expected [4, 32]"});
  }
  SUBCASE("an adapter with a tensor nothing uses") {
    for (const std::string extra :
         {"base_model.model.model.layers.0.mlp.up_proj.lora_A.weight",
          "base_model.model.model.layers.2.self_attn.q_proj.lora_A.weight"}) {
      TinyAdapter a = f.ta;  // targets q, v, o, down of 2 layers: neither name belongs
      a.tensors[extra] = std::vector<float>(4 * 32, 0.01f);
      a.shapes[extra] = {4, 32};
      const fs::path dir = f.root / "adapter_extra";
      fs::remove_all(dir);
      write_tiny_adapter(a, dir);
      const std::string msg = message_of<format_error>([&] { Slice::load(dir, model.config()); });
      check_mentions(msg, {(dir / "adapter_model.safetensors").string(), "'" + extra + "'",
                           "does not belong to a targeted projection", "2-layer model"});
    }
  }
  check_clean_load_still_works();
}

TEST_CASE("an activated LoRA: bad invocations name the field; a forward must be told its start") {
  const Fixture& f = fixture();
  const auto model = load_model<host, f32>(f.model_dir);
  const int vocab = model.config().vocab_size;
  // The fixture's adapter, made activated by its config.
  const auto activated = [&](const std::string& name, const nlohmann::json& invocation) {
    const fs::path dir = f.root / name;
    fs::remove_all(dir);
    write_tiny_adapter(f.ta, dir);
    std::ifstream in(dir / "adapter_config.json");
    nlohmann::json cfg = nlohmann::json::parse(in);
    in.close();
    cfg["alora_invocation_tokens"] = invocation;
    std::ofstream(dir / "adapter_config.json") << cfg.dump();
    return dir;
  };
  SUBCASE("an invocation id outside the vocabulary") {
    const fs::path dir = activated("alora_bad", {3, vocab});
    const std::string msg = message_of<config_error>([&] { Slice::load(dir, model.config()); });
    check_mentions(msg, {(dir / "adapter_config.json").string(), "'alora_invocation_tokens'",
                         "token id " + std::to_string(vocab), "vocabulary"});
  }
  SUBCASE("forward, forward_batch and the decoder refuse to guess the start") {
    const Slice slice = Slice::load(activated("alora_ok", {3, 4}), model.config());
    REQUIRE(slice.activated());
    Cache cache(model.config(), {.prefix_capacity = 4, .tail_capacity = 8, .slots = 1});
    Workspace<host> ws;
    cache.reset_prefix();
    const auto prompt = ids({1, 3, 4, 2});
    check_mentions(message_of<usage_error>([&] {
                     forward(model, ws, slice, cache, KvTarget::prefix(), 0, prompt, Logits::last);
                   }),
                   {"'" + slice.name() + "'", "activated LoRA", "activation start"});
    using Row = BatchRow<Slice, Cache>;
    const Row row{&slice, &cache, KvTarget::prefix(), 0, prompt, true};
    check_mentions(message_of<usage_error>([&] { check_batch_row(model, row); }),
                   {"forward_batch", "activated LoRA"});
    CHECK(cache.position(KvTarget::prefix()) == 0);  // nothing was written
    forward(model, ws, slice, cache, KvTarget::prefix(), 0, prompt, Logits::none,
            slice.activation_start({}, prompt));
    cache.freeze_prefix();
    cache.rewind(0);
    const DecodeOptions opt{.max_new = 2};
    Decoder<BaseModel<host, f32>, Slice, Cache> d(model, slice, cache, ws, KvTarget::in_slot(0),
                                                  opt);
    // The 4 prefix tokens may hold the invocation: the decoder needs them.
    check_mentions(message_of<usage_error>([&] {
                     d.prefill(ids({5, 6}), 4);
                   }),
                   {"activated LoRA", "needs the 4 tokens before the prompt", "0 were given"});
    d.prefill(ids({5, 6}), 4, prompt);
    CHECK(d.adapter_from() == 1);  // the invocation {3, 4} in the prefix
  }
}

// =========================================================================================
// Requests: bad ids, too long, wrong position — thrown before any write
// =========================================================================================

TEST_CASE("a bad request throws before writing and leaves every position and K/V as it was") {
  Live live;
  const Positions before = positions(live.cache);
  REQUIRE(before == Positions{6, true, {6, 9}});
  const int vocab = live.model.config().vocab_size;

  SUBCASE("token id equal to the vocabulary size") {
    const auto bad = ids({4, 5, vocab, 6});
    const std::string msg =
        message_of<usage_error>([&] { live.run(KvTarget::in_slot(0), 6, bad); });
    check_mentions(msg, {"token id " + std::to_string(vocab), "at index 2",
                         "[0, " + std::to_string(vocab) + ")"});
  }
  SUBCASE("negative token id") {
    const auto bad = ids({-1});
    const std::string msg =
        message_of<usage_error>([&] { live.run(KvTarget::in_slot(1), 9, bad); });
    check_mentions(msg, {"token id -1", "at index 0"});
  }
  SUBCASE("a prompt longer than the slot's capacity") {
    std::vector<std::int32_t> prompt(17, 3);  // tail capacity is 16
    const std::string msg =
        message_of<capacity_error>([&] { live.run(KvTarget::in_slot(0), 6, prompt); });
    check_mentions(msg, {"appending 17 tokens to slot 0 at position 6", "capacity 22"});
    // One that exactly fills the tail is fine (and is not fed back: max_new 1).
    std::vector<std::int32_t> fits(16, 3);
    CHECK(live.run(KvTarget::in_slot(0), 6, fits, 1).ids.size() == 1);
    CHECK(live.cache.position(KvTarget::in_slot(0)) == 22);
    live.cache.rewind(0);
  }
  SUBCASE("a generation that runs out of room stops at the capacity, not past it") {
    const auto prompt = ids({40, 41, 42, 43, 44, 45, 46, 47, 48, 49});
    // 10 prompt tokens + 9 fed-back tokens would need 19 > 16 positions.
    const std::string msg =
        message_of<capacity_error>([&] { live.run(KvTarget::in_slot(0), 6, prompt, 10); });
    check_mentions(msg, {"appending 1 tokens to slot 0 at position 22", "capacity 22"});
    CHECK(live.cache.position(KvTarget::in_slot(0)) == 22);
    live.cache.rewind(0);
  }
  SUBCASE("a write at the wrong position") {
    for (const int wrong : {5, 7, 0}) {
      const std::string msg = message_of<position_error>([&] {
        live.run(KvTarget::in_slot(1), wrong, ids({1, 2}));
      });
      check_mentions(
          msg, {"slot 1", "expected at position " + std::to_string(wrong), "write position is 9"});
    }
  }
  SUBCASE("writing the frozen prefix") {
    const std::string msg = message_of<usage_error>([&] {
      live.run(KvTarget::prefix(), 6, ids({1, 2}), 1);
    });
    check_mentions(msg, {"prefix is frozen", "reset_prefix"});
  }
  SUBCASE("a slot that does not exist") {
    const std::string msg =
        message_of<usage_error>([&] { live.run(KvTarget::in_slot(2), 6, ids({1})); });
    check_mentions(msg, {"slot 2 out of range (2 slots)"});
  }
  SUBCASE("a slice built for a model with another layer count") {
    ModelConfig three = live.model.config();
    three.num_layers = 3;
    const Slice other = Slice::none(three);
    const std::string msg = message_of<shape_error>([&] {
      forward(live.model, live.ws, other, live.cache, KvTarget::in_slot(0), 6, ids({1}),
              Logits::last);
    });
    check_mentions(msg, {"has 3 layers, the model 2"});
  }
  live.check_intact(before);
}

// =========================================================================================
// Cache misuse: a layout for another head_dim, writes before the pre-warm
// =========================================================================================

TEST_CASE("a KvBuffer for another head_dim is a config_error naming both") {
  const auto model = load_model<host, f32>(fixture().model_dir);
  using Wrong = KvBuffer<layout::HeadMajor<f32, 16>, host>;
  const std::string msg = message_of<config_error>([&] {
    Wrong(model.config(), KvShape{.prefix_capacity = 0, .tail_capacity = 8, .slots = 1});
  });
  check_mentions(msg, {"head-major", "head_dim 16", "a model with head_dim 8"});
  using WrongTm = KvBuffer<layout::TokenMajor<f32, 4>, host>;
  check_mentions(message_of<config_error>([&] {
                   WrongTm(model.config(),
                           KvShape{.prefix_capacity = 0, .tail_capacity = 8, .slots = 1});
                 }),
                 {"token-major", "head_dim 4", "a model with head_dim 8"});
}

TEST_CASE("slots cannot be used before the prefix is pre-warmed (frozen)") {
  Live live;
  const auto request = ids({20, 21, 22, 23});
  // Re-pre-warm: reset_prefix invalidates every slot until freeze_prefix.
  live.cache.reset_prefix();
  const Positions cold = positions(live.cache);
  REQUIRE(cold == Positions{0, false, {Cache::kNotStarted, Cache::kNotStarted}});

  check_mentions(message_of<usage_error>([&] { live.cache.rewind(0); }),
                 {"slot 0", "before the prefix is pre-warmed"});
  check_mentions(message_of<usage_error>([&] { live.run(KvTarget::in_slot(1), 0, request); }),
                 {"slot 1", "written before the prefix was pre-warmed"});
  CHECK(positions(live.cache) == cold);

  // The pre-warm itself must start at 0; a caller that thinks the old prefix is still there
  // is told so before anything is written.
  check_mentions(message_of<position_error>([&] {
                   forward(live.model, live.ws, live.slice, live.cache, KvTarget::prefix(), 6,
                           std::span<const std::int32_t>(live.prefix), Logits::none);
                 }),
                 {"the prefix", "expected at position 6", "write position is 0"});
  CHECK(positions(live.cache) == cold);

  // A prefix that does not fit the prefix region is refused whole.
  std::vector<std::int32_t> long_prefix(9, 5);  // prefix capacity 8
  check_mentions(message_of<capacity_error>([&] {
                   forward(live.model, live.ws, live.slice, live.cache, KvTarget::prefix(), 0,
                           std::span<const std::int32_t>(long_prefix), Logits::none);
                 }),
                 {"appending 9 tokens to the prefix at position 0", "capacity 8"});
  CHECK(positions(live.cache) == cold);

  // Pre-warm properly again; the slot's old request is gone, a new one decodes correctly.
  forward(live.model, live.ws, live.slice, live.cache, KvTarget::prefix(), 0,
          std::span<const std::int32_t>(live.prefix), Logits::none);
  live.cache.freeze_prefix();
  CHECK(positions(live.cache) == Positions{6, true, {6, 6}});
  CHECK(as_int(live.run(KvTarget::in_slot(1), 6, request).ids) ==
        live.ref.greedy(concat(as_int(live.prefix), as_int(request)), 8));
}
