// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton generate`'s host models (generate_run.hpp's load_generator, and with it the
///        run) for every family, storage type and head_dim, declared as explicit instances:
///        cmd_generate.cpp instantiates none of them, dispatch/ compiles them once, one storage
///        type per unit, with the relays of that type (BATON_DEFINE_HOST_GENERATE beside
///        BATON_DEFINE_HOST_RELAYS).
#pragma once

#include "baton/model/host_forward.hpp"
#include "baton/model/model_dispatch.hpp"
#include "generate_run.hpp"

// PREFIX is `extern` for the declarations, empty for the definitions; the families are
// model/model_dispatch.hpp's, opened as relay/runtime_relay_instances.hpp does.
#define BATON_HOST_GENERATE_INSTANCE_(PREFIX, S, D, F) \
  PREFIX template std::unique_ptr<LoadedModel> load_generator<host, F, S, D>(const std::string&);
#define BATON_HOST_GENERATE_APPLY_(...) BATON_HOST_GENERATE_INSTANCE_(__VA_ARGS__)
#define BATON_HOST_GENERATE_OPEN_(PREFIX, S, D) PREFIX, S, D
#define BATON_HOST_GENERATE_UNPACK_(PSD, F) \
  BATON_HOST_GENERATE_APPLY_(BATON_HOST_GENERATE_OPEN_ PSD, F)
#define BATON_HOST_GENERATE_OPEN2_(PREFIX, S) PREFIX, S
#define BATON_HOST_GENERATE_FAMILIES_(PS, D) \
  BATON_RUNTIME_FAMILIES(BATON_HOST_GENERATE_UNPACK_, (BATON_HOST_GENERATE_OPEN2_ PS, D))
#define BATON_EXTERN_HOST_GENERATES_(S) \
  BATON_RUNTIME_HEAD_DIMS(BATON_HOST_GENERATE_FAMILIES_, (extern, S))

namespace baton::cli {
BATON_RUNTIME_STORAGE_TYPES(BATON_EXTERN_HOST_GENERATES_)
}  // namespace baton::cli

/// Defines `baton generate`'s host runs for storage type S and every head_dim and family.
#define BATON_DEFINE_HOST_GENERATE(S)                           \
  namespace baton::cli {                                        \
  BATON_RUNTIME_HEAD_DIMS(BATON_HOST_GENERATE_FAMILIES_, (, S)) \
  }                                                             \
  static_assert(true, "BATON_DEFINE_HOST_GENERATE takes a trailing ;")
