// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The `baton` program's CUDA backend, relay half (cuda_entry.hpp): `baton relay
///        --backend cuda` builds the library's run-time relay on baton::cuda. Compiled by nvcc,
///        linked into `baton` only when the build has CUDA.
#include "../cuda_entry.hpp"
#include "../model_dispatch.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/relay/cuda_relay.cuh"

namespace baton::cli {

std::unique_ptr<RuntimeRelay> build_relay_on_cuda(const RelaySpec& spec) {
  return dispatch_storage_head_dim<cuda>(
      spec.model.string(), io::load_model_config(spec.model),
      [&]<class S, int D>() { return build_relay_as_on<cuda, S, D>(spec); });
}

}  // namespace baton::cli
