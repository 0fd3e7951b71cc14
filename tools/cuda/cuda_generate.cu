// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The `baton` program's CUDA backend, generate half (cuda_entry.hpp): `baton generate
///        --backend cuda` runs generate_run.hpp's code on baton::cuda. Compiled by nvcc (apart
///        from cuda_relay.cu, so the two build in parallel), linked into `baton` only when the
///        build has CUDA.
#include "../cuda_entry.hpp"
#include "../generate_run.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/model/cuda_forward.cuh"

namespace baton::cli {

bool cuda_device_present() noexcept { return baton::cuda_device_available(); }

Generated generate_on_cuda(const GenerateJob& job) {
  return generate_dispatch<cuda>(job, io::load_model_config(job.model));
}

}  // namespace baton::cli
