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
// The activated LoRA (aLoRA) cases (Qwen2 and Llama with alora-all-r8, whose reference is peft's
// generate(): the invocation absent, absent then generated, once, twice, at the end) run here
// as the others do, and then once more per model as one batch (forward_batch, every step all
// rows at once, each row with its own activation start) on the host grid and on the host
// backend, to the same ids and logits; and as a relay Stage whose pre-warmed prefix holds the
// prompt's first ids (the device-resident decode loop on the host grid, the stepped loop on the
// host) to the same ids, a prefix adapted differently from what a request needs being refused;
// and as requests of the batch scheduler on the host (chunked prefills beside decode rows).
//
// A relay of three activated adapters over one shared sequence (relay/shared_sequence.hpp), per
// aLoRA family (the fixture's "relays": each run peft's generate() on the run's whole input, the
// outputs chained as the relay chains them), on the host and on the host grid: every run's ids
// equal peft's, and the base computed the opening and each turn once. Mutation check
// (2026-12-04): the shared tail left out of a linked slot's read span -> every run of both
// backends fails; the shared sequence's workspaces not sized at its pre-warm -> the host grid's
// request allocates ("grid_allocations == 0").
//
// Mutation checks of the aLoRA gate (2026-12-04), each alone, this program rebuilt (all failed):
//   the first occurrence of the invocation instead of the last  -> 'twice' (single, batched)
//   the start one token late (invocation's first id not adapted) -> 'once', 'twice', 'at the end'
//   the gate ignored in the host ops and both batched paths      -> every batched case, 'absent'
//   the gate ignored in the host grid's single-row forward       -> every single case
//   the device loop adapting every generated token               -> the host grid stage, 'absent'
//   generated tokens not adapted (the start not kept past prefill) -> 'once', 'twice', 'at the end'
//   a stage's prefix pre-warmed with the adapter from position 0 -> every stage run
//   a batched run joining a row adapted from a later token       -> the batched cases
//   the scheduler's rows adapted from position 0                 -> the scheduler's cases
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
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/io/safetensors.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/decode.hpp"
#include "baton/model/forward_batch.hpp"
#include "baton/model/host_forward.hpp"
#include "baton/model/host_grid_forward.hpp"
#include "baton/model/model_dispatch.hpp"
#include "baton/relay/relay.hpp"
#include "baton/relay/scheduler.hpp"
#include "baton/relay/shared_sequence.hpp"
#include "baton/relay/stage.hpp"

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

/// Greedy generations of `steps` tokens for every prompt at once, on backend B: each step one
/// forward_batch over all rows (the prompts, then one token each), each row in its own slot
/// with the activation start its prompt gives the slice (lora/activation.hpp), kept for the
/// generated tokens as the decode loop keeps it. For a Qwen2-family f32 model, head_dim 64.
template <class B>
std::vector<Run> run_batched(const fs::path& model_dir, const fs::path& adapter,
                             const std::vector<std::vector<std::int32_t>>& prompts, int steps) {
  using Model = BaseModel<B, f32, family::Qwen2>;
  using Slice = LoraSlice<kRuntimeRankBound, B>;
  using Cache = KvBuffer<layout::HeadMajor<f32, 64>, B>;
  using Row = BatchRow<Slice, Cache>;
  const Model model = load_model<B, f32, family::Qwen2>(model_dir);
  const Slice slice = Slice::load(adapter, model);
  REQUIRE(slice.activated());
  std::size_t longest = 0;
  for (const auto& p : prompts) longest = std::max(longest, p.size());
  Cache cache(model.config(), KvShape{.prefix_capacity = 0,
                                      .tail_capacity = static_cast<int>(longest) + steps,
                                      .slots = static_cast<int>(prompts.size())});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<B> ws;
  std::vector<Run> runs(prompts.size());
  std::vector<std::int32_t> next(prompts.size());
  for (int s = 0; s < steps; ++s) {
    std::vector<Row> rows;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const auto& p = prompts[i];
      const int n = static_cast<int>(p.size());
      const auto tokens =
          s == 0 ? std::span<const std::int32_t>(p) : std::span<const std::int32_t>(&next[i], 1);
      rows.push_back({&slice, &cache, KvTarget::in_slot(static_cast<int>(i)),
                      s == 0 ? 0 : n + s - 1, tokens, true, slice.activation_start({}, p)});
    }
    const auto logits = forward_batch(model, ws, std::span<const Row>(rows));
    const std::size_t V = static_cast<std::size_t>(model.config().vocab_size);
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const auto row = logits.subspan(i * V, V);
      runs[i].rows.emplace_back(row.begin(), row.end());
      next[i] = kernels::argmax(row.data(), static_cast<int>(row.size()));
      runs[i].ids.push_back(next[i]);
    }
  }
  return runs;
}

