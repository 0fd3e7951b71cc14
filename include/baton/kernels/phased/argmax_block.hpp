// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Greedy choice on the device: one block per row of logits reduces (value, id) pairs
///        with kernels::argmax_better (the host's rule: largest value, lowest id on a tie, NaN
///        wins) and stores kernels::argmax_id (-1 for a non-finite winner).
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/argmax.hpp"

namespace baton::kernels {

struct ArgmaxKernel {
  static constexpr unsigned kThreads = 256;
  static constexpr int kPhases = 2;
  struct Args {
    const float* logits = nullptr;  ///< [rows, stride]
    int n = 0;                      ///< entries per row (n >= 1)
    int stride = 0;
    std::int32_t* out = nullptr;  ///< [rows]
  };
  struct Shared {
    grid::BlockReduceStorage<ArgmaxPair, kThreads> best;
  };
  struct Regs {};
  static grid::LaunchConfig config(int rows) { return {static_cast<unsigned>(rows), 1, kThreads}; }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if constexpr (P == 0) {
      const float* row = a.logits + static_cast<std::size_t>(at.block_x) * a.stride;
      // Threads past the row start from its first entry: a duplicate of a candidate
      // changes nothing (same value, same id).
      const int first = static_cast<int>(at.thread) < a.n ? static_cast<int>(at.thread) : 0;
      ArgmaxPair best{row[first], first};
      for (int i = first + static_cast<int>(kThreads); i < a.n; i += kThreads)
        best = argmax_better(best, ArgmaxPair{row[i], i});
      grid::block_reduce(at, sh.best, best, grid::ArgmaxOp{});
    } else if (at.thread == 0) {
      a.out[at.block_x] = argmax_id(sh.best.result);
    }
  }
};

}  // namespace baton::kernels
