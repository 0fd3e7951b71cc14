// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Causal attention of one query head over a KV span (prefix then tail), online softmax.
#pragma once

#include <cmath>

#include "baton/core/dtype.hpp"
#include "baton/core/macros.hpp"
#include "baton/kv/kv_buffer.hpp"

namespace baton::kernels {

/// out = softmax(q · K[0..len)^T · scale) · V[0..len) for one query head reading `kv_head`.
/// The span's first part is the prefix block, the second the slot's tail; `len` stops at the
/// query's own position + 1, which is the causal mask. Scores and the running sum stay f32.
template <KvLayout L>
BATON_HD inline void attend_one(const float* q, const KvSpan<L>& span, int kv_head, int len,
                                float scale, float* out) {
  constexpr int D = L::head_dim;
  float acc[D];
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (int p = 0; p < len; ++p) {
    const bool in_first = p < span.first;
    const auto* k = in_first ? span.a.key(kv_head, p) : span.b.key(kv_head, p - span.first);
    const auto* v = in_first ? span.a.value(kv_head, p) : span.b.value(kv_head, p - span.first);
    float score = 0.0f;
    for (int d = 0; d < D; ++d) score += q[d] * widen(k[d]);
    score *= scale;
    if (score > running_max) {
      const float correction = expf(running_max - score);  // 0 on the first key
      running_sum *= correction;
      for (int d = 0; d < D; ++d) acc[d] *= correction;
      running_max = score;
    }
    const float w = expf(score - running_max);
    running_sum += w;
    for (int d = 0; d < D; ++d) acc[d] += w * widen(v[d]);
  }
  const float inv = 1.0f / running_sum;
  for (int d = 0; d < D; ++d) out[d] = acc[d] * inv;
}

}  // namespace baton::kernels
