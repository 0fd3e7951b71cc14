// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Stage: one adapter with its own pre-warmed KV cache, prefix, input wiring and limits.
///
/// Life of a stage: constructed cold → prewarm() computes the prefix once into the cache's
/// shared region (warm) → any number of requests, each on a slot that rewinds to the prefix
/// length → set_slice() with new adapter weights makes it cold again (the old prefix KV was
/// computed through the old adapter) → prewarm() again starts from an empty cache.
/// A request is a Session: begin() prefills its input, step() generates one token, finish()
/// hands back the ids. run() is that loop; several sessions on different slots may interleave.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/intercept/branch_state.hpp"
#include "baton/intercept/chain.hpp"
#include "baton/intercept/negotiate.hpp"
#include "baton/kernels/phased/gate.hpp"
#include "baton/kernels/phased/handoff.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/decode.hpp"
#include "baton/relay/segments.hpp"
#include "baton/relay/shared_sequence.hpp"

namespace baton {

/// Generation limits of a stage: the decode loop's own options (max_new, stop ids).
using StageLimits = DecodeOptions;

/// What the relay engine needs from a stage, whatever its slice, cache and input types.
/// (Stage-level calls only: one virtual call per stage run, nothing per token.)
template <Backend B>
class StageBase {
 public:
  virtual ~StageBase() = default;
  virtual const std::string& name() const = 0;
  virtual const std::vector<Segment>& input_segments() const = 0;
  virtual void prewarm() = 0;
  virtual bool warm() const = 0;
  /// The shared model's address: every stage of a relay must use the same one.
  virtual const void* model_identity() const = 0;
  /// Serves one request on `slot`: input ids in, generated ids out.
  virtual DecodeResult run(std::span<const std::int32_t> input, int slot) = 0;

  // ---- the device hand-off (relay/device_handoff.hpp), on backends with a device loop ------
  virtual int vocab_size() const = 0;
  virtual int max_new() const = 0;
  /// The longest input a request may bring (the slot's capacity).
  virtual int max_input() const = 0;
  /// Whether run_handed_off() applies: the backend runs a device loop and this stage takes it
  /// (no host interceptor present, at most kernels::kMaxDeviceStopIds stop ids).
  virtual bool takes_device_handoff() const = 0;
  /// Serves one request on `slot` whose `tokens` input ids the hand-off kernel assembles from
  /// `plan`'s segments (backend memory) straight into the slot's scratch; `gate` (mode
  /// kGateNone: none) is evaluated on the output before the stage's one wait.
  virtual DecodeResult run_handed_off(const kernels::HandoffKernel::Args& plan, int tokens,
                                      const kernels::DeviceGate& gate, int slot) = 0;
  /// Where the ids of the latest run_handed_off() on `slot` lie (the device loop's buffer:
  /// ids and their count), valid until the slot's next request.
  virtual kernels::IdSource output_on_device(int slot) = 0;
  /// The workspace of `slot` (its executor queues the relay's own writes).
  virtual Workspace<B>& workspace(int slot) = 0;
  /// Every slot's workspace (a relay checks they share one execution context).
  virtual std::span<Workspace<B>> workspaces() = 0;
  /// The shared sequence this stage reads (Stage::read_shared), or nullptr.
  virtual SharedSequenceBase<B>* shared_sequence() const = 0;
};

template <class StageT>
class Session;

/// One stage of a relay.
/// @tparam Model  BaseModel<B, S>, shared (by reference) with the other stages
/// @tparam Slice  LoraSlice<Rank, B>, owned: the stage's adapter
/// @tparam Cache  KvBuffer<Layout, B>, owned: the stage's prefix + slots
/// @tparam In     wire::Input<Segs...> (checked at compile time) or wire::DynamicInput
/// @tparam Chain  step interceptors (NoInterceptors: exact greedy; intercept/chain.hpp)
/// @tparam Card   what the stage accepts from its chain (StageCard{.exact = true} for a
///                verifier used as the gate); checked at compile time, intercept/negotiate.hpp
template <class Model, class Slice, class Cache, class In = wire::DynamicInput,
          InterceptorChain Chain = NoInterceptors, StageCard Card = StageCard{}>
class Stage final : public StageBase<typename Model::backend> {
 public:
  using backend = typename Model::backend;
  using model_type = Model;
  using slice_type = Slice;
  using cache_type = Cache;
  using input_type = In;
  using chain_type = Chain;
  using session_type = Session<Stage>;
  using request_state = RequestState<Chain, backend>;
  static constexpr StageCard card = Card;
  static_assert(card_accepts_v<Card, Chain>);
  static_assert(std::is_same_v<typename Slice::backend, backend> &&
                    std::is_same_v<typename Cache::backend, backend>,
                "Stage: the model, its slice and its cache must live on the same backend");

