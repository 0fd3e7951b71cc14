// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The interleave gate: two requests interleaved step by step through one stage (two slots),
// with stateful interceptors on, produce exactly the tokens each produces alone. The gate is
// shown to catch the bug it exists for: an interceptor that keeps its state in a static makes
// the interleaved runs differ (the mutant is a test-only type). And exceptions thrown from a
// hook leave the stage, its cache and other requests' sessions usable and exact.
#include <doctest/doctest.h>

#include "baton/intercept/builtins.hpp"
#include "support/intercept_fixture.hpp"
#include "support/schedule_constraint.hpp"

using namespace baton;
using namespace baton::test;
using namespace baton::wire;

namespace {

const std::vector<std::int32_t> kPrefix = {2, 7, 18, 28};
const std::vector<std::int32_t> kA = {11, 12, 13};
const std::vector<std::int32_t> kB = {40, 41, 42, 43, 44};
constexpr KvShape kShape{.prefix_capacity = 16, .tail_capacity = 64, .slots = 2};
constexpr int kMaxNew = 14;

/// The mutant: Schedule with its step counter in a static (reset when a branch opens), the
/// mistake the per-request state exists to prevent. Alone it behaves; interleaved, two
/// requests advance one counter.
struct StaticSchedule {
  static constexpr std::string_view plugin_id = "test.static_schedule";
  static constexpr bool distribution_altering = true;
  static constexpr bool graph_safe = true;
  using params_type = Schedule::params_type;
  struct state_type {};
  static inline std::int32_t step = 0;  // the bug
  Schedule inner = mixed_schedule();

  params_type params() const { return inner.params(); }
  state_type initial_state(const BranchInfo&) const {
    step = 0;
    return {};
  }
  static float transform_logit(const params_type& p, const state_type&, std::int32_t id,
                               float logit) {
    return Schedule::transform_logit(p, {step}, id, logit);
  }
  static StepAction advance(const params_type&, state_type&, std::int32_t) {
    ++step;
    return StepAction::go_on;
  }
  static std::int32_t forced_token(const params_type& p, const state_type&) {
    return Schedule::forced_token(p, {step});
  }
};

struct GateRuns {
  std::vector<std::int32_t> alone_a, alone_b, mixed_a, mixed_b;
  bool holds() const { return mixed_a == alone_a && mixed_b == alone_b; }
};

/// Runs A alone (slot 0), B alone (slot 1), then both interleaved one step at a time.
template <class StageT>
GateRuns interleave(StageT& st) {
  GateRuns g;
  g.alone_a = st.run(kA, 0).ids;
  g.alone_b = st.run(kB, 1).ids;
  auto sa = st.begin(kA, 0);
  auto sb = st.begin(kB, 1);
  bool ra = true, rb = true;
  while (ra || rb) {
    if (ra) ra = st.step(sa);
    if (rb) rb = st.step(sb);
  }
  g.mixed_a = st.finish(sa).ids;
  g.mixed_b = st.finish(sb).ids;
  return g;
}

/// A host hook that throws at a chosen step from a chosen hook (configuration, not state).
struct ThrowFrom {
  enum Hook { before = 0, transform = 1, after = 2 };
  static constexpr std::string_view plugin_id = "test.throw_from";
  static constexpr bool distribution_altering = true;
  static constexpr bool graph_safe = false;
  struct state_type {};
  const int* hook;     // which hook throws
  const int* at_step;  // at which step (< 0: never)
  state_type initial_state(const BranchInfo&) const { return {}; }
  void maybe_throw(Hook h, int step) const {
    if (*hook == h && *at_step == step) throw usage_error("hook failure");
  }
  std::optional<std::int32_t> before_step(state_type&, const StepPlan& p) const {
    maybe_throw(before, p.step);
    return std::nullopt;
  }
  void transform_logits(state_type&, const StepPlan& p, std::span<float>) const {
    maybe_throw(transform, p.step);
  }
  StepAction after_step(state_type&, const StepOutcome& o) const {
    maybe_throw(after, o.plan.step);
    return StepAction::go_on;
  }
};

}  // namespace

