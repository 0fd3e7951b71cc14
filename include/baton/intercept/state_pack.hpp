// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief StatePack: a plain-data tuple that device code can index — the device interceptors'
///        states (and params) of a chain, one member per interceptor, copyable to a kernel.
///
/// std::tuple is not usable in device code and need not be trivially copyable; this is an
/// aggregate of aggregates, trivially copyable whenever its members are.
#pragma once

#include <cstddef>

#include "baton/core/macros.hpp"

namespace baton {

/// Stands in for a member of the other kind, so index K of every pack is chain member K.
struct NoState {};

template <class... Ts>
struct StatePack {};

template <class T, class... Ts>
struct StatePack<T, Ts...> {
  T head{};
  StatePack<Ts...> tail{};
};

/// Member K of a pack.
template <std::size_t K, class P>
BATON_HD constexpr auto& pack_get(P& p) {
  if constexpr (K == 0) {
    return p.head;
  } else {
    return pack_get<K - 1>(p.tail);
  }
}

}  // namespace baton
