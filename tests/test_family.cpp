// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Model families (model/family/): Qwen3 against the naive double-precision reference on tiny
// models the test writes, the errors that pick the wrong family, and a family defined here —
// outside baton — running through BaseModel and forward() like the built-in ones.
//
// Tolerance: the same 2e-4 as test_model.cpp (f32 rounding over two layers; Qwen3's head
// norms add one more normalisation per head, which does not change the order of the gap).
//
// Mutation checks (run on 2026-12-01 on the working tree, each alone, then reverted):
//   - Qwen3 schedule without ops.head_norm (qwen3.hpp)    -> every Qwen3 subcase: logits off by
//                                                            ~14, tokens differ
//   - host head_norm normalising k heads with q_norm      -> the same: 2 of 4 test cases fail
//                                                            (reference, prefix + slot)
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "baton/kv/kv_buffer.hpp"
#include "baton/model/decode.hpp"
#include "baton/model/family/qwen3.hpp"
#include "baton/model/host_forward.hpp"
#include "reference/naive_model.hpp"
#include "support/expect_error.hpp"
#include "support/host_model.hpp"
#include "support/reference_check.hpp"
#include "support/tiny_model.hpp"

using namespace baton;
using namespace baton::test;

namespace {

constexpr double kLogitTol = 2e-4;

/// Qwen3-style: per-head q/k norms, no bias, GQA, untied head, and an explicit head_dim that
/// is not hidden / heads (16 vs 32 / 4), as Qwen3 checkpoints have.
TinySpec qwen3_style(const std::string& dtype) {
  TinySpec s;
  s.arch = Architecture::qwen3;
  s.head_dim = 16;
  s.rope_theta = 1000000.0;
  s.dtype = dtype;
  s.seed = 31;
  return s;
}

std::vector<int> as_int(const std::vector<std::int32_t>& v) { return {v.begin(), v.end()}; }

template <class Cache, class S>
void check_qwen3(const TinyModel& tm, const TinyAdapter* ta, const std::string& tag) {
  const double d = check_against_reference<Cache, S, family::Qwen3>(tm, ta, tag, kLogitTol);
  std::cout << "qwen3 " << tag << ": max |logit - naive reference| = " << d << "\n";
}

}  // namespace

TEST_CASE("Qwen3: logits match the naive reference, cached greedy equals no-cache greedy") {
  using Head = KvBuffer<layout::HeadMajor<f32, 16>, host>;
  using Token = KvBuffer<layout::TokenMajor<bf16, 16>, host>;
  for (const std::string dtype : {"F32", "BF16"}) {
    const TinyModel tm = make_tiny_model(qwen3_style(dtype));
    const TinyAdapter all = make_tiny_adapter(
        tm.cfg,
        {.r = 8,
         .alpha = 4,
         .rslora = true,
         .targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"},
         .seed = 9});
    SUBCASE(("qwen3 " + dtype + " head-major").c_str()) {
      if (dtype == "F32") {
        check_qwen3<Head, f32>(tm, nullptr, "q3_f32_hm_none");
        check_qwen3<Head, f32>(tm, &all, "q3_f32_hm_all");
      } else {
        check_qwen3<Head, bf16>(tm, nullptr, "q3_bf16_hm_none");
        check_qwen3<Head, bf16>(tm, &all, "q3_bf16_hm_all");
      }
    }
    SUBCASE(("qwen3 " + dtype + " token-major bf16 cache").c_str()) {
      // A bf16 cache rounds K/V, so only the tokens are compared with the reference.
      const auto dir = fresh_dir("family_q3_tm_" + dtype);
      write_tiny_model(tm, dir);
      const auto prompt = test_prompt(tm.cfg.vocab_size, 11, 4);
      const auto want = NaiveModel(tm).greedy(as_int(prompt), 10);
      if (dtype == "F32") {
        const auto model = load_model<host, f32, family::Qwen3>(dir);
        CHECK(as_int(cached_greedy<Token>(model, LoraSlice<4, host>::none(model.config()), prompt,
                                          10)) == want);
      } else {
        const auto model = load_model<host, bf16, family::Qwen3>(dir);
        CHECK(as_int(cached_greedy<Token>(model, LoraSlice<4, host>::none(model.config()), prompt,
                                          10)) == want);
      }
    }
  }
}

