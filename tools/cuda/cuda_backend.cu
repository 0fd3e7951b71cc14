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
#include "baton/model/cuda_forward.cuh"
#include "baton/relay/cuda_relay.cuh"

namespace baton::cli {

/// What this program builds for the GPU (model/model_dispatch.hpp's lists, less these): the
/// Qwen2 family (Llama too) in f32 and bf16. f16 and Qwen3 are each a whole device forward per
/// head_dim, left out to keep nvcc's build time down; the host backend runs them
/// (docs/cuda.md).
struct CudaProgramBuilds {
  template <class F, WeightStorage S, int D>
  static constexpr bool value =
      std::is_same_v<F, family::Qwen2> && !std::is_same_v<S, f16> && !BlockStorage<S>;
};

bool cuda_device_present() noexcept { return baton::cuda_device_available(); }

std::string cuda_device_status() { return baton::cuda_status().reason(); }

Generated generate_on_cuda(const GenerateJob& job) {
  return generate_dispatch<cuda, CudaProgramBuilds>(job, load_runtime_config(job.model));
}

std::unique_ptr<RuntimeRelay> build_relay_on_cuda(const RelaySpec& spec) {
  return build_relay_on<cuda, CudaProgramBuilds>(spec);
}

}  // namespace baton::cli
