// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Stages and relays against manual chaining of no-cache reference decodes.
//
// Mutation checks (run on 2026-11-29 against a patched copy of include/; results):
//   - KvBuffer::reset_prefix without `prefix_len_ = 0`
//       -> "re-pre-warm ..." fails: position_error "write to the prefix expected at position 0
//          but the write position is 6" (the prototype's counter bug, now caught)
//   - KvBuffer::check_write without the position comparison
//       -> "a forward at the wrong position ..." fails (no throw; the slot position moved)
//   - both removed -> "re-pre-warm ..." fails with a prefix length of 12 instead of 6 and an
//       output that differs from the reference; the wrong-position forward writes before the
//       slot's block and the test program aborts (heap corruption), which is what the check
//       exists to prevent
//   - Stage::prewarm without cache_.reset_prefix() -> "re-pre-warm ..." fails (usage_error:
//       the prefix is frozen)
//   - rsLoRA scale ignored in AdapterConfig::scale_for -> the chain and cycle cases fail
//       (stage "reason" uses an rsLoRA adapter)
#include <doctest/doctest.h>

#include "support/relay_fixture.hpp"

using namespace baton;
using namespace baton::test;
using namespace baton::wire;

namespace {

const std::vector<std::int32_t> kPrefixA = {3, 14, 15, 9, 26, 5};
const std::vector<std::int32_t> kPrefixB = {2, 7, 18, 28};
const std::vector<std::int32_t> kPrefixC = {1, 41, 42, 13, 56, 23, 7};
const std::vector<std::int32_t> kRequest = {11, 12, 13, 30, 31};
constexpr KvShape kShape{.prefix_capacity = 16, .tail_capacity = 96, .slots = 2};

}  // namespace

TEST_CASE("one stage: output equals the no-cache reference on prefix + input") {
  RelayFixture f("one");
  auto st = make_stage<RCache>("solo", *f.model, f.slice(0), kShape, kPrefixA,
                               input(ids({60, 61}), request), {.max_new = 10});
  Relay relay{st};
  CHECK_THROWS_AS(relay.run(kRequest), usage_error);  // cold: never pre-warmed
  relay.prewarm();
  const RelayResult r = relay.run(kRequest);
  CHECK(r.output(0) == f.reference(0, kPrefixA, concat({{60, 61}, kRequest}), 10));
  CHECK(r.cycles == 1);
  CHECK(r.verdict == Verdict::pass);  // no gate: one cycle passes
  // A second request starts from the prefix again (the slot rewound), same answer.
  CHECK(relay.run(kRequest).output(0) == r.output(0));
}

TEST_CASE("two and three stages hand token ids on: equal to chained reference decodes") {
  RelayFixture f("chain");
  auto extract = make_stage<RCache>("extract", *f.model, f.slice(0), kShape, kPrefixA,
                                    input(ids({60}), request, ids({61})), {.max_new = 8});
  auto reason = make_stage<RCache>("reason", *f.model, f.slice(1), kShape, kPrefixB,
                                   input(request, out<0>), {.max_new = 9});
  auto verify = make_stage<RCache>("verify", *f.model, f.slice(2), kShape, kPrefixC,
                                   input(out<1>, ids({62}), out<0>), {.max_new = 4});
  const auto e = f.reference(0, kPrefixA, concat({{60}, kRequest, {61}}), 8);
  const auto rs = f.reference(1, kPrefixB, concat({kRequest, e}), 9);
  const auto v = f.reference(2, kPrefixC, concat({rs, {62}, e}), 4);

  SUBCASE("two stages") {
    Relay relay{extract, reason};
    relay.prewarm();
    const RelayResult r = relay.run(kRequest);
    CHECK(r.output(0) == e);
    CHECK(r.output(1) == rs);
  }
  SUBCASE("three stages") {
    Relay relay{extract, reason, verify};
    relay.prewarm();
    const RelayResult r = relay.run(kRequest);
    CHECK(r.output(0) == e);
    CHECK(r.output(1) == rs);
    CHECK(r.output(2) == v);
    CHECK(r.runs.size() == 3);
    for (const StageRun& run : r.runs) CHECK(run.ms > 0);
    CHECK(r.total_ms >= r.stage_ms(0) + r.stage_ms(1) + r.stage_ms(2));
  }
}

