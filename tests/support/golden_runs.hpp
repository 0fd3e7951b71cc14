// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The golden runs (tests/golden/golden.json) on any backend: each model, adapter and prompt
// through forward() (the first logits) and greedy_decode (the tokens), compared with
// llama.cpp's outputs. test_golden runs it on the host, test_grid_forward on the host grid.
// Under the sanitizers, half the runs (support/sanitized.hpp): every model and adapter, with
// the shortest and the longest prompt.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/io/hf_config.hpp"
#include "baton/kv/head_dims.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/decode.hpp"
#include "support/sanitized.hpp"

namespace baton::test {

struct GoldenOutcome {
  std::vector<std::int32_t> tokens;
  std::vector<float> first_logits;
};

/// Host logits as a vector; the CUDA backend's overload (model/cuda_forward.cuh) is found
/// by argument-dependent lookup.
inline std::vector<float> download_logits(std::span<const float> l) { return {l.begin(), l.end()}; }

/// One golden run on backend B: the prompt's last logits, then 16 greedy tokens on a fresh cache.
template <Backend B, StorageType S, int D>
GoldenOutcome run_golden(const std::filesystem::path& model_dir,
                         const std::filesystem::path* adapter,
                         const std::vector<std::int32_t>& prompt, int n_generate,
                         const std::function<void(Workspace<B>&)>& prepare) {
  const auto model = load_model<B, S>(model_dir);
  const auto slice = adapter ? LoraSlice<16, B>::load(*adapter, model.config())
                             : LoraSlice<16, B>::none(model.config());
  KvBuffer<layout::HeadMajor<f32, D>, B> cache(model.config(), {0, 64, 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<B> ws;
  if (prepare) prepare(ws);
  GoldenOutcome out;
  const auto logits = forward(model, ws, slice, cache, KvTarget::in_slot(0), 0,
                              std::span<const std::int32_t>(prompt), Logits::last);
  out.first_logits = download_logits(logits);
  // Fresh cache for the decode itself, through the public greedy loop (no stop ids: the
  // golden runs never stop at EOS).
  cache.reset_prefix();
  cache.freeze_prefix();
  out.tokens = greedy_decode(model, ws, slice, cache, KvTarget::in_slot(0), 0,
                             std::span<const std::int32_t>(prompt), DecodeOptions{n_generate, {}})
                   .ids;
  return out;
}

/// Every run of golden.json on backend B: tokens exact, first logits within the file's
/// tolerance (1e-3). Returns the largest logit difference seen. `prepare` (optional) sets up
/// each run's workspace (the host tests bind it to a HostContext). `bf16_tol` (optional): the
/// logits' bound for the bf16 model where the products round its activations to bf16 (the
/// golden data are f32 arithmetic on the widened weights; the tokens must still be exact).
template <Backend B>
double check_golden_runs(const std::filesystem::path& root, const std::string& golden_json,
                         const std::function<void(Workspace<B>&)>& prepare = {},
                         std::optional<double> bf16_tol = std::nullopt) {
  std::ifstream in(golden_json);
  REQUIRE_MESSAGE(in.good(), "cannot read " << golden_json);
  const nlohmann::json g = nlohmann::json::parse(in);
  const double tol = g["tolerances"]["first_logits_max_abs"].get<double>();
  REQUIRE(tol == doctest::Approx(1e-3));
  int runs = 0, token_mismatches = 0;
  double worst = 0;
  for (const auto& run : g["runs"]) {
    // Under the sanitizers, the shortest and the longest prompt of each model and adapter.
    const int prompt_index = run["prompt_index"].get<int>();
    if (kSanitized && prompt_index != 0 && prompt_index != 3) continue;
    const std::string model_name = run["model"];
    const auto model_dir = root / model_name;
    REQUIRE_MESSAGE(std::filesystem::exists(model_dir / "config.json"),
                    "golden fixtures missing in " << root << " (run the golden_fixtures test)");
    std::optional<std::filesystem::path> adapter;
    if (!run["adapter"].is_null()) adapter = root / run["adapter"].get<std::string>();
    const auto prompt = run["prompt"].get<std::vector<std::int32_t>>();
    const auto want_tokens = run["tokens"].get<std::vector<std::int32_t>>();
    const auto want_logits = run["first_logits"].get<std::vector<double>>();
    const int head_dim = io::load_model_config(model_dir).head_dim;
    const dtype stored = stored_dtype(model_dir);
    const std::filesystem::path* a = adapter ? &*adapter : nullptr;
    const GoldenOutcome got = dispatch_head_dim(head_dim, [&](auto d) {
      constexpr int D = decltype(d)::value;
      if constexpr (D == 8 || D == 16) {
        return stored == dtype::bf16 ? run_golden<B, bf16, D>(model_dir, a, prompt, 16, prepare)
                                     : run_golden<B, f32, D>(model_dir, a, prompt, 16, prepare);
      } else {
        FAIL("golden models have head_dim 8 or 16");
        return GoldenOutcome{};
      }
    });
    double diff = 0;
    REQUIRE(got.first_logits.size() == want_logits.size());
    for (std::size_t i = 0; i < want_logits.size(); ++i)
      diff = std::max(diff, std::abs(got.first_logits[i] - want_logits[i]));
    const std::string label = model_name + " + " +
                              (adapter ? adapter->filename().string() : "none") + " prompt " +
                              std::to_string(prompt_index);
    INFO(label << ": max |first_logits diff| = " << diff);
    CHECK(got.tokens == want_tokens);
    CHECK(diff <= (stored == dtype::bf16 && bf16_tol ? *bf16_tol : tol));
    token_mismatches += got.tokens != want_tokens;
    worst = std::max(worst, diff);
    ++runs;
  }
  CHECK(runs == (kSanitized ? 16 : 32));
  MESSAGE(B::name << " golden: " << runs << " runs, " << token_mismatches
                  << " with token mismatches, max |first_logits diff| = " << worst);
  return worst;
}

}  // namespace baton::test
