// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The batched forward (model/forward_batch.hpp) against forward() one row at a time: rows of
// different adapters (two of llama.cpp's golden adapters and none), caches, slots and positions,
// prefill chunks and single decode tokens in one batch, on golden model qwen-c (GQA 8/2). Every
// product sums each row in one order whatever the rows beside it (host_dot.hpp), so the logits
// agree bit for bit (docs/batching.md; test_batch_invariance.cpp has the random batches). Then
// the rows' caches decode on, one row at a time, to the same tokens as the reference's.
//
// Mutation checks (2026-12-03), each alone, this program rebuilt:
//   every row's LoRA from the first row's adapter      -> the mixed-batch case fails
//   RoPE/append at the batch's first row's position    -> the mixed-batch case fails
//   rows' cache positions not committed                -> the decode-on case fails
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "baton/baton.hpp"
#include "support/expect_error.hpp"
#include "support/golden_copies.hpp"
#include "support/test_paths.hpp"

using namespace baton;

namespace {

using Model = BaseModel<host, f32>;
using Slice = LoraSlice<16, host>;
using Cache = KvBuffer<layout::HeadMajor<f32, 8>, host>;
using Row = BatchRow<Slice, Cache>;

struct Golden {
  Model model = load_model<host, f32>(std::filesystem::path(BATON_GOLDEN_DIR) / "qwen-c");
  Slice qv =
      Slice::load(std::filesystem::path(BATON_GOLDEN_DIR) / "qwen-c-lora-qv", model.config());
  Slice all =
      Slice::load(std::filesystem::path(BATON_GOLDEN_DIR) / "qwen-c-lora-all", model.config());
};

std::vector<std::int32_t> ids(int n, int seed) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = (i * 37 + seed * 11 + 5) % 384;
  return v;
}

/// A stage's cache: a 16-token prefix through `slice` (or the base), 3 slots of 48.
Cache warm_cache(const Golden& g, const Slice* slice, int seed) {
  Cache cache(g.model.config(), {16, 48, 3});
  Workspace<host> ws;
  const Slice none = Slice::none(g.model.config());
  cache.reset_prefix();
  const auto prefix = ids(16, seed);
  forward(g.model, ws, slice ? *slice : none, cache, KvTarget::prefix(), 0,
          std::span<const std::int32_t>(prefix), Logits::none);
  cache.freeze_prefix();
  for (int s = 0; s < 3; ++s) cache.rewind(s);
  return cache;
}

struct Job {
  int cache;  // index into the caches
  const Slice* slice;
  int slot;
  std::vector<std::int32_t> tokens;
};

}  // namespace

TEST_CASE("forward_batch: mixed adapters, slots, prefill and decode rows match forward() per row") {
  const Golden g;
  const Slice none = Slice::none(g.model.config());
  // Three stages' caches: adapter qv, adapter all, the base model (a row with no adapter).
  const std::vector<const Slice*> stage_slice{&g.qv, &g.all, nullptr};
  std::vector<Cache> batched, alone;
  for (int s = 0; s < 3; ++s) {
    batched.push_back(warm_cache(g, stage_slice[s], s));
    alone.push_back(warm_cache(g, stage_slice[s], s));
  }
  // Prefill chunks of different lengths, a decode-sized row, two rows of one adapter apart
  // (not grouped), and one row with no adapter.
  const std::vector<Job> jobs{{0, &g.qv, 0, ids(7, 1)},  {1, &g.all, 0, ids(12, 2)},
                              {0, &g.qv, 2, ids(1, 3)},  {2, nullptr, 1, ids(5, 4)},
                              {1, &g.all, 1, ids(3, 5)}, {0, &g.qv, 1, ids(9, 6)}};
  std::vector<int> position(jobs.size(), 16);
  std::vector<std::int32_t> next(jobs.size());
  Workspace<host> ws_batch, ws_alone;
  double worst = 0;

  for (int step = 0; step < 6; ++step) {
    CAPTURE(step);
    std::vector<Row> rows;
    std::vector<std::vector<std::int32_t>> inputs(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      inputs[j] = step == 0 ? jobs[j].tokens : std::vector<std::int32_t>{next[j]};
      rows.push_back({jobs[j].slice, &batched[jobs[j].cache], KvTarget::in_slot(jobs[j].slot),
                      position[j], inputs[j], true});
    }
    const auto lg = forward_batch(g.model, ws_batch, std::span<const Row>(rows));
    const std::vector<float> got(lg.begin(), lg.end());
    const int V = g.model.config().vocab_size;
    REQUIRE(got.size() == jobs.size() * static_cast<std::size_t>(V));
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      CAPTURE(j);
      const Slice& slice = jobs[j].slice ? *jobs[j].slice : none;
      const auto want =
          forward(g.model, ws_alone, slice, alone[jobs[j].cache], KvTarget::in_slot(jobs[j].slot),
                  position[j], std::span<const std::int32_t>(inputs[j]), Logits::last);
      const std::span<const float> row(got.data() + j * V, static_cast<std::size_t>(V));
      const double d = test::worst_relative_diff(row, want);
      worst = std::max(worst, d);
      CHECK(std::equal(row.begin(), row.end(), want.begin(), want.end()));
      next[j] = kernels::argmax(want.data(), V);
      CHECK(kernels::argmax(row.data(), V) == next[j]);
      position[j] += static_cast<int>(inputs[j].size());
      CHECK(batched[jobs[j].cache].position(KvTarget::in_slot(jobs[j].slot)) == position[j]);
    }
  }
  MESSAGE("batched vs per-row logits: worst |diff| / max(1, |x|) = " << worst);
}

