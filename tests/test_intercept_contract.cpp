// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The interceptor contract: a device interceptor's transform and advance run in the Decoder's
// step on the host backend, a host interceptor's three hooks run in the stated order, chains
// derive their capabilities, and states live per request and branch. Outputs are checked
// against constrained greedy decoding on the naive f64 reference.
#include <doctest/doctest.h>

#include "support/intercept_fixture.hpp"

using namespace baton;
using namespace baton::test;
using namespace baton::wire;

namespace {

const std::vector<std::int32_t>& kPrefix = kInterceptPrefix;
const std::vector<std::int32_t>& kRequest = kInterceptRequest;
constexpr KvShape kShape = kInterceptShape;

/// Device kind, stateful: bans the token chosen at the previous step.
struct NoRepeat {
  static constexpr std::string_view plugin_id = "test.no_repeat";
  static constexpr bool distribution_altering = true;
  static constexpr bool graph_safe = true;
  struct params_type {};
  struct state_type {
    std::int32_t last = -1;
  };
  params_type params() const { return {}; }
  state_type initial_state(const BranchInfo&) const { return {}; }
  BATON_HD static float transform_logit(const params_type&, const state_type& s, std::int32_t id,
                                        float logit) {
    return id == s.last ? -kInfinity : logit;
  }
  BATON_HD static StepAction advance(const params_type&, state_type& s, std::int32_t token) {
    s.last = token;
    return StepAction::go_on;
  }
};

/// Host kind: masks odd ids and asks to stop after `stop_at + 1` tokens; records the plans.
struct EvenOnly {
  static constexpr std::string_view plugin_id = "test.even_only";
  static constexpr bool distribution_altering = true;
  static constexpr bool graph_safe = false;
  struct state_type {
    std::vector<StepPlan> plans;
    std::vector<int> order;  // 1 = before, 2 = transform, 3 = after
  };
  int stop_at = 3;
  state_type initial_state(const BranchInfo& info) const {
    state_type s;
    s.plans.reserve(static_cast<std::size_t>(info.max_new));
    return s;
  }
  std::optional<std::int32_t> before_step(state_type& s, const StepPlan& p) const {
    s.plans.push_back(p);
    s.order.push_back(1);
    return std::nullopt;
  }
  void transform_logits(state_type& s, const StepPlan&, std::span<float> row) const {
    s.order.push_back(2);
    for (std::size_t i = 1; i < row.size(); i += 2) row[i] = -kInfinity;
  }
  StepAction after_step(state_type& s, const StepOutcome& o) const {
    s.order.push_back(3);
    return o.plan.step == stop_at ? StepAction::stop : StepAction::go_on;
  }
};

static_assert(DeviceInterceptor<NoRepeat> && !HostInterceptor<NoRepeat>);
static_assert(HostInterceptor<EvenOnly> && !DeviceInterceptor<EvenOnly>);
static_assert(Chain<NoRepeat>::graph_safe && Chain<NoRepeat>::distribution_altering);
static_assert(!Chain<NoRepeat, EvenOnly>::graph_safe);
static_assert(!NoInterceptors::distribution_altering && NoInterceptors::graph_safe);
static_assert(std::is_trivially_copyable_v<Chain<NoRepeat, EvenOnly>::device_state>);

}  // namespace

TEST_CASE("a device interceptor's transform and advance run in the step (host backend)") {
  RelayFixture f("contract_device");
  auto st = make_stage<RCache>("s", *f.model, f.slice(0), kShape, kPrefix, input(request),
                               {.max_new = 14}, Chain{NoRepeat{}});
  st.prewarm();
  const auto got = st.run(kRequest).ids;

  const NaiveModel ref(f.tm, &f.adapters[0]);
  const auto seq = as_int(concat({kPrefix, kRequest}));
  const auto want = constrained_greedy(ref, seq, 14, [](const std::vector<int>& out, int id) {
    return out.empty() || id != out.back();
  });
  CHECK(as_int(got) == want.ids);
  // The constraint mattered: unconstrained greedy repeats a token somewhere.
  const auto free_run = ref.greedy(seq, 14);
  REQUIRE(free_run != want.ids);
  // A second request starts from fresh state (the ban from the last request is gone).
  CHECK(st.run(kRequest).ids == got);
}

TEST_CASE("a host interceptor: before_step sees the plan, transform masks, after_step stops") {
  RelayFixture f("contract_host");
  auto st = make_stage<RCache>("hosted", *f.model, f.slice(1), kShape, kPrefix, input(request),
                               {.max_new = 10}, Chain{EvenOnly{.stop_at = 3}});
  st.prewarm();
  auto s = st.begin(kRequest, 1);
  while (st.step(s)) {
  }
  const auto& state = s.branch().state<0>();
  const DecodeResult r = st.finish(s);

  const NaiveModel ref(f.tm, &f.adapters[1]);
  const auto want = constrained_greedy(
      ref, as_int(concat({kPrefix, kRequest})), 10,
      [](const std::vector<int>&, int id) { return id % 2 == 0; },
      [](const std::vector<int>& out) { return out.size() == 4; });
  CHECK(as_int(r.ids) == want.ids);  // the stop keeps the token it saw
  CHECK(r.ids.size() == 4);
  CHECK(r.stopped);
  CHECK(r.stopped_by == "test.even_only");
  CHECK(r.host_waits == 4);
  CHECK(r.forwards == 4);  // prefill + one per step after the first
  REQUIRE(state.plans.size() == 4);
  const int origin = static_cast<int>(kPrefix.size() + kRequest.size());
  for (int k = 0; k < 4; ++k) {
    CHECK(state.plans[k].stage == "hosted");
    CHECK(state.plans[k].step == k);
    CHECK(state.plans[k].position == origin + k);
    CHECK(state.plans[k].last_token == (k == 0 ? kRequest.back() : r.ids[k - 1]));
  }
  CHECK(state.order == std::vector<int>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3});
}

TEST_CASE("device then host members: both constraints hold, in one chain") {
  RelayFixture f("contract_both");
  auto st = make_stage<RCache>("both", *f.model, f.slice(2), kShape, kPrefix, input(request),
                               {.max_new = 9}, Chain{NoRepeat{}, EvenOnly{.stop_at = 99}});
  st.prewarm();
  const DecodeResult r = st.run(kRequest);
  const NaiveModel ref(f.tm, &f.adapters[2]);
  const auto want = constrained_greedy(ref, as_int(concat({kPrefix, kRequest})), 9,
                                       [](const std::vector<int>& out, int id) {
                                         return id % 2 == 0 && (out.empty() || id != out.back());
                                       });
  CHECK(as_int(r.ids) == want.ids);
  CHECK_FALSE(r.stopped);
}

TEST_CASE("request state: each branch opens with fresh states, names are unique") {
  const Chain chain{NoRepeat{}, EvenOnly{}};
  RequestState<std::remove_const_t<decltype(chain)>, host> req;
  auto& a = req.open(chain, "left", "stage", 8);
  pack_get<0>(a.device_on_host()).last = 42;
  auto& b = req.open(chain, "right", "stage", 8);
  CHECK(pack_get<0>(b.device_on_host()).last == -1);
  CHECK(pack_get<0>(a.device_on_host()).last == 42);
  CHECK(a.index() == 0);
  CHECK(b.index() == 1);
  CHECK(req.find("right") == &b);
  CHECK(req.find("none") == nullptr);
  CHECK_THROWS_AS(req.open(chain, "left", "stage", 8), usage_error);
}
