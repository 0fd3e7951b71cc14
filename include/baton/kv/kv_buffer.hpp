// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief KvBuffer: the K/V memory baton owns — a shared, frozen prefix plus per-request slots.
///
/// Bookkeeping is the point of this type. The prefix region is filled once by a pre-warm and
/// then frozen; every slot reads it and appends its own tail. Positions are absolute (the
/// prefix occupies 0..prefix_length-1). Exactly three things move a position:
///   - reset_prefix(): the prefix back to 0 (and every slot invalid) — only a pre-warm calls it;
///   - commit(): forward after a checked write of n tokens;
///   - rewind(slot): a slot back to the prefix length — the start of every request.
/// Every forward calls check_write() before its first write: the caller's expected position
/// must equal the real one and the tokens must fit, or a baton::error is thrown and nothing
/// is written.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/core/error.hpp"
#include "baton/core/model_config.hpp"
#include "baton/kv/kv_view.hpp"

namespace baton {

/// Sizes of a KvBuffer, in positions.
struct KvShape {
  int prefix_capacity = 0;  ///< room for the shared prefix
  int tail_capacity = 0;    ///< room for one request's tokens after the prefix (per slot)
  int slots = 1;            ///< requests that can be in flight at once
};

/// Owned K/V memory for every layer of one model: see the file comment for the contract.
/// @tparam L a KvLayout (element type and head_dim fixed at compile time)
/// @tparam B the backend that owns the memory
template <KvLayout L, Backend B>
class KvBuffer {
 public:
  using layout = L;
  using backend = B;
  using element = typename L::element;
  static constexpr int head_dim = L::head_dim;

  KvBuffer(const ModelConfig& cfg, KvShape shape)
      : layers_(cfg.num_layers), kv_heads_(cfg.num_kv_heads), shape_(shape) {
    BATON_CHECK(cfg.head_dim == L::head_dim, config_error, "KvBuffer<", L::name, ", head_dim ",
                L::head_dim, "> cannot hold a model with head_dim ", cfg.head_dim);
    BATON_CHECK(shape.prefix_capacity >= 0 && shape.tail_capacity > 0 && shape.slots > 0,
                config_error,
                "KvShape needs prefix_capacity >= 0, tail_capacity > 0, slots > 0 (got ",
                shape.prefix_capacity, ", ", shape.tail_capacity, ", ", shape.slots, ")");
    // Positions past the trained context give silent nonsense, and a huge shape would
    // allocate before anything else fails: refuse it here, before any memory is taken.
    const long long positions =
        static_cast<long long>(shape.prefix_capacity) + static_cast<long long>(shape.tail_capacity);
    BATON_CHECK(positions <= cfg.max_positions(), capacity_error, "KvShape: prefix_capacity ",
                shape.prefix_capacity, " + tail_capacity ", shape.tail_capacity, " = ", positions,
                " positions exceed the model's limit of ", cfg.max_positions(),
                " (config.json max_position_embeddings = ", cfg.max_position_embeddings,
                "; BaseModel::allow_positions raises it where rope_scaling supports more)");
    prefix_mem_ =
        typename B::template buffer<element>(2 * layers_ * block_elems(shape.prefix_capacity));
    tail_mem_ = typename B::template buffer<element>(2 * static_cast<std::size_t>(shape.slots) *
                                                     layers_ * block_elems(shape.tail_capacity));
    slot_pos_.assign(shape.slots, kNotStarted);
  }

  // ---- sizes and positions -------------------------------------------------------------
  const KvShape& shape() const { return shape_; }
  int num_slots() const { return shape_.slots; }
  int num_layers() const { return layers_; }
  int prefix_length() const { return prefix_len_; }
  bool prefix_frozen() const { return frozen_; }
  /// The next position a write to `t` must start at (kNotStarted for a slot never rewound).
  int position(KvTarget t) const {
    return t.is_prefix() ? prefix_len_ : slot_pos_.at(check_slot(t));
  }
  /// The position a write to `t` must stay below.
  int capacity(KvTarget t) const {
    return t.is_prefix() ? shape_.prefix_capacity : prefix_len_ + shape_.tail_capacity;
  }
  static constexpr int kNotStarted = -1;

