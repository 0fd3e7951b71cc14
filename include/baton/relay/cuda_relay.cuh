// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A relay built at run time on the CUDA backend: `build_relay_on<cuda>(spec)` (or
///        `build_relay_as_on<cuda, S, D>(spec)` for one storage type and head_dim). The relay
///        owns one CudaContext; every stage's workspaces are bound to it, so its stages run in
///        order on one stream and their host waits are counted in one place.
///
/// `.cuh`: the CUDA forward instantiates kernels, so only nvcc compiles it.
#pragma once

#if !defined(__CUDACC__)
#error "baton/relay/cuda_relay.cuh needs nvcc; plain C++ builds relays with build_relay (host)"
#endif

#include "baton/backend/cuda.hpp"
#include "baton/model/cuda_forward.cuh"
#include "baton/relay/runtime_relay_on.hpp"

namespace baton {

/// The CUDA relay's execution context: one stream for all its stages.
template <>
struct RelayExecution<cuda> {
  explicit RelayExecution(const RelaySpec&) {}
  CudaContext context;
  void bind(Workspace<cuda>& ws) { ws.extras.bind(context); }
};

}  // namespace baton
