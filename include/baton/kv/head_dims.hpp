// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The one list of head_dims baton instantiates when head_dim is only known at run time.
#pragma once

#include <cstddef>
#include <iterator>
#include <utility>

#include "baton/core/dispatch.hpp"

/// The list, as an X-macro: `BATON_RUNTIME_HEAD_DIMS(X, A)` expands to `X(A, 8) X(A, 16) ...`
/// (A passes one more argument through, such as a storage type). The dispatch below and the
/// explicit instances of relay/runtime_relay_instances.hpp both read it.
/// It covers the Qwen2/Llama families (64: Qwen2.5-0.5B, Llama-3.2-1B; 128: the rest) and the
/// small test models (8, 16, 32). Each entry instantiates the whole forward per storage type,
/// so the list stays short; add a value here to support another head_dim at run time.
/// A program that knows its models may define the macro itself, before any baton header and the
/// same in every unit (baton's CMake option BATON_RUNTIME_HEAD_DIMS does so for its own programs;
/// the sanitizer build compiles only the head_dims its tests use): a head_dim left out is then a
/// config_error at run time, and every unit compiles fewer forwards.
#ifndef BATON_RUNTIME_HEAD_DIMS
#define BATON_RUNTIME_HEAD_DIMS(X, A) X(A, 8) X(A, 16) X(A, 32) X(A, 64) X(A, 128)
#endif

namespace baton {

namespace detail {
#define BATON_HEAD_DIM_ITEM_(unused, d) d,
inline constexpr int kRuntimeHeadDims[] = {BATON_RUNTIME_HEAD_DIMS(BATON_HEAD_DIM_ITEM_, ~)};
#undef BATON_HEAD_DIM_ITEM_
template <class F, std::size_t... I>
decltype(auto) dispatch_head_dim_at(int head_dim, F&& f, std::index_sequence<I...>) {
  return dispatch_exact<kRuntimeHeadDims[I]...>("head_dim", head_dim, std::forward<F>(f));
}
}  // namespace detail

/// Calls `f(std::integral_constant<int, D>{})` for the model's head_dim D (one of
/// BATON_RUNTIME_HEAD_DIMS); config_error naming the value and the list otherwise.
template <class F>
decltype(auto) dispatch_head_dim(int head_dim, F&& f) {
  return detail::dispatch_head_dim_at(
      head_dim, std::forward<F>(f),
      std::make_index_sequence<std::size(detail::kRuntimeHeadDims)>{});
}

}  // namespace baton
