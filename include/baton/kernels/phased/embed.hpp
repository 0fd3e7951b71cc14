// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Embedding gather: x[t] = widen(table[tokens[t]]), one block per token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "baton/core/dtype.hpp"
#include "baton/core/quant.hpp"
#include "baton/grid/grid.hpp"

namespace baton::kernels {

/// Element (row, col) of a [rows, cols] weight table: widened, or dequantized from its blocks.
template <StorageType S>
BATON_HD float table_value(const S* t, std::size_t row, std::size_t col, std::size_t cols) {
  return widen(t[row * cols + col]);
}
BATON_HD inline float table_value(BlockView t, std::size_t row, std::size_t col, std::size_t cols) {
  return block_element(t, row, col, cols);
}

/// x[t] = the embedding row of token t, for tables in any weight storage S.
template <WeightStorage S>
struct EmbedKernel {
  using Table = std::conditional_t<BlockStorage<S>, BlockView, const S*>;
  static constexpr unsigned kThreads = 256;
  static constexpr int kPhases = 1;
  struct Args {
    Table table{};                         ///< [vocab, hidden]
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
    const auto row = static_cast<std::size_t>(a.tokens[t]);
    const auto H = static_cast<std::size_t>(a.hidden);
    float* out = a.x + t * H;
    for (int i = static_cast<int>(at.thread); i < a.hidden; i += kThreads)
      out[i] = table_value(a.table, row, static_cast<std::size_t>(i), H);
  }
};

}  // namespace baton::kernels
