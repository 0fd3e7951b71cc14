// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Relay<Stages...>: a typed relay whose wiring is checked at compile time, a thin
///        front over the same RelayEngine a relay built at run time uses.
#pragma once

#include <cstddef>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include "baton/relay/engine.hpp"

namespace baton {

namespace detail {

/// Compile-time checks of stage I of N. Instantiated once per stage, so a failing
/// static_assert's "required from" note shows the stage index and its types.
template <std::size_t I, std::size_t N, class StageT, class First>
struct RelayStageCheck {
  static_assert(std::is_same_v<typename StageT::model_type, typename First::model_type>,
                "Relay: all stages must share one model type (one frozen model: same backend and "
                "storage type)");
  static_assert(std::is_same_v<typename StageT::backend, typename First::backend>,
                "Relay: all stages must run on one backend");
  static_assert(wire::wiring<typename StageT::input_type>::outputs_earlier(static_cast<int>(I)),
                "Relay: a stage may only read the output of an earlier stage: stage I reads "
                "wire::out<K> with K >= I (or K < 0)");
  static_assert(wire::wiring<typename StageT::input_type>::feedback_in_range(static_cast<int>(N)),
                "Relay: wire::feedback<K> must name a stage of the relay (0 <= K < stage count)");
  static constexpr bool ok = true;
};

template <class... Ts>
using first_t = std::tuple_element_t<0, std::tuple<Ts...>>;

}  // namespace detail

/// A relay over stages the caller owns (they must outlive it): `Relay relay{extract, reason,
/// verify};`. Stages whose input is a wire::DynamicInput are checked at construction instead.
template <class... Stages>
class Relay {
  static_assert(sizeof...(Stages) >= 1, "Relay: needs at least one stage");
  using First = detail::first_t<Stages...>;
  template <std::size_t... I>
  static constexpr bool check(std::index_sequence<I...>) {
    return (detail::RelayStageCheck<I, sizeof...(Stages), Stages, First>::ok && ...);
  }
  static_assert(check(std::index_sequence_for<Stages...>{}));

 public:
  using backend = typename First::backend;
  static constexpr std::size_t stage_count = sizeof...(Stages);

  explicit Relay(Stages&... stages) : engine_({static_cast<StageBase<backend>*>(&stages)...}) {}

  void prewarm() { engine_.prewarm(); }
  RelayResult run(std::span<const std::int32_t> request, const RelayOptions& opt = {}) {
    return engine_.run(request, opt);
  }
  RelayResult try_run(std::span<const std::int32_t> request, const RelayOptions& opt = {}) {
    return engine_.try_run(request, opt);
  }
  RelayEngine<backend>& engine() { return engine_; }

 private:
  RelayEngine<backend> engine_;
};

template <class... Stages>
Relay(Stages&...) -> Relay<Stages...>;

}  // namespace baton
