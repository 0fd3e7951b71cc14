// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A forward (a stage's prefill) of ids that a kernel writes into the workspace's
///        scratch: the relay's hand-off on a device-loop backend (relay/device_handoff.hpp).
///        The host knows only the count, which sizes the launches; the ids never leave
///        backend memory.
#pragma once

#include <algorithm>
#include <cstdint>

#include "baton/core/error.hpp"
#include "baton/kernels/phased/descriptor.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/device_loop.hpp"
#include "baton/model/forward.hpp"

namespace baton {

/// Appends `tokens` ids to `target` at `expected_pos`, where `fill(exec, ids, desc)` queues
/// the kernel that writes them into `ids` (room for `tokens`) and the descriptor
/// {expected_pos, tokens} into `desc`; returns the last row of logits. The slice's update
/// applies from position `adapter_from` on (forward()'s parameter). The checks of forward()
/// run first — except the vocabulary's: the ids are checked where they come from (a relay's
/// literals and request on the host, outputs chosen by argmax). Nothing is queued if one fails.
template <Backend B, WeightStorage S, ModelFamily F, int R, KvLayout L, class Fill>
requires HasDeviceLoop<B>
auto forward_in_scratch(const BaseModel<B, S, F>& model, Workspace<B>& ws,
                        const LoraSlice<R, B>& slice, KvBuffer<L, B>& cache, KvTarget target,
                        int expected_pos, int tokens, Fill&& fill,
                        int adapter_from = kAdapterFromSlice) {
  using Model = BaseModel<B, S, F>;
  using Exec = typename BackendOps<B>::exec;
  using Ops = GridForwardOps<Model, LoraSlice<R, B>, KvBuffer<L, B>, Exec>;
  const ModelConfig& c = model.config();
  detail::check_forward(c, slice, cache, target, expected_pos, tokens, adapter_from);
  auto& s = ws.extras.scratch();
  Ops::reserve(ws, c, kernels::attention_splits(cache.capacity(target)),
               std::min(tokens, pass_tokens(s)), 1, tokens);
  Exec exec(ws);
  fill(exec, raw_pointer(s.tokens.data()), raw_pointer(s.desc.data()));

  auto logits =
      Ops::run_passes(model, ws, slice, cache, target, expected_pos, tokens, {}, 1, adapter_from);
  cache.commit(target, tokens);
  return logits;
}

}  // namespace baton
