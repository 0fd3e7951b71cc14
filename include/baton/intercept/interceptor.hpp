// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The seam where step interceptors hook the decode loop of a stage.
///
/// A stage's chain is asked before every step (it may supply the step's token, so the greedy
/// choice is skipped) and told after it (it sees the logits and the token). Its state lives in
/// the session — per request, never in the chain object or a static — so interleaved
/// requests cannot see each other's state. The chain declares two capabilities that a stage
/// checks: `distribution_altering` (changes what the model would have produced) and
/// `graph_safe` (could run inside a captured CUDA graph). The interceptor issue adds the
/// built-ins (stop sequences, constraints, tracing, step-skip) on this seam.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <span>

namespace baton {

/// What a chain sees at one decode step.
struct StepView {
  int step = 0;                   ///< tokens generated so far in this request
  int position = 0;               ///< KV position the chosen token would be written at
  std::span<const float> logits;  ///< this step's logits (backend memory)
};

/// A chain of step interceptors as the stage's decode loop uses it.
template <class C>
concept InterceptorChain = requires(const C& c, typename C::state_type& s, const StepView& v,
                                    std::int32_t tok) {
  { C::distribution_altering } -> std::convertible_to<bool>;
  { C::graph_safe } -> std::convertible_to<bool>;
  { c.before_step(s, v) } -> std::same_as<std::optional<std::int32_t>>;
  {c.after_step(s, v, tok)};
};

/// The empty chain: exact greedy decoding.
struct NoInterceptors {
  static constexpr bool distribution_altering = false;
  static constexpr bool graph_safe = true;
  struct state_type {};
  std::optional<std::int32_t> before_step(state_type&, const StepView&) const {
    return std::nullopt;
  }
  void after_step(state_type&, const StepView&, std::int32_t) const {}
};

static_assert(InterceptorChain<NoInterceptors>);

}  // namespace baton
