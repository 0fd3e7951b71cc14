// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The CUDA forward (model/grid_ops.hpp's launches, run on the host grid) against transformers +
// peft on the models the reference itself makes at test time (tests/reference/hf_models.py,
// the `hf_models` ctest fixture): Qwen2 (GQA, head_dim 64, biases), Llama 3.2-style (head_dim
// 64, llama3 rope scaling, tied embeddings) and Qwen3 (head_dim 128, q/k norm), each with no
// adapter, LoRA on attention and rsLoRA on attention + MLP at ranks 1 and 64, stored in f32,
// bf16 and f16. Per case: the greedy ids over the reference's steps exactly (up to and
// including a near-tie of the reference, after which either side may go its own way), and
// every compared step's logits within 1e-3 * max(1, |reference|).
//
// The fixture folder comes from $BATON_HF_MODELS_DIR (ctest sets it). Without it (no reference
// python) the program exits 77, which ctest shows as skipped; under CI=true it fails instead.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/io/safetensors.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/decode.hpp"
#include "baton/model/host_grid_forward.hpp"
#include "baton/model/model_dispatch.hpp"

using namespace baton;
namespace fs = std::filesystem;

namespace {

constexpr double kLogitRtol = 1e-3;  // hf_compare.py's LOGIT_RTOL
constexpr double kNearTie = 1e-4;    // hf_compare.py's NEAR_TIE

/// The shapes the fixture's models have: only these whole forwards are compiled here.
struct FixtureShapes {
  template <class F, WeightStorage S, int D>
  static constexpr bool value = StorageType<S> && ((std::is_same_v<F, family::Qwen2> && D == 64) ||
                                                   (std::is_same_v<F, family::Qwen3> && D == 128));
};

/// Every step's logits row, as the decode loop's observer sees it.
struct StepRows {
  std::vector<std::vector<float>> rows;
  template <class View>
  std::optional<std::int32_t> before(const View&) {
    return std::nullopt;
  }
  template <class View>
  void after(const View& v, std::int32_t) {
    rows.emplace_back(v.logits.begin(), v.logits.end());
  }
};

struct Run {
  std::vector<std::int32_t> ids;
  std::vector<std::vector<float>> rows;
};

/// One greedy generation of `steps` tokens on the host grid, no stop id.
template <class F, class S, int D>
Run run_on_grid(const fs::path& model_dir, const std::optional<fs::path>& adapter,
                const std::vector<std::int32_t>& prompt, int steps) {
  using B = host_grid;
  using Model = BaseModel<B, S, F>;
  using Slice = LoraSlice<kRuntimeRankBound, B>;
  using Cache = KvBuffer<layout::HeadMajor<f32, D>, B>;
  const Model model = load_model<B, S, F>(model_dir);
  const Slice slice = adapter ? Slice::load(*adapter, model) : Slice::none(model.config());
  Cache cache(model.config(), KvShape{.prefix_capacity = 0,
                                      .tail_capacity = static_cast<int>(prompt.size()) + steps,
                                      .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<B> ws;
  const DecodeOptions opt{steps, {}};
  Decoder<Model, Slice, Cache> d(model, slice, cache, ws, KvTarget::in_slot(0), opt);
  d.prefill(std::span<const std::int32_t>(prompt), 0);
  StepRows hooks;
  d.run(hooks);
  return {d.result().ids, std::move(hooks.rows)};
}

struct Worst {
  double diff = 0;
  std::string where;
};

}  // namespace

TEST_CASE("host grid: models made by transformers + peft, greedy ids and every step's logits") {
  const char* env = std::getenv("BATON_HF_MODELS_DIR");
  const fs::path root = env != nullptr ? env : "";
  if (root.empty() || !fs::is_regular_file(root / "reference.json")) {
    const char* ci = std::getenv("CI");
    if (ci != nullptr && std::string(ci) == "true")
      FAIL("no reference-made models at '", root.string(),
           "' (the hf_models fixture needs the reference python; CI=true requires it)");
    std::cout << "skipped: no reference-made models (BATON_HF_MODELS_DIR='" << root.string()
              << "'; the hf_models fixture needs the reference python)\n";
    std::exit(77);
  }
  nlohmann::json cases;
  std::ifstream(root / "reference.json") >> cases;
  if (cases.is_object()) cases = cases.at("cases");
  const auto logits = io::TensorSource::open_file(root / "reference.safetensors");
  REQUIRE(cases.size() > 0);

  std::map<std::string, Worst> worst;  // by model folder (family x storage)
  int compared_steps = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json& c = cases[i];
    const fs::path model_dir = root / c.at("model").get<std::string>();
    std::optional<fs::path> adapter;
    if (!c.at("adapter").is_null()) adapter = root / c.at("adapter").get<std::string>();
    const auto prompt = c.at("prompt").get<std::vector<std::int32_t>>();
    const auto want_ids = c.at("tokens").get<std::vector<std::int32_t>>();
    const auto gaps = c.at("gaps").get<std::vector<double>>();
    const int steps = static_cast<int>(want_ids.size());
    const std::string label = c.at("model").get<std::string>() + " + " +
                              (adapter ? c.at("adapter").get<std::string>() : "no adapter") +
                              ", prompt of " + std::to_string(prompt.size());
    CAPTURE(label);
    const ModelConfig cfg = load_runtime_config(model_dir);
    const Run got = dispatch_model<FixtureShapes>(
        model_dir, cfg,
        [&]<class F, class S, int D>() {
          return run_on_grid<F, S, D>(model_dir, adapter, prompt, steps);
        },
        "test_grid_hf (head_dim 64 Qwen2/Llama, 128 Qwen3)");
    const std::size_t vocab = static_cast<std::size_t>(cfg.vocab_size);
    const std::size_t shape[] = {static_cast<std::size_t>(steps), vocab};
    const auto want = logits.read<f32>("case." + std::to_string(i), shape);
    REQUIRE(got.ids.size() == want_ids.size());
    REQUIRE(got.rows.size() == want_ids.size());
    Worst& w = worst[c.at("model").get<std::string>()];
    for (int s = 0; s < steps; ++s) {
      // The step's logits first: they decide the token, and a wrong one is the finding.
      for (std::size_t v = 0; v < vocab; ++v) {
        const double ref = want[static_cast<std::size_t>(s) * vocab + v];
        const double diff = std::abs(static_cast<double>(got.rows[s][v]) - ref);
        if (diff > w.diff) w = {diff, label + ", step " + std::to_string(s)};
        if (diff > kLogitRtol * std::max(1.0, std::abs(ref))) {
          FAIL_CHECK("step ", s, " id ", v, ": grid ", got.rows[s][v], " reference ", ref);
          break;
        }
      }
      ++compared_steps;
      if (gaps[s] < kNearTie) break;  // either token is right here; later steps may part
      if (got.ids[s] != want_ids[s]) {
        FAIL_CHECK("greedy ids differ at step ", s, ": grid ", got.ids[s], ", reference ",
                   want_ids[s], " (reference top-2 gap ", gaps[s], ")");
        break;
      }
    }
  }
  for (const auto& [model, w] : worst)
    std::cout << model << ": worst |logit - reference| " << w.diff << " (" << w.where << ")\n";
  std::cout << cases.size() << " cases, " << compared_steps << " steps compared\n";
  CHECK(compared_steps > static_cast<int>(cases.size()));
}
