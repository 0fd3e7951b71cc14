// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Capability negotiation: a stage's card (what it accepts) checked against its chain's
///        members — at compile time with a static_assert per rule, at run time (relays built
///        from a file) with an error that names the stage and the interceptor.
///
/// The rules:
///   - an **exact** stage (a verifier used as the gate, a reference run) accepts no
///     distribution-altering interceptor;
///   - a **graph-captured** decode loop accepts only graph-safe (device) interceptors.
/// Cards are opt-in: the default card accepts every interceptor.
#pragma once

#include <string>
#include <string_view>

#include "baton/core/error.hpp"
#include "baton/intercept/chain.hpp"

namespace baton {

/// What a stage accepts from its interceptor chain (a structural type: a template argument).
struct StageCard {
  bool exact = false;           ///< rejects distribution-altering interceptors
  bool graph_captured = false;  ///< the decode loop is captured in a graph: graph-safe only
};

/// The compile-time rules for one member; the instantiation names the interceptor type.
template <StageCard Card, class I>
struct CardAccepts {
  static_assert(!Card.exact || !bool(I::distribution_altering),
                "an exact stage (StageCard::exact) accepts no distribution-altering interceptor: "
                "this interceptor changes what the model would have produced");
  static_assert(!Card.graph_captured || bool(I::graph_safe),
                "a graph-captured decode loop (StageCard::graph_captured) accepts only graph-safe "
                "(device) interceptors: this host interceptor needs the host at every step");
  static constexpr bool value = true;
};

namespace detail {
template <StageCard Card, class... Is>
constexpr bool card_accepts(const Chain<Is...>*) {
  return (CardAccepts<Card, Is>::value && ...);
}
template <StageCard Card, class C>
constexpr bool card_accepts(const C*) {
  return CardAccepts<Card, C>::value;
}
}  // namespace detail

/// True, or a static_assert naming the first member `Card` rejects.
template <StageCard Card, class C>
inline constexpr bool card_accepts_v = detail::card_accepts<Card>(static_cast<const C*>(nullptr));

/// One interceptor's capabilities as known at run time.
struct InterceptorCaps {
  std::string_view plugin_id;
  bool distribution_altering = false;
  bool graph_safe = false;
};

/// The run-time rule check: throws config_error naming `where` (e.g. "relay.json:
/// stages[2] ('verify').interceptors[0]"), the stage and the interceptor.
inline void check_card(const StageCard& card, std::string_view stage, const InterceptorCaps& i,
                       const std::string& where) {
  BATON_CHECK(
      !card.exact || !i.distribution_altering, config_error, where, ": stage '", stage,
      "' is declared exact, so it accepts no distribution-altering interceptor, but interceptor '",
      i.plugin_id, "' alters the distribution");
  BATON_CHECK(!card.graph_captured || i.graph_safe, config_error, where, ": stage '", stage,
              "' has a graph-captured decode loop, which accepts only graph-safe interceptors, "
              "but interceptor '",
              i.plugin_id, "' is a host interceptor (not graph-safe)");
}

}  // namespace baton