/// The ids of a relay Stage on backend B whose prefix is the prompt's first `split` ids and whose
/// request is the rest (the prefix pre-warmed through the slice; a Qwen2-family f32 model,
/// head_dim 64). On the host grid the stage decodes in the device-resident loop.
template <class B>
std::vector<std::int32_t> run_stage(const fs::path& model_dir, const fs::path& adapter,
                                    const std::vector<std::int32_t>& prompt, int split, int steps) {
  using Model = BaseModel<B, f32, family::Qwen2>;
  using Slice = LoraSlice<kRuntimeRankBound, B>;
  using Cache = KvBuffer<layout::HeadMajor<f32, 64>, B>;
  const Model model = load_model<B, f32, family::Qwen2>(model_dir);
  const std::vector<std::int32_t> prefix(prompt.begin(), prompt.begin() + split);
  const std::vector<std::int32_t> request(prompt.begin() + split, prompt.end());
  auto stage = make_stage<Cache>("alora", model, Slice::load(adapter, model),
                                 KvShape{.prefix_capacity = split,
                                         .tail_capacity = static_cast<int>(request.size()) + steps,
                                         .slots = 1},
                                 prefix, wire::input(wire::request), StageLimits{.max_new = steps});
  stage.prewarm();
  return stage.run(request).ids;
}

/// The ids of every prompt as a request of a one-stage relay (no prefix) run by the batch
/// scheduler on backend B, all submitted at once: prefills in chunks of at most 16 tokens beside
/// the other requests' decode rows, each row carrying its request's activation start.
template <class B>
std::vector<std::vector<std::int32_t>> run_scheduled(
    const fs::path& model_dir, const fs::path& adapter,
    const std::vector<std::vector<std::int32_t>>& prompts, int steps) {
  using Model = BaseModel<B, f32, family::Qwen2>;
  using Slice = LoraSlice<kRuntimeRankBound, B>;
  using Cache = KvBuffer<layout::HeadMajor<f32, 64>, B>;
  const Model model = load_model<B, f32, family::Qwen2>(model_dir);
  std::size_t longest = 0;
  for (const auto& p : prompts) longest = std::max(longest, p.size());
  auto stage = make_stage<Cache>("alora", model, Slice::load(adapter, model),
                                 KvShape{.prefix_capacity = 0,
                                         .tail_capacity = static_cast<int>(longest) + steps,
                                         .slots = static_cast<int>(prompts.size())},
                                 {}, wire::input(wire::request), StageLimits{.max_new = steps});
  stage.prewarm();
  using StageT = decltype(stage);
  RelayScheduler<StageT> sched({&stage}, RelayOptions{}, {.max_rows = 8, .max_tokens = 16});
  std::vector<Ticket> tickets;
  for (const auto& p : prompts) tickets.push_back(sched.submit(p));
  sched.run();
  std::vector<std::vector<std::int32_t>> ids;
  for (const Ticket t : tickets) {
    const auto r = sched.take(t);
    REQUIRE(r.has_value());
    REQUIRE(r->runs.size() == 1);
    ids.push_back(r->runs[0].ids);
  }
  return ids;
}

