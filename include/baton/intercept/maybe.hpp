// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief MaybeInterceptor<I>: an interceptor that is present or absent at run time, for chains
///        whose members a relay file chooses (relay/runtime_chain.hpp).
///
/// It has I's plugin_id, kind and capabilities (the static upper bound a chain derives from);
/// when absent, every hook is the identity (no mask, no stop, no supplied token). A run-time
/// relay checks a stage's card against the members that are present.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "baton/intercept/interceptor.hpp"
#include "baton/intercept/negotiate.hpp"

namespace baton {

template <Interceptor I, bool IsDevice = bool(I::graph_safe)>
class MaybeInterceptor;

/// Device kind: the params carry whether I is present.
template <Interceptor I>
class MaybeInterceptor<I, true> {
 public:
  static constexpr std::string_view plugin_id = I::plugin_id;
  static constexpr bool distribution_altering = I::distribution_altering;
  static constexpr bool graph_safe = true;
  struct params_type {
    typename I::params_type inner{};
    std::int32_t present = 0;
  };
  using state_type = typename I::state_type;

  MaybeInterceptor() = default;
  explicit MaybeInterceptor(I inner) : inner_(std::move(inner)) {}
  bool present() const { return inner_.has_value(); }
  const I& get() const { return *inner_; }

  params_type params() const {
    return present() ? params_type{inner_->params(), 1} : params_type{};
  }
  state_type initial_state(const BranchInfo& info) const {
    return present() ? inner_->initial_state(info) : state_type{};
  }
  BATON_HD static float transform_logit(const params_type& p, const state_type& s, std::int32_t id,
                                        float logit) requires(bool(I::distribution_altering)) {
    return p.present ? I::transform_logit(p.inner, s, id, logit) : logit;
  }
  BATON_HD static StepAction advance(const params_type& p, state_type& s, std::int32_t token) {
    return p.present ? I::advance(p.inner, s, token) : StepAction::go_on;
  }
  BATON_HD static std::int32_t forced_token(const params_type& p,
                                            const state_type& s) requires ReportsForcedToken<I> {
    return p.present ? I::forced_token(p.inner, s) : -1;
  }
  BATON_HD static bool may_end(const params_type& p, const state_type& s) requires
      requires(const typename I::params_type& ip) {
    I::may_end(ip, s);
  }
  { return !p.present || I::may_end(p.inner, s); }
  bool complete_at_start() const requires requires(const I& i) { i.complete_at_start(); }
  { return present() && inner_->complete_at_start(); }

 private:
  std::optional<I> inner_;
};

/// Host kind.
template <Interceptor I>
class MaybeInterceptor<I, false> {
 public:
  static constexpr std::string_view plugin_id = I::plugin_id;
  static constexpr bool distribution_altering = I::distribution_altering;
  static constexpr bool graph_safe = false;
  using state_type = typename I::state_type;

  MaybeInterceptor() = default;
  explicit MaybeInterceptor(I inner) : inner_(std::move(inner)) {}
  bool present() const { return inner_.has_value(); }
  const I& get() const { return *inner_; }

  state_type initial_state(const BranchInfo& info) const {
    return present() ? inner_->initial_state(info) : state_type{};
  }
  std::optional<std::int32_t> before_step(state_type& s, const StepPlan& plan) const {
    return present() ? inner_->before_step(s, plan) : std::nullopt;
  }
  void transform_logits(state_type& s, const StepPlan& plan,
                        std::span<float> row) const requires HasHostTransform<I> {
    if (present()) inner_->transform_logits(s, plan, row);
  }
  StepAction after_step(state_type& s, const StepOutcome& outcome) const {
    return present() ? inner_->after_step(s, outcome) : StepAction::go_on;
  }

 private:
  std::optional<I> inner_;
};

/// An interceptor type's capabilities as run-time values (for check_card).
template <Interceptor I>
constexpr InterceptorCaps caps_of() {
  return {I::plugin_id, bool(I::distribution_altering), bool(I::graph_safe)};
}

}  // namespace baton
