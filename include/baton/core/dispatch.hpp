// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Turning a run-time value (head_dim, rank bound) into a template value, in one place.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "baton/core/error.hpp"

namespace baton {

namespace detail {
template <int First, int...>
inline constexpr int first_of = First;  // names one value of a pack, to ask f's return type
/// "64, 128": every value of the pack (a comma fold would keep only the last).
template <int... Values>
std::string supported_list() {
  std::string out;
  ((out += (out.empty() ? "" : ", ") + std::to_string(Values)), ...);
  return out;
}
}  // namespace detail

/// Calls `f(std::integral_constant<int, V>{})` for the V in `Values...` equal to `value`;
/// throws config_error naming `what`, the value and the supported list otherwise.
template <int... Values, class F>
decltype(auto) dispatch_exact(std::string_view what, int value, F&& f) {
  using R = decltype(f(std::integral_constant<int, detail::first_of<Values...>>{}));
  if constexpr (std::is_void_v<R>) {
    bool hit =
        ((value == Values ? (f(std::integral_constant<int, Values>{}), true) : false) || ...);
    if (!hit)
      BATON_FAIL(config_error, what, " = ", value,
                 " is not instantiated; supported: ", detail::supported_list<Values...>());
  } else {
    std::optional<R> out;
    (void)((value == Values && (out.emplace(f(std::integral_constant<int, Values>{})), true)) ||
           ...);
    if (!out)
      BATON_FAIL(config_error, what, " = ", value,
                 " is not instantiated; supported: ", detail::supported_list<Values...>());
    return R(std::move(*out));
  }
}

/// Calls `f(std::integral_constant<int, V>{})` for the smallest V in the ascending list
/// `Values...` with V >= value (a compile-time bound such as a LoRA rank bound).
template <int... Values, class F>
decltype(auto) dispatch_bound(std::string_view what, int value, F&& f) {
  constexpr int kList[] = {Values...};
  int chosen = -1;
  for (int v : kList)
    if (v >= value) {
      chosen = v;
      break;
    }
  if (chosen < 0)
    BATON_FAIL(config_error, what, " = ", value, " exceeds the largest instantiated bound ",
               kList[sizeof...(Values) - 1]);
  return dispatch_exact<Values...>(what, chosen, std::forward<F>(f));
}

}  // namespace baton
