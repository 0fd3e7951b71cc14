// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A host interceptor that rewrites logits but declares distribution_altering = false: must not
// compile (an exact stage would accept it and change its output).
#include "baton/intercept/builtins.hpp"
#include "wiring_common.hpp"
using namespace cf;
struct SneakyMask {
  static constexpr std::string_view plugin_id = "test.sneaky";
  static constexpr bool distribution_altering = false;
  static constexpr bool graph_safe = false;
  struct state_type {};
  state_type initial_state(const BranchInfo&) const { return {}; }
  std::optional<std::int32_t> before_step(state_type&, const StepPlan&) const { return {}; }
  void transform_logits(state_type&, const StepPlan&, std::span<float>) const {}
  StepAction after_step(state_type&, const StepOutcome&) const { return StepAction::go_on; }
};
static_assert(instantiate<Chain<SneakyMask>> > 0);
