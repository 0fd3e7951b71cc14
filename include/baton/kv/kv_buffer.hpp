// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief KvBuffer: the K/V memory baton owns — a shared, frozen prefix plus per-request slots.
///
/// Bookkeeping is the point of this type. The prefix region is filled once by a pre-warm and
/// then frozen; every slot reads it and appends its own tail. Positions are absolute (the
/// prefix occupies 0..prefix_length-1). Exactly five things move a position:
///   - reset_prefix(): the prefix back to 0 (and every slot invalid) — only a pre-warm calls it;
///   - commit(): forward after a checked write of n tokens;
///   - rewind(slot): a slot back to the prefix length — the start of every request;
///   - rewind_onto(slot, shared, s): a slot back to the end of slot `s` of another buffer, the
///     shared sequence of a relay of activated adapters (relay/shared_sequence.hpp): the slot
///     then reads that buffer's prefix and slot `s` (never writing them) before its own tail;
///   - fork(from, to): slot `to` becomes a copy of slot `from` (its tail's K/V, position and
///     link): `n` choices of one request share its prefill this way; fork_onto_copy(from, to)
///     the same for a slot that reads its own copy of `from`'s shared slot, keeping its link.
/// Every forward calls check_write() before its first write: the caller's expected position
/// must equal the real one and the tokens must fit, or a baton::error is thrown and nothing
/// is written. A slot reading a shared sequence is also checked against it: if the shared
/// slot moved (an append, a rewind, a pre-warm) since rewind_onto, the write is refused.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
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
      : layers_(cfg.num_layers),
        kv_heads_(cfg.num_kv_heads),
        max_positions_(cfg.max_positions()),
        shape_(shape) {
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
    links_.assign(shape.slots, Link{});
    epochs_.assign(shape.slots, 0);
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
    return t.is_prefix() ? shape_.prefix_capacity
                         : tail_start(check_slot(t)) + shape_.tail_capacity;
  }
  /// Where the tail of `slot` starts: the prefix length, or for a slot reading a shared
  /// sequence the shared slot's length when it was linked (rewind_onto).
  int tail_start(int slot) const {
    const Link& l = link(slot);
    return l.shared ? l.length : prefix_len_;
  }
  static constexpr int kNotStarted = -1;

  // ---- the only three ways a position moves ---------------------------------------------
  /// Empties the prefix (position 0, not frozen) and invalidates every slot. Pre-warm only.
  void reset_prefix() {
    prefix_len_ = 0;
    frozen_ = false;
    slot_pos_.assign(shape_.slots, kNotStarted);
    links_.assign(shape_.slots, Link{});
    for (auto& e : epochs_) ++e;
  }
  /// Freezes the prefix after a pre-warm: from now on only slots are written.
  void freeze_prefix() {
    frozen_ = true;
    slot_pos_.assign(shape_.slots, prefix_len_);
    links_.assign(shape_.slots, Link{});
    for (auto& e : epochs_) ++e;
  }
  /// Starts a request in `slot`: its tail is emptied (position = prefix length).
  void rewind(int slot) {
    const int s = check_slot(KvTarget::in_slot(slot));
    BATON_CHECK(frozen_, usage_error, "KvBuffer: slot ", slot,
                " cannot start a request before the prefix is pre-warmed (frozen)");
    slot_pos_[s] = prefix_len_;
    links_[static_cast<std::size_t>(s)] = Link{};
    ++epochs_[static_cast<std::size_t>(s)];
  }

  /// Starts a request in `slot` that reads slot `shared_slot` of `shared` (a relay's shared
  /// sequence) before its own tail: the slot's tail starts where the shared slot ends now, and
  /// attention reads `shared`'s prefix, its slot `shared_slot`, then this slot's tail. This
  /// buffer's own prefix must be empty (the shared one is the common prefix). `shared` must
  /// outlive the request and stay as it is while the slot is written (check_write refuses a
  /// write once it moved).
  void rewind_onto(int slot, const KvBuffer& shared, int shared_slot) {
    const int s = check_slot(KvTarget::in_slot(slot));
    BATON_CHECK(&shared != this, usage_error, "KvBuffer: slot ", slot,
                " cannot read a shared sequence in its own buffer");
    BATON_CHECK(frozen_ && prefix_len_ == 0, usage_error, "KvBuffer: slot ", slot,
                " can read a shared sequence only in a pre-warmed buffer with an empty prefix (",
                "its prefix holds ", prefix_len_,
                " tokens): the shared sequence's prefix is the "
                "common one");
    BATON_CHECK(shared.layers_ == layers_ && shared.kv_heads_ == kv_heads_, shape_error,
                "KvBuffer: the shared sequence has ", shared.layers_, " layers of ",
                shared.kv_heads_, " kv heads, this buffer ", layers_, " of ", kv_heads_);
    const int ss = shared.check_slot(KvTarget::in_slot(shared_slot));
    const int at = shared.slot_pos_[static_cast<std::size_t>(ss)];
    BATON_CHECK(shared.frozen_ && at != kNotStarted, usage_error, "KvBuffer: slot ", slot,
                " cannot read shared slot ", shared_slot, ": it holds no request");
    BATON_CHECK(static_cast<long long>(at) + shape_.tail_capacity <= max_positions_, capacity_error,
                "KvBuffer: slot ", slot, " would start at position ", at,
                " (the shared sequence's end) with room for ", shape_.tail_capacity,
                " more: past the model's limit of ", max_positions_, " positions");
    links_[static_cast<std::size_t>(s)] =
        Link{&shared, ss, at, shared.epochs_[static_cast<std::size_t>(ss)]};
    slot_pos_[s] = at;
    ++epochs_[static_cast<std::size_t>(s)];
  }

  /// Makes slot `to` a copy of slot `from`: the K/V of its tail's positions (the prefix is
  /// shared already), its position and its shared-sequence link.
  void fork(int from, int to) {
    const auto [f, t] = check_fork(from, to);
    copy_tail(f, t);
    slot_pos_[t] = slot_pos_[f];
    links_[static_cast<std::size_t>(t)] = links_[static_cast<std::size_t>(f)];
    ++epochs_[static_cast<std::size_t>(t)];
  }

  /// fork() for slots that read a shared sequence, each its own copy of it (the n choices of
  /// one request on a relay of activated adapters: SharedSequence::fork copied `from`'s shared
  /// slot, and `to` was rewound onto the copy). `to` takes `from`'s tail and position and keeps
  /// its own link, so it never reads `from`'s shared slot, which moves on with `from`'s
  /// request. Both must read the same buffer's slots, linked at the same length, `from`'s
  /// shared slot not moved since, and `to` must be empty.
  void fork_onto_copy(int from, int to) {
    const auto [f, t] = check_fork(from, to);
    const Link& lf = links_[static_cast<std::size_t>(f)];
    const Link& lt = links_[static_cast<std::size_t>(t)];
    BATON_CHECK(lf.shared && lt.shared == lf.shared && lt.length == lf.length, usage_error,
                "KvBuffer: slot ", to, " does not read a copy of slot ", from,
                "'s shared sequence (fork_onto_copy needs both linked to the same buffer at the "
                "same length)");
    BATON_CHECK(slot_pos_[t] == lt.length, usage_error, "KvBuffer: slot ", to,
                " has a tail already; fork_onto_copy needs it just rewound onto its copy");
    BATON_CHECK(lf.shared->epochs_[static_cast<std::size_t>(lf.slot)] == lf.epoch, position_error,
                "KvBuffer: slot ", from, "'s shared slot ", lf.slot,
                " has moved since it was linked; its tail is no copy source any more");
    copy_tail(f, t);
    slot_pos_[t] = slot_pos_[f];
    ++epochs_[static_cast<std::size_t>(t)];
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
      const Link& l = links_[static_cast<std::size_t>(t.slot)];
      if (l.shared) {
        // The tail was placed after the shared slot as it was then: a shared slot that moved
        // since (another append, a rewind, a pre-warm) would make every position wrong.
        BATON_CHECK(l.shared->epochs_[static_cast<std::size_t>(l.slot)] == l.epoch &&
                        l.shared->slot_pos_[static_cast<std::size_t>(l.slot)] == l.length,
                    position_error, "KvBuffer: slot ", t.slot, " reads shared slot ", l.slot,
                    " as it was at position ", l.length,
                    ", but the shared sequence has changed since (now at position ",
                    l.shared->slot_pos_[static_cast<std::size_t>(l.slot)],
                    "); rewind the slot onto it again");
      }
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
      ++epochs_[static_cast<std::size_t>(t.slot)];
    }
  }

  // ---- views for kernels -------------------------------------------------------------
  /// Where appends to `t` land at `layer` (kv::append takes absolute positions).
  KvAppend<L> append_view(KvTarget t, int layer) {
    if (t.is_prefix()) return KvAppend<L>{prefix_block(layer), 0};
    return KvAppend<L>{tail_block(t.slot, layer), tail_start(t.slot)};
  }
  /// What attention for `t` reads at `layer` when positions [0, upto) are valid.
  KvSpan<L> read_span(KvTarget t, int layer, int upto) {
    if (t.is_prefix()) return KvSpan<L>{prefix_block(layer), upto, {}, 0};
    const Link& l = link(t.slot);
    if (l.shared) {
      KvBuffer& sh = const_cast<KvBuffer&>(*l.shared);  // read only: attention never writes
      return KvSpan<L>{sh.prefix_block(layer),       sh.prefix_len_,
                       tail_block(t.slot, layer),    upto - l.length,
                       sh.tail_block(l.slot, layer), l.length - sh.prefix_len_};
    }
    return KvSpan<L>{prefix_block(layer), prefix_len_, tail_block(t.slot, layer),
                     upto - prefix_len_};
  }

  std::string describe(KvTarget t) const {
    return t.is_prefix() ? std::string("the prefix") : "slot " + std::to_string(t.slot);
  }

 private:
  /// fork()'s checks: two different slots, `from` holding a request. Returns both indices.
  std::pair<int, int> check_fork(int from, int to) const {
    const int f = check_slot(KvTarget::in_slot(from));
    const int t = check_slot(KvTarget::in_slot(to));
    BATON_CHECK(f != t, usage_error, "KvBuffer: slot ", from, " cannot be forked onto itself");
    BATON_CHECK(frozen_ && slot_pos_[f] != kNotStarted, usage_error, "KvBuffer: slot ", from,
                " holds no request to fork");
    return {f, t};
  }
  /// Copies the K/V of slot f's tail positions written so far into slot t's tail, a run per
  /// head (or one run, for a layout that keeps heads together).
  void copy_tail(int f, int t) {
    const int used = slot_pos_[f] - tail_start(f);
    if (used > 0) {
      const std::size_t e = block_elems(shape_.tail_capacity);
      // Each head's positions [0, used) as [begin, end) in a block, overlapping runs merged.
      std::vector<std::pair<std::size_t, std::size_t>> runs;
      for (int h = 0; h < kv_heads_; ++h) {
        const std::size_t b = L::offset(h, 0, shape_.tail_capacity, kv_heads_);
        runs.emplace_back(b, L::offset(h, used - 1, shape_.tail_capacity, kv_heads_) + L::head_dim);
      }
      std::sort(runs.begin(), runs.end());
      std::vector<std::pair<std::size_t, std::size_t>> merged;
      for (const auto& r : runs) {
        if (!merged.empty() && r.first <= merged.back().second)
          merged.back().second = std::max(merged.back().second, r.second);
        else
          merged.push_back(r);
      }
      // K then V of every layer: 2 * layers blocks of e elements per slot (tail_block).
      const std::size_t from_base = static_cast<std::size_t>(f) * layers_ * 2 * e;
      const std::size_t to_base = static_cast<std::size_t>(t) * layers_ * 2 * e;
      for (std::size_t block = 0; block < 2 * static_cast<std::size_t>(layers_); ++block)
        for (const auto& [b, end] : merged)
          B::copy_within(tail_mem_, to_base + block * e + b, from_base + block * e + b, end - b);
    }
  }

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

  /// A slot's shared sequence for its current request (rewind_onto): which buffer and slot,
  /// its length then (where this slot's tail starts) and its epoch then.
  struct Link {
    const KvBuffer* shared = nullptr;
    int slot = -1;
    int length = 0;
    unsigned long long epoch = 0;
  };
  const Link& link(int slot) const {
    return links_[static_cast<std::size_t>(check_slot(KvTarget::in_slot(slot)))];
  }

  int layers_;
  int kv_heads_;
  int max_positions_;
  KvShape shape_;
  typename B::template buffer<element> prefix_mem_;
  typename B::template buffer<element> tail_mem_;
  int prefix_len_ = 0;
  bool frozen_ = false;
  std::vector<int> slot_pos_;
  std::vector<Link> links_;
  // Bumped whenever a slot's contents move (rewind, commit, pre-warm): a slot reading it as a
  // shared sequence notices any change, also one that leaves its length as it was.
  std::vector<unsigned long long> epochs_;
};

}  // namespace baton
