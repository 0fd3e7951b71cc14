// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton generate`'s host runs (generate_run.hpp) for every family, storage type and
///        head_dim, declared as explicit instances: cmd_generate.cpp instantiates none of them,
///        dispatch/ compiles them once, one storage type per unit, with the relays of that type
///        (BATON_DEFINE_HOST_GENERATE beside BATON_DEFINE_HOST_RELAYS).
#pragma once

#include "baton/model/host_forward.hpp"
#include "baton/relay/runtime_relay_instances.hpp"  // BATON_RUNTIME_STORAGE_TYPES
#include "generate_run.hpp"

// PREFIX is `extern` for the declarations, empty for the definitions. The families are
// generate_dispatch's: Qwen2 (Llama too) and Qwen3.
#define BATON_HOST_GENERATE_INSTANCES_(PREFIX, S, D)                                 \
  PREFIX template Generated generate<host, family::Qwen2, S, D>(const GenerateJob&); \
  PREFIX template Generated generate<host, family::Qwen3, S, D>(const GenerateJob&);
#define BATON_EXTERN_HOST_GENERATE_(S, D) BATON_HOST_GENERATE_INSTANCES_(extern, S, D)
#define BATON_DEFINE_HOST_GENERATE_(S, D) BATON_HOST_GENERATE_INSTANCES_(, S, D)
#define BATON_EXTERN_HOST_GENERATES_(S) BATON_RUNTIME_HEAD_DIMS(BATON_EXTERN_HOST_GENERATE_, S)

namespace baton::cli {
BATON_RUNTIME_STORAGE_TYPES(BATON_EXTERN_HOST_GENERATES_)
}  // namespace baton::cli

/// Defines `baton generate`'s host runs for storage type S and every head_dim and family.
#define BATON_DEFINE_HOST_GENERATE(S)                     \
  namespace baton::cli {                                  \
  BATON_RUNTIME_HEAD_DIMS(BATON_DEFINE_HOST_GENERATE_, S) \
  }                                                       \
  static_assert(true, "BATON_DEFINE_HOST_GENERATE takes a trailing ;")
