// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief build_relay compiled once per program: the host relay for every storage type and
///        head_dim that build_relay reaches, declared as explicit instances (`extern template`).
///
/// build_relay dispatches over storage types x head_dims, and each pair instantiates a whole
/// forward, so every translation unit that calls it compiles all of them again. A unit that
/// includes this header instead of relay/runtime_relay.hpp instantiates none of them; exactly
/// one unit of the program defines them, one storage type per unit if it likes (they then
/// compile side by side):
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

/// The storage types build_relay_on dispatches over (relay/runtime_relay_on.hpp), as an
/// X-macro. A type added to that switch but not here still works; it is just instantiated in
/// every unit that calls build_relay.
#define BATON_RUNTIME_STORAGE_TYPES(X) X(f32) X(bf16) X(f16)

#define BATON_HOST_RELAY_INSTANCE_(S, D)                                                           \
  template std::unique_ptr<::baton::RuntimeRelay> build_relay_as_on<::baton::host, ::baton::S, D>( \
      const ::baton::RelaySpec&);
#define BATON_EXTERN_HOST_RELAY_INSTANCE_(S, D) extern BATON_HOST_RELAY_INSTANCE_(S, D)
#define BATON_EXTERN_HOST_RELAYS_(S) BATON_RUNTIME_HEAD_DIMS(BATON_EXTERN_HOST_RELAY_INSTANCE_, S)

namespace baton {
BATON_RUNTIME_STORAGE_TYPES(BATON_EXTERN_HOST_RELAYS_)
}  // namespace baton

/// Defines (instantiates) the host relay for storage type S (f32, bf16 or f16) and every
/// head_dim, at namespace scope, in the one unit of the program that compiles them.
#define BATON_DEFINE_HOST_RELAYS(S)                      \
  namespace baton {                                      \
  BATON_RUNTIME_HEAD_DIMS(BATON_HOST_RELAY_INSTANCE_, S) \
  }                                                      \
  static_assert(true, "BATON_DEFINE_HOST_RELAYS takes a trailing ;")
