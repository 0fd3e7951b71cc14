// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Embedding gather: x[t] = widen(table[tokens[t]]), one block per token.
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton/core/dtype.hpp"
#include "baton/grid/grid.hpp"

namespace baton::kernels {

template <StorageType S>
struct EmbedKernel {
  static constexpr unsigned kThreads = 256;
  static constexpr int kPhases = 1;
  struct Args {
    const S* table = nullptr;              ///< [vocab, hidden]
    const std::int32_t* tokens = nullptr;  ///< [n], already checked against the vocabulary
    float* x = nullptr;                    ///< [n, hidden]
    int hidden = 0;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config(int tokens) {
    return {static_cast<unsigned>(tokens), 1, kThreads};
  }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    const std::size_t t = at.block_x;
    const S* row = a.table + static_cast<std::size_t>(a.tokens[t]) * a.hidden;
    float* out = a.x + t * a.hidden;
    for (int i = static_cast<int>(at.thread); i < a.hidden; i += kThreads) out[i] = widen(row[i]);
  }
};

}  // namespace baton::kernels
