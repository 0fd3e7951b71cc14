// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Jump-forward, a host interceptor: when the chain's device constraint allows
/// exactly one token (StepPlan::forced_token), it supplies that token, so the step runs no
/// model forward; the forced run's K/V is written by the next forward in one batch.
///
/// The output is the same as without it (a step with one allowed token has one possible
/// argmax); only forwards are saved. Being a host interceptor, it makes its chain a host
/// chain (on a device backend: one host wait per step), so a graph-captured stage rejects it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "baton/intercept/interceptor.hpp"

namespace baton {

struct JumpForward {
  static constexpr std::string_view plugin_id = "baton.jump_forward";
  /// It supplies tokens (the output does not change, but the model no longer chose them).
  static constexpr bool distribution_altering = true;
  static constexpr bool graph_safe = false;
  struct state_type {};
  state_type initial_state(const BranchInfo&) const { return {}; }

  std::optional<std::int32_t> before_step(state_type&, const StepPlan& plan) const {
    if (plan.forced_token >= 0) return plan.forced_token;
    return std::nullopt;
  }
  /// The device constraint already masked the row; nothing to add.
  void transform_logits(state_type&, const StepPlan&, std::span<float>) const {}
  StepAction after_step(state_type&, const StepOutcome&) const { return StepAction::go_on; }
};

}  // namespace baton
