// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Attention over a KV span (prefix then tail) split across blocks (flash-decoding):
///        each block scores one split of positions for one (token, q head) and writes a
///        partial softmax (its max, its sum of weights and the weighted sum of values); a
///        second kernel merges the partials. The causal mask is the per-token length
///        desc->first_pos + t + 1, so one kernel serves decode (1 token) and prefill (n).
///
/// Grids are sized from capacity, so a captured step serves every position; a split past a
/// token's length writes an empty partial (max -INFINITY, sum 0), which the merge weighs 0.
/// The split count is bounded (attention_split): small caches get one split per 128 positions
/// (up to kAttentionSplitsTarget, enough blocks to fill the GPU at batch 1), larger ones give
/// each split a longer span (up to kAttentionMaxSpan positions, whose weights the block keeps
/// in shared memory), so the partials a forward needs grow with its tokens, not with tokens x
/// capacity (docs/cuda.md: the scratch formula).
#pragma once

#include <cmath>
#include <cstddef>

#include "baton/core/dtype.hpp"
#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/phased/descriptor.hpp"
#include "baton/kv/kv_view.hpp"

namespace baton::kernels {

/// Threads of a split-attention block: positions one pass of the block scores.
inline constexpr int kAttentionChunk = 128;
/// Splits a cache gets before its splits grow longer instead of more numerous.
inline constexpr int kAttentionSplitsTarget = 32;
/// Positions one split covers at most (its weights live in the block's shared memory: 16 KiB).
inline constexpr int kAttentionMaxSpan = 4096;

/// How a capacity is split: `splits` blocks per (token, head), each covering `span` positions
/// (a multiple of kAttentionChunk).
struct AttentionSplit {
  int splits = 1;
  int span = kAttentionChunk;
};

/// The split a launch for `capacity` positions is sized for: one split per 128 positions up to
/// kAttentionSplitsTarget splits, then longer spans, and more splits only once a span would
/// pass kAttentionMaxSpan (beyond 128k positions).
constexpr AttentionSplit attention_split(int capacity) {
  if (capacity <= 0) return {};
  const auto ceil_div = [](long a, long b) { return static_cast<int>((a + b - 1) / b); };
  const int chunks = ceil_div(capacity, kAttentionChunk);
  int splits = chunks < kAttentionSplitsTarget ? chunks : kAttentionSplitsTarget;
  const int at_least = ceil_div(capacity, kAttentionMaxSpan);
  if (splits < at_least) splits = at_least;
  const int span = ceil_div(ceil_div(capacity, splits), kAttentionChunk) * kAttentionChunk;
  return {splits, span};
}

/// The split count for `capacity` (attention_split(capacity).splits).
constexpr int attention_splits(int capacity) { return attention_split(capacity).splits; }

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
  static constexpr unsigned kThreads = kAttentionChunk;  // one position per thread and pass
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
    int span = kAttentionChunk;  ///< positions per split (attention_split), <= kAttentionMaxSpan
  };
  struct Shared {
    float q[D];
    float w[kAttentionMaxSpan];  ///< the split's scores, then its weights
    grid::BlockReduceStorage<float, kThreads> max;
    grid::BlockReduceStorage<float, kThreads> sum;
  };
  struct Regs {};
  /// tokens x q_heads rows, splits from the capacity the cache can reach.
  static grid::LaunchConfig config(int tokens, int q_heads, int splits) {
    return {static_cast<unsigned>(tokens * q_heads), static_cast<unsigned>(splits), kThreads};
  }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    const int row = static_cast<int>(at.block_x);
    const int t = row / a.q_heads, h = row % a.q_heads, kvh = h / a.group;
    const int start = static_cast<int>(at.block_y) * a.span;
    const int len = a.desc->first_pos + t + 1;  // the causal mask
    const int passes = a.span / kAttentionChunk;
    const int me = static_cast<int>(at.thread);
    if constexpr (P == 0) {
      const float* q = a.q + static_cast<std::size_t>(t) * a.q_stride + h * D;
      for (int d = me; d < D; d += kThreads) sh.q[d] = q[d];
    } else if constexpr (P == 1) {
      float m = -INFINITY;
      for (int k = 0; k < passes; ++k) {
        const int j = k * kAttentionChunk + me, pos = start + j;
        float s = -INFINITY;
        if (pos < len) {
          const auto* key = a.kv.key(kvh, pos);
          float dot = 0.0f;
          for (int d = 0; d < D; ++d) dot += sh.q[d] * widen(key[d]);
          s = dot * a.scale;
        }
        sh.w[j] = s;  // only this thread reads it back (phase 2), so no barrier is needed
        m = grid::MaxOp{}(m, s);
      }
      grid::block_reduce(at, sh.max, m, grid::MaxOp{});
    } else if constexpr (P == 2) {
      float sum = 0.0f;
      for (int k = 0; k < passes; ++k) {
        const int j = k * kAttentionChunk + me;
        const float w = start + j < len ? expf(sh.w[j] - sh.max.result) : 0.0f;
        sh.w[j] = w;
        sum += w;
      }
      grid::block_reduce(at, sh.sum, sum, grid::SumOp{});
    } else {
      const int count = len - start < 0 ? 0 : (len - start > a.span ? a.span : len - start);
      const std::size_t part = static_cast<std::size_t>(row) * a.out.splits + at.block_y;
      for (int d = me; d < D; d += kThreads) {
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
