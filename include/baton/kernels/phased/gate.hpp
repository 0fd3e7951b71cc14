// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The relay's built-in gates on the device: whether the gating stage's output (ids
///        and count in backend memory) starts with, or contains, a needle of ids. The verdict
///        is written into the stage's loop state, so the stage's one read brings it back with
///        the ids (relay/stage.hpp queues it after the stage's device loop).
///
/// One block: every thread tries the start offsets t, t + kThreads, ... (only 0 for
/// starts_with) and the block ORs the matches; thread 0 stores 1 (pass) or 0 (fail).
#pragma once

#include <cstdint>

#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"

namespace baton::kernels {

/// Which built-in gate a device gate evaluates.
enum DeviceGateMode : std::int32_t {
  kGateNone = 0,  ///< no device gate: the host evaluates the relay's gate (if any)
  kGateStartsWith = 1,
  kGateContains = 2,
};

/// A built-in gate as the device loop takes it: the needle in backend memory.
struct DeviceGate {
  std::int32_t mode = kGateNone;
  const std::int32_t* needle = nullptr;
  std::int32_t n = 0;
};

/// Whether `needle[0, n)` occurs in `ids` at `start` (`ids` holds at least start + n ids).
BATON_HD inline bool needle_at(const std::int32_t* ids, const std::int32_t* needle, int n,
                               int start) {
  for (int k = 0; k < n; ++k)
    if (ids[start + k] != needle[k]) return false;
  return true;
}

struct GateKernel {
  static constexpr unsigned kThreads = 256;
  static constexpr int kPhases = 2;
  struct Args {
    DeviceGate gate;
    const std::int32_t* ids = nullptr;     ///< the output
    const std::int32_t* length = nullptr;  ///< its count (backend memory)
    std::int32_t* pass = nullptr;          ///< 1 pass, 0 fail
  };
  /// OR of 0/1 flags, for the block reduction.
  struct AnyOp {
    BATON_HD int operator()(int a, int b) const { return a | b; }
  };
  struct Shared {
    grid::BlockReduceStorage<int, kThreads> any;
  };
  struct Regs {};
  static grid::LaunchConfig config() { return {1, 1, kThreads}; }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if constexpr (P == 0) {
      const int len = *a.length, n = a.gate.n;
      // Start offsets that leave room for the whole needle; an empty needle matches at 0.
      const int last = a.gate.mode == kGateStartsWith ? (len >= n ? 0 : -1) : len - n;
      int found = 0;
      for (int s = static_cast<int>(at.thread); s <= last && !found; s += kThreads)
        found = needle_at(a.ids, a.gate.needle, n, s) ? 1 : 0;
      grid::block_reduce(at, sh.any, found, AnyOp{});
    } else if (at.thread == 0) {
      *a.pass = sh.any.result;
    }
  }
};

}  // namespace baton::kernels
