// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The device-resident decode step: choose, accept and write the next forward's inputs
///        from a loop state kept in backend memory, so the host queues every step ahead and
///        reads the outcome once (model/device_loop.hpp drives it).
///
/// ArgmaxPartialKernel<Chain> (kernels/phased/argmax_split.hpp) first reduces slices of the
/// logits row, after the chain's device transforms, to (value, id) partials over many blocks;
/// then one block of DecodeStepKernel<Chain> per step:
///   phase 0: the argmax of those partials (the host Decoder's rule: largest value, lowest id
///            on a tie, -1 for a non-finite winner);
///   phase 1: thread 0 runs the step's advance and accept phases on the id, as the host Decoder
///            does (kernels/step_policy.hpp: the chain's device advance, then accept_step's
///            stop ids, interceptor stop and max_new), then writes the
///            descriptor and token id of the forward that feeds it back — after checking the write
///            position against the slot's counter. A mismatch writes nothing: it sets the error
///            flag and ends the loop, and the host turns the flag into position_error at its one
///            read.
/// Once `done` is set every later step is a no-op and every later forward appends nothing
/// (descriptor tokens = 0), so the host may queue max_new steps without looking.
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton/grid/collectives.hpp"
#include "baton/grid/grid.hpp"
#include "baton/kernels/accept.hpp"
#include "baton/kernels/argmax.hpp"
#include "baton/kernels/phased/argmax_split.hpp"
#include "baton/kernels/phased/descriptor.hpp"
#include "baton/kernels/sample.hpp"
#include "baton/kernels/step_policy.hpp"

namespace baton::kernels {

/// Why a device loop ended early (DeviceLoopState::error).
enum DeviceLoopError : std::int32_t {
  kLoopOk = 0,
  kLoopPositionMismatch = 1,  ///< a write position differed from the slot's counter
  kLoopNonFinite = 2,         ///< the logits' winner was NaN or Inf
};

/// The loop's state in backend memory: the generation's StepState (kernels/accept.hpp: the
/// host Decoder's own, which the loop starts from and hands back), plus what only the loop
/// needs and the outcome the host reads once. All 32-bit integers, so the generated ids can
/// follow it in one buffer and one copy brings both back.
struct DeviceLoopState {
  StepState step;
  std::int32_t error = kLoopOk;  ///< DeviceLoopError
  std::int32_t error_pos = -1;   ///< the position the failed step computed
  /// Test hook: added to the position a step computes for its append, to force a mismatch.
  std::int32_t position_skew = 0;
  /// A word the caller's launches after the loop may set before the one read (a relay's
  /// device gate writes its verdict here: relay/stage.hpp); -1 otherwise.
  std::int32_t verdict = -1;
  /// A sampled loop's penalty counts (kernels::count_generated over its ids): how much of its
  /// tables is filled, and how many of the ids are counted (SampleChooseKernel catches up at
  /// each step, so the accept step needs no sampling state).
  PenaltyCursor penalties{};
  std::int32_t counted = 0;
};

/// 32-bit words of the state; the generated ids start right after it.
inline constexpr int kLoopStateWords = sizeof(DeviceLoopState) / sizeof(std::int32_t);
static_assert(sizeof(DeviceLoopState) == kLoopStateWords * sizeof(std::int32_t));
/// The word at byte `offset` of the loop's buffer.
constexpr int loop_word(std::size_t offset) {
  return static_cast<int>(offset / sizeof(std::int32_t));
}
/// Words of the state that a relay reads on the device: the count of generated ids (the
/// hand-off's length, relay/device_handoff.hpp) and the verdict its gate writes.
inline constexpr int kLoopStepsWord =
    loop_word(offsetof(DeviceLoopState, step) + offsetof(StepState, steps));
inline constexpr int kLoopVerdictWord = loop_word(offsetof(DeviceLoopState, verdict));
/// The word a step's argmax partials skip their work on (`done`).
inline constexpr int kLoopDoneWord =
    loop_word(offsetof(DeviceLoopState, step) + offsetof(StepState, done));

/// Stop ids a step carries in its arguments (more fall back to the stepped loop).
inline constexpr int kMaxDeviceStopIds = 16;

/// Accepts `id` into `st` by the step's accept phase (StepPhases::accept; thread 0 of the step, see
/// the file comment) and stores it after the state. Returns the position the next forward appends
/// `id` at, or -1 when no forward follows (done, or an error).
BATON_HD inline int accept_on_device(DeviceLoopState& st, std::int32_t* ids, std::int32_t id,
                                     int stopper, const std::int32_t* stop_ids, int n_stop) {
  StepState& s = st.step;
  const Accepted verdict = StepPhases::accept(s, id, stopper, stop_ids, n_stop);
  if (verdict == Accepted::invalid) {
    st.error = kLoopNonFinite;
    st.error_pos = s.origin + s.steps;
    return -1;
  }
  if (verdict == Accepted::stop_id) return -1;  // ends the generation; the id is not kept
  ids[s.steps - 1] = id;
  if (verdict == Accepted::keep_last) return -1;  // nothing reads the last token's K/V
  const int at = feed_position(s) + st.position_skew;
  if (at != s.position) {
    st.error = kLoopPositionMismatch;
    st.error_pos = at;
    s.done = 1;
    return -1;
  }
  fed(s);
  return at;
}

/// One decode step on the device; `Chain` is the stage's InterceptorChain (its device members'
/// advance runs here in phase 1; their transform_logit ran in the ArgmaxPartialKernel<Chain>
/// launched just before, on the same state).
template <class Chain>
struct DecodeStepKernel {
  static constexpr unsigned kThreads = kMaxArgmaxPartials;  ///< one partial per thread
  static constexpr int kPhases = 2;
  struct Args {
    const ArgmaxPair* partials = nullptr;  ///< the last forward's row, reduced per slice
    int n_partials = 0;                    ///< argmax_split(vocab).count
    std::int32_t* loop = nullptr;          ///< DeviceLoopState, then [max_new] generated ids
    typename Chain::device_params params{};
    typename Chain::device_state* chain_state = nullptr;  ///< the branch's device states
    std::int32_t stop_ids[kMaxDeviceStopIds] = {};
    int n_stop = 0;
    ForwardDesc* desc = nullptr;     ///< the next forward's descriptor
    std::int32_t* tokens = nullptr;  ///< the next forward's token id
  };
  struct Shared {
    grid::BlockReduceStorage<ArgmaxPair, kThreads> best;
  };
  struct Regs {};
  static grid::LaunchConfig config() { return {1, 1, kThreads}; }

