// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The CUDA backend's batched forward (model/grid_batch_ops.hpp: GridBatchOps, the launches a GPU
// runs) on the host grid, against the host backend's forward() one row at a time: rows of
// different adapters (two of llama.cpp's golden adapters and none), caches whose capacities
// split the attention differently (the rows share the partials scratch one after another), slots
// and positions, prefill chunks and decode tokens in one batch, on golden model qwen-c (GQA 8/2).
// Then the scheduler on the host grid: requests batched through it equal each request run alone
// through the host grid's sequential relay, their greedy rows chosen together on the device
// (at most one wait per step); with sampled stages too, the sampled rows chosen on the device
// with the greedy ones, ids and log-probabilities those of the sequential relay's device loop.
//
// Mutation checks (2026-12-03), each alone, this program rebuilt:
//   RoPE/append with the first row's descriptor for every row      -> the mixed-batch case fails
//   the LoRA update over the run's first row only                   -> the mixed-batch case fails
//   the head's norm of each row's first token instead of its last   -> the mixed-batch case fails
// (2026-12-06) the sampled rows:
//   each sampled row drawn with step 0's uniform (RowSampling::step)    -> ids differ
//   every sampled row handed sampled row 0's log-probabilities          -> logprobs differ
//   sampled rows left to the host (choose_on_device takes greedy only)  -> the wait count fails
// (2026-12-07) the rows with logit_bias and penalties:
//   choose_on_device taking only rows that choose from their row as it is -> 0 waits for 58
//                                                                           choosing steps
//   SampleRowsKernel drawing from the row as it is, bias and penalties not applied
//                                                                        -> cycles and ids differ
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <span>
#include <vector>

#include "baton/kv/kv_buffer.hpp"
#include "baton/model/forward_batch.hpp"
#include "baton/model/host_forward.hpp"
#include "baton/model/host_grid_forward.hpp"
#include "baton/relay/scheduler.hpp"
#include "support/golden_copies.hpp"
#include "support/scheduler_world.hpp"
#include "support/test_paths.hpp"

using namespace baton;

namespace {

template <Backend B>
struct Golden {
  explicit Golden(const std::filesystem::path& dir) : model(load_model<B, f32>(dir)) {}
  std::filesystem::path root = BATON_GOLDEN_DIR;
  BaseModel<B, f32> model;
  LoraSlice<16, B> qv = LoraSlice<16, B>::load(root / "qwen-c-lora-qv", model.config());
  LoraSlice<16, B> all = LoraSlice<16, B>::load(root / "qwen-c-lora-all", model.config());
  LoraSlice<16, B> none = LoraSlice<16, B>::none(model.config());
};

std::vector<std::int32_t> ids(int n, int seed) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = (i * 37 + seed * 11 + 5) % 384;
  return v;
}

/// A stage's cache: a 16-token prefix through `slice`, 3 slots of `tail` positions.
template <Backend B>
KvBuffer<layout::HeadMajor<f32, 8>, B> warm_cache(const Golden<B>& g, const LoraSlice<16, B>& slice,
                                                  int tail, int seed) {
  KvBuffer<layout::HeadMajor<f32, 8>, B> cache(g.model.config(), {16, tail, 3});
  Workspace<B> ws;
  cache.reset_prefix();
  const auto prefix = ids(16, seed);
  forward(g.model, ws, slice, cache, KvTarget::prefix(), 0, std::span<const std::int32_t>(prefix),
          Logits::none);
  cache.freeze_prefix();
  return cache;
}

/// Waits on every context a scheduler's requests use: the scheduler's and each stage slot's.
template <class Scheduler, class World>
long all_waits(Scheduler& sched, World& world) {
  long n = sched.workspace().extras.context().host_waits();
  for (auto* stage : world.ptrs())
    for (auto& ws : stage->workspaces()) n += ws.extras.context().host_waits();
  return n;
}

}  // namespace