  // ---- the only three ways a position moves ---------------------------------------------
  /// Empties the prefix (position 0, not frozen) and invalidates every slot. Pre-warm only.
  void reset_prefix() {
    prefix_len_ = 0;
    frozen_ = false;
    slot_pos_.assign(shape_.slots, kNotStarted);
  }
  /// Freezes the prefix after a pre-warm: from now on only slots are written.
  void freeze_prefix() {
    frozen_ = true;
    slot_pos_.assign(shape_.slots, prefix_len_);
  }
  /// Starts a request in `slot`: its tail is emptied (position = prefix length).
  void rewind(int slot) {
    const int s = check_slot(KvTarget::in_slot(slot));
    BATON_CHECK(frozen_, usage_error, "KvBuffer: slot ", slot,
                " cannot start a request before the prefix is pre-warmed (frozen)");
    slot_pos_[s] = prefix_len_;
  }

  /// The write contract. Throws, before anything is written, unless a write of `n` tokens
  /// to `t` starts exactly at `expected_pos` and ends inside capacity.
  void check_write(KvTarget t, int expected_pos, int n) const {
    BATON_CHECK(n >= 0, usage_error, "KvBuffer: negative token count ", n);
    if (t.is_prefix()) {
      BATON_CHECK(!frozen_, usage_error,
                  "KvBuffer: the prefix is frozen; pre-warm again (reset_prefix) to rewrite it");
    } else {
      check_slot(t);
      BATON_CHECK(frozen_, usage_error, "KvBuffer: slot ", t.slot,
                  " written before the prefix was pre-warmed");
      BATON_CHECK(slot_pos_[t.slot] != kNotStarted, usage_error, "KvBuffer: slot ", t.slot,
                  " was not started (rewind it at the start of a request)");
    }
    const int actual = position(t);
    BATON_CHECK(actual == expected_pos, position_error, "KvBuffer: write to ", describe(t),
                " expected at position ", expected_pos, " but the write position is ", actual);
    BATON_CHECK(static_cast<long long>(actual) + n <= capacity(t), capacity_error,
                "KvBuffer: appending ", n, " tokens to ", describe(t), " at position ", actual,
                " passes its capacity ", capacity(t));
  }
  /// Advances `t` by `n` after a forward wrote positions [position, position + n).
  void commit(KvTarget t, int n) {
    check_write(t, position(t), n);
    if (t.is_prefix()) {
      prefix_len_ += n;
    } else {
      slot_pos_[t.slot] += n;
    }
  }

  // ---- views for kernels -------------------------------------------------------------
  /// Where appends to `t` land at `layer` (kv::append takes absolute positions).
  KvAppend<L> append_view(KvTarget t, int layer) {
    if (t.is_prefix()) return KvAppend<L>{prefix_block(layer), 0};
    return KvAppend<L>{tail_block(t.slot, layer), prefix_len_};
  }
  /// What attention for `t` reads at `layer` when positions [0, upto) are valid.
  KvSpan<L> read_span(KvTarget t, int layer, int upto) {
    if (t.is_prefix()) return KvSpan<L>{prefix_block(layer), upto, {}, 0};
    return KvSpan<L>{prefix_block(layer), prefix_len_, tail_block(t.slot, layer),
                     upto - prefix_len_};
  }

  std::string describe(KvTarget t) const {
    return t.is_prefix() ? std::string("the prefix") : "slot " + std::to_string(t.slot);
  }

 private:
  std::size_t block_elems(int capacity) const {
    return static_cast<std::size_t>(kv_heads_) * capacity * L::head_dim;
  }
  int check_slot(KvTarget t) const {
    BATON_CHECK(t.slot >= 0 && t.slot < shape_.slots, usage_error, "KvBuffer: slot ", t.slot,
                " out of range (", shape_.slots, " slots)");
    return t.slot;
  }
  KvBlock<L> prefix_block(int layer) {
    const std::size_t e = block_elems(shape_.prefix_capacity);
    element* base = raw_pointer(prefix_mem_.data()) + 2 * layer * e;
    return KvBlock<L>{base, base + e, shape_.prefix_capacity, kv_heads_};
  }
  KvBlock<L> tail_block(int slot, int layer) {
    const std::size_t e = block_elems(shape_.tail_capacity);
    element* base =
        raw_pointer(tail_mem_.data()) + (static_cast<std::size_t>(slot) * layers_ + layer) * 2 * e;
    return KvBlock<L>{base, base + e, shape_.tail_capacity, kv_heads_};
  }

  int layers_;
  int kv_heads_;
  KvShape shape_;
  typename B::template buffer<element> prefix_mem_;
  typename B::template buffer<element> tail_mem_;
  int prefix_len_ = 0;
  bool frozen_ = false;
  std::vector<int> slot_pos_;
};

}  // namespace baton
