// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief build_relay compiled once per program: the host relay for every family, storage type
///        and head_dim that build_relay reaches (model/model_dispatch.hpp's lists), declared as
///        explicit instances (`extern template`).
///
/// build_relay dispatches over families x storage types x head_dims, and each triple
/// instantiates a whole forward, so every translation unit that calls it compiles all of them
/// again. A unit that includes this header instead of relay/runtime_relay.hpp instantiates none of
/// them; exactly one unit of the program defines them, one storage type per unit if it likes (they
/// then compile side by side):
///
/// @code
///   #include "baton/relay/runtime_relay_instances.hpp"
///   BATON_DEFINE_HOST_RELAYS(f32)   // and bf16, f16: in this unit or others
/// @endcode
///
/// baton's own programs (the `baton` CLI and the tests) link them from dispatch/.
#pragma once

#include <memory>

#include "baton/relay/runtime_relay.hpp"

// One instance per (storage, head_dim, family), over model/model_dispatch.hpp's lists: the
// head_dim list passes (PREFIX, S) to the family list as one parenthesized argument, which
// BATON_HOST_RELAY_UNPACK_ opens again.
#define BATON_HOST_RELAY_INSTANCE_(PREFIX, S, D, F)      \
  PREFIX template std::unique_ptr<::baton::RuntimeRelay> \
  build_relay_as_on<::baton::host, ::baton::S, D, F>(const ::baton::RelaySpec&);
#define BATON_HOST_RELAY_APPLY_(...) BATON_HOST_RELAY_INSTANCE_(__VA_ARGS__)
#define BATON_HOST_RELAY_UNPACK_(PSD, F) BATON_HOST_RELAY_APPLY_(BATON_HOST_RELAY_OPEN_ PSD, F)
#define BATON_HOST_RELAY_OPEN_(PREFIX, S, D) PREFIX, S, D
#define BATON_HOST_RELAY_FAMILIES_(PS, D) \
  BATON_RUNTIME_FAMILIES(BATON_HOST_RELAY_UNPACK_, (BATON_HOST_RELAY_OPEN2_ PS, D))
#define BATON_HOST_RELAY_OPEN2_(PREFIX, S) PREFIX, S
#define BATON_EXTERN_HOST_RELAYS_(S) \
  BATON_RUNTIME_HEAD_DIMS(BATON_HOST_RELAY_FAMILIES_, (extern, S))

namespace baton {
BATON_RUNTIME_STORAGE_TYPES(BATON_EXTERN_HOST_RELAYS_)
}  // namespace baton

/// Defines (instantiates) the host relay for storage type S (f32, bf16 or f16) and every
/// family and head_dim, at namespace scope, in the one unit of the program that compiles them.
#define BATON_DEFINE_HOST_RELAYS(S)                          \
  namespace baton {                                          \
  BATON_RUNTIME_HEAD_DIMS(BATON_HOST_RELAY_FAMILIES_, (, S)) \
  }                                                          \
  static_assert(true, "BATON_DEFINE_HOST_RELAYS takes a trailing ;")