/// The runs of the fixture's relay of activated adapters `relay` (reference.json's "relays") on
/// backend B: a SharedSequence with the relay's common prefix and opening, three stages reading
/// it, two cycles. On the host grid the stages decode in the device-resident loop.
template <class B>
RelayResult run_shared_relay(const fs::path& root, const nlohmann::json& relay,
                             long* allocations = nullptr) {
  using Model = BaseModel<B, f32, family::Qwen2>;
  using Slice = LoraSlice<kRuntimeRankBound, B>;
  using Cache = KvBuffer<layout::HeadMajor<f32, 64>, B>;
  using Ids = std::vector<std::int32_t>;
  const Model model =
      load_model<B, f32, family::Qwen2>(root / relay.at("model").get<std::string>());
  const auto ids = [&](const char* key) { return relay.at(key).get<Ids>(); };
  SharedSequence<Model, Slice, Cache> shared(
      model, KvShape{.prefix_capacity = 8, .tail_capacity = 160, .slots = 1}, ids("prefix"),
      {Segment{Segment::Kind::literal, -1, ids("before")}, Segment{Segment::Kind::request},
       Segment{Segment::Kind::literal, -1, ids("after")}},
      ids("turn_end"));
  using StageT = Stage<Model, Slice, Cache>;
  std::vector<std::unique_ptr<StageT>> stages;
  std::vector<StageBase<B>*> ptrs;
  for (int k = 0; k < 3; ++k) {
    const Ids inv = relay.at("invocations")[k].get<Ids>();
    stages.push_back(std::make_unique<StageT>(
        "s" + std::to_string(k), model,
        Slice::load(root / relay.at("adapters")[k].get<std::string>(), model),
        KvShape{.prefix_capacity = 0, .tail_capacity = 16, .slots = 1}, Ids{},
        wire::DynamicInput{
            {Segment{Segment::Kind::shared}, Segment{Segment::Kind::literal, -1, inv}}},
        StageLimits{.max_new = relay.at("max_new")[k].get<int>()}));
    stages.back()->read_shared(shared);
    ptrs.push_back(stages.back().get());
  }
  RelayEngine<B> engine(std::move(ptrs));
  engine.prewarm();
  if constexpr (RelayEngine<B>::kSharedContext) {
    // Everything a request needs was sized by the pre-warm: the request allocates nothing.
    const long before = engine.context()->counters().allocations;
    RelayResult r = engine.run(ids("request"), {.max_cycles = 2, .loop_from = 1, .gate = never()});
    if (allocations) *allocations = engine.context()->counters().allocations - before;
    return r;
  } else {
    return engine.run(ids("request"), {.max_cycles = 2, .loop_from = 1, .gate = never()});
  }
}

/// Compares `got` with case `c` of the reference (its ids up to a near-tie, every compared
/// step's logits), recording the worst difference in `w`. Returns the steps compared.
int compare_case(const nlohmann::json& c, const io::TensorSource& logits, std::size_t index,
                 std::size_t vocab, const Run& got, const std::string& label, Worst& w) {
  const auto want_ids = c.at("tokens").get<std::vector<std::int32_t>>();
  const auto gaps = c.at("gaps").get<std::vector<double>>();
  const int steps = static_cast<int>(want_ids.size());
  const std::size_t shape[] = {static_cast<std::size_t>(steps), vocab};
  const auto want = logits.read<f32>("case." + std::to_string(index), shape);
  REQUIRE(got.ids.size() == want_ids.size());
  REQUIRE(got.rows.size() == want_ids.size());
  int compared = 0;
  for (int s = 0; s < steps; ++s) {
    // The step's logits first: they decide the token, and a wrong one is the finding.
    for (std::size_t v = 0; v < vocab; ++v) {
      const double ref = want[static_cast<std::size_t>(s) * vocab + v];
      const double diff = std::abs(static_cast<double>(got.rows[s][v]) - ref);
      if (diff > w.diff) w = {diff, label + ", step " + std::to_string(s)};
      if (diff > kLogitRtol * std::max(1.0, std::abs(ref))) {
        FAIL_CHECK(label, ": step ", s, " id ", v, ": baton ", got.rows[s][v], " reference ", ref);
        break;
      }
    }
    ++compared;
    if (gaps[s] < kNearTie) break;  // either token is right here; later steps may part
    if (got.ids[s] != want_ids[s]) {
      FAIL_CHECK(label, ": greedy ids differ at step ", s, ": baton ", got.ids[s], ", reference ",
                 want_ids[s], " (reference top-2 gap ", gaps[s], ")");
      break;
    }
  }
  return compared;
}

