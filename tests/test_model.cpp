// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The host model against the naive double-precision reference (tests/reference), on tiny
// random models the test writes itself.
//
// Tolerance: logits within 2e-4 of the reference. baton computes in f32 (bf16 weights widen
// exactly), so the gap is f32 rounding accumulated over a few layers of sums of ≤ 96 terms
// with activations of O(1-10): measured around 1e-5. Storage rounding does not enter: the
// reference computes from the very values stored. Token-for-token equality of greedy decode
// follows from margins far above that gap (these seeds were not tuned; a flip would show as a
// logit mismatch first).
//
// Mutation checks (re-run 2026-11-29 on a private copy of the tree, each mutation alone; the
// full table for test_model / test_golden / test_model_errors is in test_model_errors.cpp):
//   - rope +1 on the keys only (h >= nq in host_forward)        -> "logits match" (all 8
//     subcases), "prefix + slot", "llama3-scaled model"
//   - rope +1 on q AND k (pos + 1 in rope_angle)                -> nothing fails, and nothing
//     can: scores depend only on the position difference (an equivalent mutant)
//   - token position +1 (rope and KV index)                       -> the same three cases
//   - GQA map h % nkv instead of h / group                        -> the 4 Qwen2-style (GQA)
//                                                                    subcases, "prefix + slot"
//   - LoRA scale ignored (scale = 1)                              -> all 8 subcases (each runs
//                                                                    an adapter)
//   - KvBuffer::reset_prefix not resetting prefix_len_            -> "prefix + slot" case
//   - KvBuffer::fork copying no K/V (2026-12-06)                   -> "a forked slot" (both
//                                                                    layouts)
//   - KvBuffer::check_write without the position check            -> nothing here fails (no
//     test in this file writes at a wrong position); test_model_errors catches it
//   - llama3 smoothing band removed                               -> "llama3 frequencies",
//                                                                    "llama3-scaled model"
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "baton/kernels/rope.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/decode.hpp"
#include "reference/naive_model.hpp"
#include "support/expect_error.hpp"
#include "support/host_model.hpp"
#include "support/reference_check.hpp"
#include "support/tiny_model.hpp"

using namespace baton;
using namespace baton::test;

namespace {

constexpr double kLogitTol = 2e-4;

TinySpec qwen_style(const std::string& dtype) {
  TinySpec s;  // bias, GQA (4 heads / 2 kv), untied head, explicit head_dim
  s.dtype = dtype;
  s.seed = 11;
  return s;
}

TinySpec llama_style(const std::string& dtype) {
  TinySpec s;
  s.arch = Architecture::llama;  // no bias, MHA, tied head, head_dim implied
  s.heads = 4;
  s.kv_heads = 4;
  s.tie = true;
  s.head_dim_in_config = false;
  s.rope_theta = 500000.0;
  s.dtype = dtype;
  s.seed = 23;
  return s;
}

}  // namespace

using HeadF32 = KvBuffer<layout::HeadMajor<f32, 8>, host>;
using TokenF32 = KvBuffer<layout::TokenMajor<f32, 8>, host>;

TEST_CASE("logits match the naive reference and cached greedy equals no-cache greedy") {
  for (const std::string dtype : {"F32", "BF16"}) {
    for (const bool llama : {false, true}) {
      const TinyModel tm = make_tiny_model(llama ? llama_style(dtype) : qwen_style(dtype));
      const TinyAdapter plain =
          make_tiny_adapter(tm.cfg, {.r = 4, .alpha = 8, .targets = {"q_proj", "v_proj"}});
      const TinyAdapter all = make_tiny_adapter(
          tm.cfg,
          {.r = 8,
           .alpha = 4,
           .rslora = true,
           .targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"},
           .seed = 9});
      const std::string base = std::string(llama ? "llama_" : "qwen_") + dtype;
      SUBCASE((base + " head-major").c_str()) {
        if (dtype == "F32") {
          check_against_reference<HeadF32, f32>(tm, nullptr, base + "_hm_none", kLogitTol);
          check_against_reference<HeadF32, f32>(tm, &plain, base + "_hm_qv", kLogitTol);
          check_against_reference<HeadF32, f32>(tm, &all, base + "_hm_all", kLogitTol);
        } else {
          check_against_reference<HeadF32, bf16>(tm, nullptr, base + "_hm_none", kLogitTol);
          check_against_reference<HeadF32, bf16>(tm, &all, base + "_hm_all", kLogitTol);
        }
      }
      SUBCASE((base + " token-major").c_str()) {
        if (dtype == "F32") {
          check_against_reference<TokenF32, f32>(tm, &all, base + "_tm_all", kLogitTol);
        } else {
          check_against_reference<TokenF32, bf16>(tm, nullptr, base + "_tm_none", kLogitTol);
          check_against_reference<TokenF32, bf16>(tm, &plain, base + "_tm_qv", kLogitTol);
        }
      }
    }
  }
}

