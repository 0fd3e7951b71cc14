// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The batch scheduler's choice on a device: the rows of a batched forward chosen
///        together where they are, greedy ones by the split argmax, sampled ones by the
///        sampler (kernels/phased/sample_step.hpp), and read back in one copy, where choosing
///        row by row waits once per row.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/kernels/phased/argmax_split.hpp"
#include "baton/kernels/phased/store_value.hpp"
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

/// What rewrites a sampled row before its draw, as the host holds it (Session::row_rewrites):
/// the request's logit_bias entries and its penalty counts so far.
struct RowRewrites {
  std::span<const kernels::BiasEntry> bias;
  std::span<const kernels::SeenToken> seen;
};

namespace detail {
/// Sizes the split argmax's partials for rows of `vocab` (before an executor is made).
template <Backend B>
void reserve_argmax_rows(Workspace<B>& ws, int vocab) {
  ws.extras.grow(ws.extras.scratch().argmax_partials,
                 static_cast<std::size_t>(kernels::kMaxChoiceRows) *
                     static_cast<std::size_t>(kernels::argmax_split(vocab).count));
}
/// Queues on `exec` the split argmax of `rows` of `logits`, the ids into out[0, rows).
template <Backend B, class Exec>
void launch_argmax_rows(Exec& exec, Workspace<B>& ws, const float* logits, int vocab,
                        std::span<const int> rows, std::int32_t* out) {
  using Part = kernels::ArgmaxRowsKernel;
  using Combine = kernels::ArgmaxRowsCombineKernel;
  const grid::Slices split = kernels::argmax_split(vocab);
  auto& s = ws.extras.scratch();
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
    exec.template launch<Combine>(Combine::config(n), {part.partials, split.count, out + first});
  }
}
}  // namespace detail

/// The choices of one batched forward's rows on a device, as read back: greedy rows' ids, then
/// sampled rows' ids, then the sampled rows' LogprobRecords, all 32-bit words, so one read
/// brings them all. The scheduler keeps one and reuses its memory step after step.
class RowChoices {
 public:
  /// Row i's id, i counting greedy rows first, then sampled ones.
  std::int32_t id(std::size_t i) const { return words_[i]; }
  /// Sampled row j's log-probabilities (that row's top_logprobs was >= 0).
  TokenLogprobs logprobs(std::size_t j) const {
    return read_logprob_record(words_.data() + rows_ +
                               j * static_cast<std::size_t>(kernels::kLogprobWords));
  }

 private:
  template <Backend B>
  requires HasDeviceLoop<B>
  friend void choose_rows(Workspace<B>&, const float*, int, std::span<const int>,
                          std::span<const kernels::RowSampling>, RowChoices&,
                          std::span<const RowRewrites>);
  std::vector<std::int32_t> words_;
  std::size_t rows_ = 0;
  std::vector<std::int32_t> staged_;           ///< the rewrites' words, as choose_rows stages them
  std::vector<kernels::RowSampling> sampled_;  ///< the sampled rows, pointing at them
};