TEST_CASE("cycles with feedback equal the reference chain, and the gate ends them") {
  RelayFixture f("cycles");
  auto extract = make_stage<RCache>("extract", *f.model, f.slice(0), kShape, kPrefixA,
                                    input(request), {.max_new = 6});
  auto reason = make_stage<RCache>("reason", *f.model, f.slice(1), kShape, kPrefixB,
                                   input(request, out<0>, ids({63}), feedback<2>), {.max_new = 7});
  auto verify = make_stage<RCache>("verify", *f.model, f.slice(2), kShape, kPrefixC, input(out<1>),
                                   {.max_new = 3});
  Relay relay{extract, reason, verify};
  relay.prewarm();

  // The reference chain for three cycles, looping from stage 1 with verify's verdict fed back.
  const auto e = f.reference(0, kPrefixA, kRequest, 6);
  std::vector<std::vector<std::int32_t>> rs, v;
  std::vector<std::int32_t> verdict;  // empty in cycle 1
  for (int c = 0; c < 3; ++c) {
    rs.push_back(f.reference(1, kPrefixB, concat({kRequest, e, {63}, verdict}), 7));
    v.push_back(f.reference(2, kPrefixC, rs.back(), 3));
    verdict = v.back();
  }
  REQUIRE(rs[0] != rs[1]);  // the feedback changes what reason says (else the test proves little)

  SUBCASE("cycles exhausted: verdict fail, every cycle's outputs, timings set") {
    const RelayResult r = relay.run(kRequest, {.max_cycles = 3, .gate = never()});
    CHECK(r.verdict == Verdict::fail);
    CHECK(r.cycles == 3);
    CHECK(r.runs.size() == 3 + 2 + 2);  // extract runs once; reason and verify every cycle
    CHECK(r.output(0, 1) == e);
    for (int c = 0; c < 3; ++c) {
      CHECK(r.output(1, c + 1) == rs[c]);
      CHECK(r.output(2, c + 1) == v[c]);
    }
    CHECK(r.total_ms > 0);
    for (const StageRun& run : r.runs) CHECK(run.ms > 0);
  }
  SUBCASE("early pass: the gate passes on cycle 2's verdict") {
    const RelayResult r = relay.run(
        kRequest, {.max_cycles = 3,
                   .gate = starts_with(std::vector<std::int32_t>(v[1].begin(), v[1].begin() + 2))});
    REQUIRE(std::vector<std::int32_t>(v[0].begin(), v[0].begin() + 2) !=
            std::vector<std::int32_t>(v[1].begin(), v[1].begin() + 2));
    CHECK(r.verdict == Verdict::pass);
    CHECK(r.cycles == 2);
    CHECK(r.output(2) == v[1]);
    CHECK(r.total_ms > 0);
  }
  SUBCASE("pass on the first cycle: cycles = 1, timings set") {
    const RelayResult r = relay.run(kRequest, {.max_cycles = 3, .gate = contains({v[0][0]})});
    CHECK(r.verdict == Verdict::pass);
    CHECK(r.cycles == 1);
    CHECK(r.runs.size() == 3);
    CHECK(r.total_ms > 0);
  }
  SUBCASE("loop from the first stage") {
    const RelayResult r = relay.run(kRequest, {.max_cycles = 2, .loop_from = 0, .gate = never()});
    CHECK(r.runs.size() == 6);
    CHECK(r.output(0, 2) == e);
  }
}

TEST_CASE("re-pre-warm after new adapter weights: cold until pre-warmed, then the new reference") {
  RelayFixture f("reprewarm");
  auto st = make_stage<RCache>("s", *f.model, f.slice(0), kShape, kPrefixA, input(request),
                               {.max_new = 8});
  st.prewarm();
  CHECK(st.run(kRequest).ids == f.reference(0, kPrefixA, kRequest, 8));
  st.set_slice(f.slice(1));
  CHECK_FALSE(st.warm());
  CHECK_THROWS_WITH_AS(st.run(kRequest), doctest::Contains("cold"), usage_error);
  st.prewarm();
  CHECK(st.cache().prefix_length() == static_cast<int>(kPrefixA.size()));
  CHECK(st.run(kRequest).ids == f.reference(1, kPrefixA, kRequest, 8));
  st.prewarm();  // again, same weights: still exact
  CHECK(st.run(kRequest).ids == f.reference(1, kPrefixA, kRequest, 8));
}

