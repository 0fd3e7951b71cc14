// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief TraceRecorder: records every decode step (token, position, time). Host kind, not
///        distribution-altering, not graph-safe.
///
/// The rows live in the branch's state (room for max_new rows is reserved when the branch
/// opens, so recording allocates nothing per token). Times are host wall-clock milliseconds
/// from steady_clock; on a device backend they include the host wait each step costs.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "baton/intercept/interceptor.hpp"

namespace baton {

/// One recorded step.
struct TraceRow {
  int step = 0;             ///< index of the generated token
  int position = 0;         ///< its KV position
  std::int32_t token = -1;  ///< the token
  bool skipped = false;     ///< supplied without a model forward (step-skip)
  double start_ms = 0;      ///< when the step began, from the branch's start (before prefill)
  double step_ms = 0;       ///< how long the step took (forward, transforms, choice)
};

class TraceRecorder {
 public:
  static constexpr std::string_view plugin_id = "baton.trace";
  static constexpr bool distribution_altering = false;
  static constexpr bool graph_safe = false;
  using clock = std::chrono::steady_clock;

  struct state_type {
    std::vector<TraceRow> rows;
    clock::time_point start{};
    clock::time_point step_start{};
  };

  state_type initial_state(const BranchInfo& info) const {
    state_type s;
    s.rows.reserve(static_cast<std::size_t>(info.max_new > 0 ? info.max_new : 0));
    s.start = clock::now();
    return s;
  }
  std::optional<std::int32_t> before_step(state_type& s, const StepPlan&) const {
    s.step_start = clock::now();
    return std::nullopt;
  }
  StepAction after_step(state_type& s, const StepOutcome& o) const {
    const auto now = clock::now();
    s.rows.push_back(TraceRow{o.plan.step, o.plan.position, o.token, o.skipped,
                              ms(s.step_start - s.start), ms(now - s.step_start)});
    return StepAction::go_on;
  }

 private:
  static double ms(clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  }
};

/// The rows of the first trace recorder among a chain's host states (Chain::host_state), or
/// nullptr when it has none.
template <class... States>
std::vector<TraceRow>* trace_rows(std::tuple<States...>& states) {
  std::vector<TraceRow>* rows = nullptr;
  std::apply(
      [&](auto&... s) {
        const auto visit = [&](auto& one) {
          if constexpr (std::is_same_v<std::remove_cvref_t<decltype(one)>,
                                       TraceRecorder::state_type>) {
            if (!rows) rows = &one.rows;
          }
        };
        (visit(s), ...);
      },
      states);
  return rows;
}

}  // namespace baton
