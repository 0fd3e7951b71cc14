// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The `baton` program's CUDA backend (cuda_entry.hpp): `baton generate --backend cuda`
///        runs generate_run.hpp's code on baton::cuda, `baton relay --backend cuda` builds the
///        library's run-time relay there. Compiled by nvcc, linked into `baton` only when the
///        build has CUDA. One unit for both: they instantiate the same device forwards, which
///        nvcc would otherwise compile twice.
#include "../cuda_entry.hpp"
#include "../generate_run.hpp"
#include "../model_dispatch.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/model/cuda_forward.cuh"
#include "baton/relay/cuda_relay.cuh"

namespace baton::cli {

bool cuda_device_present() noexcept { return baton::cuda_device_available(); }

Generated generate_on_cuda(const GenerateJob& job) {
  return generate_dispatch<cuda>(job, io::load_model_config(job.model));
}

std::unique_ptr<RuntimeRelay> build_relay_on_cuda(const RelaySpec& spec) {
  return dispatch_storage_head_dim<cuda>(
      spec.model.string(), io::load_model_config(spec.model),
      [&]<class S, int D>() { return build_relay_as_on<cuda, S, D>(spec); });
}

}  // namespace baton::cli