  /// Builds a cold stage. Throws capacity_error if `prefix` cannot fit the cache's prefix
  /// region (both sizes in the message).
  Stage(std::string name, const Model& model, Slice slice, KvShape shape,
        std::vector<std::int32_t> prefix, In input, StageLimits limits, Chain chain = {})
      : name_(std::move(name)),
        model_(&model),
        slice_(std::move(slice)),
        cache_(model.config(), shape),
        prefix_(std::move(prefix)),
        segments_(wire::to_segments(input)),
        limits_(std::move(limits)),
        chain_(std::move(chain)),
        workspaces_(shape.slots),
        branch_states_(static_cast<std::size_t>(shape.slots)),
        busy_(shape.slots, false) {
    check_prefix_fits();
    for (std::size_t k = 1; k < segments_.size(); ++k)
      BATON_CHECK(segments_[k].kind != Segment::Kind::shared, wiring_error, "stage '", name_,
                  "': input segment ", k,
                  " is the shared sequence; a stage reads it first or not at all");
    // Each slot's interceptor states live in one buffer made here and reused by every request
    // on the slot: opening a branch then writes its initial states without allocating.
    if constexpr (Chain::has_device_members)
      for (auto& b : branch_states_) b = state_buffer(1);
    BATON_CHECK(limits_.max_new > 0, config_error, "stage '", name_, "': max_new must be > 0 (got ",
                limits_.max_new, ")");
    check_sampling(limits_.sampling);
  }

  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  // ---- lifecycle ---------------------------------------------------------------------
  /// Computes the prefix once into the cache's shared region, from an empty cache.
  void prewarm() override {
    BATON_CHECK(!reads_shared_segment() || shared_, wiring_error, "stage '", name_,
                "' reads the shared sequence (wire::shared) but none was given "
                "(Stage::read_shared)");
    for (std::size_t i = 0; i < busy_.size(); ++i)
      BATON_CHECK(!busy_[i], usage_error, "stage '", name_, "': cannot pre-warm while slot ", i,
                  " serves a request");
    warm_ = false;
    check_prefix_fits();
    // Scratch for every run a slot can serve (prefix, longest input, max_new), sized now: no
    // request allocates (on CUDA an allocation could synchronise the device).
    if constexpr (HasDeviceLoop<backend>) {
      // A slot reading a shared sequence reaches past it: its whole room, then this tail.
      const int reach = shared_cache_ ? shared_cache_->shape().prefix_capacity +
                                            shared_cache_->shape().tail_capacity +
                                            cache_.shape().tail_capacity
                                      : 0;
      for (auto& ws : workspaces_)
        reserve_device_run<Model, Slice, Cache>(*model_, cache_, ws, limits_.max_new, reach);
    }
    cache_.reset_prefix();  // the only place positions go back to 0
    if (!prefix_.empty()) {
      // An activated slice's prefix is adapted from its invocation in the prefix alone, if any.
      forward(*model_, workspaces_[0], slice_, cache_, KvTarget::prefix(), 0,
              std::span<const std::int32_t>(prefix_), Logits::none,
              slice_.activation_start({}, prefix_));
    }
    cache_.freeze_prefix();
    warm_ = true;
  }
  bool warm() const override { return warm_; }
  const void* model_identity() const override { return model_; }

  /// Replaces the adapter. The prefix KV was computed through the old one, so the stage is
  /// cold until prewarm() runs again.
  void set_slice(Slice slice) {
    BATON_CHECK(!shared_ || slice.activated(), usage_error, "stage '", name_,
                "' reads a shared sequence, so its adapter must be an activated LoRA; '",
                slice.name(), "' has no alora_invocation_tokens");
    slice_ = std::move(slice);
    warm_ = false;
  }
  /// set_slice() that hands back the adapter it replaces (a server keeps an evicted adapter's
  /// copy instead of reading its files again). Refused while a slot is in use: a request runs
  /// on the weights it started with.
  Slice exchange_slice(Slice slice) {
    BATON_CHECK(!in_use(), usage_error, "stage '", name_,
                "': cannot replace the adapter while a slot is in use");
    Slice old = std::move(slice_);
    set_slice(std::move(slice));
    return old;
  }

