// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The batch scheduler's choice on a device: the greedy rows of a batched forward chosen
///        together (kernels::ArgmaxRowsKernel, then ArgmaxRowsCombineKernel, per 64 rows) and
///        read back in one copy, where choosing row by row waits once per row.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "baton/core/error.hpp"
#include "baton/kernels/phased/argmax_split.hpp"
#include "baton/model/device_loop.hpp"
#include "baton/model/workspace.hpp"

namespace baton {

/// Where a logits view's floats are: a host span's data, or a device view's pointer.
template <class View>
const float* logits_pointer(const View& v) {
  if constexpr (requires { v.data(); })
    return v.data();
  else
    return raw_pointer(v.data);
}

/// ids[i] = the argmax (kernels::argmax's rule: the largest logit, the lowest id on a tie, -1
/// for a non-finite row) of row rows[i] of `logits` (rows of `vocab` floats in backend memory,
/// a batched forward's), with one wait on `ws`'s context however many rows there are.
template <Backend B>
requires HasDeviceLoop<B>
void argmax_rows(Workspace<B>& ws, const float* logits, int vocab, std::span<const int> rows,
                 std::span<std::int32_t> ids) {
  using Part = kernels::ArgmaxRowsKernel;
  using Combine = kernels::ArgmaxRowsCombineKernel;
  BATON_CHECK(ids.size() == rows.size(), usage_error, "argmax_rows: ", rows.size(), " rows but ",
              ids.size(), " ids");
  if (rows.empty()) return;
  const grid::Slices split = kernels::argmax_split(vocab);
  auto& s = ws.extras.scratch();
  ws.extras.grow(s.argmax_partials, static_cast<std::size_t>(kernels::kMaxChoiceRows) *
                                        static_cast<std::size_t>(split.count));
  ws.extras.grow(s.chosen, rows.size());
  typename BackendOps<B>::exec exec(ws);
  for (std::size_t first = 0; first < rows.size(); first += kernels::kMaxChoiceRows) {
    const int n =
        static_cast<int>(std::min<std::size_t>(kernels::kMaxChoiceRows, rows.size() - first));
    Part::Args part{};
    part.logits = logits;
    part.n = vocab;
    part.chunk = split.chunk;
    part.count = split.count;
    std::copy_n(rows.begin() + static_cast<std::ptrdiff_t>(first), n, part.rows);
    part.partials = raw_pointer(s.argmax_partials.data());
    exec.template launch<Part>(Part::config(vocab, n), part);
    exec.template launch<Combine>(
        Combine::config(n), {part.partials, split.count, raw_pointer(s.chosen.data()) + first});
  }
  exec.read(raw_pointer(s.chosen.data()), ids);  // the one wait
}

}  // namespace baton