TEST_CASE("host grid: forward_batch over mixed rows matches the host's forward() per row") {
  // qwen-c with room for 512 positions: a slot long enough that its attention splits.
  const std::filesystem::path dir = test::golden_with_positions("qwen-c", 512, "grid-batch");
  const Golden<host_grid> g(dir);
  const Golden<host> h(dir);
  using GridSlice = LoraSlice<16, host_grid>;
  using HostSlice = LoraSlice<16, host>;
  // Three stages: adapter qv, adapter all (a tail long enough to split the attention in
  // several parts), the base model.
  const std::vector<const GridSlice*> grid_slice{&g.qv, &g.all, nullptr};
  const std::vector<const HostSlice*> host_slice{&h.qv, &h.all, &h.none};
  const int tails[] = {48, 320, 48};
  std::vector<KvBuffer<layout::HeadMajor<f32, 8>, host_grid>> batched;
  std::vector<KvBuffer<layout::HeadMajor<f32, 8>, host>> alone;
  for (int s = 0; s < 3; ++s) {
    batched.push_back(warm_cache(g, grid_slice[s] ? *grid_slice[s] : g.none, tails[s], s));
    alone.push_back(warm_cache(h, *host_slice[s], tails[s], s));
  }
  REQUIRE(kernels::attention_split(batched[1].capacity(KvTarget::in_slot(0))).splits > 1);
  REQUIRE(kernels::attention_split(batched[0].capacity(KvTarget::in_slot(0))).splits == 1);
  struct Job {
    int stage, slot;
    std::vector<std::int32_t> tokens;
  };
  // Prefill chunks of different lengths, decode-sized rows, rows of one adapter apart (not
  // grouped) and next to each other (one LoRA run), a row without an adapter.
  const std::vector<Job> jobs{{0, 0, ids(7, 1)}, {1, 0, ids(12, 2)}, {1, 2, ids(1, 3)},
                              {2, 1, ids(5, 4)}, {1, 1, ids(3, 5)},  {0, 1, ids(9, 6)}};
  std::vector<int> position(jobs.size(), 16);
  std::vector<std::int32_t> next(jobs.size());
  Workspace<host_grid> ws_batch;
  Workspace<host> ws_alone;
  const int V = g.model.config().vocab_size;
  double worst = 0;
  for (int step = 0; step < 5; ++step) {
    CAPTURE(step);
    using Row = BatchRow<GridSlice, KvBuffer<layout::HeadMajor<f32, 8>, host_grid>>;
    std::vector<Row> rows;
    std::vector<std::vector<std::int32_t>> inputs(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      inputs[j] = step == 0 ? jobs[j].tokens : std::vector<std::int32_t>{next[j]};
      // Step 1: the third row asks for no logits (a prefill chunk that is not the last).
      rows.push_back({grid_slice[jobs[j].stage], &batched[jobs[j].stage],
                      KvTarget::in_slot(jobs[j].slot), position[j], inputs[j],
                      !(step == 1 && j == 2)});
    }
    const auto lg = forward_batch(g.model, ws_batch, std::span<const Row>(rows));
    const std::vector<float> got(lg.begin(), lg.end());
    std::size_t k = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      CAPTURE(j);
      const auto want = forward(h.model, ws_alone, *host_slice[jobs[j].stage], alone[jobs[j].stage],
                                KvTarget::in_slot(jobs[j].slot), position[j],
                                std::span<const std::int32_t>(inputs[j]), Logits::last);
      next[j] = kernels::argmax(want.data(), V);
      position[j] += static_cast<int>(inputs[j].size());
      CHECK(batched[jobs[j].stage].position(KvTarget::in_slot(jobs[j].slot)) == position[j]);
      if (!rows[j].logits) continue;
      REQUIRE(got.size() >= (k + 1) * static_cast<std::size_t>(V));
      const std::span<const float> row(got.data() + k++ * V, static_cast<std::size_t>(V));
      const double d = test::worst_relative_diff(row, want);
      worst = std::max(worst, d);
      CHECK(d < 1e-4);
      CHECK(kernels::argmax(row.data(), V) == next[j]);
    }
    CHECK(got.size() == k * static_cast<std::size_t>(V));
  }
  MESSAGE("host grid batched vs host per row: worst |diff| / max(1, |x|) = " << worst);
}

