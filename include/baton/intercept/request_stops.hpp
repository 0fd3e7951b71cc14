// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief RequestStops: a request's own stop strings (OpenAI's `stop`), matched by the stop
///        sequence interceptor's code on the request's branch alone.
///
/// A stage's chain holds it absent (relay/runtime_chain.hpp); a request that brings stop
/// strings gets its own RequestStops, whose params replace the absent member's in that
/// request's branch only (BranchState::set_member_params), so other requests in the same
/// batched step never see them and the stage's own stop sequences keep working beside them.
/// It is its own type (not a second StopSequences) so a chain can find it and a result can
/// say which ended the generation.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "baton/intercept/maybe.hpp"
#include "baton/intercept/stop_sequences.hpp"

namespace baton {

/// The most stop strings one request may bring (OpenAI's bound), and the bytes of each.
inline constexpr int kMaxRequestStops = 4;
inline constexpr int kMaxRequestStopBytes = 64;

template <Backend B>
class RequestStops : public StopSequences<B> {
 public:
  static constexpr std::string_view plugin_id = "baton.request_stops";
  static_assert(StopSequences<B>::kMaxStopBytes == kMaxRequestStopBytes);
  /// `stops`: 1..kMaxRequestStops strings of 1..kMaxStopBytes bytes each (usage_error naming
  /// the one that is not).
  RequestStops(const TokenByteTable& table, const std::vector<std::string>& stops)
      : StopSequences<B>(table, checked(stops)) {}

 private:
  static const std::vector<std::string>& checked(const std::vector<std::string>& stops) {
    BATON_CHECK(stops.size() <= static_cast<std::size_t>(kMaxRequestStops), usage_error,
                "stop: ", stops.size(), " stop strings; a request may give at most ",
                kMaxRequestStops);
    return stops;
  }
};

namespace detail {
template <class Chain, class Member, std::size_t K = 0>
constexpr std::size_t member_index() {
  if constexpr (K == Chain::size) {
    return K;
  } else {
    using M = std::remove_cvref_t<decltype(std::declval<const Chain&>().template member<K>())>;
    if constexpr (std::is_same_v<M, Member>) {
      return K;
    } else {
      return member_index<Chain, Member, K + 1>();
    }
  }
}
}  // namespace detail

/// The index of the chain's request-stops member (a MaybeInterceptor<RequestStops<B>>), or
/// Chain::size when it has none (its stages take no per-request stop strings).
template <class Chain, Backend B>
inline constexpr std::size_t request_stops_index =
    detail::member_index<Chain, MaybeInterceptor<RequestStops<B>>>();

}  // namespace baton
