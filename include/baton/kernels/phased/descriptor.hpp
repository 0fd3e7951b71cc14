// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief ForwardDesc: the positions a forward's kernels read at run time, from backend
///        memory rather than from launch arguments, so that a captured launch sequence (a CUDA
///        graph) can be replayed for the next step after the descriptor alone is rewritten.
#pragma once

namespace baton::kernels {

/// The one small struct a forward writes before its kernels run. Grids are sized from
/// capacities, never from these values; kernels mask what lies past them.
struct ForwardDesc {
  int first_pos = 0;  ///< absolute position of the forward's first token
  int tokens = 0;     ///< tokens appended by this forward
};

}  // namespace baton::kernels