TEST_CASE("a prefix in the shared region plus a slot tail equals one long sequence") {
  const TinyModel tm = make_tiny_model(qwen_style("F32"));
  const auto dir = fresh_dir("model_prefix");
  write_tiny_model(tm, dir);
  const auto model = load_model<host, f32>(dir);
  const auto slice = LoraSlice<4, host>::none(model.config());
  const NaiveModel ref(tm);
  const auto prefix = test_prompt(tm.cfg.vocab_size, 9, 1);
  const auto request = test_prompt(tm.cfg.vocab_size, 4, 2);

  HeadF32 cache(model.config(), KvShape{.prefix_capacity = 16, .tail_capacity = 32, .slots = 2});
  Workspace<host> ws;
  for (int round = 0; round < 2; ++round) {  // a second pre-warm must start from empty
    cache.reset_prefix();
    forward(model, ws, slice, cache, KvTarget::prefix(), 0, std::span<const std::int32_t>(prefix),
            Logits::none);
    cache.freeze_prefix();
    CHECK(cache.prefix_length() == 9);
  }
  std::vector<int> whole(prefix.begin(), prefix.end());
  whole.insert(whole.end(), request.begin(), request.end());
  const auto want = ref.greedy(whole, 10);
  for (int slot = 0; slot < 2; ++slot) {
    cache.rewind(slot);
    const auto got = greedy_decode(model, ws, slice, cache, KvTarget::in_slot(slot), 9,
                                   std::span<const std::int32_t>(request), DecodeOptions{10, {}});
    CHECK(std::vector<int>(got.ids.begin(), got.ids.end()) == want);
  }
}

TEST_CASE_TEMPLATE("a forked slot goes on as the slot it copies (both layouts)", Cache, HeadF32,
                   TokenF32) {
  const TinyModel tm = make_tiny_model(qwen_style("F32"));
  const auto dir = fresh_dir("model_fork");
  write_tiny_model(tm, dir);
  const auto model = load_model<host, f32>(dir);
  const auto slice = LoraSlice<4, host>::none(model.config());
  const NaiveModel ref(tm);
  const auto prefix = test_prompt(tm.cfg.vocab_size, 7, 3);
  const auto request = test_prompt(tm.cfg.vocab_size, 6, 4);
  Cache cache(model.config(), KvShape{.prefix_capacity = 8, .tail_capacity = 24, .slots = 3});
  Workspace<host> ws;
  cache.reset_prefix();
  forward(model, ws, slice, cache, KvTarget::prefix(), 0, std::span<const std::int32_t>(prefix),
          Logits::none);
  cache.freeze_prefix();
  // Slot 0 takes the request; slots 1 and 2 hold another one, which the fork replaces.
  for (int slot = 0; slot < 3; ++slot) cache.rewind(slot);
  forward(model, ws, slice, cache, KvTarget::in_slot(0), 7, std::span<const std::int32_t>(request),
          Logits::none);
  forward(model, ws, slice, cache, KvTarget::in_slot(2), 7,
          std::span<const std::int32_t>(request).first(2), Logits::none);
  EXPECT_ERROR(usage_error, cache.fork(0, 0), "onto itself");
  EXPECT_ERROR(usage_error, cache.fork(0, 3), "out of range");
  cache.fork(0, 2);
  CHECK(cache.position(KvTarget::in_slot(2)) == 13);
  cache.fork(2, 1);  // a fork of a fork
  // Each slot then decodes past the same 13 tokens as the reference over the whole sequence.
  std::vector<int> whole(prefix.begin(), prefix.end());
  whole.insert(whole.end(), request.begin(), request.end());
  const std::vector<std::int32_t> next = {5};
  whole.push_back(5);
  const auto want = ref.greedy(whole, 8);
  for (int slot : {1, 2, 0}) {
    CAPTURE(slot);
    const auto got = greedy_decode(model, ws, slice, cache, KvTarget::in_slot(slot), 13,
                                   std::span<const std::int32_t>(next), DecodeOptions{8, {}});
    CHECK(std::vector<int>(got.ids.begin(), got.ids.end()) == want);
  }
}