  /// Makes this stage read `shared`, the sequence a relay of activated adapters shares (its
  /// K/V are read, never written, by this stage: relay/shared_sequence.hpp). The stage's input
  /// must start with wire::shared (what follows, typically its invocation, is the stage's own),
  /// its prefix must be empty (the shared one is the common prefix) and its slice activated (a
  /// plain LoRA would adapt the shared tokens, which hold the base's K/V). `shared` must
  /// outlive the stage's requests.
  template <class M, class S>
  void read_shared(SharedSequence<M, S, Cache>& shared) {
    BATON_CHECK(reads_shared_segment(), wiring_error, "stage '", name_,
                "': to read a shared sequence its input must start with wire::shared");
    BATON_CHECK(prefix_.empty(), wiring_error, "stage '", name_, "' has a prefix of ",
                prefix_.size(),
                " tokens; a stage reading a shared sequence starts from its "
                "common prefix");
    BATON_CHECK(slice_.activated(), wiring_error, "stage '", name_,
                "' reads a shared sequence, so its adapter must be an activated LoRA; '",
                slice_.name(), "' has no alora_invocation_tokens");
    BATON_CHECK(shared.model_identity() == static_cast<const void*>(model_), wiring_error,
                "stage '", name_, "' and its shared sequence use different models");
    shared_ = &shared;
    shared_cache_ = &shared.cache();
  }
  SharedSequenceBase<backend>* shared_sequence() const override { return shared_; }
  /// Replaces the prefix ids (cold until prewarm()).
  void set_prefix(std::vector<std::int32_t> prefix) {
    prefix_ = std::move(prefix);
    warm_ = false;
    check_prefix_fits();
  }

  // ---- requests ---------------------------------------------------------------------
  /// Starts a request on `slot`: rewinds the slot to the prefix (or, reading a shared
  /// sequence, to the end of its slot `shared_slot`; -1: the same index) and prefills `input`.
  session_type begin(std::span<const std::int32_t> input, int slot = 0, int shared_slot = -1) {
    check_request(static_cast<long long>(input.size()), slot);
    const int ss = shared_slot < 0 ? slot : shared_slot;
    (void)activation_start(input, ss);  // its check, before the slot is touched
    start_slot(slot, ss);
    session_type s(*this, slot);
    s.decoder_.prefill(input, cache_.position(KvTarget::in_slot(slot)), context(ss));
    return s;
  }

  /// The activation start of a request with `input` (lora/activation.hpp): kAdapterFromSlice
  /// for a plain slice; for an activated one the last occurrence of its invocation in prefix +
  /// input. The prefix's K/V were computed once, with the invocation's last occurrence in the
  /// prefix alone: a request whose input moves which prefix tokens are adapted (its own
  /// occurrence after one in the prefix, or one that starts in the prefix) would need them
  /// recomputed, so it is a usage_error naming both starts.
  ///
  /// A stage reading a shared sequence searches it (slot `shared_slot`) + input instead: the
  /// shared tokens hold the base's K/V, so the last occurrence must lie in the input (or be
  /// absent: nothing adapted), a usage_error otherwise.
  int activation_start(std::span<const std::int32_t> input, int shared_slot = 0) const {
    if (!slice_.activated()) return kAdapterFromSlice;
    if (shared_) {
      const std::span<const std::int32_t> seen = shared_->ids(shared_slot);
      const int start = slice_.activation_start(seen, input);
      BATON_CHECK(start >= static_cast<int>(seen.size()), usage_error, "stage '", name_,
                  "': the activated LoRA's invocation last occurs at position ", start,
                  ", inside the shared sequence (", seen.size(),
                  " tokens), whose K/V are the base model's; the stage's own input must hold it");
      return start;
    }
    const int start = slice_.activation_start(prefix_, input);
    const int in_prefix = slice_.activation_start(prefix_, {});
    const int p = static_cast<int>(prefix_.size());
    BATON_CHECK(std::min(start, p) == std::min(in_prefix, p), usage_error, "stage '", name_,
                "': the activated LoRA's invocation last occurs at position ", start,
                " of this request, but the pre-warmed prefix (", p,
                " tokens) was adapted from position ",
                in_prefix == kAdapterNever ? std::string("(never)") : std::to_string(in_prefix),
                ": the shared prefix cannot serve this request");
    return start;
  }

