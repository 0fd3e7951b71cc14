// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The accept rule: what taking a chosen id does to a generation. Written once and
///        used by every decode loop — the host Decoder (model/decode.hpp), the device step
///        kernel (kernels/phased/decode_step.hpp) and the batch scheduler, which drives
///        Decoders — so a change to it changes them all.
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

}  // namespace baton::kernels
