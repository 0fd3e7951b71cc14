// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief BackendOps<B>: the customization point where a backend supplies the forward
///        operations a family's schedule calls.
///
/// Generic code (forward, the decode loop, stages, relays) names only BackendOps<B>; the
/// backend's own header specializes it (model/host_ops.hpp for the host, a .cuh for CUDA).
/// That keeps a backend's code (host SIMD kernels, cuBLAS) out of every generic header: a program
/// includes the backend it runs on — model/host_forward.hpp, or baton/baton.hpp for all.
#pragma once

#include <cstdint>

#include "baton/backend/backend.hpp"

namespace baton {

/// Specialize for a backend B with:
///   - `template <class Model, class Slice, class Cache> class forward_ops`, constructed as
///     `forward_ops(model, ws, slice, cache, target, first_pos, tokens, logit_rows,
///     adapter_from)` (the slice's activation start, lora/activation.hpp), providing
///     `embed()`, the schedule's operations (ForwardOpsArchetype in model/family/family.hpp)
///     and `head()` returning the logits as `logits_view`;
///   - `using logits_view`: where a forward's logits live (a span of backend memory);
///   - optionally `using exec`: an executor of the grid kernels (model/device_loop.hpp), which
///     gives the backend the device-resident decode loop and its split argmax
///     (model/device_choice.hpp);
///   - optionally `static std::int32_t draw_token(row, n, draw, scratch, logprobs_out)`: the
///     sampler's passes over a host row computed faster, with kernels::draw_token's results
///     (greedy included: the exact argmax); the decode step uses kernels::draw_token otherwise;
///   - optionally `static void for_each_row(ws, n, f)`: f(i) for i in [0, n) on the
///     workspace's threads, so the batch scheduler chooses a batch's host rows in parallel.
/// The primary template is left undefined on purpose: see HasBackendOps.
template <Backend B>
struct BackendOps;

/// Whether B's forward operations are visible in this translation unit.
template <class B>
concept HasBackendOps = requires {
  sizeof(BackendOps<B>);
};

}  // namespace baton