  /// Starts a request on `slot` whose input of `tokens` ids the caller prefills itself (the
  /// batch scheduler: the session's decoder() takes the forward's row through prefilled()).
  /// Checks what begin() checks and rewinds the slot to the prefix. A `max_new` in
  /// [1, limits().max_new) lowers this request's max_new (a server's max_tokens); 0 keeps it.
  /// Reading a shared sequence, the slot starts at the end of its slot `shared_slot` (-1: the
  /// same index); the first position is then cache().position(KvTarget::in_slot(slot)).
  /// `sampling`, when given, replaces the stage's sampling options for this request (the
  /// scheduler passes each request's own, with the stream of this stage run).
  session_type open(long long tokens, int slot, int max_new = 0, int shared_slot = -1,
                    const SamplingOptions* sampling = nullptr) {
    check_request(tokens, slot);
    BATON_CHECK(max_new >= 0, usage_error, "stage '", name_, "': max_new cap ", max_new, " < 0");
    start_slot(slot, shared_slot < 0 ? slot : shared_slot);
    const bool capped = max_new > 0 && max_new < limits_.max_new;
    if (!capped && !sampling) return session_type(*this, slot);
    StageLimits own = limits_;
    if (capped) own.max_new = max_new;
    if (sampling) {
      check_sampling(*sampling);
      own.sampling = *sampling;
    }
    return session_type(*this, slot, std::make_unique<StageLimits>(std::move(own)));
  }
  /// The cache, writable: the batch scheduler's rows append to its slots.
  Cache& cache_for_batch() { return cache_; }
  int slots() const { return cache_.num_slots(); }
  /// Whether a request holds one of the slots.
  bool in_use() const {
    for (const bool b : busy_)
      if (b) return true;
    return false;
  }

  /// One decode step of `s` (the decode loop's step with the stage's chain on the session's
  /// branch states). Returns whether the request goes on. If a hook throws, the exception
  /// leaves the session abandoned (finish or destroy it); the stage and its cache stay usable.
  bool step(session_type& s) { return s.decoder_.step(); }

  /// Ends `s` and hands back what it generated; the slot is free again.
  DecodeResult finish(session_type& s) { return s.release(); }

  /// begin + the decode loop's run() (step until done, or the device loop) + finish.
  DecodeResult run(std::span<const std::int32_t> input, int slot = 0) override {
    session_type s = begin(input, slot);
    s.decoder_.run();  // device-resident where the backend and the chain allow it
    return finish(s);
  }

  // ---- the device hand-off ----------------------------------------------------------
  int vocab_size() const override { return model_->config().vocab_size; }
  int max_new() const override { return limits_.max_new; }
  int max_input() const override { return cache_.shape().tail_capacity; }
  bool takes_device_handoff() const override {
    // An activated slice looks for its invocation in the input, which the hand-off keeps on
    // the device: such a stage takes its input on the host.
    return !slice_.activated() && limits_.sampling.plain_greedy() &&
           device_loop_takes<backend>(chain_.host_members_present(), limits_.stop_ids.size());
  }
  DecodeResult run_handed_off(const kernels::HandoffKernel::Args& plan, int tokens,
                              const kernels::DeviceGate& gate, int slot) override {
    if constexpr (HasDeviceLoop<backend>) {
      BATON_CHECK(takes_device_handoff(), usage_error, "stage '", name_,
                  "' runs the stepped loop (host interceptors, sampling, or more than ",
                  kernels::kMaxDeviceStopIds, " stop ids): give it its input on the host");
      check_request(tokens, slot);
      cache_.rewind(slot);
      session_type s(*this, slot);
      const int start = cache_.prefix_length();
      s.decoder_.prefill_in_scratch(tokens, start,
                                    [&](auto& exec, std::int32_t* ids, kernels::ForwardDesc* desc) {
                                      using K = kernels::HandoffKernel;
                                      K::Args a = plan;
                                      a.dst = ids;
                                      a.capacity = tokens;
                                      a.total = nullptr;
                                      a.desc = desc;
                                      a.first_pos = start;
                                      exec.template launch<K>(K::config(), a);
                                    });
      s.decoder_.set_device_gate(gate);
      s.decoder_.run_on_device();
      return finish(s);
    } else {
      (void)plan, (void)tokens, (void)gate, (void)slot;
      BATON_FAIL(usage_error, "stage '", name_, "': ", backend::name,
                 " has no device loop, so no device hand-off");
    }
  }
  kernels::IdSource output_on_device(int slot) override {
    if constexpr (HasDeviceLoop<backend>) {
      const std::int32_t* words = raw_pointer(workspaces_.at(slot).extras.scratch().loop.data());
      return {words + kernels::kLoopStateWords, words + kernels::kLoopStepsWord, 0};
    } else {
      (void)slot;
      return {};
    }
  }
  Workspace<backend>& workspace(int slot) override { return workspaces_.at(slot); }

