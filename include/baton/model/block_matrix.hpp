// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A base model's weight matrix in its storage: `weight_matrix<B, S>` is a plain buffer
///        of S for the float storages and a BlockMatrix (Q8_0 / Q4_0 blocks, or f16 where rows
///        are not whole blocks) for the block storages; `weights(m)` is what the products take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "baton/backend/backend.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/quant.hpp"

namespace baton {

/// A matrix [rows, cols] of a block-quantized model, row-major: each row is
/// block_row_bytes(format, cols) bytes (whole blocks, or f16 values when format is f16).
template <Backend B>
struct BlockMatrix {
  BlockFormat format = BlockFormat::f16;
  std::size_t rows = 0, cols = 0;
  typename B::template buffer<std::uint8_t> bytes;

  /// Elements (rows × cols), as a plain buffer's size().
  std::size_t size() const noexcept { return rows * cols; }
  bool empty() const noexcept { return rows == 0 || cols == 0; }
};

namespace detail {
template <Backend B, class S, bool Block = BlockStorage<S>>
struct weight_matrix_of {
  using type = typename B::template buffer<S>;
};
template <Backend B, class S>
struct weight_matrix_of<B, S, true> {
  using type = BlockMatrix<B>;
};
}  // namespace detail

/// How a base model of storage S on backend B holds one weight matrix.
template <Backend B, WeightStorage S>
using weight_matrix = typename detail::weight_matrix_of<B, S>::type;

/// What the products take: a pointer to the elements for the float storages...
template <class Buf>
auto weights(const Buf& b) -> decltype(raw_pointer(b.data())) {
  return raw_pointer(b.data());
}
/// ... the blocks and their format for the block storages.
template <Backend B>
BlockView weights(const BlockMatrix<B>& m) {
  return {raw_pointer(m.bytes.data()), m.format};
}

/// Bytes the matrix occupies (what one product reads).
template <class Buf>
std::size_t matrix_bytes(const Buf& b) {
  return b.size() * sizeof(std::remove_pointer_t<decltype(raw_pointer(b.data()))>);
}
template <Backend B>
std::size_t matrix_bytes(const BlockMatrix<B>& m) {
  return m.bytes.size();
}

}  // namespace baton
