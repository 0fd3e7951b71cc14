// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The one place the `baton` program turns a model folder's run-time facts (stored
///        dtype, head_dim) into template parameters, per backend: `generate` and `relay`, on the
///        host and in the CUDA translation unit, all go through it.
#pragma once

#include <string>

#include "baton/core/dtype.hpp"
#include "baton/core/model_config.hpp"
#include "baton/kv/head_dims.hpp"
#include "baton/model/base_model.hpp"

namespace baton::cli {

/// What a backend's program instantiates beyond Qwen2/Llama in f32 and bf16: each is a whole
/// forward per head_dim, and the CUDA program leaves f16 and Qwen3 out to keep nvcc's build
/// time down.
template <Backend B>
inline constexpr bool kBuildsF16 = !B::is_device;
template <Backend B>
inline constexpr bool kBuildsQwen3 = !B::is_device;

/// Calls `fn.template operator()<S, D>()` with the storage type S of `model_dir`'s weights and
/// D = `cfg.head_dim`; a config_error names what this backend's program does not build.
template <Backend B, class Fn>
decltype(auto) dispatch_storage_head_dim(const std::string& model_dir, const ModelConfig& cfg,
                                         Fn&& fn) {
  return dispatch_head_dim(cfg.head_dim, [&](auto d) -> decltype(auto) {
    constexpr int D = decltype(d)::value;
    switch (stored_dtype(model_dir)) {
      case dtype::f32:
        return fn.template operator()<f32, D>();
      case dtype::bf16:
        return fn.template operator()<bf16, D>();
      case dtype::f16:
        if constexpr (kBuildsF16<B>) return fn.template operator()<f16, D>();
        break;
    }
    BATON_FAIL(config_error, model_dir, ": ", dtype_name(stored_dtype(model_dir)),
               " weights are not built into the ", B::name,
               " program (f32, bf16); use --backend host");
  });
}

}  // namespace baton::cli