  // ---- facts ------------------------------------------------------------------------
  const std::string& name() const override { return name_; }
  const std::vector<Segment>& input_segments() const override { return segments_; }
  const Model& model() const { return *model_; }
  const Slice& slice() const { return slice_; }
  const Cache& cache() const { return cache_; }
  const std::vector<std::int32_t>& prefix() const { return prefix_; }
  const StageLimits& limits() const { return limits_; }
  const Chain& chain() const { return chain_; }
  /// The per-slot workspaces (on baton::cuda, bind each to the relay's context).
  std::span<Workspace<backend>> workspaces() override { return workspaces_; }

 private:
  friend session_type;

  /// What any request on `slot` needs: a warm stage, a free slot, an input that fits.
  void check_request(long long tokens, int slot) const {
    BATON_CHECK(warm_, usage_error, "stage '", name_,
                "' is cold (not pre-warmed since it was built or its adapter/prefix changed); "
                "call prewarm() first");
    BATON_CHECK(slot >= 0 && slot < cache_.num_slots(), usage_error, "stage '", name_, "': slot ",
                slot, " out of range (", cache_.num_slots(), " slots)");
    BATON_CHECK(!busy_[slot], usage_error, "stage '", name_, "': slot ", slot,
                " already serves a request");
    BATON_CHECK(tokens > 0, usage_error, "stage '", name_, "': empty input");
    BATON_CHECK(tokens <= cache_.shape().tail_capacity, capacity_error, "stage '", name_,
                "': input of ", tokens, " tokens does not fit the slot capacity of ",
                cache_.shape().tail_capacity);
  }

  bool reads_shared_segment() const {
    return !segments_.empty() && segments_[0].kind == Segment::Kind::shared;
  }
  /// The slot at the start of a request: after the prefix, or after the shared slot `ss`.
  void start_slot(int slot, int ss) {
    if (shared_) {
      cache_.rewind_onto(slot, *shared_cache_, ss);
    } else {
      cache_.rewind(slot);
    }
  }
  /// Every token before a request's input on a slot: the prefix, or the shared slot `ss`.
  std::span<const std::int32_t> context(int ss) const {
    if (shared_) return shared_->ids(ss);
    return prefix_;
  }

  /// Sampling options this stage may run with: in range, and not altering the choice on an
  /// exact stage (StageCard::exact: a verifier whose verdict must be the model's) nor on a
  /// graph-captured loop, whose device step chooses by argmax only.
  void check_sampling(const SamplingOptions& s) const {
    s.check(model_->config().vocab_size, "stage '" + name_ + "': ");
    BATON_CHECK(!card.exact || !s.alters_choice(), usage_error, "stage '", name_,
                "' is exact (StageCard::exact) and accepts no sampling that alters the choice "
                "(temperature > 0, logit_bias, penalties)");
    BATON_CHECK(!card.graph_captured || s.plain_greedy(), usage_error, "stage '", name_,
                "' runs a graph-captured loop, which chooses by argmax only: no sampling "
                "options or log-probabilities");
  }
  void check_prefix_fits() const {
    BATON_CHECK(static_cast<long long>(prefix_.size()) <= cache_.shape().prefix_capacity,
                capacity_error, "stage '", name_, "': the prefix has ", prefix_.size(),
                " tokens but the cache's prefix capacity is ", cache_.shape().prefix_capacity);
  }

