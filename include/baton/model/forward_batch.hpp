// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief forward_batch(): one forward over many rows — each with its own adapter, cache
///        target, position and tokens — through the family's one layer schedule. The base
///        products run once over every row's tokens (the weights are read once per step);
///        each row adds its own adapter's update and attends over its own cache.
///
/// Rows next to each other with the same adapter share one LoRA product (Punica's grouping):
/// order rows by adapter to read each adapter once. Prefill chunks (many tokens) and decode
/// steps (one) mix freely in a batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "baton/core/error.hpp"
#include "baton/model/batch_row.hpp"
#include "baton/model/forward.hpp"

namespace baton {

namespace detail {
/// B's batched forward operations for these types (an alias: GCC 12 misreads the member
/// template in a requires-expression's type requirement).
template <class B, class Model, class Slice, class Cache>
using batch_ops_t = typename BackendOps<B>::template batch_ops<Model, Slice, Cache>;
}  // namespace detail

/// Whether backend B has batched forward operations (BackendOps<B>::batch_ops, constructed from
/// the model, a workspace and the rows): forward_batch() applies.
template <class B, class Model, class Slice, class Cache>
concept BatchedForward = requires {
  typename detail::batch_ops_t<B, Model, Slice, Cache>;
}
&&std::is_constructible_v<detail::batch_ops_t<B, Model, Slice, Cache>, const Model&, Workspace<B>&,
                          std::span<const BatchRow<Slice, Cache>>>;
template <Backend B, class Model, class Slice, class Cache>
inline constexpr bool has_batched_forward_v = BatchedForward<B, Model, Slice, Cache>;

/// The checks forward_batch() makes on one row before anything is written (forward()'s: ids
/// in the vocabulary, the adapter's layers and activation start, the cache's write contract). A
/// batch scheduler calls it per row first, so that one request's bad row fails that request alone.
template <Backend B, WeightStorage S, ModelFamily F, class Slice, class Cache>
void check_batch_row(const BaseModel<B, S, F>& model, const BatchRow<Slice, Cache>& row) {
  const ModelConfig& c = model.config();
  BATON_CHECK(row.cache != nullptr, usage_error, "forward_batch: a row without a cache");
  for (std::size_t i = 0; i < row.tokens.size(); ++i) {
    BATON_CHECK(row.tokens[i] >= 0 && row.tokens[i] < c.vocab_size, usage_error,
                "forward_batch: token id ", row.tokens[i], " at index ", i,
                " is outside the vocabulary [0, ", c.vocab_size, ")");
  }
  const int n = static_cast<int>(row.tokens.size());
  BATON_CHECK(n > 0, usage_error, "forward_batch: no tokens to append to ",
              row.cache->describe(row.target));
  if (row.slice != nullptr) {
    BATON_CHECK(row.slice->num_layers() == c.num_layers, shape_error, "forward_batch: slice '",
                row.slice->name(), "' has ", row.slice->num_layers(), " layers, the model ",
                c.num_layers);
    detail::check_adapter_from(*row.slice, row.adapter_from, "forward_batch");
  }
  row.cache->check_write(row.target, row.position, n);
}

/// Runs `rows` through the model in one forward and returns the logits of the rows that ask
/// for them (BatchRow::logits), one row of [vocab] each in row order, in the workspace (valid
/// until the next forward with `ws`). Every row is checked before anything is written (a row
/// that fails its checks fails the batch: check_batch_row() each row first to isolate it), and
/// two rows may not write the same cache target. Each row's cache position advances only after
/// the whole forward succeeded.
template <Backend B, WeightStorage S, ModelFamily F, class Slice, class Cache>
auto forward_batch(const BaseModel<B, S, F>& model, Workspace<B>& ws,
                   std::span<const BatchRow<Slice, Cache>> rows) {
  using Model = BaseModel<B, S, F>;
  static_assert(has_batched_forward_v<B, Model, Slice, Cache>,
                "forward_batch: this backend has no batched forward operations "
                "(BackendOps<B>::batch_ops)");
  using Ops = detail::batch_ops_t<B, Model, Slice, Cache>;
  BATON_CHECK(!rows.empty(), usage_error, "forward_batch: no rows");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    check_batch_row(model, rows[i]);
    for (std::size_t j = 0; j < i; ++j) {
      BATON_CHECK(rows[j].cache != rows[i].cache || rows[j].target.slot != rows[i].target.slot,
                  usage_error, "forward_batch: rows ", j, " and ", i, " both write ",
                  rows[i].cache->describe(rows[i].target));
    }
  }
  Ops ops(model, ws, rows);
  run_layers(ops, model);
  for (const auto& r : rows) r.cache->commit(r.target, static_cast<int>(r.tokens.size()));
  return ops.head();
}

}  // namespace baton