TEST_CASE("capacity: a prefix that does not fit, and an append past the slot") {
  RelayFixture f("capacity");
  std::vector<std::int32_t> long_prefix(17, 5);
  CHECK_THROWS_WITH_AS(
      make_stage<RCache>("big", *f.model, f.slice(0), kShape, long_prefix, input(request),
                         {.max_new = 4}),
      doctest::Contains("prefix has 17 tokens but the cache's prefix capacity is 16"),
      capacity_error);
  auto st = make_stage<RCache>("s", *f.model, f.slice(0), {16, 12, 1}, kPrefixA, input(request),
                               {.max_new = 10});
  st.prewarm();
  // 5 input tokens + 9 fed-back tokens = 14 > 12: the forward of the 8th token throws.
  CHECK_THROWS_AS(st.run(kRequest), capacity_error);
  CHECK(st.cache().prefix_length() == 6);
  // An input that alone exceeds the slot throws before anything is written.
  CHECK_THROWS_AS(st.run(std::vector<std::int32_t>(13, 4)), capacity_error);
  // Nothing was corrupted: a request that fits gives the reference answer.
  const std::vector<std::int32_t> small = {11, 12};
  CHECK(st.run(small).ids == f.reference(0, kPrefixA, small, 10));
}

namespace {
/// A user hook that throws at a chosen step of a chosen request (counted in the session state).
struct ThrowAtStep {
  static constexpr std::string_view plugin_id = "test.throw_at_step";
  static constexpr bool distribution_altering = false;
  static constexpr bool graph_safe = false;
  struct state_type {
    int steps = 0;
  };
  int* arm;  // when *arm > 0, throw at that step, then disarm
  state_type initial_state(const BranchInfo&) const { return {}; }
  std::optional<std::int32_t> before_step(state_type& s, const StepPlan&) const {
    if (*arm > 0 && ++s.steps == *arm) {
      *arm = 0;
      throw usage_error("hook failure");
    }
    return std::nullopt;
  }
  StepAction after_step(state_type&, const StepOutcome&) const { return StepAction::go_on; }
};
}  // namespace

TEST_CASE("failure safety: a stage failing mid-request leaves the next request exact") {
  RelayFixture f("failure");
  int arm = 0;
  auto extract = make_stage<RCache>("extract", *f.model, f.slice(0), kShape, kPrefixA,
                                    input(request), {.max_new = 6});
  Stage<RModel, RSlice, RCache, Input<Request, Out<0>>, Chain<ThrowAtStep>> reason(
      "reason", *f.model, f.slice(1), kShape, kPrefixB, input(request, out<0>), {.max_new = 8},
      Chain{ThrowAtStep{&arm}});
  Relay relay{extract, reason};
  relay.prewarm();
  const RelayResult clean = relay.run(kRequest);

  arm = 4;  // the hook throws at reason's 4th step, mid-request
  const RelayResult failed = relay.try_run(kRequest);
  CHECK(failed.verdict == Verdict::error);
  CHECK(failed.error.find("hook failure") != std::string::npos);
  CHECK(failed.runs.size() == 2);
  CHECK(failed.total_ms > 0);
  CHECK(failed.runs[1].ms > 0);
  CHECK(reason.cache().prefix_length() == static_cast<int>(kPrefixB.size()));

  arm = 2;
  CHECK_THROWS_WITH(relay.run(kRequest), doctest::Contains("hook failure"));

  const RelayResult after = relay.run(kRequest);
  CHECK(after.output(0) == clean.output(0));
  CHECK(after.output(1) == clean.output(1));
  CHECK(after.output(1) == f.reference(1, kPrefixB, concat({kRequest, clean.output(0)}), 8));

  // A throwing gate (a user hook too) is caught by try_run with timings set.
  const RelayResult gate_failed = relay.try_run(
      kRequest, {.gate = [](std::span<const std::int32_t>) -> bool { throw usage_error("gate"); }});
  CHECK(gate_failed.verdict == Verdict::error);
  CHECK(gate_failed.total_ms > 0);
  CHECK(relay.run(kRequest).output(1) == clean.output(1));
}

TEST_CASE("sessions on different slots interleave step by step without mixing") {
  RelayFixture f("sessions");
  auto st = make_stage<RCache>("s", *f.model, f.slice(1), kShape, kPrefixA, input(request),
                               {.max_new = 9});
  st.prewarm();
  const std::vector<std::int32_t> a = {11, 12, 13}, b = {40, 41, 42, 43, 44};
  const auto alone_a = st.run(a, 0).ids;
  const auto alone_b = st.run(b, 1).ids;
  auto sa = st.begin(a, 0);
  auto sb = st.begin(b, 1);
  CHECK_THROWS_AS(st.begin(a, 0), usage_error);  // slot 0 is busy
  bool ra = true, rb = true;
  while (ra || rb) {
    if (ra) ra = st.step(sa);
    if (rb) rb = st.step(sb);
  }
  CHECK(st.finish(sa).ids == alone_a);
  CHECK(st.finish(sb).ids == alone_b);
  CHECK(alone_a == f.reference(1, kPrefixA, a, 9));
  CHECK(alone_b == f.reference(1, kPrefixA, b, 9));
}

