// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The device-resident decode loop: after the prefill, every step (choose, accept,
///        the next forward's inputs) and every forward run from state in backend memory, and
///        the host reads the outcome once.
///
/// What the host queues for a generation of up to max_new tokens (nothing in between is read):
///   LoopStartKernel (the state, from kernel arguments),
///   a step on the prefill's logits: ArgmaxPartialKernel (the vocabulary over many blocks),
///   then DecodeStepKernel (their winner, accepted) — or, for a generation that samples, the
///   chain's TransformRowKernel and SampleChooseKernel (kernels/phased/sample_step.hpp) in
///   place of the partials,
///   (max_new - 1) x { forward from the descriptor the step wrote, the step's two launches },
///   the caller's launches after the loop (a relay's built-in gate on this stage's ids),
/// then one read of the state (with the gate's verdict), the generated ids and, when asked,
/// their log-probabilities. The repeated pair is
/// the same launches at every step (the forward reads position and token from the descriptor;
/// attention is sized from the slot's capacity), so on the GPU it is captured once as a CUDA graph
/// and replayed
/// (`Exec::replay`); on the host grid the same launches simply run in order. Once the loop is
/// done the steps do nothing and the forwards append nothing (their products are skipped too).
///
/// Write positions: before queuing, the host checks that the whole generation fits the slot
/// (capacity_error, as the stepped loop would throw at the step that no longer fits); on the
/// device each step compares the position it computes for the next append with the slot's
/// counter and on a mismatch appends nothing and sets the error flag. At the read the host
/// commits the count of appended tokens to the KvBuffer and turns a set flag into the same
/// position_error the host backend throws (or numeric_error for non-finite logits).
///
/// An executor (BackendOps<B>::exec) provides, besides GridForwardOps' launch and matmul:
///   `replay(times, body)`: runs body's launches `times` times;
///   `read(src, dst)`: copies int32 words from backend memory to the host (the one wait).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/kernels/phased/decode_step.hpp"
#include "baton/kernels/phased/sample_step.hpp"
#include "baton/kernels/phased/store_value.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/lora/activation.hpp"
#include "baton/model/backend_ops.hpp"
#include "baton/model/grid_ops.hpp"
#include "baton/model/sampling.hpp"
#include "baton/model/workspace.hpp"

