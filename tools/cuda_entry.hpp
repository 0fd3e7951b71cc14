// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What the `baton` program runs on the CUDA backend, as plain C++ functions (no CUDA
///        type in the interface): tools/cuda/cuda_backend.cu defines them,
///        compiled by nvcc and linked in only when the build has CUDA (BATON_CLI_CUDA=1). The host
///        subcommands call them; in a build without CUDA nothing calls them (backend_choice.hpp
///        refuses
///        `--backend cuda` first).
#pragma once

#include <memory>
#include <string>

#include "generate_job.hpp"

#ifndef BATON_CLI_CUDA
#define BATON_CLI_CUDA 0
#endif
#ifndef BATON_DEFAULT_BACKEND_AUTO
#define BATON_DEFAULT_BACKEND_AUTO 0
#endif

namespace baton {
class RuntimeRelay;
struct RelaySpec;
}  // namespace baton

namespace baton::cli {

/// True when the CUDA runtime sees a usable device. Never throws.
bool cuda_device_present() noexcept;

/// The CUDA runtime's status and the driver's and runtime's versions, for the message that
/// says why no device can be used (baton::CudaStatus::reason()).
std::string cuda_device_status();

/// `baton generate` on the CUDA backend (Qwen2/Llama, f32 or bf16 weights; no grammar yet).
Generated generate_on_cuda(const GenerateJob& job);

/// `baton relay --backend cuda`: the run-time relay a spec describes, built (not pre-warmed)
/// on the CUDA backend (f32 or bf16 weights).
std::unique_ptr<RuntimeRelay> build_relay_on_cuda(const RelaySpec& spec);

}  // namespace baton::cli