TEST_CASE("interleave gate: interleaved requests with stateful interceptors equal separate runs") {
  RelayFixture f("gate");
  auto st = make_stage<RCache>("gated", *f.model, f.slice(1), kShape, kPrefix, input(request),
                               {.max_new = kMaxNew},
                               Chain{mixed_schedule(), TraceRecorder{}, StepSkip{}});
  st.prewarm();
  const GateRuns g = interleave(st);
  CHECK(g.holds());
  // And each is the constrained reference decode of its own request.
  const NaiveModel ref(f.tm, &f.adapters[1]);
  const Schedule sched = mixed_schedule();
  const auto rule = [&](const std::vector<int>& out, int id) {
    return sched.allows(out.size(), id);
  };
  CHECK(as_int(g.alone_a) ==
        constrained_greedy(ref, as_int(concat({kPrefix, kA})), kMaxNew, rule).ids);
  CHECK(as_int(g.alone_b) ==
        constrained_greedy(ref, as_int(concat({kPrefix, kB})), kMaxNew, rule).ids);
  CHECK(g.alone_a != g.alone_b);
}

TEST_CASE("interleave gate catches state kept in a static (mutant interceptor)") {
  RelayFixture f("gate_mutant");
  auto st = make_stage<RCache>("mutant", *f.model, f.slice(1), kShape, kPrefix, input(request),
                               {.max_new = kMaxNew}, Chain{StaticSchedule{}, StepSkip{}});
  st.prewarm();
  const GateRuns g = interleave(st);
  // Alone, the mutant decodes exactly like the correct interceptor...
  auto good = make_stage<RCache>("good", *f.model, f.slice(1), kShape, kPrefix, input(request),
                                 {.max_new = kMaxNew}, Chain{mixed_schedule(), StepSkip{}});
  good.prewarm();
  CHECK(g.alone_a == good.run(kA, 0).ids);
  CHECK(g.alone_b == good.run(kB, 1).ids);
  // ...and the gate detects it: interleaved, the outputs differ from the separate runs.
  CHECK_FALSE(g.holds());
}

TEST_CASE("an exception from any hook leaves the stage, its cache and other sessions exact") {
  RelayFixture f("hook_throw");
  int hook = -1, at_step = -1;
  auto st = make_stage<RCache>("throwing", *f.model, f.slice(0), kShape, kPrefix, input(request),
                               {.max_new = kMaxNew},
                               Chain{mixed_schedule(), ThrowFrom{&hook, &at_step}, StepSkip{}});
  st.prewarm();
  const auto clean_a = st.run(kA, 0).ids;
  const auto clean_b = st.run(kB, 1).ids;

  for (int h : {ThrowFrom::before, ThrowFrom::transform, ThrowFrom::after}) {
    CAPTURE(h);
    // B runs on slot 1 while A fails mid-request on slot 0 (step 4 has a choice, so the
    // transform hook runs there).
    auto sb = st.begin(kB, 1);
    for (int k = 0; k < 3; ++k) st.step(sb);
    hook = h;
    at_step = 4;
    {
      auto sa = st.begin(kA, 0);
      CHECK_THROWS_WITH_AS(
          [&] {
            while (st.step(sa)) {
            }
          }(),
          "hook failure", usage_error);
    }  // the abandoned session frees slot 0
    at_step = -1;
    while (st.step(sb)) {
    }
    CHECK(st.finish(sb).ids == clean_b);
    CHECK(st.cache().prefix_length() == static_cast<int>(kPrefix.size()));
    CHECK(st.run(kA, 0).ids == clean_a);  // the next request on the failed slot is exact
  }
  // Through a relay too: the engine reports the failure, the next run is exact.
  Relay relay{st};
  hook = ThrowFrom::after;
  at_step = 2;
  const RelayResult failed = relay.try_run(kA);
  CHECK(failed.verdict == Verdict::error);
  CHECK(failed.error.find("hook failure") != std::string::npos);
  at_step = -1;
  CHECK(relay.run(kA).output(0) == clean_a);
}
