// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Plain views of KV memory as kernels see it: a target, one block, a read span and an
///        append destination. No ownership, no backend, no allocation.
///
/// KvBuffer (kv/kv_buffer.hpp) owns the memory and hands these out; kernels, kv::append
/// (kv/append.hpp) and attention (kernels/attention.hpp) take them by value. Keeping them in a
/// header that includes only the layout and core/ lets device code and the generic forward
/// use them without pulling in the buffer's bookkeeping.
#pragma once

#include "baton/core/macros.hpp"
#include "baton/kv/layout.hpp"

namespace baton {

/// Which region a forward appends to: the shared prefix (pre-warm) or one request slot.
struct KvTarget {
  int slot = -1;  ///< -1 = the prefix
  static constexpr KvTarget prefix() { return KvTarget{-1}; }
  static constexpr KvTarget in_slot(int s) { return KvTarget{s}; }
  constexpr bool is_prefix() const { return slot < 0; }
};

/// One layer's K and V for one region, as kernels address it: positions 0..capacity-1.
template <KvLayout L>
struct KvBlock {
  using element = typename L::element;
  element* k = nullptr;
  element* v = nullptr;
  int capacity = 0;
  int kv_heads = 0;
  BATON_HD element* key(int head, int index) const {
    return k + L::offset(head, index, capacity, kv_heads);
  }
  BATON_HD element* value(int head, int index) const {
    return v + L::offset(head, index, capacity, kv_heads);
  }
};

/// What attention reads for one layer: `first` positions of `a`, then `second` of `b` (prefix
/// then tail for a slot; the prefix alone while pre-warming). A slot that reads a shared
/// sequence (KvBuffer::rewind_onto) has a third part between the two: `middle` positions of `m`,
/// the shared sequence's own tail, so the order is a (the common prefix), m, then b (the slot's
/// tail).
template <KvLayout L>
struct KvSpan {
  KvBlock<L> a;
  int first = 0;
  KvBlock<L> b;
  int second = 0;
  KvBlock<L> m;
  int middle = 0;
  BATON_HD int length() const { return first + middle + second; }
  /// Key / value of `head` at absolute position `pos` (prefix, then the shared tail, then the
  /// slot's tail).
  BATON_HD const typename L::element* key(int head, int pos) const {
    if (pos < first) return a.key(head, pos);
    pos -= first;
    return pos < middle ? m.key(head, pos) : b.key(head, pos - middle);
  }
  BATON_HD const typename L::element* value(int head, int pos) const {
    if (pos < first) return a.value(head, pos);
    pos -= first;
    return pos < middle ? m.value(head, pos) : b.value(head, pos - middle);
  }
};

/// Where one layer's appends land: `block`, whose index 0 holds absolute position `base`
/// (0 for the prefix, the prefix length for a slot's tail). Whoever appends passes absolute
/// positions and never needs to know which region it writes.
template <KvLayout L>
struct KvAppend {
  KvBlock<L> block;
  int base = 0;
  BATON_HD int index(int pos) const { return pos - base; }
};

}  // namespace baton
