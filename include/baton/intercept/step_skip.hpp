// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief StepSkip: when the chain's constraints leave exactly one possible token, supply it
///        and skip the model forward for that step. Host kind, distribution-altering (it
///        supplies tokens), not graph-safe.
///
/// The forced token comes from StepPlan::forced_token: a device member that leaves one token
/// (e.g. TokenSet with one id left, a grammar state with one way on), offered only when every
/// other altering member allows it too (Chain::forced_token). Skipped tokens are
/// accepted as if chosen; their K/V is written by the next forward that runs, which appends
/// them all in one batch (the cache's position checks hold: the batch starts where the last
/// forward ended). The output is the constrained run's output — a forced token is the argmax
/// of the masked logits whatever the model says — with fewer forwards (DecodeResult::forwards,
/// ::skipped). A batched forward and single-token forwards round differently, so the logits
/// after a catch-up can differ from the unskipped run's in the last bits: near-ties could flip.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "baton/intercept/interceptor.hpp"

namespace baton {

struct StepSkip {
  static constexpr std::string_view plugin_id = "baton.step_skip";
  static constexpr bool distribution_altering = true;
  static constexpr bool graph_safe = false;
  struct state_type {
    int skipped = 0;  ///< steps this branch skipped
  };

  state_type initial_state(const BranchInfo&) const { return {}; }
  std::optional<std::int32_t> before_step(state_type& s, const StepPlan& plan) const {
    if (plan.forced_token < 0) return std::nullopt;
    ++s.skipped;
    return plan.forced_token;
  }
  StepAction after_step(state_type&, const StepOutcome&) const { return StepAction::go_on; }
};

}  // namespace baton
