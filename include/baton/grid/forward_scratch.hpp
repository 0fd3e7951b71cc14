// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief GridScratch: what a forward through phased kernels needs beside the activations —
///        the descriptor and token ids in backend memory, the LoRA intermediate, the
///        split-attention, RMSNorm and argmax partials, the chosen ids, a sampled loop's
///        working memory. Sized when a stage is pre-warmed (reserve_device_run,
///        model/device_loop.hpp), grown only through the workspace's counted path
///        (ExecBinding::grow), never shrunk.
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton/backend/backend.hpp"
#include "baton/kernels/argmax.hpp"
#include "baton/kernels/phased/descriptor.hpp"
#include "baton/kernels/sample.hpp"

namespace baton::grid {

template <Backend B>
struct GridScratch {
  template <class T>
  using buffer = typename B::template buffer<T>;

  buffer<kernels::ForwardDesc> desc;
  buffer<std::int32_t> tokens;
  buffer<float> lora_u;         ///< [n, rank]
  buffer<float> attn_max_sum;   ///< [rows, splits, 2]
  buffer<float> attn_acc;       ///< [rows, splits, head_dim]
  buffer<float> widened;        ///< a 16-bit matrix widened to f32 (device prefill GEMM)
  buffer<float> norm_squares;   ///< [rows, slices]: RMSNorm's sums of squares per slice
  buffer<std::int32_t> chosen;  ///< [rows]: argmax results
  buffer<kernels::ArgmaxPair> argmax_partials;  ///< [kMaxArgmaxPartials]: one row's slices
  /// The device loop's state and generated ids (kernels::DeviceLoopState, then [max_new]; then
  /// [max_new] kernels::LogprobRecords when a sampled loop reports log-probabilities).
  buffer<std::int32_t> loop;
  // A sampled device loop's working memory (kernels/phased/sample_step.hpp).
  buffer<kernels::Candidate> sample_candidates;  ///< [sample_scratch_size(vocab)]
  buffer<float> sample_weights;                  ///< [vocab]: a wide kept set's weights
  buffer<double> sample_bins;                    ///< [kSampleBins]: top-p's bins, the draw's blocks
  buffer<kernels::SeenToken> sample_seen;        ///< [max_new]: the penalties' counts
  buffer<std::int32_t> sample_window;            ///< [min(repeat_last_n, max_new)]
  // A batch's sampled rows with logit_bias or penalties (model/device_choice.hpp).
  buffer<float> sample_rows;             ///< [rows][vocab]: their copies, rewritten
  buffer<std::int32_t> sample_rewrites;  ///< their bias entries and penalty counts, staged

  /// Tokens one forward pass takes at most: a longer prefill runs in chunks of this many, so
  /// the activations and attention partials stay bounded (docs/cuda.md gives the formula).
  int chunk_tokens = kDefaultChunkTokens;
  static constexpr int kDefaultChunkTokens = 256;
};

}  // namespace baton::grid
