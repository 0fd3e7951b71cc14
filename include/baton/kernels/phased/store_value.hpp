// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Writes one plain value into backend memory from kernel arguments: how a branch's
///        interceptor states are initialised in storage a stage allocated once
///        (intercept/branch_state.hpp), with no staging buffer, no allocation and no wait.
#pragma once

#include <type_traits>

#include "baton/grid/grid.hpp"

namespace baton::kernels {

template <class T>
struct StoreValueKernel {
  static_assert(std::is_trivially_copyable_v<T>, "StoreValueKernel writes plain data only");
  static constexpr unsigned kThreads = 32;
  static constexpr int kPhases = 1;
  struct Args {
    T value;
    T* dst = nullptr;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config() { return {1, 1, kThreads}; }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    if (at.thread == 0) *a.dst = a.value;
  }
};

}  // namespace baton::kernels
