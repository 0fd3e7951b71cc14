// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host grid: runs a phased kernel (grid/grid.hpp) on the CPU with the launch
///        configuration a GPU would get — every block, round by round, phase by phase, every
///        thread of the block in index order within a phase, the end of a phase standing for
///        the barrier.
///
/// This is how kernels are tested on machines without a GPU: indexing, tiling, masking and
/// the cross-block combines run exactly as written. What it cannot show (the memory model,
/// races between threads of one phase, speed) is what the GPU check is for.
#pragma once

#include <cstring>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/grid/grid.hpp"

namespace baton::grid {

namespace detail {

/// NaN in every float, -1 in every integer: what a kernel reads from memory nobody wrote.
template <class T>
void poison(T* p, std::size_t n) {
  std::memset(static_cast<void*>(p), 0xff, n * sizeof(T));
}

template <PhasedKernel K, int... P>
void run_block(std::integer_sequence<int, P...>, ThreadIndex at, typename K::Shared& shared,
               std::vector<typename K::Regs>& regs, const typename K::Args& args) {
  const auto run_phase = [&]<int Phase>() {
    for (unsigned t = 0; t < K::kThreads; ++t) {
      at.thread = t;
      K::template phase<Phase>(at, shared, regs[t], args);
    }
  };
  (run_phase.template operator()<P>(), ...);
}

}  // namespace detail

/// Runs `K` over `cfg` on the host. usage_error for a launch a GPU would refuse (check_launch).
template <PhasedKernel K>
void run_on_host_grid(const LaunchConfig& cfg, const typename K::Args& args) {
  check_launch(cfg, K::kThreads);
  const unsigned rounds = rounds_of<K>(cfg, args);
  typename K::Shared shared;
  std::vector<typename K::Regs> regs(K::kThreads);
  for (unsigned by = 0; by < cfg.grid_y; ++by) {
    for (unsigned bx = 0; bx < cfg.grid_x; ++bx) {
      for (unsigned r = 0; r < rounds; ++r) {
        // Poisoned before every round: nothing may carry over from the round before.
        detail::poison(&shared, 1);
        detail::poison(regs.data(), regs.size());
        ThreadIndex at{bx, by, cfg.grid_x, cfg.grid_y, 0, K::kThreads};
        at.round = r;
        detail::run_block<K>(std::make_integer_sequence<int, K::kPhases>{}, at, shared, regs, args);
      }
    }
  }
}

}  // namespace baton::grid
