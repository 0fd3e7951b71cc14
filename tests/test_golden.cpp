// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// baton against llama.cpp: every run in ../shared/golden/golden.json (3 models incl. bf16
// storage, 3 adapters incl. q/v-only and rsLoRA, MHA and GQA). Tokens must match exactly;
// first_logits within the stated tolerance (1e-3; the golden README explains the budget).
// The fixture folders are generated into the build tree by the `golden_fixtures` test.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "baton/kv/head_dims.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/decode.hpp"
#include "baton/model/host_forward.hpp"

using namespace baton;

namespace {

struct RunOutcome {
  std::vector<std::int32_t> tokens;
  std::vector<float> first_logits;
};

template <StorageType S, int D>
RunOutcome run_golden(const std::filesystem::path& model_dir, const std::filesystem::path* adapter,
                      const std::vector<std::int32_t>& prompt, int n_generate) {
  const auto model = load_model<host, S>(model_dir);
  const auto slice = adapter ? LoraSlice<16, host>::load(*adapter, model.config())
                             : LoraSlice<16, host>::none(model.config());
  KvBuffer<layout::HeadMajor<f32, D>, host> cache(model.config(), {0, 64, 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<host> ws;
  RunOutcome out;
  const auto logits = forward(model, ws, slice, cache, KvTarget::in_slot(0), 0,
                              std::span<const std::int32_t>(prompt), Logits::last);
  out.first_logits.assign(logits.begin(), logits.end());
  // Fresh cache for the decode itself, through the public greedy loop (no stop ids: the
  // golden runs never stop at EOS).
  cache.reset_prefix();
  cache.freeze_prefix();
  out.tokens = greedy_decode(model, ws, slice, cache, KvTarget::in_slot(0), 0,
                             std::span<const std::int32_t>(prompt), DecodeOptions{n_generate, {}})
                   .ids;
  return out;
}

}  // namespace

TEST_CASE("every golden run: tokens exact, first logits within tolerance") {
  const std::filesystem::path root = BATON_GOLDEN_DIR;
  std::ifstream in(BATON_GOLDEN_JSON);
  REQUIRE_MESSAGE(in.good(), "cannot read " BATON_GOLDEN_JSON);
  const nlohmann::json g = nlohmann::json::parse(in);
  const double tol = g["tolerances"]["first_logits_max_abs"].get<double>();
  REQUIRE(tol == doctest::Approx(1e-3));
  int runs = 0, token_mismatches = 0;
  double worst = 0;
  for (const auto& run : g["runs"]) {
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
    const RunOutcome got = dispatch_head_dim(head_dim, [&](auto d) {
      const std::filesystem::path* a = adapter ? &*adapter : nullptr;
      if constexpr (decltype(d)::value == 8 || decltype(d)::value == 16) {
        return stored == dtype::bf16
                   ? run_golden<bf16, decltype(d)::value>(model_dir, a, prompt, 16)
                   : run_golden<f32, decltype(d)::value>(model_dir, a, prompt, 16);
      } else {
        FAIL("golden models have head_dim 8 or 16");
        return RunOutcome{};
      }
    });
    double diff = 0;
    REQUIRE(got.first_logits.size() == want_logits.size());
    for (std::size_t i = 0; i < want_logits.size(); ++i)
      diff = std::max(diff, std::abs(got.first_logits[i] - want_logits[i]));
    const std::string label = model_name + " + " +
                              (adapter ? adapter->filename().string() : "none") + " prompt " +
                              std::to_string(run["prompt_index"].get<int>());
    INFO(label << ": max |first_logits diff| = " << diff);
    CHECK(got.tokens == want_tokens);
    CHECK(diff <= tol);
    token_mismatches += got.tokens != want_tokens;
    worst = std::max(worst, diff);
    ++runs;
  }
  CHECK(runs == 32);
  std::cout << "golden: " << runs << " runs, " << token_mismatches
            << " with token mismatches, max |first_logits diff| = " << worst << "\n";
}
