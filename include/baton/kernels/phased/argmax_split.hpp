// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Greedy choice on the device over a whole vocabulary, split across blocks: each block
///        of ArgmaxPartialKernel reduces one slice of the row (after the chain's device
///        transform_logit, which the decode step needs) to one (value, id) partial, then one
///        block reduces the partials (ArgmaxCombineKernel, or DecodeStepKernel's phase 0) and
///        stores kernels::argmax_id (-1 for a non-finite winner).
///
/// Why split: one block over a 128k-150k vocabulary runs on one SM, ~600 loads per thread
/// one after another, while the other SMs wait, once per token. Splitting changes no outcome:
/// every fold is kernels::argmax_better (largest value, lowest id on a tie, NaN wins), and the
/// ids travel with the values, so a tie between two slices still goes to the lower id.
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/argmax.hpp"
#include "baton/kernels/step_policy.hpp"

namespace baton::kernels {

/// The most slices a row is split into: one per thread of the block that reduces them.
inline constexpr int kMaxArgmaxPartials = 256;

/// How a row of `n` (>= 1) logits is split: at least four entries per thread (a small
/// vocabulary stays in one block), never more slices than the combine has threads.
constexpr grid::Slices argmax_split(int n) {
  return grid::slices_for(n, 4 * 256, kMaxArgmaxPartials);
}

/// The logits as they are: the Chain of ArgmaxPartialKernel when no interceptor transforms them.
struct PlainLogits {
  static constexpr bool alters_on_device = false;
  struct device_params {};
  struct device_state {};
};

/// Thread `thread`'s candidate among `count` (1 to the block's threads) partials: its own, or
/// past the last one a duplicate of the first (same value, same id: it changes nothing).
BATON_HD inline ArgmaxPair partial_of(const ArgmaxPair* partials, int count, unsigned thread) {
  return partials[static_cast<int>(thread) < count ? thread : 0u];
}

/// This thread's best (value, id) in block_x's slice of a row of `n` logits read through
/// `logit(id)`, before the block's reduction. Threads past the slice start from its first
/// entry: a duplicate changes nothing.
template <unsigned Threads, class Logit>
BATON_HD inline ArgmaxPair slice_best(const grid::ThreadIndex& at, int n, int chunk,
                                      const Logit& logit) {
  const grid::SliceRange s = grid::slice_range(n, chunk, at.block_x);
  const int mine = s.begin + static_cast<int>(at.thread);
  const int first = mine < s.end ? mine : s.begin;
  ArgmaxPair best{logit(first), first};
  for (int i = first + static_cast<int>(Threads); i < s.end; i += Threads)
    best = argmax_better(best, ArgmaxPair{logit(i), i});
  return best;
}

/// Block b reduces entries [b * chunk, min(n, (b + 1) * chunk)) of the row, each as the step's
/// mask phase leaves it (StepPolicy<Chain>::mask), into partials[b].
template <class Chain>
struct ArgmaxPartialKernel {
  static constexpr unsigned kThreads = 256;
  static constexpr int kPhases = 2;
  struct Args {
    const float* logits = nullptr;  ///< [n]
    int n = 0;
    int chunk = 0;  ///< argmax_split(n).chunk
    typename Chain::device_params params{};
    const typename Chain::device_state* chain_state = nullptr;  ///< when the chain alters
    /// When set and nonzero, the launch reads and writes nothing: the device loop's `done`
    /// (its step then reads no partial either).
    const std::int32_t* skip = nullptr;
    ArgmaxPair* partials = nullptr;  ///< [argmax_split(n).count]
  };
  struct Shared {
    grid::BlockReduceStorage<ArgmaxPair, kThreads> best;
  };
  struct Regs {};
  static grid::LaunchConfig config(int n) {
    return {static_cast<unsigned>(argmax_split(n).count), 1, kThreads};
  }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if (a.skip && *a.skip) return;  // the same for every thread of the launch
    if constexpr (P == 0) {
      grid::block_reduce(
          at, sh.best, slice_best<kThreads>(at, a.n, a.chunk, [&](int id) { return logit(a, id); }),
          grid::ArgmaxOp{});
    } else if (at.thread == 0) {
      a.partials[at.block_x] = sh.best.result;
    }
  }