  BATON_HD static DeviceLoopState& state(const Args& a) {
    return *reinterpret_cast<DeviceLoopState*>(a.loop);
  }

  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared& sh, Regs&, const Args& a) {
    if constexpr (P == 0) {
      // `done` is written only by thread 0 in phase 1, so every thread of phase 0 sees the
      // same value and the block skips the collective together.
      if (state(a).step.done) return;
      grid::block_reduce(at, sh.best, partial_of(a.partials, a.n_partials, at.thread),
                         grid::ArgmaxOp{});
    } else if (at.thread == 0 && !state(a).step.done) {
      const std::int32_t id = argmax_id(sh.best.result);
      const int stopper = StepPolicy<Chain>::advance(a.params, a.chain_state, id);
      const int pos =
          accept_on_device(state(a), a.loop + kLoopStateWords, id, stopper, a.stop_ids, a.n_stop);
      if (pos >= 0) {
        *a.desc = ForwardDesc{pos, 1};
        a.tokens[0] = id;
      } else {
        a.desc->tokens = 0;  // every later forward appends nothing
      }
    }
  }
};

/// Writes one DeviceLoopState from the kernel's arguments (the loop's start, queued like any
/// launch: no host copy, no wait).
struct LoopStartKernel {
  static constexpr unsigned kThreads = 32;
  static constexpr int kPhases = 1;
  struct Args {
    DeviceLoopState value;
    std::int32_t* loop = nullptr;
  };
  struct Shared {};
  struct Regs {};
  static grid::LaunchConfig config() { return {1, 1, kThreads}; }
  template <int P>
  BATON_HD static void phase(const grid::ThreadIndex& at, Shared&, Regs&, const Args& a) {
    if (at.thread == 0) *reinterpret_cast<DeviceLoopState*>(a.loop) = a.value;
  }
};

}  // namespace baton::kernels
