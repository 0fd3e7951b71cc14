// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Writes plain data into backend memory from kernel arguments: one value (how a
///        branch's interceptor states are initialised in storage a stage allocated once,
///        intercept/branch_state.hpp) or a run of 32-bit words (a batch's sampled rows'
///        logit_bias and penalty counts, model/device_choice.hpp), with no staging buffer, no
///        allocation and no wait.
#pragma once

#include <cstdint>
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

/// Writes `count` (<= kInlineWords) 32-bit words from its arguments to dst[0, count).
struct StoreWordsKernel {
  /// Words one launch carries: 3840 bytes, inside the 4 KiB of arguments every launch takes.
  static constexpr int kInlineWords = 960;
  static constexpr unsigned kThreads = 128;
  static constexpr int kPhases = 1;
  struct Args {
    std::int32_t words[kInlineWords];
    int count = 0;
    std::int32_t* dst = nullptr;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config() { return {1, 1, kThreads}; }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    for (int i = static_cast<int>(at.thread); i < a.count; i += static_cast<int>(kThreads))
      a.dst[i] = a.words[i];
  }
};

}  // namespace baton::kernels