/// Chooses rows of `logits` (rows of `vocab` floats in backend memory, a batched forward's)
/// where they are, with one wait on `ws`'s context however many rows there are: the rows
/// `greedy` by their argmax (kernels::argmax's rule: the largest logit, the lowest id on a
/// tie, -1 for a non-finite row; ArgmaxRowsKernel, then ArgmaxRowsCombineKernel, per 64 rows),
/// the rows of `sampled` by the host Sampler's rule (SampleRowsKernel, per 16 rows), each with
/// its log-probabilities when asked; `rewrites`, empty or one per sampled row: its
/// logit_bias and penalty counts, staged into backend memory from kernel arguments
/// (StoreWordsKernel: no copy to wait for), the row rewritten in a copy. The rows are not
/// changed.
template <Backend B>
requires HasDeviceLoop<B>
void choose_rows(Workspace<B>& ws, const float* logits, int vocab, std::span<const int> greedy,
                 std::span<const kernels::RowSampling> sampled, RowChoices& out,
                 std::span<const RowRewrites> rewrites) {
  BATON_CHECK(rewrites.empty() || rewrites.size() == sampled.size(), usage_error,
              "choose_rows: ", rewrites.size(), " rewrites for ", sampled.size(), " sampled rows");
  const std::size_t rows = greedy.size() + sampled.size();
  const bool records =
      std::any_of(sampled.begin(), sampled.end(),
                  [](const kernels::RowSampling& r) { return r.draw.top_logprobs >= 0; });
  const std::size_t words =
      rows + (records ? sampled.size() * static_cast<std::size_t>(kernels::kLogprobWords) : 0);
  out.rows_ = rows;
  out.words_.resize(words);
  if (rows == 0) return;
  auto& s = ws.extras.scratch();
  const std::size_t per_launch = static_cast<std::size_t>(kernels::kMaxSampledRows);
  ws.extras.grow(s.chosen, words);
  if (!greedy.empty()) detail::reserve_argmax_rows(ws, vocab);
  if (!sampled.empty()) {
    const std::size_t blocks = std::min(sampled.size(), per_launch);
    ws.extras.grow(s.sample_candidates,
                   blocks * static_cast<std::size_t>(kernels::sample_scratch_size(vocab)));
    ws.extras.grow(s.sample_weights, blocks * static_cast<std::size_t>(vocab));
    ws.extras.grow(s.sample_bins, blocks * static_cast<std::size_t>(kernels::kSampleBins));
  }
  // The rewrites' entries as 32-bit words (BiasEntry and SeenToken are two each).
  std::size_t staged_words = 0;
  for (const RowRewrites& r : rewrites)
    staged_words += (r.bias.size_bytes() + r.seen.size_bytes()) / sizeof(std::int32_t);
  const bool rewriting = staged_words > 0;
  if (rewriting) {
    ws.extras.grow(s.sample_rewrites, staged_words);
    ws.extras.grow(s.sample_rows,
                   std::min(sampled.size(), per_launch) * static_cast<std::size_t>(vocab));
  }
  std::int32_t* chosen = raw_pointer(s.chosen.data());
  typename BackendOps<B>::exec exec(ws);
  std::vector<kernels::RowSampling>& sampling = out.sampled_;
  sampling.assign(sampled.begin(), sampled.end());
  if (rewriting) {
    // Packed on the host, each sampled row pointed at its entries' place in backend memory,
    // then written there from kernel arguments.
    std::int32_t* base = raw_pointer(s.sample_rewrites.data());
    std::vector<std::int32_t>& staged = out.staged_;
    staged.resize(staged_words);
    std::size_t at = 0;
    auto stage = [&](auto entries) {
      if (!entries.empty()) std::memcpy(staged.data() + at, entries.data(), entries.size_bytes());
      const std::int32_t* placed = base + at;
      at += entries.size_bytes() / sizeof(std::int32_t);
      return placed;
    };
    for (std::size_t i = 0; i < rewrites.size(); ++i) {
      kernels::RowSampling& r = sampling[i];
      r.bias = reinterpret_cast<const kernels::BiasEntry*>(stage(rewrites[i].bias));
      r.n_bias = static_cast<int>(rewrites[i].bias.size());
      r.seen = reinterpret_cast<const kernels::SeenToken*>(stage(rewrites[i].seen));
      r.n_seen = static_cast<int>(rewrites[i].seen.size());
    }
    using Store = kernels::StoreWordsKernel;
    for (std::size_t off = 0; off < staged_words; off += Store::kInlineWords) {
      Store::Args a;
      a.count = static_cast<int>(
          std::min(staged_words - off, static_cast<std::size_t>(Store::kInlineWords)));
      std::copy_n(staged.begin() + static_cast<std::ptrdiff_t>(off), a.count, a.words);
      a.dst = base + off;
      exec.template launch<Store>(Store::config(), a);
    }
  }
  if (!greedy.empty()) detail::launch_argmax_rows(exec, ws, logits, vocab, greedy, chosen);
  if (!sampled.empty()) {
    using Sample = kernels::SampleRowsKernel;
    for (std::size_t first = 0; first < sampled.size(); first += per_launch) {
      Sample::Args a{};
      a.logits = logits;
      a.n = vocab;
      a.count = static_cast<int>(std::min(per_launch, sampled.size() - first));
      std::copy_n(sampling.begin() + static_cast<std::ptrdiff_t>(first), a.count, a.rows);
      a.copies = rewriting ? raw_pointer(s.sample_rows.data()) : nullptr;
      a.candidates = raw_pointer(s.sample_candidates.data());
      a.weights = raw_pointer(s.sample_weights.data());
      a.bins = raw_pointer(s.sample_bins.data());
      a.ids = chosen + greedy.size() + first;
      // The records' words follow the ids (LogprobRecord is 32-bit words, 4-byte aligned).
      a.records = records ? reinterpret_cast<kernels::LogprobRecord*>(chosen + rows) +
                                static_cast<std::ptrdiff_t>(first)
                          : nullptr;
      exec.template launch<Sample>(Sample::config(a.count), a);
    }
  }
  exec.read(chosen, std::span<std::int32_t>(out.words_));  // the one wait
}

/// ids[i] = the argmax (choose_rows' rule) of row rows[i] of `logits`, with one wait.
template <Backend B>
requires HasDeviceLoop<B>
void argmax_rows(Workspace<B>& ws, const float* logits, int vocab, std::span<const int> rows,
                 std::span<std::int32_t> ids) {
  BATON_CHECK(ids.size() == rows.size(), usage_error, "argmax_rows: ", rows.size(), " rows but ",
              ids.size(), " ids");
  if (rows.empty()) return;
  auto& s = ws.extras.scratch();
  ws.extras.grow(s.chosen, rows.size());
  detail::reserve_argmax_rows(ws, vocab);
  typename BackendOps<B>::exec exec(ws);
  detail::launch_argmax_rows(exec, ws, logits, vocab, rows, raw_pointer(s.chosen.data()));
  exec.read(raw_pointer(s.chosen.data()), ids);  // the one wait
}

}  // namespace baton
