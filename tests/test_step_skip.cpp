// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Step-skip: when the constraint leaves one token, no model forward runs for that step and the
// skipped tokens' K/V is written by the next forward, in one batch. The output must equal the
// unskipped constrained run (and the naive reference's constrained decode) with fewer forwards.
//
// Fixtures and their margins (printed by the test; figures from the naive f64 reference at
// the steps with a choice, all three adapters of the relay fixture, mixed_schedule()):
// a batched catch-up forward sums in another order than single-token forwards, so a near-tie
// could flip; the smallest top-2 margin is stated, and the float logits of the two runs are
// compared at those steps.
#include <doctest/doctest.h>

#include <cmath>

#include "baton/intercept/builtins.hpp"
#include "support/intercept_fixture.hpp"
#include "support/schedule_constraint.hpp"

using namespace baton;
using namespace baton::test;
using namespace baton::wire;

namespace {

const std::vector<std::int32_t>& kPrefix = kInterceptPrefix;
const std::vector<std::int32_t>& kRequest = kInterceptRequest;
constexpr KvShape kShape = kInterceptShape;
constexpr int kMaxNew = 16;

/// Host observer (not altering): keeps the logits row of every step that ran the model.
struct KeepLogits {
  static constexpr std::string_view plugin_id = "test.keep_logits";
  static constexpr bool distribution_altering = false;
  static constexpr bool graph_safe = false;
  struct state_type {
    std::vector<std::vector<float>> rows;  // [step] (empty when skipped)
  };
  state_type initial_state(const BranchInfo&) const { return {}; }
  std::optional<std::int32_t> before_step(state_type&, const StepPlan&) const {
    return std::nullopt;
  }
  StepAction after_step(state_type& s, const StepOutcome& o) const {
    s.rows.emplace_back(o.logits.begin(), o.logits.end());
    return StepAction::go_on;
  }
};

struct Run {
  DecodeResult result;
  std::vector<std::vector<float>> logits;
};

template <class C>
Run run_stage(const RelayFixture& f, int adapter, C chain) {
  auto st = make_stage<RCache>("skip", *f.model, f.slice(adapter), kShape, kPrefix, input(request),
                               {.max_new = kMaxNew}, std::move(chain));
  st.prewarm();
  auto s = st.begin(kRequest, 0);
  while (st.step(s)) {
  }
  Run r;
  r.logits = s.branch().template state<1>().rows;
  r.result = st.finish(s);
  return r;
}

}  // namespace

TEST_CASE("step-skip: same tokens as the unskipped constrained run, fewer forwards") {
  RelayFixture f("step_skip");
  const Schedule sched = mixed_schedule();
  int choice_steps_after_first = 0;
  for (int k = 1; k < kMaxNew; ++k) choice_steps_after_first += sched.forced(k) ? 0 : 1;
  REQUIRE(choice_steps_after_first == 6);

  for (int adapter = 0; adapter < 3; ++adapter) {
    CAPTURE(adapter);
    const Run plain = run_stage(f, adapter, Chain{mixed_schedule(), KeepLogits{}});
    const Run skip = run_stage(f, adapter, Chain{mixed_schedule(), KeepLogits{}, StepSkip{}});

    // The reference: constrained greedy on the naive f64 model, and its margins.
    const NaiveModel ref(f.tm, &f.adapters[adapter]);
    const auto want = constrained_greedy(
        ref, as_int(concat({kPrefix, kRequest})), kMaxNew,
        [&](const std::vector<int>& out, int id) { return sched.allows(out.size(), id); });
    double min_margin = INFINITY;
    for (int k = 0; k < kMaxNew; ++k)
      if (!sched.forced(k)) min_margin = std::min(min_margin, want.margins[k]);

    CHECK(as_int(plain.result.ids) == want.ids);
    CHECK(skip.result.ids == plain.result.ids);
    // Forwards: the prefill, then one per step (unskipped: every step after the first; skipped:
    // only the steps with a choice, each feeding the tokens skipped since the last forward).
    CHECK(plain.result.forwards == kMaxNew);
    CHECK(plain.result.skipped == 0);
    CHECK(skip.result.forwards == 1 + choice_steps_after_first);
    CHECK(skip.result.skipped == 9);

    // The float logits of the two runs at the steps with a choice: how far the batched
    // catch-up rounds from single steps, against the smallest margin.
    double max_diff = 0;
    for (int k = 0; k < kMaxNew; ++k) {
      if (sched.forced(k)) {
        CHECK(skip.logits[k].empty());
        continue;
      }
      REQUIRE(skip.logits[k].size() == plain.logits[k].size());
      for (std::size_t i = 0; i < plain.logits[k].size(); ++i) {
        const float a = plain.logits[k][i], b = skip.logits[k][i];
        if (!std::isfinite(a)) {  // masked by the schedule in both runs
          CHECK(a == b);
          continue;
        }
        max_diff = std::max(max_diff, std::abs(static_cast<double>(b) - a));
      }
    }
    MESSAGE("adapter " << adapter << ": forwards " << plain.result.forwards << " unskipped vs "
                       << skip.result.forwards << " skipped; smallest top-2 margin at a choice "
                       << min_margin << "; max |logit(skip) - logit(plain)| " << max_diff);
    CHECK(min_margin > 1e-2);           // the fixture is far from a tie...
    CHECK(max_diff < min_margin / 10);  // ...compared with how the two runs round
  }
}

TEST_CASE("step-skip with a one-id token set: no forward after the prefill") {
  RelayFixture f("step_skip_single");
  const int vocab = f.tm.cfg.vocab_size;
  auto st = make_stage<RCache>(
      "one", *f.model, f.slice(0), kShape, kPrefix, input(request), {.max_new = 6},
      Chain{TokenSet<host>::allow(std::vector<std::int32_t>{17}, vocab), StepSkip{}});
  st.prewarm();
  const DecodeResult r = st.run(kRequest);
  CHECK(r.ids == std::vector<std::int32_t>(6, 17));
  CHECK(r.forwards == 1);
  CHECK(r.skipped == 6);
  CHECK(r.host_waits == 6);
  // The stage still serves an exact request on the same slot afterwards.
  auto plain = make_stage<RCache>("plain", *f.model, f.slice(0), kShape, kPrefix, input(request),
                                  {.max_new = 6});
  plain.prewarm();
  CHECK(plain.run(kRequest).ids == f.reference(0, kPrefix, kRequest, 6));
}
