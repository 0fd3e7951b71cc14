// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// RelayScheduler (relay/scheduler.hpp): many requests through a three-stage relay at once, on
// golden model qwen-c with two of llama.cpp's golden adapters and one stage without. Every
// request's result must equal the same request run alone through RelayEngine (the sequential
// relay): same verdict, cycles, and every stage run's ids — for requests of random lengths
// arriving at random steps, chunked prefills (a small token budget), few slots (requests wait),
// gates passing in different cycles, feedback and loop_from. A request with a bad id, and one
// cancelled midway, end alone; the others' results do not change.
//
// Mutation checks (2026-12-03), each alone, this program rebuilt:
//   the accept rule's max_new test off by one (kernels/accept.hpp) -> fails
//   LoRA from the batch's first row's adapter for every row          -> results differ
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "baton/baton.hpp"
#include "baton/relay/scheduler.hpp"
#include "support/expect_error.hpp"
#include "support/test_paths.hpp"

using namespace baton;

namespace {

using Model = BaseModel<host, f32>;
using Slice = LoraSlice<16, host>;
using Cache = KvBuffer<layout::HeadMajor<f32, 8>, host>;
using StageT = Stage<Model, Slice, Cache, wire::DynamicInput>;

std::vector<std::int32_t> ids(int n, int seed) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = (i * 53 + seed * 17 + 3) % 384;
  return v;
}

Segment literal(std::vector<std::int32_t> v) { return {Segment::Kind::literal, -1, std::move(v)}; }
Segment request() { return {Segment::Kind::request, -1, {}}; }
Segment out(int k) { return {Segment::Kind::output, k, {}}; }
Segment feedback(int k) { return {Segment::Kind::feedback, k, {}}; }

/// The relay: extract (adapter qv) -> reason (adapter all, reads the request, extract's output
/// and verify's previous verdict) -> verify (no adapter); `slots` per stage.
struct World {
  std::filesystem::path root = BATON_GOLDEN_DIR;
  Model model = load_model<host, f32>(root / "qwen-c");
  std::vector<std::unique_ptr<StageT>> stages;

  explicit World(int slots) {
    const ModelConfig& c = model.config();
    const auto add = [&](const char* name, Slice slice, int prefix, std::vector<Segment> in,
                         int max_new, std::vector<std::int32_t> stop) {
      stages.push_back(std::make_unique<StageT>(
          name, model, std::move(slice), KvShape{prefix, 96, slots}, ids(prefix, prefix),
          wire::DynamicInput{std::move(in)}, StageLimits{max_new, std::move(stop)}));
      stages.back()->prewarm();
    };
    add("extract", Slice::load(root / "qwen-c-lora-qv", c), 12, {literal({1, 2}), request()}, 6,
        {});
    add("reason", Slice::load(root / "qwen-c-lora-all", c), 8, {request(), out(0), feedback(2)}, 8,
        {});
    add("verify", Slice::none(c), 5, {out(1), literal({7})}, 3, {});
  }
  std::vector<StageT*> ptrs() {
    std::vector<StageT*> v;
    for (auto& s : stages) v.push_back(s.get());
    return v;
  }
  std::vector<StageBase<host>*> bases() {
    std::vector<StageBase<host>*> v;
    for (auto& s : stages) v.push_back(s.get());
    return v;
  }
};

/// Passes on about a third of the outputs: requests pass in different cycles, some never.
RelayOptions relay_options() {
  RelayOptions o;
  o.max_cycles = 3;
  o.loop_from = 1;
  o.gate = Gate([](std::span<const std::int32_t> v) {
    long sum = 0;
    for (const std::int32_t x : v) sum += x;
    return sum % 3 == 0;
  });
  return o;
}

/// The stages' max_new; none has stop ids or interceptors, so every run generates exactly that
/// many ids (a fact of the relay, not of either implementation).
constexpr int kMaxNew[] = {6, 8, 3};

void check_same(const RelayResult& got, const RelayResult& want) {
  CHECK(verdict_name(got.verdict) == std::string(verdict_name(want.verdict)));
  CHECK(got.error == want.error);
  CHECK(got.cycles == want.cycles);
  REQUIRE(got.runs.size() == want.runs.size());
  for (std::size_t k = 0; k < got.runs.size(); ++k) {
    CAPTURE(k);
    CHECK(got.runs[k].stage == want.runs[k].stage);
    CHECK(got.runs[k].cycle == want.runs[k].cycle);
    CHECK(got.runs[k].ids == want.runs[k].ids);
    CHECK(got.runs[k].input_tokens == want.runs[k].input_tokens);
    CHECK(got.runs[k].stopped == want.runs[k].stopped);
    CHECK(got.runs[k].ids.size() == static_cast<std::size_t>(kMaxNew[got.runs[k].stage]));
  }
}

}  // namespace