TEST_CASE("forward_batch: the adapters move the logits far apart") {
  // What makes the mixed-batch case sensitive to a row given another row's adapter.
  const Golden g;
  const Slice none = Slice::none(g.model.config());
  const auto in = ids(7, 1);
  std::vector<std::vector<float>> out;
  for (const Slice* s : {&g.qv, &g.all, &none}) {
    Cache c = warm_cache(g, &g.qv, 0);
    Workspace<host> ws;
    const auto lg = forward(g.model, ws, *s, c, KvTarget::in_slot(0), 16,
                            std::span<const std::int32_t>(in), Logits::last);
    out.emplace_back(lg.begin(), lg.end());
  }
  const double qv_all = test::worst_relative_diff(out[0], out[1]),
               qv_none = test::worst_relative_diff(out[0], out[2]);
  MESSAGE("qv vs all: " << qv_all << ", qv vs none: " << qv_none);
  CHECK(qv_all > 1e-2);
  CHECK(qv_none > 1e-2);
}

TEST_CASE("forward_batch: one row is forward() exactly, and rows without logits give none") {
  const Golden g;
  Cache a = warm_cache(g, &g.all, 0), b = warm_cache(g, &g.all, 0);
  Workspace<host> ws1, ws2;
  const auto in = ids(10, 3);
  const Row row{&g.all, &a, KvTarget::in_slot(0), 16, in, true};
  const auto lg = forward_batch(g.model, ws1, std::span<const Row>(&row, 1));
  const auto want = forward(g.model, ws2, g.all, b, KvTarget::in_slot(0), 16,
                            std::span<const std::int32_t>(in), Logits::last);
  REQUIRE(lg.size() == want.size());
  CHECK(std::equal(lg.begin(), lg.end(), want.begin()));

  // Two rows, only the second asks for logits: one row of logits comes back, the second's.
  Cache c = warm_cache(g, &g.all, 0);
  const auto one = ids(1, 9);
  const Row rows[] = {{&g.all, &c, KvTarget::in_slot(1), 16, in, false},
                      {&g.all, &c, KvTarget::in_slot(2), 16, one, true}};
  const auto two = forward_batch(g.model, ws1, std::span<const Row>(rows));
  CHECK(two.size() == static_cast<std::size_t>(g.model.config().vocab_size));
  const auto want_one = forward(g.model, ws2, g.all, b, KvTarget::in_slot(2), 16,
                                std::span<const std::int32_t>(one), Logits::last);
  CHECK(std::equal(two.begin(), two.end(), want_one.begin(), want_one.end()));
  CHECK(c.position(KvTarget::in_slot(1)) == 26);
}

TEST_CASE("forward_batch: a bad row fails the batch before anything is written") {
  const Golden g;
  Cache c = warm_cache(g, &g.qv, 0);
  Workspace<host> ws;
  const auto good = ids(4, 1);
  const std::vector<std::int32_t> bad{3, 384};  // 384 is past qwen-c's vocabulary
  const Row out_of_vocab[] = {{&g.qv, &c, KvTarget::in_slot(0), 16, good, true},
                              {&g.qv, &c, KvTarget::in_slot(1), 16, bad, true}};
  EXPECT_ERROR(usage_error, forward_batch(g.model, ws, std::span<const Row>(out_of_vocab)),
               "token id 384 at index 1");
  const Row wrong_position[] = {{&g.qv, &c, KvTarget::in_slot(0), 16, good, true},
                                {&g.qv, &c, KvTarget::in_slot(1), 17, good, true}};
  EXPECT_ERROR(position_error, forward_batch(g.model, ws, std::span<const Row>(wrong_position)),
               "slot 1");
  const Row same_target[] = {{&g.qv, &c, KvTarget::in_slot(0), 16, good, true},
                             {&g.qv, &c, KvTarget::in_slot(0), 16, good, true}};
  EXPECT_ERROR(usage_error, forward_batch(g.model, ws, std::span<const Row>(same_target)),
               "rows 0 and 1 both write");
  for (int s = 0; s < 3; ++s) CHECK(c.position(KvTarget::in_slot(s)) == 16);
  // The cache still serves: the good row alone now runs.
  CHECK_NOTHROW(forward_batch(g.model, ws, std::span<const Row>(out_of_vocab, 1)));
  CHECK(c.position(KvTarget::in_slot(0)) == 20);
}