TEST_CASE("host grid: the scheduler's requests equal each request run alone") {
  using World = test::SchedulerWorld<host_grid>;
  World batched(3), alone(1);
  const RelayOptions opt = test::scheduler_relay_options();
  RelayEngine<host_grid> engine(alone.bases());
  RelayScheduler<World::StageT> sched(batched.ptrs(), test::scheduler_relay_options(),
                                      {.max_rows = 5, .max_tokens = 24, .max_queue = 16});
  std::mt19937 rng(7);
  std::vector<std::vector<std::int32_t>> requests;
  for (int k = 0; k < 6; ++k)
    requests.push_back(test::scheduler_ids(1 + static_cast<int>(rng() % 16), k));
  std::map<Ticket, std::size_t> which;
  std::size_t next = 0;
  int steps = 0, most_rows = 0;
  const long waits_before = all_waits(sched, batched);
  while (next < requests.size() || !sched.idle()) {
    for (unsigned a = rng() % 3; a > 0 && next < requests.size(); --a, ++next)
      which[sched.submit(requests[next])] = next;
    most_rows = std::max(most_rows, sched.step().rows);
    REQUIRE(++steps < 1000);
  }
  CHECK(most_rows > 1);
  std::size_t generated = 0;
  for (const auto& [ticket, index] : which) {
    const std::size_t k = index;  // CAPTURE takes it in a lambda: not a structured binding
    CAPTURE(k);
    const auto got = sched.take(ticket);
    REQUIRE(got.has_value());
    test::check_same_result(*got, engine.run(requests[k], opt));
    for (const StageRun& run : got->runs) generated += run.ids.size();
  }
  // The greedy rows of a step are chosen on the device together (model/device_choice.hpp) and
  // handed to their sessions (Session::take_logits): at most one wait per step on all the
  // contexts, though the steps chose more tokens than there were steps.
  const long waits = all_waits(sched, batched) - waits_before;
  CHECK(static_cast<long>(generated) > steps);
  CHECK(waits > 0);
  CHECK(waits <= steps);
}