/// The fixture's folder, or the program exits 77 (skipped) without one (a failure under CI=true).
fs::path fixture_root() {
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
  return root;
}

}  // namespace

TEST_CASE("relays of activated adapters on one shared sequence: every run's ids are peft's") {
  const fs::path root = fixture_root();
  nlohmann::json ref;
  std::ifstream(root / "reference.json") >> ref;
  REQUIRE(ref.at("relays").size() == 2);  // Qwen2 and Llama
  for (const nlohmann::json& relay : ref.at("relays")) {
    const std::string model = relay.at("model").get<std::string>();
    long grid_allocations = -1;
    const RelayResult on_grid = run_shared_relay<host_grid>(root, relay, &grid_allocations);
    CHECK(grid_allocations == 0);  // the pre-warms sized the linked slots' and the shared scratch
    for (const auto& [where, got] :
         {std::pair{std::string("host"), run_shared_relay<host>(root, relay)},
          std::pair{std::string("host grid (device loop)"), on_grid}}) {
      CAPTURE(model);
      CAPTURE(where);
      const auto& runs = relay.at("runs");
      REQUIRE(got.runs.size() == runs.size());
      long long appended = 0;
      for (std::size_t k = 0; k < runs.size(); ++k) {
        const auto want = runs[k].at("tokens").get<std::vector<std::int32_t>>();
        const auto gaps = runs[k].at("gaps").get<std::vector<double>>();
        CAPTURE(k);
        CHECK(got.runs[k].stage == runs[k].at("stage").get<int>());
        bool tie = false;
        for (std::size_t s = 0; s < want.size() && !tie; ++s) {
          tie = gaps[s] < kNearTie;  // either token is right here: later runs may part
          if (!tie) CHECK(got.runs[k].ids.at(s) == want[s]);
        }
        if (tie) break;
        if (k + 1 < runs.size())
          appended += got.runs[k].input_tokens + static_cast<long long>(want.size()) + 1;
      }
      // The base computed the opening (2 + 10 + 1 ids) and every turn but the last, once.
      CHECK(got.shared_tokens == 13 + appended);
    }
  }
}

