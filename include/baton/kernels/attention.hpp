// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Causal attention of one query head over a KV span (prefix then tail), online softmax;
///        AttentionParams is everything one layer's attention reads and writes.
#pragma once

#include <cmath>
#include <cstddef>

#include "baton/core/dtype.hpp"
#include "baton/core/macros.hpp"
#include "baton/kv/kv_view.hpp"

namespace baton::kernels {

/// out = softmax(q · K[0..len)^T · scale) · V[0..len) for one query head reading `kv_head`.
/// The span's parts are the prefix, a shared sequence's tail (if any) and the slot's tail;
/// `len` stops at the query's own position + 1, which is the causal mask. Scores and the
/// running sum stay f32.
///
/// Keys are scored a block at a time (one running-max correction per block, not per key), and
/// each dot product sums `lanes` interleaved partial sums folded pairwise: loops of that shape
/// have no serial dependence, so a compiler vectorizes them for whatever instruction set the
/// caller is compiled for (the host backend instantiates this under AVX2 and AVX-512 targets,
/// backend/host_attention.hpp). The order of the additions is fixed by D alone.
template <KvLayout L>
BATON_HD inline void attend_one(const float* q, const KvSpan<L>& span, int kv_head, int len,
                                float scale, float* out) {
  constexpr int D = L::head_dim;
  constexpr int lanes = D % 16 == 0 ? 16 : D % 8 == 0 ? 8 : D % 4 == 0 ? 4 : 1;
  constexpr int block = 32;
  float acc[D];
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (int p0 = 0; p0 < len; p0 += block) {
    const int nb = len - p0 < block ? len - p0 : block;
    float score[block];
    float block_max = -INFINITY;
    for (int j = 0; j < nb; ++j) {
      const int p = p0 + j;
      const auto* k = span.key(kv_head, p);
      float part[lanes];
      for (int l = 0; l < lanes; ++l) part[l] = 0.0f;
      for (int d0 = 0; d0 < D; d0 += lanes)
        for (int l = 0; l < lanes; ++l) part[l] += q[d0 + l] * widen(k[d0 + l]);
      for (int w = lanes / 2; w > 0; w /= 2)
        for (int l = 0; l < w; ++l) part[l] += part[l + w];
      score[j] = part[0] * scale;
      block_max = score[j] > block_max ? score[j] : block_max;
    }
    if (block_max > running_max) {
      const float correction = expf(running_max - block_max);  // 0 on the first block
      running_sum *= correction;
      for (int d = 0; d < D; ++d) acc[d] *= correction;
      running_max = block_max;
    }
    for (int j = 0; j < nb; ++j) {
      const int p = p0 + j;
      const auto* v = span.value(kv_head, p);
      const float w = expf(score[j] - running_max);
      running_sum += w;
      for (int d = 0; d < D; ++d) acc[d] += w * widen(v[d]);
    }
  }
  const float inv = 1.0f / running_sum;
  for (int d = 0; d < D; ++d) out[d] = acc[d] * inv;
}

/// One layer's attention for `tokens` query tokens, as one plain struct (a CUDA launch takes
/// it by value). Query token t sits at absolute position `first_pos + t` and attends to
/// positions [0, first_pos + t]; query head h reads kv head h / group.
template <KvLayout L>
struct AttentionParams {
  KvSpan<L> kv;              ///< the layer's keys and values, prefix then tail
  const float* q = nullptr;  ///< [tokens, q_stride]: head h of token t at t * q_stride + h * D
  int q_stride = 0;
  float* out = nullptr;  ///< [tokens, out_stride]: same addressing as q
  int out_stride = 0;
  int tokens = 0;
  int q_heads = 0;
  int group = 1;       ///< query heads per kv head (GQA)
  int first_pos = 0;   ///< absolute position of query token 0
  float scale = 1.0f;  ///< 1 / sqrt(head_dim)
};

/// Attention of query token `t`, head `h` (the unit a host loop iterates and a CUDA block owns).
template <KvLayout L>
BATON_HD inline void attend(const AttentionParams<L>& p, int t, int h) {
  constexpr int D = L::head_dim;
  attend_one<L>(p.q + static_cast<std::size_t>(t) * p.q_stride + h * D, p.kv, h / p.group,
                p.first_pos + t + 1, p.scale,
                p.out + static_cast<std::size_t>(t) * p.out_stride + h * D);
}

}  // namespace baton::kernels