TEST_CASE("stop ids end a stage's output, which excludes the stop token") {
  RelayFixture f("stop");
  const auto full = f.reference(0, kPrefixA, kRequest, 10);
  const std::int32_t stop = full[3];
  auto st = make_stage<RCache>("s", *f.model, f.slice(0), kShape, kPrefixA, input(request),
                               {.max_new = 10, .stop_ids = {stop}});
  st.prewarm();
  const DecodeResult g = st.run(kRequest);
  const auto first = std::find(full.begin(), full.end(), stop);
  CHECK(g.ids == std::vector<std::int32_t>(full.begin(), first));
  CHECK(g.stopped);
  CHECK(g.stop_id == stop);
}

TEST_CASE("a run-time relay validates its wiring at construction, naming stage and segment") {
  RelayFixture f("dynamic");
  using DStage = Stage<RModel, RSlice, RCache>;
  const auto seg_out = [](int k) { return Segment{Segment::Kind::output, k, {}}; };
  const auto seg_req = Segment{Segment::Kind::request, -1, {}};
  DStage s0("a", *f.model, f.slice(0), kShape, kPrefixA, DynamicInput{{seg_req}}, {.max_new = 4});
  DStage s1("b", *f.model, f.slice(1), kShape, kPrefixB, DynamicInput{{seg_req, seg_out(1)}},
            {.max_new = 4});
  CHECK_THROWS_WITH_AS(
      RelayEngine<host>({&s0, &s1}),
      doctest::Contains(
          "stage 1 'b' segment 1 (out<1>): a stage may only read the output of an earlier stage"),
      wiring_error);
  DStage s2("c", *f.model, f.slice(1), kShape, kPrefixB,
            DynamicInput{{seg_req, Segment{Segment::Kind::feedback, 5, {}}}}, {.max_new = 4});
  CHECK_THROWS_WITH_AS(RelayEngine<host>({&s0, &s2}), doctest::Contains("feedback<5>"),
                       wiring_error);
  DStage s3("a", *f.model, f.slice(1), kShape, kPrefixB, DynamicInput{{seg_req, seg_out(0)}},
            {.max_new = 4});
  CHECK_THROWS_WITH_AS(RelayEngine<host>({&s0, &s3}), doctest::Contains("both named 'a'"),
                       wiring_error);
  // Valid wiring runs, and equals the typed relay's answer.
  DStage s4("d", *f.model, f.slice(1), kShape, kPrefixB, DynamicInput{{seg_req, seg_out(0)}},
            {.max_new = 4});
  RelayEngine<host> engine({&s0, &s4});
  engine.prewarm();
  const RelayResult r = engine.run(kRequest, {});
  const auto e = f.reference(0, kPrefixA, kRequest, 4);
  CHECK(r.output(0) == e);
  CHECK(r.output(1) == f.reference(1, kPrefixB, concat({kRequest, e}), 4));
}

TEST_CASE("a forward at the wrong position throws before writing") {
  RelayFixture f("position");
  auto st = make_stage<RCache>("s", *f.model, f.slice(0), kShape, kPrefixA, input(request),
                               {.max_new = 5});
  st.prewarm();
  const auto want = st.run(kRequest).ids;
  // Drive the model directly against the stage's cache with a stale expected position:
  // slot 0 was rewound to the prefix length (6) by the request; 0 is wrong.
  RCache& cache = const_cast<RCache&>(st.cache());
  cache.rewind(0);
  Workspace<host> ws;
  const RSlice slice = f.slice(0);
  CHECK_THROWS_WITH_AS(forward(*f.model, ws, slice, cache, KvTarget::in_slot(0), 0,
                               std::span<const std::int32_t>(kRequest), Logits::last),
                       doctest::Contains("expected at position 0 but the write position is 6"),
                       position_error);
  CHECK(cache.position(KvTarget::in_slot(0)) == 6);
  CHECK_THROWS_AS(forward(*f.model, ws, slice, cache, KvTarget::prefix(), 6,
                          std::span<const std::int32_t>(kRequest), Logits::none),
                  usage_error);  // the prefix is frozen
  CHECK(st.run(kRequest).ids == want);
}