TEST_CASE("scheduler: random arrivals through a batched relay equal each request run alone") {
  World batched(3), alone(1);
  const RelayOptions opt = relay_options();
  RelayEngine<host> engine(alone.bases());
  RelayScheduler<StageT> sched(batched.ptrs(), relay_options(),
                               {.max_rows = 5, .max_tokens = 24, .max_queue = 64});
  std::mt19937 rng(24);
  std::vector<std::vector<std::int32_t>> requests;
  for (int k = 0; k < 14; ++k) requests.push_back(ids(1 + static_cast<int>(rng() % 20), k));

  std::map<Ticket, std::size_t> which;
  std::map<Ticket, std::vector<std::int32_t>> streamed;
  const auto on_token = [&](Ticket t, int, int, std::int32_t id) { streamed[t].push_back(id); };
  std::size_t next = 0;
  int steps = 0, most_rows = 0, cycles_seen_mask = 0;
  while (next < requests.size() || !sched.idle()) {
    // 0-2 arrivals per step.
    for (unsigned a = rng() % 3; a > 0 && next < requests.size(); --a, ++next)
      which[sched.submit(requests[next], on_token)] = next;
    const SchedulerStep s = sched.step();
    most_rows = std::max(most_rows, s.rows);
    CHECK(s.tokens <= 24);
    REQUIRE(++steps < 2000);
  }
  CHECK(most_rows > 1);  // rows really were batched
  for (const auto& [ticket, k] : which) {
    CAPTURE(k);
    const auto got = sched.take(ticket);
    REQUIRE(got.has_value());
    const RelayResult want = engine.run(requests[k], opt);
    check_same(*got, want);
    cycles_seen_mask |= 1 << want.cycles;
    std::vector<std::int32_t> all;
    for (const StageRun& r : want.runs) all.insert(all.end(), r.ids.begin(), r.ids.end());
    CHECK(streamed[ticket] == all);
  }
  CHECK(cycles_seen_mask > 2);  // gates passed (or not) in more than one cycle
}

TEST_CASE("scheduler: a bad request and a cancelled one end alone; the queue is bounded") {
  World batched(2), alone(1);
  const RelayOptions opt = relay_options();
  RelayEngine<host> engine(alone.bases());
  RelayScheduler<StageT> sched(batched.ptrs(), relay_options(),
                               {.max_rows = 8, .max_tokens = 64, .max_queue = 5});
  std::vector<std::vector<std::int32_t>> requests{ids(5, 1), ids(9, 2), ids(3, 3), ids(14, 4)};
  std::vector<std::int32_t> bad = ids(6, 5);
  bad[3] = 384;  // past qwen-c's vocabulary
  std::vector<Ticket> t;
  for (const auto& r : requests) t.push_back(sched.submit(r));
  const Ticket bad_ticket = sched.submit(bad);
  EXPECT_ERROR(capacity_error, sched.submit(ids(2, 9)), "the queue is full (5 requests");
  const Ticket cancelled = t[1];
  for (int k = 0; k < 3; ++k) sched.step();
  CHECK(sched.cancel(cancelled));
  sched.run();
  CHECK(sched.idle());

  const auto b = sched.take(bad_ticket);
  REQUIRE(b.has_value());
  CHECK(b->verdict == Verdict::error);
  CHECK(b->error.find("token id 384 at index 5") != std::string::npos);  // [1, 2] + request
  const auto c = sched.take(cancelled);
  REQUIRE(c.has_value());
  CHECK(c->verdict == Verdict::error);
  CHECK(c->error == "cancelled");
  CHECK_FALSE(sched.cancel(cancelled));
  for (std::size_t k : {0u, 2u, 3u}) {
    CAPTURE(k);
    const auto got = sched.take(t[k]);
    REQUIRE(got.has_value());
    check_same(*got, engine.run(requests[k], opt));
  }
  // The pool is whole again: the same requests run again to the same results.
  const Ticket again = sched.submit(requests[1]);
  sched.run();
  check_same(*sched.take(again), engine.run(requests[1], opt));
}
