// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The relay's hand-off on the device: a stage's input assembled from its segments'
///        ids where they already lie in backend memory (literal template ids, the request,
///        earlier stages' outputs), with the lengths of outputs read on the device, so a
///        stage's generated ids never travel through the host to become the next stage's
///        input (relay/device_handoff.hpp queues it).
///
/// One block: phase 0 (thread 0) adds up the segments' lengths into offsets; phase 1 copies
/// every segment to its offset, and thread 0 writes the total (and the next forward's
/// descriptor, when asked). Nothing is written at or past `capacity`.
#pragma once

#include <cstdint>

#include "baton/grid/grid.hpp"
#include "baton/kernels/phased/descriptor.hpp"

namespace baton::kernels {

/// Segments one hand-off assembles at most (a stage with more takes the host's assembly).
inline constexpr int kMaxHandoffSegments = 8;

/// Where one segment's ids lie in backend memory: `ids[0, *length)` when `length` is set (an
/// output: its count is read on the device), else `ids[0, fixed)`.
struct IdSource {
  const std::int32_t* ids = nullptr;
  const std::int32_t* length = nullptr;
  std::int32_t fixed = 0;
};

BATON_HD inline int source_length(const IdSource& s) {
  return s.length ? static_cast<int>(*s.length) : static_cast<int>(s.fixed);
}

struct HandoffKernel {
  static constexpr unsigned kThreads = 256;
  static constexpr int kPhases = 2;
  struct Args {
    IdSource segments[kMaxHandoffSegments] = {};
    int n_segments = 0;
    std::int32_t* dst = nullptr;  ///< [capacity]
    int capacity = 0;
    std::int32_t* total = nullptr;  ///< written when not null: the assembled length
    ForwardDesc* desc = nullptr;    ///< written when not null: {first_pos, assembled length}
    int first_pos = 0;
  };
  struct Shared {
    int offset[kMaxHandoffSegments + 1];
  };
  struct Regs {};
  static grid::LaunchConfig config() { return {1, 1, kThreads}; }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if constexpr (P == 0) {
      if (at.thread != 0) return;
      sh.offset[0] = 0;
      for (int k = 0; k < a.n_segments; ++k)
        sh.offset[k + 1] = sh.offset[k] + source_length(a.segments[k]);
    } else {
      for (int k = 0; k < a.n_segments; ++k) {
        const IdSource& s = a.segments[k];
        const int base = sh.offset[k], n = sh.offset[k + 1] - base;
        for (int i = static_cast<int>(at.thread); i < n && base + i < a.capacity; i += kThreads)
          a.dst[base + i] = s.ids[i];
      }
      if (at.thread == 0) {
        const int n = sh.offset[a.n_segments];
        if (a.total) *a.total = n;
        if (a.desc) *a.desc = ForwardDesc{a.first_pos, n < a.capacity ? n : a.capacity};
      }
    }
  }
};

}  // namespace baton::kernels
