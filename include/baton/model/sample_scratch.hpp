// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host memory a draw works in (kernels::SampleScratch): one generation's own
///        (SampleScratchBuffers, a Sampler's), or the calling thread's of a pool
///        (SampleScratchPool: the batch scheduler's threads choosing a batch's rows).
///
/// Why a pool: a draw over a wide kept set writes the row's weights (600 KB at a 152k
/// vocabulary) and reads them back. Sixteen generations each with their own scratch write
/// sixteen buffers that are cold in cache, so each row pays for fetching its lines before
/// writing them; a thread that draws in its own scratch row after row finds it in its cache
/// (benchmarks/sampling_bench.cpp: 5-15% less for 16 rows). The draw is the same whatever
/// scratch it works in: the scratch holds nothing from one draw to the next.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "baton/kernels/sample.hpp"

namespace baton {

/// A scratch for rows of `vocab` logits, allocated and not written: at 152k its 3.6 MB of
/// candidates, of which a draw writes the kept list only, cost no pass and stay unmapped until
/// written.
struct SampleScratchBuffers {
  SampleScratchBuffers() = default;
  explicit SampleScratchBuffers(int vocab)
      : candidates(std::make_unique_for_overwrite<kernels::Candidate[]>(
            static_cast<std::size_t>(kernels::sample_scratch_size(vocab)))),
        weights(std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(vocab))),
        bins(kernels::kSampleBins) {}
  kernels::SampleScratch view() { return {candidates.get(), weights.get(), bins.data()}; }

  std::unique_ptr<kernels::Candidate[]> candidates;  ///< [sample_scratch_size(vocab)]
  std::unique_ptr<float[]> weights;                  ///< [vocab]: a wide kept set's weights
  std::vector<double> bins;                          ///< [kSampleBins]
};

/// Scratches for rows of `vocab` logits, one for each thread that asks: a thread draws in the
/// same scratch row after row, so its lines are still in that thread's cache.
class SampleScratchPool {
 public:
  explicit SampleScratchPool(int vocab) : vocab_(vocab) {}
  SampleScratchPool(const SampleScratchPool&) = delete;
  SampleScratchPool& operator=(const SampleScratchPool&) = delete;

  int vocab() const { return vocab_; }

  /// The calling thread's scratch, made on its first call (valid while the pool lives; no other
  /// thread is given it).
  kernels::SampleScratch for_this_thread() {
    const std::thread::id me = std::this_thread::get_id();
    const std::lock_guard lock(mutex_);
    for (const auto& slot : slots_)
      if (slot->thread == me) return slot->buffers.view();
    slots_.push_back(std::make_unique<Slot>(vocab_, me));
    return slots_.back()->buffers.view();
  }

 private:
  struct Slot {
    Slot(int vocab, std::thread::id t) : buffers(vocab), thread(t) {}
    SampleScratchBuffers buffers;
    std::thread::id thread;
  };

  int vocab_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Slot>> slots_;  // a Slot does not move: views point into it
};

}  // namespace baton
