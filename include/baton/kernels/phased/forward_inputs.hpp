// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Writes a forward's descriptor and token ids into backend memory from kernel
///        arguments: the launch copies its arguments when it is queued, so the host never has
///        to keep a staging buffer alive or wait for a copy (a forward of many tokens writes
///        them kInlineTokens at a time).
#pragma once

#include <cstdint>

#include "baton/grid/grid.hpp"
#include "baton/kernels/phased/descriptor.hpp"

namespace baton::kernels {

struct ForwardInputsKernel {
  static constexpr unsigned kThreads = 32;
  static constexpr int kPhases = 1;
  static constexpr int kInlineTokens = 32;
  struct Args {
    ForwardDesc value;
    ForwardDesc* desc = nullptr;  ///< written when not null
    std::int32_t tokens[kInlineTokens] = {};
    int count = 0;   ///< tokens in this launch
    int offset = 0;  ///< where they go in dst
    std::int32_t* dst = nullptr;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config() { return {1, 1, kThreads}; }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    const int i = static_cast<int>(at.thread);
    if (i < a.count) a.dst[a.offset + i] = a.tokens[i];
    if (i == 0 && a.desc) *a.desc = a.value;
  }
};

}  // namespace baton::kernels
