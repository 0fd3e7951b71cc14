// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// RelayScheduler (relay/scheduler.hpp): many requests through a three-stage relay at once, on
// golden model qwen-c with two of llama.cpp's golden adapters and one stage without. Every
// request's result must equal the same request run alone through RelayEngine (the sequential
// relay): same verdict, cycles, and every stage run's ids — for requests of random lengths
// arriving at random steps, chunked prefills (a small token budget), few slots (requests wait),
// gates passing in different cycles, feedback and loop_from. A request with a bad id, and one
// cancelled midway, end alone; the others' results do not change. A request's own max_new on
// one stage (a server's max_tokens) equals the relay built with that max_new, and its stage
// callbacks report every run as it ends. A request may run one stage alone (only_stage: a
// server's adapter slots) beside whole relays in the same steps.
//
// Mutation checks (2026-12-03), each alone, this program rebuilt:
//   the accept rule's max_new test off by one (kernels/accept.hpp) -> fails
//   LoRA from the batch's first row's adapter for every row          -> results differ
//   (2026-12-04) the request's cap not passed to Stage::open           -> capped runs differ
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <tuple>
#include <vector>

#include "baton/baton.hpp"
#include "baton/relay/scheduler.hpp"
#include "support/expect_error.hpp"
#include "support/scheduler_world.hpp"
#include "support/test_paths.hpp"

using namespace baton;