TEST_CASE("Qwen3: a prefix in the shared region plus a slot tail equals one long sequence") {
  const TinyModel tm = make_tiny_model(qwen3_style("F32"));
  const auto dir = fresh_dir("family_q3_prefix");
  write_tiny_model(tm, dir);
  const auto model = load_model<host, f32, family::Qwen3>(dir);
  const auto slice = LoraSlice<4, host>::none(model.config());
  const auto prefix = test_prompt(tm.cfg.vocab_size, 9, 1);
  const auto request = test_prompt(tm.cfg.vocab_size, 4, 2);
  KvBuffer<layout::HeadMajor<f32, 16>, host> cache(
      model.config(), KvShape{.prefix_capacity = 16, .tail_capacity = 32, .slots = 1});
  Workspace<host> ws;
  cache.reset_prefix();
  forward(model, ws, slice, cache, KvTarget::prefix(), 0, std::span<const std::int32_t>(prefix),
          Logits::none);
  cache.freeze_prefix();
  cache.rewind(0);
  std::vector<int> whole = as_int(prefix);
  for (const auto t : request) whole.push_back(t);
  const auto got = greedy_decode(model, ws, slice, cache, KvTarget::in_slot(0), 9,
                                 std::span<const std::int32_t>(request), DecodeOptions{10, {}});
  CHECK(as_int(got.ids) == NaiveModel(tm).greedy(whole, 10));
}

TEST_CASE("a folder of another family is an error that names the family") {
  const auto dir = fresh_dir("family_mismatch");
  write_tiny_model(make_tiny_model(qwen3_style("F32")), dir / "qwen3");
  TinySpec q2;
  write_tiny_model(make_tiny_model(q2), dir / "qwen2");
  EXPECT_ERROR(config_error, (load_model<host, f32>(dir / "qwen3")), "\"Qwen3ForCausalLM\"",
               "model family 'qwen2'");
  EXPECT_ERROR(config_error, (load_model<host, f32, family::Qwen3>(dir / "qwen2")),
               "\"Qwen2ForCausalLM\"", "model family 'qwen3'");
  // Qwen3's head_dim default (128 in transformers) is not guessed.
  nlohmann::json j = config_json(make_tiny_model(qwen3_style("F32")));
  j.erase("head_dim");
  EXPECT_ERROR(config_error, io::parse_model_config(j, "q3.json"), "explicit 'head_dim'");
}

// ---- a family written outside baton -------------------------------------------------------

namespace {

/// A user's family: Qwen2's weights, tensor names and schedule under its own architecture
/// name. Nothing in baton names it.
struct TinyDecoder {
  static constexpr std::string_view name = "tiny-decoder";
  static constexpr std::string_view architectures[] = {"TinyDecoderForCausalLM"};
  static constexpr std::string_view embedding_name = "model.embed_tokens.weight";
  static constexpr std::string_view final_norm_name = "model.norm.weight";
  static constexpr std::string_view head_name = "lm_head.weight";
  template <Backend B, StorageType S>
  using layer_weights = family::Qwen2::layer_weights<B, S>;
  template <Backend B, StorageType S>
  static layer_weights<B, S> load_layer(const WeightReader<B>& r, const ModelConfig& c, int i) {
    return family::Qwen2::load_layer<B, S>(r, c, i);
  }
  static LoraShapes lora_shapes(const ModelConfig& c) { return decoder_lora_shapes(c); }
  /// The schedule is its own to write; this one reuses Qwen2's.
  template <class Ops, class W>
  static void layer(Ops& ops, const W& w, int layer) {
    family::Qwen2::layer(ops, w, layer);
  }
};

struct NotAFamily {
  static constexpr std::string_view name = "half";
};

}  // namespace

static_assert(ModelFamily<TinyDecoder>);
static_assert(!ModelFamily<NotAFamily>);

TEST_CASE("a family defined outside baton loads and runs like a built-in one") {
  TinySpec s;
  s.arch = Architecture::llama;  // no biases
  const TinyModel tm = make_tiny_model(s);
  const auto dir = fresh_dir("family_user");
  write_tiny_model(tm, dir / "llama");
  write_tiny_model(tm, dir / "user");
  nlohmann::json cfg = config_json(tm);
  cfg["architectures"] = {"TinyDecoderForCausalLM"};
  write_json(dir / "user" / "config.json", cfg);

  const auto mine = load_model<host, f32, TinyDecoder>(dir / "user");
  CHECK(mine.config().architecture == Architecture::other);
  const auto theirs = load_model<host, f32>(dir / "llama");
  const auto prompt = test_prompt(tm.cfg.vocab_size, 7, 3);
  using Cache = KvBuffer<layout::HeadMajor<f32, 8>, host>;
  const auto a = cached_greedy<Cache>(mine, LoraSlice<4, host>::none(mine.config()), prompt, 8);
  const auto b = cached_greedy<Cache>(theirs, LoraSlice<4, host>::none(theirs.config()), prompt, 8);
  CHECK(a == b);
  CHECK(as_int(a) == NaiveModel(tm).greedy(as_int(prompt), 8));
  // The built-in loaders do not know the name.
  EXPECT_ERROR(config_error, io::load_model_config(dir / "user"),
               "unknown architecture \"TinyDecoderForCausalLM\"");
}