TEST_CASE("llama3 rope scaling matches hand-computed frequencies") {
  ModelConfig c;
  c.head_dim = 8;
  c.rope_theta = 10000.0;
  c.rope_scaling = {RopeScaling::Type::llama3, 8.0, 1.0, 4.0, 64};
  // inv_freq = 10000^(-2i/8) = 1, 0.1, 0.01, 0.001 → wavelengths 2π·(1, 10, 100, 1000).
  // Bands (original 64): high-frequency below 64/4 = 16, low-frequency above 64/1 = 64.
  //   i=0: 6.28 < 16 → unchanged 1
  //   i=1: 62.8 in [16, 64] → smooth = (64/62.83 - 1)/(4 - 1) = 0.006197;
  //        0.1·((1 - s)/8 + s) = 0.013042
  //   i=2: 628 > 64 → 0.01/8 = 0.00125;  i=3: 0.001/8 = 0.000125
  const auto got = kernels::rope_inverse_frequencies(8, 10000.0, c.rope_scaling);
  const double pi = std::numbers::pi;
  const double s = (64.0 / (2 * pi / 0.1) - 1.0) / 3.0;
  const double want[] = {1.0, 0.1 * ((1 - s) / 8 + s), 0.00125, 0.000125};
  for (int i = 0; i < 4; ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
  CHECK(want[1] == doctest::Approx(0.013042).epsilon(1e-4));
  // The reference's independent implementation agrees.
  const auto ref = NaiveModel::inverse_frequencies(c);
  for (int i = 0; i < 4; ++i) CHECK(got[i] == doctest::Approx(ref[i]).epsilon(1e-12));
  // linear divides every frequency by the factor.
  const auto lin = kernels::rope_inverse_frequencies(8, 10000.0, {RopeScaling::Type::linear, 4.0});
  CHECK(lin[1] == doctest::Approx(0.025).epsilon(1e-12));
}

TEST_CASE("rope_rotate_heads turns every pair bit for bit as the device's rope_rotate_pair") {
  // The host rotates a token's heads together, one sine and cosine per frequency for all of
  // them; the device, one pair per thread. Both must give the same bits. head_dim 160: two
  // chunks of frequencies, the second partial.
  for (int d : {8, 64, 128, 160})
    for (int pos : {0, 7, 4095, 131071}) {
      const auto inv = kernels::rope_inverse_frequencies(d, 1e6, RopeScaling{});
      std::vector<float> freq(inv.begin(), inv.end());
      const int heads = 5, half = d / 2;
      std::vector<float> want(static_cast<std::size_t>(heads) * d);
      for (std::size_t i = 0; i < want.size(); ++i)
        want[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
      std::vector<float> got = want;
      for (int h = 0; h < heads; ++h)
        for (int i = 0; i < half; ++i)
          kernels::rope_rotate_pair(want[h * d + i], want[h * d + i + half], pos, freq[i]);
      kernels::rope_rotate_heads(got.data(), heads, d, pos, freq.data());
      CHECK_MESSAGE(got == want, "head_dim ", d, ", position ", pos);
    }
}

TEST_CASE("a llama3-scaled model decodes like the reference") {
  TinySpec s = llama_style("F32");
  s.rope_scaling = {RopeScaling::Type::llama3, 8.0, 1.0, 4.0, 16};
  const TinyModel tm = make_tiny_model(s);
  const auto dir = fresh_dir("model_llama3");
  write_tiny_model(tm, dir);
  const auto model = load_model<host, f32>(dir);
  CHECK(model.config().rope_scaling.type == RopeScaling::Type::llama3);
  const auto prompt = test_prompt(tm.cfg.vocab_size, 20, 3);
  const auto got =
      cached_greedy<HeadF32>(model, LoraSlice<4, host>::none(model.config()), prompt, 8);
  CHECK(std::vector<int>(got.begin(), got.end()) ==
        NaiveModel(tm).greedy(std::vector<int>(prompt.begin(), prompt.end()), 8));
}