TEST_CASE("host grid: models made by transformers + peft, greedy ids and every step's logits") {
  const fs::path root = fixture_root();
  nlohmann::json cases;
  std::ifstream(root / "reference.json") >> cases;
  if (cases.is_object()) cases = cases.at("cases");
  const auto logits = io::TensorSource::open_file(root / "reference.safetensors");
  REQUIRE(cases.size() > 0);

  std::map<std::string, Worst> worst;                     // by model folder (family x storage)
  std::map<std::string, std::vector<std::size_t>> alora;  // aLoRA cases by model folder
  int compared_steps = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json& c = cases[i];
    const fs::path model_dir = root / c.at("model").get<std::string>();
    std::optional<fs::path> adapter;
    if (!c.at("adapter").is_null()) adapter = root / c.at("adapter").get<std::string>();
    const auto prompt = c.at("prompt").get<std::vector<std::int32_t>>();
    const int steps = static_cast<int>(c.at("tokens").size());
    std::string label = c.at("model").get<std::string>() + " + " +
                        (adapter ? c.at("adapter").get<std::string>() : "no adapter") +
                        ", prompt of " + std::to_string(prompt.size());
    if (c.contains("alora"))
      label += ", aLoRA prompt '" + c.at("alora").at("prompt").get<std::string>() + "'";
    CAPTURE(label);
    const ModelConfig cfg = load_runtime_config(model_dir);
    const Run got = dispatch_model<FixtureShapes>(
        model_dir, cfg,
        [&]<class F, class S, int D>() {
          return run_on_grid<F, S, D>(model_dir, adapter, prompt, steps);
        },
        "test_grid_hf (head_dim 64 Qwen2/Llama, 128 Qwen3)");
    const std::size_t vocab = static_cast<std::size_t>(cfg.vocab_size);
    compared_steps +=
        compare_case(c, logits, i, vocab, got, label, worst[c.at("model").get<std::string>()]);
    if (c.contains("alora")) alora[c.at("model").get<std::string>()].push_back(i);
  }
  // The aLoRA cases of each model as one batch, on the host grid and on the host backend.
  int alora_cases = 0;
  for (auto& [model, listed] : alora) {
    // Rows without the invocation between rows with it: a run of one adapter's rows must stop
    // at a row it does not apply to.
    std::vector<std::size_t> adapted, absent, indices;
    for (const std::size_t i : listed)
      (cases[i].at("alora").at("prompt").get<std::string>().starts_with("absent") ? absent
                                                                                  : adapted)
          .push_back(i);
    for (std::size_t k = 0; k < std::max(adapted.size(), absent.size()); ++k) {
      if (k < adapted.size()) indices.push_back(adapted[k]);
      if (k < absent.size()) indices.push_back(absent[k]);
    }
    std::vector<std::vector<std::int32_t>> prompts;
    for (const std::size_t i : indices)
      prompts.push_back(cases[i].at("prompt").get<std::vector<std::int32_t>>());
    const nlohmann::json& first = cases[indices[0]];
    const fs::path model_dir = root / model,
                   adapter = root / first.at("adapter").get<std::string>();
    const int steps = static_cast<int>(first.at("tokens").size());
    const std::size_t vocab = static_cast<std::size_t>(load_runtime_config(model_dir).vocab_size);
    const auto grid = run_batched<host_grid>(model_dir, adapter, prompts, steps);
    const auto on_host = run_batched<host>(model_dir, adapter, prompts, steps);
    const auto scheduled = run_scheduled<host>(model_dir, adapter, prompts, steps);
    for (std::size_t k = 0; k < indices.size(); ++k) {
      const nlohmann::json& c = cases[indices[k]];
      const std::string label = model + " + " + c.at("adapter").get<std::string>() +
                                ", batched, aLoRA prompt '" +
                                c.at("alora").at("prompt").get<std::string>() + "'";
      compare_case(c, logits, indices[k], vocab, grid[k], "host grid, " + label,
                   worst[model + " (batched, host grid)"]);
      compare_case(c, logits, indices[k], vocab, on_host[k], "host, " + label,
                   worst[model + " (batched, host)"]);
      // As a stage: the first 4 ids pre-warmed (no case's invocation starts before index 6).
      const auto prompt = c.at("prompt").get<std::vector<std::int32_t>>();
      const auto want_ids = c.at("tokens").get<std::vector<std::int32_t>>();
      const auto gaps = c.at("gaps").get<std::vector<double>>();
      const std::string kind = c.at("alora").at("prompt").get<std::string>();
      for (const auto& [where, got] :
           {std::pair{std::string("host grid (device loop), a stage"),
                      run_stage<host_grid>(model_dir, adapter, prompt, 4, steps)},
            std::pair{std::string("host, a stage"),
                      run_stage<host>(model_dir, adapter, prompt, 4, steps)},
            std::pair{std::string("host, the batch scheduler"), scheduled[k]}}) {
        REQUIRE(got.size() == want_ids.size());
        for (int s = 0; s < steps && gaps[s] >= kNearTie; ++s) {
          if (got[s] == want_ids[s]) continue;
          FAIL_CHECK(where, ", ", model, ", aLoRA prompt '", kind, "': ids differ at step ", s,
                     ": ", got[s], ", reference ", want_ids[s]);
          break;
        }
      }
      // A prefix through the first of two invocations cannot serve the second's request.
      if (kind == "twice") {
        const auto inv = c.at("alora").at("invocation").get<std::vector<std::int32_t>>();
        const auto at = std::search(prompt.begin(), prompt.end(), inv.begin(), inv.end());
        REQUIRE(at != prompt.end());
        const int split = static_cast<int>(at - prompt.begin()) + 2;
        CHECK_THROWS_WITH_AS(run_stage<host>(model_dir, adapter, prompt, split, steps),
                             doctest::Contains("the shared prefix cannot serve this request"),
                             usage_error);
      }
      ++alora_cases;
    }
  }
  CHECK(alora_cases >= 10);  // 5 prompts x (Qwen2, Llama): the fixture has them
  for (const auto& [model, w] : worst)
    std::cout << model << ": worst |logit - reference| " << w.diff << " (" << w.where << ")\n";
  std::cout << cases.size() << " cases, " << compared_steps << " steps compared\n";
  CHECK(compared_steps > static_cast<int>(cases.size()));
}