namespace {

/// extract: the sampler at temperature 0 with log-probabilities; reason: a seeded draw with
/// top-k, top-p and min-p and log-probabilities; verify: plain greedy.
std::vector<SamplingOptions> sampled_relay() {
  std::vector<SamplingOptions> sampling(3);
  sampling[0].logprobs = true;
  sampling[0].top_logprobs = 3;
  sampling[1].params.temperature = 0.9f;
  sampling[1].params.top_k = 40;
  sampling[1].params.top_p = 0.9f;
  sampling[1].params.min_p = 0.01f;
  sampling[1].seed = 11;
  sampling[1].stream = 2;
  sampling[1].logprobs = true;
  sampling[1].top_logprobs = 2;
  return sampling;
}

/// Six requests of a relay with stages sampling by `sampling`, batched through the scheduler on
/// the host grid with random arrivals, against the host grid's sequential relay (the device
/// loop's SampleChooseKernel, its own plumbing): ids and log-probabilities bit for bit, and
/// every row chosen on the device (one wait per step that chose).
void check_sampled_batch(const std::vector<SamplingOptions>& sampling) {
  using World = test::SchedulerWorld<host_grid>;
  World batched(3, 8, sampling), alone(1, 8, sampling), greedy(1);
  const RelayOptions opt = test::scheduler_relay_options();
  RelayEngine<host_grid> engine(alone.bases()), plain(greedy.bases());
  RelayScheduler<World::StageT> sched(batched.ptrs(), opt,
                                      {.max_rows = 5, .max_tokens = 24, .max_queue = 16});
  std::mt19937 rng(11);
  std::vector<std::vector<std::int32_t>> requests;
  for (int k = 0; k < 6; ++k)
    requests.push_back(test::scheduler_ids(1 + static_cast<int>(rng() % 16), 20 + k));
  std::map<Ticket, std::size_t> which;
  std::size_t next = 0;
  int steps = 0;
  const long waits_before = all_waits(sched, batched);
  // Steps that chose at least one token, and those that chose several.
  int accepted = 0, choosing_steps = 0, crowded_steps = 0;
  RequestOptions count;
  count.on_token = [&](Ticket, int, int, std::int32_t) { ++accepted; };
  while (next < requests.size() || !sched.idle()) {
    for (unsigned a = rng() % 3; a > 0 && next < requests.size(); --a, ++next)
      which[sched.submit(requests[next], count)] = next;
    accepted = 0;
    sched.step();
    choosing_steps += accepted > 0 ? 1 : 0;
    crowded_steps += accepted > 1 ? 1 : 0;
    REQUIRE(++steps < 1000);
  }
  const long waits = all_waits(sched, batched) - waits_before;
  MESSAGE("sampled batch: " << steps << " steps, " << choosing_steps << " chose, " << crowded_steps
                            << " chose several; " << waits << " waits");
  int sampled_differ = 0;
  std::size_t logprobs = 0;
  for (const auto& [ticket, index] : which) {
    const std::size_t k = index;
    CAPTURE(k);
    const auto got = sched.take(ticket);
    REQUIRE(got.has_value());
    const RelayResult want = engine.run(requests[k], opt);
    test::check_same_result(*got, want);
    const RelayResult argmax = plain.run(requests[k], opt);
    for (std::size_t r = 0; r < got->runs.size() && r < want.runs.size(); ++r) {
      CAPTURE(r);
      const StageRun& g = got->runs[r];
      const StageRun& w = want.runs[r];
      REQUIRE(g.logprobs.size() == w.logprobs.size());
      CHECK(g.logprobs.size() == (g.stage == 2 ? 0 : g.ids.size()));
      logprobs += g.logprobs.size();
      for (std::size_t i = 0; i < g.logprobs.size(); ++i) {
        CAPTURE(i);
        CHECK(g.logprobs[i].id == w.logprobs[i].id);
        CHECK(g.logprobs[i].logprob == w.logprobs[i].logprob);
        REQUIRE(g.logprobs[i].n_top == w.logprobs[i].n_top);
        CHECK(g.logprobs[i].n_top == (g.stage == 0 ? 3 : 2));
        for (int j = 0; j < g.logprobs[i].n_top; ++j) {
          CHECK(g.logprobs[i].top[j].id == w.logprobs[i].top[j].id);
          CHECK(g.logprobs[i].top[j].logprob == w.logprobs[i].top[j].logprob);
        }
      }
      // The greedy relay's first runs coincide up to the first sampled stage.
      if (r == 1 && !argmax.runs.empty() && argmax.runs.size() > 1)
        sampled_differ += g.ids != argmax.runs[1].ids ? 1 : 0;
    }
  }
  CHECK(logprobs > 0);
  CHECK(sampled_differ >= 3);  // the reason stage really sampled
  // Every row chose on the device: exactly one wait (choose_rows' read) per step that chose,
  // on all the contexts. A sampled row chosen on the host instead would cost a wait per row on
  // a GPU (its copy), and none on the host grid (its rows are host memory), so the steps that
  // chose only sampled rows would have none: measured, 22 waits for 50 such steps.
  CHECK(crowded_steps > 0);
  CHECK(waits == choosing_steps);
}

}  // namespace

TEST_CASE("host grid: sampled rows are chosen on the device with the greedy ones") {
  check_sampled_batch(sampled_relay());
}

TEST_CASE("host grid: rows with logit_bias and penalties are chosen on the device too") {
  // Each row is rewritten in a copy on the device (its bias entries and penalty counts staged
  // from kernel arguments); extract's greedy choice with a bias is no longer the plain argmax.
  std::vector<SamplingOptions> sampling = sampled_relay();
  sampling[0].logit_bias = {{7, 4.0f}, {100, -100.0f}, {211, 2.5f}};
  sampling[1].logit_bias = {{13, 3.0f}, {250, 1.5f}};
  sampling[1].params.repeat_penalty = 1.4f;
  sampling[1].params.presence_penalty = 0.6f;
  sampling[1].params.frequency_penalty = 0.3f;
  sampling[1].repeat_last_n = 6;
  sampling[2].params.presence_penalty = 1.5f;  // verify: greedy, but penalized
  check_sampled_batch(sampling);
}