 private:
  BATON_HD static float logit(const Args& a, int id) {
    return StepPolicy<Chain>::mask(a.params, a.chain_state, id, a.logits[id]);
  }
};

/// One block: the winner of `count` partials, as an id (argmax_id: -1 when not finite).
struct ArgmaxCombineKernel {
  static constexpr unsigned kThreads = kMaxArgmaxPartials;
  static constexpr int kPhases = 2;
  struct Args {
    const ArgmaxPair* partials = nullptr;
    int count = 0;  ///< argmax_split(n).count
    std::int32_t* out = nullptr;
  };
  struct Shared {
    grid::BlockReduceStorage<ArgmaxPair, kThreads> best;
  };
  struct Regs {};
  static grid::LaunchConfig config() { return {1, 1, kThreads}; }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if constexpr (P == 0) {
      grid::block_reduce(at, sh.best, partial_of(a.partials, a.count, at.thread), grid::ArgmaxOp{});
    } else if (at.thread == 0) {
      *a.out = argmax_id(sh.best.result);
    }
  }
};

/// Rows a batched choice takes per launch (their indices ride in the kernels' arguments).
inline constexpr int kMaxChoiceRows = 64;

/// The split argmax of up to kMaxChoiceRows rows of a batched forward's logits at once: block
/// (x, y) reduces slice x of logits row rows[y] into partials[y * count + x]
/// (model/device_choice.hpp).
struct ArgmaxRowsKernel {
  static constexpr unsigned kThreads = 256;
  static constexpr int kPhases = 2;
  struct Args {
    const float* logits = nullptr;  ///< [logits rows, n]
    int n = 0;
    int chunk = 0;  ///< argmax_split(n).chunk
    int count = 0;  ///< argmax_split(n).count
    int rows[kMaxChoiceRows] = {};
    ArgmaxPair* partials = nullptr;  ///< [rows, count]
  };
  struct Shared {
    grid::BlockReduceStorage<ArgmaxPair, kThreads> best;
  };
  struct Regs {};
  static grid::LaunchConfig config(int n, int rows) {
    return {static_cast<unsigned>(argmax_split(n).count), static_cast<unsigned>(rows), kThreads};
  }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if constexpr (P == 0) {
      const float* row = a.logits + static_cast<long long>(a.rows[at.block_y]) * a.n;
      grid::block_reduce(at, sh.best,
                         slice_best<kThreads>(at, a.n, a.chunk, [&](int id) { return row[id]; }),
                         grid::ArgmaxOp{});
    } else if (at.thread == 0) {
      a.partials[static_cast<long long>(at.block_y) * a.count + at.block_x] = sh.best.result;
    }
  }
};

/// Block y: the winner of row y's `count` partials, stored as out[y] (argmax_id).
struct ArgmaxRowsCombineKernel {
  static constexpr unsigned kThreads = kMaxArgmaxPartials;
  static constexpr int kPhases = 2;
  struct Args {
    const ArgmaxPair* partials = nullptr;  ///< [rows, count]
    int count = 0;
    std::int32_t* out = nullptr;  ///< [rows]
  };
  struct Shared {
    grid::BlockReduceStorage<ArgmaxPair, kThreads> best;
  };
  struct Regs {};
  static grid::LaunchConfig config(int rows) { return {1, static_cast<unsigned>(rows), kThreads}; }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    const ArgmaxPair* mine = a.partials + static_cast<long long>(at.block_y) * a.count;
    if constexpr (P == 0) {
      grid::block_reduce(at, sh.best, partial_of(mine, a.count, at.thread), grid::ArgmaxOp{});
    } else if (at.thread == 0) {
      a.out[at.block_y] = argmax_id(sh.best.result);
    }
  }
};

}  // namespace baton::kernels
