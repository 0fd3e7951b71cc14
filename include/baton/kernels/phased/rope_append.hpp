// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief RoPE fused with the KV append, one block per token: phase 0 rotates the token's q
///        and k heads in place (kernels::rope_rotate_pair; the inv_freq table already folds
///        linear/llama3 scaling), phase 1 stores the rotated k and the v through the layout's
///        offset function (kv::append_element) at the position the descriptor gives.
#pragma once

#include <cstddef>

#include "baton/grid/grid.hpp"
#include "baton/kernels/phased/descriptor.hpp"
#include "baton/kernels/rope.hpp"
#include "baton/kv/append.hpp"
#include "baton/kv/kv_view.hpp"

namespace baton::kernels {

template <KvLayout L>
struct RopeAppendKernel {
  static constexpr unsigned kThreads = 128;
  static constexpr int kPhases = 2;
  static constexpr int D = L::head_dim;
  struct Args {
    float* qkv = nullptr;  ///< [n, row_stride]: q heads, k heads, v heads of each token
    int row_stride = 0;
    int q_heads = 0;
    int kv_heads = 0;
    const float* inv_freq = nullptr;  ///< [D / 2]
    KvAppend<L> dst;
    const ForwardDesc* desc = nullptr;  ///< token t sits at desc->first_pos + t
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config(int tokens) {
    return {static_cast<unsigned>(tokens), 1, kThreads};
  }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    const int t = static_cast<int>(at.block_x);
    // A device-loop forward after the loop ended appends nothing (descriptor tokens = 0).
    if (t >= a.desc->tokens) return;
    const int pos = a.desc->first_pos + t;
    float* row = a.qkv + static_cast<std::size_t>(t) * a.row_stride;
    if constexpr (P == 0) {
      constexpr int half = D / 2;
      const int pairs = (a.q_heads + a.kv_heads) * half;
      for (int j = static_cast<int>(at.thread); j < pairs; j += kThreads) {
        const int h = j / half, i = j % half;
        rope_rotate_pair(row[h * D + i], row[h * D + i + half], pos, a.inv_freq[i]);
      }
    } else {
      const float* k = row + a.q_heads * D;
      const float* v = k + a.kv_heads * D;
      for (int j = static_cast<int>(at.thread); j < a.kv_heads * D; j += kThreads) {
        kv::append_element(a.dst, pos, j / D, j % D, k[j], v[j]);
      }
    }
  }
};

}  // namespace baton::kernels