  std::string name_;
  const Model* model_;
  Slice slice_;
  Cache cache_;
  std::vector<std::int32_t> prefix_;
  std::vector<Segment> segments_;
  StageLimits limits_;
  Chain chain_;
  using state_buffer = typename request_state::branch_type::device_buffer;
  std::vector<Workspace<backend>> workspaces_;  // one per slot: sessions never share logits
  std::vector<state_buffer> branch_states_;     // one per slot: its requests' device states
  std::vector<bool> busy_;
  bool warm_ = false;
  SharedSequenceBase<backend>* shared_ = nullptr;  // read_shared(): the sequence it reads
  const Cache* shared_cache_ = nullptr;            // ... and its K/V
};

/// A request in flight on one slot of a stage. Move-only; the slot is released when the
/// session finishes or is destroyed (also when an exception abandons it).
template <class StageT>
class Session {
 public:
  Session(Session&& o) noexcept
      : stage_(std::exchange(o.stage_, nullptr)),
        slot_(o.slot_),
        own_limits_(std::move(o.own_limits_)),
        request_(std::move(o.request_)),
        decoder_(std::move(o.decoder_)) {}
  Session& operator=(Session&&) = delete;
  Session(const Session&) = delete;
  ~Session() {
    if (stage_) stage_->busy_[slot_] = false;
  }

  int slot() const { return slot_; }
  bool done() const { return decoder_.done(); }
  /// Ids generated so far.
  std::span<const std::int32_t> ids() const { return decoder_.result().ids; }
  /// The request's interceptor states: one branch, named after the stage.
  const typename StageT::request_state& request() const { return *request_; }
  const typename StageT::request_state::branch_type& branch() const { return request_->branch(0); }
  /// What the generation produced so far, with its counters (forwards, skipped, host waits).
  const DecodeResult& result() const { return decoder_.result(); }
  /// The session's decode loop, for a caller that runs its forwards itself (the batch
  /// scheduler: Decoder::begin_step, forwarded, finish_step).
  auto& decoder() { return decoder_; }
  /// Ends the session and hands back what it generated (Stage::finish does the same).
  DecodeResult finish() { return release(); }

 private:
  friend StageT;
  using Dec = Decoder<typename StageT::model_type, typename StageT::slice_type,
                      typename StageT::cache_type, typename StageT::chain_type>;

  /// `limits`: this request's own (a lowered max_new), else the stage's.
  Session(StageT& stage, int slot, std::unique_ptr<StageLimits> limits = nullptr)
      : stage_(&stage),
        slot_(slot),
        own_limits_(std::move(limits)),
        request_(std::make_unique<typename StageT::request_state>()),
        decoder_(*stage.model_, stage.slice_, stage.cache_, stage.workspaces_[slot],
                 KvTarget::in_slot(slot), own_limits_ ? *own_limits_ : stage.limits_, stage.chain_,
                 request_->open(stage.chain_, stage.name_, stage.name_,
                                (own_limits_ ? *own_limits_ : stage.limits_).max_new,
                                stage.branch_states_[slot],
                                [ws = &stage.workspaces_[slot]](auto& buf, const auto& init) {
                                  store_value(*ws, buf, init);
                                }),
                 stage.name_) {
    stage.busy_[slot] = true;
  }

  DecodeResult release() {
    DecodeResult r = decoder_.take_result();
    if (auto* rows = trace_rows(request_->branch(0).host())) r.trace = std::move(*rows);
    if (stage_) stage_->busy_[slot_] = false;
    stage_ = nullptr;
    return r;
  }

  StageT* stage_;
  int slot_;
  // A request's own limits live on the heap: the decoder points at them across moves.
  std::unique_ptr<StageLimits> own_limits_;
  std::unique_ptr<typename StageT::request_state> request_;  // created when the request starts
  Dec decoder_;
};

/// Builds a Stage deducing its types: `make_stage<Cache>("reason", model, slice, shape,
/// prefix, wire::input(wire::request, wire::out<0>), {.max_new = 64})`.
template <class Cache, class Model, class Slice, class In, InterceptorChain Chain = NoInterceptors>
auto make_stage(std::string name, const Model& model, Slice slice, KvShape shape,
                std::vector<std::int32_t> prefix, In input, StageLimits limits, Chain chain = {}) {
  return Stage<Model, Slice, Cache, In, Chain>(std::move(name), model, std::move(slice), shape,
                                               std::move(prefix), std::move(input),
                                               std::move(limits), std::move(chain));
}

}  // namespace baton
