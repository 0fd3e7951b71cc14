// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief KV layouts: where (kv_head, position) lives inside one layer's K or V block.
///
/// A layout fixes the element type and head_dim at compile time; head_dim is always the
/// contiguous innermost dimension so attention kernels load whole head vectors.
#pragma once

#include <concepts>
#include <cstddef>

#include "baton/core/dtype.hpp"
#include "baton/core/macros.hpp"

namespace baton {

/// A KV layout policy: `element` (a storage type), `head_dim`, a `name`, and
/// `offset(kv_head, pos, capacity, kv_heads)` giving the element offset of that head vector
/// inside a block holding `capacity` positions of `kv_heads` heads.
template <class L>
concept KvLayout = requires(int h, int p, int cap, int nkv) {
  typename L::element;
  requires StorageType<typename L::element>;
  { L::head_dim } -> std::convertible_to<int>;
  requires L::head_dim >
  0 && L::head_dim % 2 == 0;
  { L::name } -> std::convertible_to<const char*>;
  { L::offset(h, p, cap, nkv) } -> std::same_as<std::size_t>;
};

namespace layout {

/// [kv_head][position][head_dim]: one head's keys are contiguous across positions, which
/// suits attention that walks positions for a fixed head (decode).
template <StorageType T, int HeadDim>
struct HeadMajor {
  using element = T;
  static constexpr int head_dim = HeadDim;
  static constexpr const char* name = "head-major";
  BATON_HD static constexpr std::size_t offset(int kv_head, int pos, int capacity, int) {
    return (static_cast<std::size_t>(kv_head) * capacity + pos) * HeadDim;
  }
};

/// [position][kv_head][head_dim]: one position's heads are contiguous, which suits writing
/// a token's K/V in one store and copying whole prefixes.
template <StorageType T, int HeadDim>
struct TokenMajor {
  using element = T;
  static constexpr int head_dim = HeadDim;
  static constexpr const char* name = "token-major";
  BATON_HD static constexpr std::size_t offset(int kv_head, int pos, int, int kv_heads) {
    return (static_cast<std::size_t>(pos) * kv_heads + kv_head) * HeadDim;
  }
};

}  // namespace layout

static_assert(KvLayout<layout::HeadMajor<f32, 64>>);
static_assert(KvLayout<layout::TokenMajor<bf16, 128>>);

}  // namespace baton