namespace baton {

/// A kernels::LogprobRecord read back as 32-bit words (the device loop's buffer, a batch's
/// choices: model/device_choice.hpp), as the host's TokenLogprobs.
inline TokenLogprobs read_logprob_record(const std::int32_t* words) {
  kernels::LogprobRecord r;
  static_assert(std::is_trivially_copyable_v<kernels::LogprobRecord>);
  std::memcpy(static_cast<void*>(&r), words, sizeof(r));
  TokenLogprobs t;
  t.id = r.id;
  t.logprob = r.logprob;
  t.n_top = std::clamp(r.n_top, 0, kernels::kMaxTopLogprobs);
  std::copy(r.top, r.top + t.n_top, t.top.begin());
  return t;
}

/// Whether backend B runs its decode loop on the device (its BackendOps name an executor).
template <class B>
concept HasDeviceLoop = HasBackendOps<B> && requires {
  typename BackendOps<B>::exec;
};

/// The one rule for whether a generation may run in backend B's device-resident loop (the
/// Decoder's run() and the relay's device hand-off both ask it): a backend with a device loop,
/// no host interceptor (host members see every step's logits on the host), and at most
/// kernels::kMaxDeviceStopIds stop ids (the loop's fixed stop table).
template <class B>
constexpr bool device_loop_takes(bool host_members, std::size_t stop_ids) {
  if constexpr (HasDeviceLoop<B>) {
    return !host_members && stop_ids <= static_cast<std::size_t>(kernels::kMaxDeviceStopIds);
  } else {
    (void)host_members;
    (void)stop_ids;
    return false;
  }
}

/// Whether backend B's device loop can choose with `s` from step `steps` on: greedy always;
/// sampling with at most kernels::kMaxDeviceBias logit_bias entries (the step's fixed table),
/// and penalties only from the first step (the loop counts the ids it generates; the host's
/// counts are not carried over).
inline bool device_loop_samples(const SamplingOptions& s, int steps) {
  if (s.plain_greedy()) return true;
  return s.logit_bias.size() <= static_cast<std::size_t>(kernels::kMaxDeviceBias) &&
         (steps == 0 || !s.penalized());
}

/// Where a device loop starts: the stepped loop's state right after a forward (pending = 0),
/// and what it may do.
struct DeviceLoopStart {
  /// The generation's state (the Decoder's own): the slot's next write position, the tokens
  /// accepted before the loop (their ids are not re-read), max_new.
  kernels::StepState state;
  std::span<const std::int32_t> stop_ids;  ///< at most kernels::kMaxDeviceStopIds
  int position_skew = 0;                   ///< test hook (DeviceLoopState::position_skew)
  /// The slice's activation start (lora/activation.hpp): at or before `position` (every token
  /// the loop feeds back is adapted) or kAdapterNever (none is). A start inside the loop's
  /// tokens would need the position of each, which its captured step does not know.
  int adapter_from = kAdapterFromSlice;
  /// How the loop chooses: null (or plain greedy) is the split argmax; else the sampler
  /// (device_loop_samples() must hold).
  const SamplingOptions* sampling = nullptr;
};

/// Launches a caller queues after the loop's steps and before its one read (run_device_loop's
/// `after`): `after(exec, loop)` with the loop's buffer (DeviceLoopState, then the ids). A relay
/// evaluates its built-in gate there and writes the verdict into the state's `verdict` word.
struct NoLaunchesAfterLoop {
  template <class Exec>
  void operator()(Exec&, std::int32_t*) const {}
};

/// What the host learns at the loop's one read.
struct DeviceLoopOutcome {
  kernels::DeviceLoopState state;
  std::vector<std::int32_t> ids;  ///< the ids accepted by the loop (after start.state.steps)
  int appended = 0;               ///< tokens the loop's forwards appended (committed)
  /// One per id in `ids`, when the start's sampling options asked for log-probabilities.
  std::vector<TokenLogprobs> logprobs;
};

/// Queues one decode step: the argmax partials of the logits row `part` names, then the step
/// that reduces and accepts them.
template <class Chain, class Exec>
void launch_decode_step(Exec& exec, const typename kernels::ArgmaxPartialKernel<Chain>::Args& part,
                        const typename kernels::DecodeStepKernel<Chain>::Args& step) {
  using Part = kernels::ArgmaxPartialKernel<Chain>;
  using Step = kernels::DecodeStepKernel<Chain>;
  exec.template launch<Part>(Part::config(part.n), part);
  exec.template launch<Step>(Step::config(), step);
}

/// Queues one sampled decode step: the chain's transform of the row (when it alters it), the
/// sampler's choice, then the step that accepts it.
template <class Chain, class Exec>
void launch_sampled_step(Exec& exec, const typename kernels::TransformRowKernel<Chain>::Args& tr,
                         const kernels::SampleChooseKernel::Args& choose,
                         const typename kernels::DecodeStepKernel<Chain>::Args& step) {
  using Transform = kernels::TransformRowKernel<Chain>;
  using Choose = kernels::SampleChooseKernel;
  using Step = kernels::DecodeStepKernel<Chain>;
  if constexpr (Chain::alters_on_device)
    exec.template launch<Transform>(Transform::config(tr.n), tr);
  exec.template launch<Choose>(Choose::config(), choose);
  exec.template launch<Step>(Step::config(), step);
}

/// Sizes a sampled loop's working memory on `ws` (counted growth; nothing when greedy).
template <Backend B>
void reserve_device_sampling(Workspace<B>& ws, int vocab, int max_new, const SamplingOptions& s) {
  if (s.plain_greedy()) return;
  auto& x = ws.extras.scratch();
  if (s.params.temperature > 0.0f) {
    ws.extras.grow(x.sample_candidates,
                   static_cast<std::size_t>(kernels::sample_scratch_size(vocab)));
    ws.extras.grow(x.sample_weights, static_cast<std::size_t>(vocab));
    ws.extras.grow(x.sample_bins, static_cast<std::size_t>(kernels::kSampleBins));
  }
  if (s.penalized()) {
    ws.extras.grow(x.sample_seen, static_cast<std::size_t>(std::max(max_new, 1)));
    if (s.repeat_last_n > 0)
      ws.extras.grow(x.sample_window,
                     static_cast<std::size_t>(std::max(std::min(s.repeat_last_n, max_new), 1)));
  }
}

/// Words of a device loop's buffer: the state, max_new ids, and a LogprobRecord per id when
/// `s` asks for log-probabilities.
inline std::size_t device_loop_words(int max_new, const SamplingOptions* s) {
  const std::size_t n = static_cast<std::size_t>(std::max(max_new, 0));
  const bool logprobs = s && s->logprobs;
  return kernels::kLoopStateWords + n + (logprobs ? n * kernels::kLogprobWords : 0);
}

/// Runs the loop (see the file comment) for `chain` on branch states `params` / `chain_state`
/// (backend memory; null when the chain has no device member), then the caller's `after`
/// launches (NoLaunchesAfterLoop; they may read the ids from the first, so they need a loop
/// that starts at step 0), then the one read. Throws capacity_error before
/// queuing anything when the generation cannot fit the slot, and position_error /
/// numeric_error after the read; in every case the cache's bookkeeping matches what was
/// written and its prefix is untouched.
template <class Chain, class Model, class Slice, class Cache, class After = NoLaunchesAfterLoop>
DeviceLoopOutcome run_device_loop(const Model& model, const Slice& slice, Cache& cache,
                                  Workspace<typename Model::backend>& ws, KvTarget target,
                                  const DeviceLoopStart& start,
                                  const typename Chain::device_params& params,
                                  typename Chain::device_state* chain_state, After&& after = {}) {
  using B = typename Model::backend;
  using Exec = typename BackendOps<B>::exec;
  using Ops = GridForwardOps<Model, Slice, Cache, Exec>;
  using Step = kernels::DecodeStepKernel<Chain>;
  using Start = kernels::LoopStartKernel;
  const ModelConfig& c = model.config();
  const kernels::StepState& first = start.state;
  const int remaining = first.max_new - first.steps;
  BATON_CHECK(remaining > 0 && !first.done && first.pending == 0, usage_error,
              "device loop: nothing left to generate (", first.steps, " of max_new ", first.max_new,
              ", done ", first.done, ", ", first.pending, " ids not fed back)");
  BATON_CHECK(static_cast<int>(start.stop_ids.size()) <= kernels::kMaxDeviceStopIds, usage_error,
              "device loop: ", start.stop_ids.size(), " stop ids; the device step takes at most ",
              kernels::kMaxDeviceStopIds);
  // Every token but the last is fed back: the loop appends at most remaining - 1.
  cache.check_write(target, first.position, remaining - 1);
  detail::check_adapter_from(slice, start.adapter_from, "device loop");
  BATON_CHECK(start.adapter_from <= first.position || start.adapter_from == kAdapterNever,
              usage_error, "device loop: activation start ", start.adapter_from,
              " lies after the loop's first position ", first.position,
              " (it must be at or before it, or kAdapterNever)");
  const SamplingOptions* sampling =
      start.sampling && !start.sampling->plain_greedy() ? start.sampling : nullptr;
  BATON_CHECK(!sampling || device_loop_samples(*sampling, first.steps), usage_error,
              "device loop: these sampling options need the stepped loop (more than ",
              kernels::kMaxDeviceBias, " logit_bias entries, or penalties from step ", first.steps,
              " on)");
  constexpr bool launches_after = !std::is_same_v<std::remove_cvref_t<After>, NoLaunchesAfterLoop>;
  BATON_CHECK(!launches_after || first.steps == 0, usage_error,
              "device loop: the launches after it read the loop's ids, so they need the whole "
              "generation (",
              first.steps, " tokens were accepted before the loop)");

  Ops::reserve(ws, c, kernels::attention_splits(cache.capacity(target)), 1, 1);
  auto& s = ws.extras.scratch();
  const std::size_t words = device_loop_words(first.max_new, sampling);
  ws.extras.grow(s.loop, words);
  if (sampling) reserve_device_sampling(ws, c.vocab_size, first.max_new, *sampling);
  std::int32_t* loop = raw_pointer(s.loop.data());

  Exec exec(ws);
  kernels::DeviceLoopState init;
  init.step = first;
  init.position_skew = start.position_skew;
  init.counted = first.steps;  // a penalized loop starts at step 0 (checked above)
  exec.template launch<Start>(Start::config(), {init, loop});

  typename kernels::ArgmaxPartialKernel<Chain>::Args part{};
  part.logits = raw_pointer(ws.logits.data());
  part.n = c.vocab_size;
  part.chunk = kernels::argmax_split(c.vocab_size).chunk;
  part.params = params;
  part.chain_state = chain_state;
  part.skip = loop + kernels::kLoopDoneWord;
  part.partials = raw_pointer(s.argmax_partials.data());
  typename Step::Args step{};
  step.partials = part.partials;
  step.n_partials = kernels::argmax_split(c.vocab_size).count;
  step.loop = loop;
  step.params = params;
  step.chain_state = chain_state;
  std::copy(start.stop_ids.begin(), start.stop_ids.end(), step.stop_ids);
  step.n_stop = static_cast<int>(start.stop_ids.size());
  step.desc = raw_pointer(s.desc.data());
  step.tokens = raw_pointer(s.tokens.data());

  // A sampled loop: the row transformed in place, the sampler's choice as the one partial.
  typename kernels::TransformRowKernel<Chain>::Args transform{};
  kernels::SampleChooseKernel::Args choose{};
  if (sampling) {
    transform = {
        raw_pointer(ws.logits.data()), c.vocab_size, part.chunk, params, chain_state, part.skip};
    choose.logits = raw_pointer(ws.logits.data());
    choose.n = c.vocab_size;
    choose.loop = loop;
    choose.max_new = first.max_new;
    choose.draw = sampling->draw(0);  // each step sets its own counter
    std::copy(sampling->logit_bias.begin(), sampling->logit_bias.end(), choose.bias);
    choose.n_bias = static_cast<int>(sampling->logit_bias.size());
    choose.penalized = sampling->penalized();
    choose.counts = {raw_pointer(s.sample_seen.data()), raw_pointer(s.sample_window.data()),
                     std::max(sampling->repeat_last_n, 0)};
    choose.scratch = {raw_pointer(s.sample_candidates.data()), raw_pointer(s.sample_weights.data()),
                      raw_pointer(s.sample_bins.data())};
    choose.pick = part.partials;
    step.n_partials = 1;
  }
  auto decode_step = [&] {
    if (sampling)
      launch_sampled_step<Chain>(exec, transform, choose, step);
    else
      launch_decode_step<Chain>(exec, part, step);
  };
  decode_step();  // on the prefill's (or last forward's) row
  exec.replay(remaining - 1, [&] {
    Ops ops(model, ws, slice, cache, target, InputsOnDevice{});
    ops.set_adapted_from(start.adapter_from == kAdapterNever ? 1 : 0);  // checked above
    run_layers(ops, model);
    (void)ops.head();
    decode_step();
  });

  after(exec, loop);

  std::vector<std::int32_t> back(words);
  exec.read(loop, std::span<std::int32_t>(back));  // the one wait

  DeviceLoopOutcome out;
  static_assert(std::is_trivially_copyable_v<kernels::DeviceLoopState>);
  std::memcpy(static_cast<void*>(&out.state), back.data(), sizeof(out.state));
  const kernels::DeviceLoopState& loop_state = out.state;
  const kernels::StepState& st = loop_state.step;
  out.appended = st.position - first.position;
  if (out.appended > 0) cache.commit(target, out.appended);
  if (loop_state.error == kernels::kLoopPositionMismatch) {
    // The same check, and so the same position_error, as a host-backend forward's.
    cache.check_write(target, loop_state.error_pos, 1);
  }
  BATON_CHECK(loop_state.error != kernels::kLoopNonFinite, numeric_error, "decode step ", st.steps,
              " at position ", loop_state.error_pos,
              ": the logits are not finite (NaN or Inf); the model or adapter weights hold "
              "non-finite values or the computation overflowed",
              Chain::distribution_altering
                  ? ", or the interceptors' masks left no token in common (members: " +
                        Chain::member_names() + ")"
                  : std::string());
  BATON_CHECK(loop_state.error == kernels::kLoopOk && st.steps >= first.steps &&
                  st.steps <= first.max_new && st.done,
              device_error, "device loop: inconsistent state read back (error ", loop_state.error,
              ", steps ", st.steps, ", done ", st.done, ")");
  out.ids.assign(back.begin() + kernels::kLoopStateWords + first.steps,
                 back.begin() + kernels::kLoopStateWords + st.steps);
  if (sampling && sampling->logprobs) {
    for (int k = first.steps; k < st.steps; ++k) {
      out.logprobs.push_back(
          read_logprob_record(back.data() + kernels::kLoopStateWords + first.max_new +
                              static_cast<std::size_t>(k) * kernels::kLogprobWords));
    }
  }
  return out;
}

/// Sizes, through the workspace's counted path, everything runs of a stage on `ws` need: a
/// prefill of up to the cache's larger region (in passes of GridScratch::chunk_tokens), the
/// device loop of `max_new` tokens and the hand-off's ids. Stage::prewarm calls it for every
/// slot's workspace, so no request allocates afterwards (each allocation could synchronise the
/// device; the counters in ExecCounters show it). `reach`: the positions a slot can reach when
/// that is more than the cache's own regions (a slot reading a relay's shared sequence starts
/// after it: KvBuffer::rewind_onto); attention's splits are sized for it. `sampling`: the
/// stage's own options, whose sampled loop's memory is sized too (a request's own options
/// that sample where the stage does not grow it at their first run, counted).
template <class Model, class Slice, class Cache>
requires HasDeviceLoop<typename Model::backend>
void reserve_device_run(const Model& model, const Cache& cache,
                        Workspace<typename Model::backend>& ws, int max_new, int reach = 0,
                        const SamplingOptions* sampling = nullptr) {
  using Exec = typename BackendOps<typename Model::backend>::exec;
  using Ops = GridForwardOps<Model, Slice, Cache, Exec>;
  const KvShape& shape = cache.shape();
  const int longest = std::max({shape.prefix_capacity, shape.tail_capacity, 1});
  auto& s = ws.extras.scratch();
  Ops::reserve(
      ws, model.config(),
      kernels::attention_splits(std::max(shape.prefix_capacity + shape.tail_capacity, reach)),
      std::min(longest, pass_tokens(s)), 1, longest);
  ws.extras.grow(s.loop, device_loop_words(max_new, sampling));
  if (sampling) reserve_device_sampling(ws, model.config().vocab_size, max_new, *sampling);
}

/// Writes `value` into element 0 of `dst` on the workspace's stream (StoreValueKernel) on a
/// backend with a device loop, or in place on the host.
template <Backend B, class T>
void store_value(Workspace<B>& ws, typename B::template buffer<T>& dst, const T& value) {
  if constexpr (HasDeviceLoop<B>) {
    using K = kernels::StoreValueKernel<T>;
    typename BackendOps<B>::exec exec(ws);
    exec.template launch<K>(K::config(), {value, raw_pointer(dst.data())});
  } else {
    (void)ws;
    dst.data()[0] = value;
  }
}

}  // namespace baton
