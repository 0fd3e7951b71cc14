// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A generation's step state and the accept rule: what taking a chosen id does to it.
///        Written once and used by every decode loop — the host Decoder (model/decode.hpp),
///        the device step kernel (kernels/phased/decode_step.hpp) and the batch scheduler,
///        which drives Decoders — so a change to either changes them all.
#pragma once

#include <cstdint>

#include "baton/core/macros.hpp"

namespace baton::kernels {

/// The rule's verdict on one id.
enum class Accepted : std::int32_t {
  invalid,    ///< no id (-1: the logits' winner was not finite): the generation fails
  stop_id,    ///< a stop id: the generation ends and the id is not kept
  keep,       ///< kept; the generation goes on (a later forward feeds it back)
  keep_last,  ///< kept, and the generation ends with it (an interceptor's stop, or max_new)
};

/// The verdict on `id` for a generation that has accepted `steps` ids so far, of at most
/// `max_new`; `stopper` >= 0 when an interceptor asked to stop after this id. A stop id wins
/// over an interceptor's stop (the id is not kept either way it ends).
BATON_HD inline Accepted accept_rule(std::int32_t id, int stopper, int steps, int max_new,
                                     const std::int32_t* stop_ids, int n_stop) {
  if (id < 0) return Accepted::invalid;
  for (int k = 0; k < n_stop; ++k)
    if (stop_ids[k] == id) return Accepted::stop_id;
  if (stopper >= 0 || steps + 1 >= max_new) return Accepted::keep_last;
  return Accepted::keep;
}

/// One generation's state between steps, the same struct wherever its loop runs: the host
/// Decoder keeps it in memory, the device loop in backend memory (DeviceLoopState), and the
/// device loop starts from the host's and hands it back. Plain 32-bit integers, so it can be
/// copied to and from a device as words.
struct StepState {
  std::int32_t position = 0;     ///< next KV write position
  std::int32_t origin = 0;       ///< position of the first generated token
  std::int32_t last_token = -1;  ///< the last accepted token (the prompt's last before any)
  std::int32_t steps = 0;        ///< tokens accepted (generated) so far
  std::int32_t done = 1;         ///< nonzero once a stop was reached or max_new
  /// Accepted tokens whose forward has not run yet (the last `pending` ids): 1 after a chosen
  /// token, more after tokens an interceptor supplied.
  std::int32_t pending = 0;
  std::int32_t max_new = 0;      ///< tokens to generate at most
  std::int32_t stop_id = -1;     ///< the stop id chosen, when one ended the generation
  std::int32_t stopped_by = -1;  ///< the chain member that asked to stop, when one did
};

/// The state of a generation whose prompt of `tokens` ids ending in `last` (-1: unknown, the
/// device hand-off's) was appended at `start`, before its first step.
BATON_HD inline StepState state_after_prompt(int start, int tokens, std::int32_t last,
                                             int max_new) {
  StepState st;
  st.position = st.origin = start + tokens;
  st.last_token = last;
  st.max_new = max_new;
  st.done = max_new <= 0 ? 1 : 0;
  return st;
}

/// Takes `id` into `st` by accept_rule: a stop id ends the generation (not kept); a kept id is
/// generated id number st.steps - 1 afterwards and waits (pending) for the forward that feeds
/// it back; `stopper` >= 0 (the member asking) or reaching max_new ends the generation after
/// it. An invalid id ends the generation too: the caller reports the failure.
BATON_HD inline Accepted accept_step(StepState& st, std::int32_t id, int stopper,
                                     const std::int32_t* stop_ids, int n_stop) {
  const Accepted verdict = accept_rule(id, stopper, st.steps, st.max_new, stop_ids, n_stop);
  if (verdict == Accepted::invalid || verdict == Accepted::stop_id) {
    if (verdict == Accepted::stop_id) st.stop_id = id;
    st.done = 1;
    return verdict;
  }
  ++st.steps;
  st.last_token = id;
  ++st.pending;
  if (stopper >= 0) st.stopped_by = stopper;
  if (verdict == Accepted::keep_last) st.done = 1;
  return verdict;
}

/// Where the forward that feeds the pending ids back writes its first one.
BATON_HD inline int feed_position(const StepState& st) { return st.origin + st.steps - st.pending; }
/// The pending ids' forward ran: they are in the cache.
BATON_HD inline void fed(StepState& st) {
  st.position += st.pending;
  st.pending = 0;
}

}  // namespace baton::kernels