namespace {

using World = test::SchedulerWorld<host>;
using StageT = World::StageT;
constexpr auto ids = test::scheduler_ids;
constexpr auto relay_options = test::scheduler_relay_options;
constexpr auto check_same = test::check_same_result;

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
  for (const auto& [ticket, index] : which) {
    const std::size_t k = index;  // CAPTURE takes it in a lambda: not a structured binding
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

TEST_CASE("scheduler: a request's own max_new on one stage; stage runs reported as they end") {
  World batched(2), alone(1), capped_alone(1, 3);
  const RelayOptions opt = relay_options();
  RelayEngine<host> engine(alone.bases()), capped_engine(capped_alone.bases());
  RelayScheduler<StageT> sched(batched.ptrs(), relay_options(),
                               {.max_rows = 6, .max_tokens = 32, .max_queue = 8});
  std::map<Ticket, std::vector<StageRun>> ended;
  std::map<Ticket, std::size_t> which;
  std::vector<std::vector<std::int32_t>> requests;
  for (int k = 0; k < 6; ++k) requests.push_back(ids(3 + 2 * k, 40 + k));
  for (std::size_t k = 0; k < requests.size(); ++k) {
    RequestOptions o;
    o.on_stage = [&ended](Ticket t, const StageRun& r) { ended[t].push_back(r); };
    // Even requests cap reason at 3 tokens; request 5 asks for more than the stage's 8 (no cap).
    if (k % 2 == 0 || k == 5) {
      o.stage = 1;
      o.own.max_new = k == 5 ? 100 : 3;
    }
    which[sched.submit(requests[k], std::move(o))] = k;
  }
  sched.run();
  int capped_runs = 0;
  for (const auto& [ticket, index] : which) {
    const std::size_t k = index;
    CAPTURE(k);
    const auto got = sched.take(ticket);
    REQUIRE(got.has_value());
    const RelayResult want = (k % 2 == 0 ? capped_engine : engine).run(requests[k], opt);
    CHECK(got->verdict == want.verdict);
    CHECK(got->cycles == want.cycles);
    REQUIRE(got->runs.size() == want.runs.size());
    const std::vector<StageRun>& seen = ended[ticket];
    REQUIRE(seen.size() == want.runs.size());
    for (std::size_t r = 0; r < want.runs.size(); ++r) {
      CAPTURE(r);
      CHECK(got->runs[r].stage == want.runs[r].stage);
      CHECK(got->runs[r].ids == want.runs[r].ids);
      CHECK(seen[r].stage == want.runs[r].stage);
      CHECK(seen[r].cycle == want.runs[r].cycle);
      CHECK(seen[r].ids == want.runs[r].ids);
      capped_runs += k % 2 == 0 && want.runs[r].stage == 1;
      if (want.runs[r].stage == 1) CHECK(want.runs[r].ids.size() == (k % 2 == 0 ? 3u : 8u));
    }
  }
  CHECK(capped_runs >= 3);
  RequestOptions no_stage;
  no_stage.stage = 3;
  no_stage.own.max_new = 2;
  EXPECT_ERROR(usage_error, sched.submit(ids(4, 1), std::move(no_stage)), "for stage 3",
               "the relay has 3 stages");
  RequestOptions negative;
  negative.stage = 1;
  negative.own.max_new = -1;
  EXPECT_ERROR(usage_error, sched.submit(ids(4, 1), std::move(negative)), "max_new cap -1");
  RequestOptions stops;
  stops.own.stop = {"x"};  // the test's stages have a chain without a RequestStops member
  EXPECT_ERROR(usage_error, sched.submit(ids(4, 1), std::move(stops)),
               "takes no per-request stop strings");
  CHECK(sched.idle());
}

TEST_CASE("scheduler: decode rows go first; arrivals' prefills take what the budget leaves") {
  // Requests past their prefill keep a token every step while later arrivals' long inputs go
  // in beside them in chunks: each stage run's tokens come on consecutive steps, and every
  // result still equals the request alone.
  // Mutation check (2026-12-06): prefill chunks sized without the decode rows' reservation
  // (prefill_room() returning max_tokens - tokens) -> stage runs skip steps, this fails.
  World batched(4), alone(1);
  const RelayOptions opt = relay_options();
  RelayEngine<host> engine(alone.bases());
  RelayScheduler<StageT> sched(batched.ptrs(), relay_options(),
                               {.max_rows = 8, .max_tokens = 12, .max_queue = 64});
  int step = 0;
  std::map<std::tuple<Ticket, int, int>, std::vector<int>> token_steps;  // per stage run
  const auto on_token = [&](Ticket t, int stage, int cycle, std::int32_t) {
    token_steps[{t, stage, cycle}].push_back(step);
  };
  std::vector<std::vector<std::int32_t>> requests;
  std::map<Ticket, std::size_t> which;
  const auto submit = [&](std::vector<std::int32_t> r) {
    requests.push_back(std::move(r));
    which[sched.submit(requests.back(), on_token)] = requests.size() - 1;
  };
  for (int k = 0; k < 4; ++k) submit(ids(2, 40 + k));  // short: decoding within a few steps
  int prefill_and_decode = 0;
  while (step < 14 || !sched.idle()) {
    if (step >= 1 && step <= 12) submit(ids(30, 60 + step));  // long: three chunks or more
    const SchedulerStep s = sched.step();
    CHECK(s.tokens <= 12);
    if (s.prefill_rows > 0 && s.decode_rows > 0) ++prefill_and_decode;
    REQUIRE(++step < 2000);
  }
  CHECK(prefill_and_decode > 10);  // the two really shared steps
  for (const auto& [run, steps] : token_steps) {
    const Ticket ticket = std::get<0>(run);  // (CAPTURE takes copies, not structured bindings)
    const int stage = std::get<1>(run), cycle = std::get<2>(run);
    CAPTURE(ticket);
    CAPTURE(stage);
    CAPTURE(cycle);
    for (std::size_t i = 1; i < steps.size(); ++i) CHECK(steps[i] - steps[i - 1] == 1);
  }
  for (const auto& [ticket, index] : which) {
    const std::size_t k = index;
    CAPTURE(k);
    const auto got = sched.take(ticket);
    REQUIRE(got.has_value());
    check_same(*got, engine.run(requests[k], opt));
  }
}

TEST_CASE("scheduler: a request may run one stage alone (only_stage), in the steps of others") {
  // What a server's adapter slots do (tools/serve/adapter_table.hpp): requests run extract (an
  // adapter, a prefix, literal + request input) alone, as their whole relay, beside whole
  // relays in the same steps; each alone-run equals the first run of the same request through
  // the sequential relay (extract's output reads nothing later), reported as stage 0 of a
  // one-stage, one-cycle relay without a gate. A stage that reads another's output cannot run
  // alone.
  World batched(3), alone(1);
  const RelayOptions opt = relay_options();
  RelayEngine<host> engine(alone.bases());
  RelayScheduler<StageT> sched(batched.ptrs(), relay_options(),
                               {.max_rows = 8, .max_tokens = 48, .max_queue = 64});
  std::vector<std::vector<std::int32_t>> requests;
  for (int k = 0; k < 8; ++k) requests.push_back(ids(3 + k, 70 + k));
  std::map<Ticket, std::size_t> whole, first;
  std::map<Ticket, std::vector<int>> streamed_stages;
  int running_seen = 0;
  for (std::size_t k = 0; k < requests.size(); ++k) {
    RequestOptions o;
    o.on_token = [&](Ticket t, int stage, int, std::int32_t) {
      streamed_stages[t].push_back(stage);
    };
    if (k % 2 == 0) {
      whole[sched.submit(requests[k], std::move(o))] = k;
    } else {
      o.only_stage = 0;
      first[sched.submit(requests[k], std::move(o))] = k;
    }
  }
  int most_rows = 0;
  while (!sched.idle()) {
    most_rows = std::max(most_rows, sched.step().rows);
    running_seen = std::max(running_seen, sched.running());
  }
  CHECK(most_rows > 4);  // whole relays and alone-runs shared steps
  CHECK(running_seen > 1);
  CHECK(sched.running() == 0);
  for (const auto& [ticket, index] : whole) {
    const std::size_t k = index;
    CAPTURE(k);
    check_same(*sched.take(ticket), engine.run(requests[k], opt));
  }
  for (const auto& [ticket, index] : first) {
    const std::size_t k = index;
    CAPTURE(k);
    const auto got = sched.take(ticket);
    REQUIRE(got.has_value());
    const RelayResult want = engine.run(requests[k], opt);
    REQUIRE(got->runs.size() == 1);
    CHECK(got->runs[0].stage == 0);
    CHECK(got->runs[0].name == "extract");
    CHECK(got->runs[0].ids == want.runs[0].ids);
    CHECK(got->runs[0].input_tokens == want.runs[0].input_tokens);
    CHECK(got->cycles == 1);
    CHECK(got->verdict == Verdict::pass);  // no gate
    CHECK(streamed_stages[ticket] == std::vector<int>(want.runs[0].ids.size(), 0));
  }
  RequestOptions reads_output;
  reads_output.only_stage = 1;  // reason reads extract's output and verify's feedback
  EXPECT_ERROR(usage_error, sched.submit(requests[0], reads_output),
               "stage 'reason' reads another stage's output");
  RequestOptions past;
  past.only_stage = 3;
  EXPECT_ERROR(usage_error, sched.submit(requests[0], past), "only_stage 3 (the relay has 3");
}
