// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Attention over a KV span (prefix then tail) split across blocks (flash-decoding):
///        each block scores one chunk of positions for one (token, q head) and writes a
///        partial softmax (its max, its sum of weights and the weighted sum of values); a
///        second kernel merges the partials. The causal mask is the per-token length
///        desc->first_pos + t + 1, so one kernel serves decode (1 token) and prefill (n).
///
/// Grids are sized from capacity (splits = chunks covering the cache's capacity); a chunk past
/// a token's length writes an empty partial (max -INFINITY, sum 0), which the merge weighs 0.
#pragma once

#include <cmath>
#include <cstddef>

#include "baton/core/dtype.hpp"
#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/phased/descriptor.hpp"
#include "baton/kv/kv_view.hpp"

namespace baton::kernels {

/// Positions one block of the split attention scores.
inline constexpr int kAttentionChunk = 128;

/// Chunks needed to cover `capacity` positions: the split count a launch is sized for.
constexpr int attention_splits(int capacity) {
  return capacity <= 0 ? 1 : (capacity + kAttentionChunk - 1) / kAttentionChunk;
}

/// Where the partials of split `s` of row `row` live: [rows, splits] pairs (max, sum) and
/// [rows, splits, D] weighted value sums.
struct AttentionPartials {
  float* max_sum = nullptr;  ///< [rows * splits * 2]
  float* acc = nullptr;      ///< [rows * splits * head_dim]
  int splits = 1;
};

/// The weight of a partial with max `m` in a merge whose overall max is `overall`:
/// exp(m - overall), and 0 for an empty partial (m = -INFINITY).
BATON_HD inline float merge_weight(float m, float overall) {
  return m == -INFINITY ? 0.0f : expf(m - overall);
}

template <KvLayout L>
struct SplitAttentionKernel {
  static constexpr unsigned kThreads = kAttentionChunk;  // one position per thread
  static constexpr int kPhases = 4;
  static constexpr int D = L::head_dim;
  /// Row r = t * q_heads + h: query token t, head h (kv head h / group).
  struct Args {
    KvSpan<L> kv;              ///< the layer's keys and values, prefix (kv.first) then tail
    const float* q = nullptr;  ///< head h of token t at q + t * q_stride + h * D
    int q_stride = 0;
    int q_heads = 0;
    int group = 1;
    float scale = 1.0f;
    const ForwardDesc* desc = nullptr;
    AttentionPartials out;
  };
  struct Shared {
    float q[D];
    float w[kThreads];
    grid::BlockReduceStorage<float, kThreads> max;
    grid::BlockReduceStorage<float, kThreads> sum;
  };
  struct Regs {
    float score;
  };
  /// tokens x q_heads rows, splits from the capacity the cache can reach.
  static grid::LaunchConfig config(int tokens, int q_heads, int splits) {
    return {static_cast<unsigned>(tokens * q_heads), static_cast<unsigned>(splits), kThreads};
  }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs& r, const Args& a) {
    const int row = static_cast<int>(at.block_x);
    const int t = row / a.q_heads, h = row % a.q_heads, kvh = h / a.group;
    const int start = static_cast<int>(at.block_y) * kAttentionChunk;
    const int len = a.desc->first_pos + t + 1;  // the causal mask
    const int pos = start + static_cast<int>(at.thread);
    const bool valid = pos < len;
    if constexpr (P == 0) {
      const float* q = a.q + static_cast<std::size_t>(t) * a.q_stride + h * D;
      for (int d = static_cast<int>(at.thread); d < D; d += kThreads) sh.q[d] = q[d];
    } else if constexpr (P == 1) {
      float s = -INFINITY;
      if (valid) {
        const auto* k = a.kv.key(kvh, pos);
        float dot = 0.0f;
        for (int d = 0; d < D; ++d) dot += sh.q[d] * widen(k[d]);
        s = dot * a.scale;
      }
      r.score = s;
      grid::block_reduce(at, sh.max, s, grid::MaxOp{});
    } else if constexpr (P == 2) {
      const float w = valid ? expf(r.score - sh.max.result) : 0.0f;
      sh.w[at.thread] = w;
      grid::block_reduce(at, sh.sum, w, grid::SumOp{});
    } else {
      const int count =
          len - start < 0 ? 0 : (len - start > kAttentionChunk ? kAttentionChunk : len - start);
      const std::size_t part = static_cast<std::size_t>(row) * a.out.splits + at.block_y;
      for (int d = static_cast<int>(at.thread); d < D; d += kThreads) {
        float acc = 0.0f;
        for (int j = 0; j < count; ++j) acc += sh.w[j] * widen(a.kv.value(kvh, start + j)[d]);
        a.out.acc[part * D + d] = acc;
      }
      if (at.thread == 0) {
        a.out.max_sum[2 * part] = count > 0 ? sh.max.result : -INFINITY;
        a.out.max_sum[2 * part + 1] = sh.sum.result;
      }
    }
  }
};

/// Merges the partials of every split into the attention output of each row.
template <int HeadDim>
struct AttentionCombineKernel {
  static constexpr unsigned kThreads = 64;
  static constexpr int kPhases = 2;
  struct Args {
    AttentionPartials in;
    float* out = nullptr;  ///< head h of token t at out + t * out_stride + h * HeadDim
    int out_stride = 0;
    int q_heads = 0;
  };
  struct Shared {
    grid::BlockReduceStorage<float, kThreads> max;
  };
  struct Regs {};
  static grid::LaunchConfig config(int tokens, int q_heads) {
    return {static_cast<unsigned>(tokens * q_heads), 1, kThreads};
  }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    const int row = static_cast<int>(at.block_x);
    const float* ms = a.in.max_sum + static_cast<std::size_t>(row) * a.in.splits * 2;
    if constexpr (P == 0) {
      float m = -INFINITY;
      for (int s = static_cast<int>(at.thread); s < a.in.splits; s += kThreads)
        m = grid::MaxOp{}(m, ms[2 * s]);
      grid::block_reduce(at, sh.max, m, grid::MaxOp{});
    } else {
      const float overall = sh.max.result;
      const float* acc = a.in.acc + static_cast<std::size_t>(row) * a.in.splits * HeadDim;
      float den = 0.0f;
      for (int s = 0; s < a.in.splits; ++s) den += merge_weight(ms[2 * s], overall) * ms[2 * s + 1];
      const int t = row / a.q_heads, h = row % a.q_heads;
      float* out = a.out + static_cast<std::size_t>(t) * a.out_stride + h * HeadDim;
      for (int d = static_cast<int>(at.thread); d < HeadDim; d += kThreads) {
        float num = 0.0f;
        for (int s = 0; s < a.in.splits; ++s)
          num += merge_weight(ms[2 * s], overall) * acc[static_cast<std::size_t>(s) * HeadDim + d];
        out[d] = num / den;
      }
    }
  }
};

}  // namespace baton::kernels
