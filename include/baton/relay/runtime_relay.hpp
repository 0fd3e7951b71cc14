// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A relay built at run time from a RelaySpec on the host backend: `build_relay(spec)`
///        and `build_relay_as<S, D>(spec)` (relay/runtime_relay_on.hpp has the generic part).
#pragma once

#include <memory>

#include "baton/model/host_forward.hpp"
#include "baton/relay/runtime_relay_on.hpp"

namespace baton {

/// build_relay_as_on on the host backend: one (storage type, head_dim) instantiation, so a
/// program made for one model compiles in a fraction of build_relay's time.
template <StorageType S, int D>
std::unique_ptr<RuntimeRelay> build_relay_as(const RelaySpec& spec) {
  return build_relay_as_on<host, S, D>(spec);
}

/// Builds (but does not pre-warm) the relay a spec describes, on the host backend.
inline std::unique_ptr<RuntimeRelay> build_relay(const RelaySpec& spec) {
  return build_relay_on<host>(spec);
}

}  // namespace baton
