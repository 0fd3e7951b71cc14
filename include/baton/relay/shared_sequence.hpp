// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief SharedSequence: the one token sequence every stage of a relay of activated adapters
///        (aLoRA) reads — a common prefix computed once, then per request its opening (the
///        request in its template) and each finished stage's turn, all computed by the base.
///
/// An activated adapter adapts only from its invocation on (lora/activation.hpp), so whatever
/// precedes the invocation has the base model's K/V, the same for every stage. A relay whose
/// stages read this sequence computes the request once, not once per stage: each stage's slot
/// reads the shared K/V (KvBuffer::rewind_onto) and writes only its own tail, its invocation
/// and its output. After a stage ends, its turn (its own input, its output, then `turn_end`) is
/// appended here by the base, where the next stage finds it.
///
/// Life of one request on `slot`: begin() rewinds the slot to the common prefix and appends the
/// opening (or fork() copies another slot's, for another choice of the same request); append()
/// adds a turn; the next begin() on the slot rewinds it. Between those it is
/// append-only: nothing else writes it, and a stage slot that read it refuses to write once it
/// moved (KvBuffer::check_write). The pre-warmed prefix is never written by a request.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/lora/activation.hpp"
#include "baton/model/device_loop.hpp"
#include "baton/model/forward.hpp"
#include "baton/model/workspace.hpp"
#include "baton/relay/segments.hpp"

namespace baton {

/// What the relay engine needs from a shared sequence, whatever its model and cache types.
template <Backend B>
class SharedSequenceBase {
 public:
  virtual ~SharedSequenceBase() = default;
  virtual void prewarm() = 0;
  virtual bool warm() const = 0;
  /// The model's address: the stages reading the sequence must use the same one.
  virtual const void* model_identity() const = 0;
  /// What a request's sequence starts with after the common prefix: literals and the request.
  virtual const std::vector<Segment>& opening() const = 0;
  /// The ids closing each stage's turn (e.g. a chat template's end-of-turn token).
  virtual std::span<const std::int32_t> turn_end() const = 0;
  /// Starts a request on `slot`: back to the common prefix, then `opening` (the assembled
  /// opening segments) through the base. Returns the tokens computed.
  virtual int begin(std::span<const std::int32_t> opening, int slot) = 0;
  /// Appends one finished stage's turn: `input` (what the stage read after the shared
  /// sequence), `output`, then turn_end(), through the base. Returns the tokens computed.
  virtual int append_turn(std::span<const std::int32_t> input, std::span<const std::int32_t> output,
                          int slot) = 0;
  /// Every id at positions [0, length) of `slot`: the common prefix, then the request's part.
  virtual std::span<const std::int32_t> ids(int slot) const = 0;
  virtual int slots() const = 0;
  /// Every slot's workspace (a relay binds them to its execution context, like a stage's).
  virtual std::span<Workspace<B>> workspaces() = 0;
};

/// A shared sequence over `Model` with K/V in a `Cache` (the type the stages reading it use).
/// `Slice` is the stages' slice type: the base runs as that type's empty slice, so no other
/// forward is instantiated.
template <class Model, class Slice, class Cache>
class SharedSequence final : public SharedSequenceBase<typename Model::backend> {
 public:
  using backend = typename Model::backend;
  using cache_type = Cache;

  /// A cold sequence (prewarm() computes `prefix`). `shape`: the common prefix's room, and per
  /// slot the room for one request's opening and every turn a request can append.
  /// `opening`: literal and request segments only; `turn_end`: ids closing each turn.
  SharedSequence(const Model& model, KvShape shape, std::vector<std::int32_t> prefix,
                 std::vector<Segment> opening, std::vector<std::int32_t> turn_end = {})
      : model_(&model),
        base_(Slice::none(model.config())),
        cache_(model.config(), shape),
        prefix_(std::move(prefix)),
        opening_(std::move(opening)),
        turn_end_(std::move(turn_end)),
        ids_(static_cast<std::size_t>(shape.slots)),
        workspaces_(static_cast<std::size_t>(shape.slots)) {
    BATON_CHECK(static_cast<long long>(prefix_.size()) <= shape.prefix_capacity, capacity_error,
                "shared sequence: the common prefix has ", prefix_.size(),
                " tokens but its prefix capacity is ", shape.prefix_capacity);
    BATON_CHECK(!opening_.empty(), config_error,
                "shared sequence: the opening needs at least one segment (the request)");
    for (std::size_t k = 0; k < opening_.size(); ++k) {
      const Segment::Kind kind = opening_[k].kind;
      BATON_CHECK(kind == Segment::Kind::literal || kind == Segment::Kind::request, config_error,
                  "shared sequence: opening segment ", k, " (", opening_[k].describe(),
                  ") is neither literal ids nor the request; stages' outputs are appended as "
                  "their turns");
    }
  }
  SharedSequence(const SharedSequence&) = delete;
  SharedSequence& operator=(const SharedSequence&) = delete;

