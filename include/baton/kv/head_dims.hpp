// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The one list of head_dims baton instantiates when head_dim is only known at run time.
#pragma once

#include "baton/core/dispatch.hpp"

namespace baton {

/// Calls `f(std::integral_constant<int, D>{})` for the model's head_dim D. The list covers
/// the Qwen2/Llama families (64: Qwen2.5-0.5B, Llama-3.2-1B; 128: the rest) and the small
/// test models (8, 16, 32). Each entry instantiates the whole forward per storage type, so
/// the list stays short; add a value here to support another head_dim at run time.
template <class F>
decltype(auto) dispatch_head_dim(int head_dim, F&& f) {
  return dispatch_exact<8, 16, 32, 64, 128>("head_dim", head_dim, std::forward<F>(f));
}

}  // namespace baton
