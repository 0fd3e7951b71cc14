// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief kv::append: store one head's K and V rows at an absolute position (shared by the
///        host loop and a CUDA kernel; narrowing to the layout's element type happens here).
#pragma once

#include "baton/core/dtype.hpp"
#include "baton/core/macros.hpp"
#include "baton/kv/kv_view.hpp"

namespace baton::kv {

/// Stores element `d` of kv head `head`'s K and V (f32, narrowed to the layout's element) at
/// absolute position `pos` of `dst`: the unit one device thread writes.
template <KvLayout L>
BATON_HD inline void append_element(const KvAppend<L>& dst, int pos, int head, int d, float k,
                                    float v) {
  using E = typename L::element;
  const int index = dst.index(pos);
  dst.block.key(head, index)[d] = narrow<E>(k);
  dst.block.value(head, index)[d] = narrow<E>(v);
}

/// Writes `k[0..D)` and `v[0..D)` (f32) as kv head `head` at absolute position `pos` of `dst`.
/// The caller has already checked the write against the cache's contract
/// (KvBuffer::check_write); this is the store only.
template <KvLayout L>
BATON_HD inline void append(const KvAppend<L>& dst, int pos, int head, const float* k,
                            const float* v) {
  for (int d = 0; d < L::head_dim; ++d) append_element(dst, pos, head, d, k[d], v[d]);
}

}  // namespace baton::kv