  void prewarm() override {
    warm_ = false;
    // Scratch for the longest append, sized now: no request allocates (on CUDA an allocation
    // could synchronise the device).
    if constexpr (HasDeviceLoop<backend>)
      for (auto& ws : workspaces_) reserve_device_run<Model, Slice, Cache>(*model_, cache_, ws, 0);
    cache_.reset_prefix();
    if (!prefix_.empty())
      forward(*model_, workspaces_[0], base_, cache_, KvTarget::prefix(), 0,
              std::span<const std::int32_t>(prefix_), Logits::none, kAdapterNever);
    cache_.freeze_prefix();
    for (auto& v : ids_) v.clear();
    warm_ = true;
  }
  bool warm() const override { return warm_; }
  const void* model_identity() const override { return model_; }
  const std::vector<Segment>& opening() const override { return opening_; }
  std::span<const std::int32_t> turn_end() const override { return turn_end_; }

  int begin(std::span<const std::int32_t> opening, int slot) override {
    BATON_CHECK(warm_, usage_error, "shared sequence: not pre-warmed (prewarm() first)");
    BATON_CHECK(!opening.empty(), usage_error, "shared sequence: empty opening");
    std::vector<std::int32_t>& held = at(slot);
    cache_.rewind(slot);
    held.assign(prefix_.begin(), prefix_.end());
    extend(slot, opening);
    return static_cast<int>(opening.size());
  }

  int append_turn(std::span<const std::int32_t> input, std::span<const std::int32_t> output,
                  int slot) override {
    std::vector<std::int32_t> turn(input.begin(), input.end());
    turn.insert(turn.end(), output.begin(), output.end());
    turn.insert(turn.end(), turn_end_.begin(), turn_end_.end());
    if (turn.empty()) return 0;
    BATON_CHECK(cache_.position(KvTarget::in_slot(slot)) != Cache::kNotStarted, usage_error,
                "shared sequence: slot ", slot, " holds no request (begin() first)");
    extend(slot, turn);
    return static_cast<int>(turn.size());
  }

  std::span<const std::int32_t> ids(int slot) const override {
    return ids_.at(static_cast<std::size_t>(slot));
  }
  int slots() const override { return cache_.num_slots(); }
  std::span<Workspace<backend>> workspaces() override { return workspaces_; }

  /// The K/V the stages' slots read (KvBuffer::rewind_onto).
  const Cache& cache() const { return cache_; }
  const std::vector<std::int32_t>& prefix() const { return prefix_; }
  /// Writable, for the batch scheduler's rows (which append through the base like extend()).
  Cache& cache_for_batch() { return cache_; }
  /// The empty slice the base runs as.
  const Slice& base_slice() const { return base_; }
  /// The batch scheduler rewound `slot` itself (KvBuffer::rewind): its ids back to the prefix.
  void restart(int slot) { at(slot).assign(prefix_.begin(), prefix_.end()); }
  /// Makes slot `to` a copy of slot `from` (its K/V and ids): the n choices of one request
  /// share its opening this way, each then appending its own turns to its own slot.
  void fork(int from, int to) {
    std::vector<std::int32_t>& held = at(to);
    cache_.fork(from, to);
    held = at(from);
  }
  /// Records `tokens` as appended to `slot` by a caller that ran their forward itself (the
  /// batch scheduler), so ids() stays the sequence's tokens.
  void appended(int slot, std::span<const std::int32_t> tokens) {
    auto& held = at(slot);
    held.insert(held.end(), tokens.begin(), tokens.end());
  }

 private:
  std::vector<std::int32_t>& at(int slot) {
    BATON_CHECK(slot >= 0 && slot < cache_.num_slots(), usage_error, "shared sequence: slot ", slot,
                " out of range (", cache_.num_slots(), " slots)");
    return ids_[static_cast<std::size_t>(slot)];
  }
  /// `tokens` through the base at the slot's end; the ids are recorded once the forward
  /// succeeded (on failure the slot's K/V and ids stay as they were).
  void extend(int slot, std::span<const std::int32_t> tokens) {
    const KvTarget t = KvTarget::in_slot(slot);
    forward(*model_, workspaces_[static_cast<std::size_t>(slot)], base_, cache_, t,
            cache_.position(t), tokens, Logits::none, kAdapterNever);
    appended(slot, tokens);
  }

  const Model* model_;
  Slice base_;
  Cache cache_;
  std::vector<std::int32_t> prefix_;
  std::vector<Segment> opening_;
  std::vector<std::int32_t> turn_end_;
  std::vector<std::vector<std::int32_t>> ids_;  // per slot: every id at [0, length)
  std::vector<Workspace<backend>> workspaces_;
  bool warm_ = false;
};

}  // namespace baton
