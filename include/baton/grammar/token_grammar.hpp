// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A byte-level DFA lifted over a vocabulary: for every state the bitset of allowed
/// tokens, the shortest distance to acceptance in tokens, and the plain-data tables (DFA
/// transitions, token bytes) that advance a state by walking the chosen token's bytes.
///
/// Token t is allowed in state q when walking t's bytes from q never leaves the live
/// automaton and ends in a state from which acceptance is reachable with the vocabulary's
/// tokens; an end-of-sequence id is allowed exactly in accepting states. No dense
/// state x vocabulary transition table exists: masks are bitsets (shared between states
/// whose sets are equal) and the next state is found by walking the token's bytes.
///
/// Budget: dist(q) is the fewest tokens that take q to acceptance. With `remaining` tokens
/// left, a token is allowed only when dist(next) <= remaining - 1, so a generation that
/// starts with remaining >= dist(start) always ends accepted, never cut off. When
/// remaining - 1 >= slack(q) (the largest dist over q's successors) that is the plain mask.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/core/macros.hpp"
#include "baton/grammar/dfa.hpp"
#include "baton/grammar/grammar_limits.hpp"
#include "baton/grammar/vocabulary.hpp"

namespace baton::grammar {

/// "No path": a state or token from which acceptance cannot be reached.
inline constexpr std::int32_t kUnreachable = std::numeric_limits<std::int32_t>::max();

/// The state after walking `len` bytes from `s` (kDead once a byte leads nowhere).
BATON_HD inline std::int32_t dfa_walk(const std::int32_t* next, std::int32_t s,
                                      const std::uint8_t* bytes, std::uint32_t len) {
  for (std::uint32_t k = 0; k < len && s != kDead; ++k) s = dfa_step(next, s, bytes[k]);
  return s;
}

/// Whether `token` may be chosen in state `s` with `remaining` tokens of budget left, from
/// the plain tables alone (the budget-tight case, and the device's per-token check).
/// `offsets[t]..offsets[t+1]` are token t's bytes; an empty token is never allowed; `eos`
/// marks end-of-sequence ids.
BATON_HD inline bool token_fits_budget(const std::int32_t* next, const std::int32_t* dist,
                                       const std::uint8_t* accepting, const std::uint32_t* offsets,
                                       const std::uint8_t* bytes, const std::uint8_t* eos,
                                       std::int32_t s, std::int32_t token, std::int32_t remaining) {
  if (eos[token]) return accepting[s] != 0;
  const std::uint32_t b = offsets[token], e = offsets[token + 1];
  if (b == e) return false;
  const std::int32_t t = dfa_walk(next, s, bytes + b, e - b);
  return t != kDead && dist[t] <= remaining - 1;
}

/// Per-request buffers for the budget-tight masks, so a decode step never allocates.
struct MaskScratch {
  std::vector<std::uint32_t> bits;   ///< one mask
  std::vector<std::int32_t> states;  ///< the trie walk's DFA state per depth
};

/// A grammar compiled against one vocabulary. Immutable; share it between requests.
class TokenGrammar {
 public:
  /// Lifts `dfa` over `vocab`. Throws grammar_error when no string of the grammar can be
  /// spelled with the vocabulary's tokens, or when the lift would pass `limits` (the trie
  /// walks: GrammarLimits::lift_work; the distinct masks: GrammarLimits::table_bytes).
  TokenGrammar(Dfa dfa, std::shared_ptr<const Vocabulary> vocab, std::uint64_t grammar_hash,
               const GrammarLimits& limits = {})
      : dfa_(std::move(dfa)),
        vocab_(std::move(vocab)),
        vocab_size_(static_cast<std::int32_t>(vocab_->size())),
        words_((vocab_->size() + 31) / 32),
        key_(grammar_hash ^ (vocab_->hash() * 0x9E3779B97F4A7C15ull)) {
    token_tables(*vocab_);
    lift(*vocab_, limits);
  }

  const Vocabulary& vocabulary() const { return *vocab_; }
  /// Buffers for mask(s, remaining, scratch), sized for this grammar's vocabulary.
  MaskScratch make_scratch() const {
    return {std::vector<std::uint32_t>(words_),
            std::vector<std::int32_t>(vocab_->trie().max_depth + 1)};
  }

  std::int32_t num_states() const { return dfa_.num_states; }
  std::int32_t vocab_size() const { return vocab_size_; }
  /// 32-bit words per mask.
  std::size_t mask_words() const { return words_; }
  /// The cache key: a hash of the grammar and of the vocabulary (token bytes, eos ids).
  std::uint64_t key() const { return key_; }
  bool accepting(std::int32_t s) const { return dfa_.accepting[static_cast<std::size_t>(s)] != 0; }
  bool is_eos(std::int32_t token) const {
    return token >= 0 && token < vocab_size_ && eos_[static_cast<std::size_t>(token)] != 0;
  }
  /// Fewest tokens from `s` to an accepting state.
  std::int32_t distance(std::int32_t s) const { return dist_[static_cast<std::size_t>(s)]; }
  /// The largest distance among the states one allowed token leads to (0 if none).
  std::int32_t slack(std::int32_t s) const { return slack_[static_cast<std::size_t>(s)]; }

  /// The allowed tokens of `s` (bit t of word t/32), ignoring the budget.
  std::span<const std::uint32_t> mask(std::int32_t s) const {
    return {
        masks_.data() + static_cast<std::size_t>(mask_row_[static_cast<std::size_t>(s)]) * words_,
        words_};
  }
  static bool test(std::span<const std::uint32_t> m, std::int32_t t) {
    return (m[static_cast<std::size_t>(t) / 32] >> (t % 32)) & 1u;
  }

  /// The allowed tokens of `s` with `remaining` tokens left (remaining >= distance(s)):
  /// the plain mask when the budget cannot bind, else written into `scratch` (from
  /// make_scratch(); no allocation) by a trie walk that keeps only tokens on paths that fit.
  std::span<const std::uint32_t> mask(std::int32_t s, std::int32_t remaining,
                                      MaskScratch& scratch) const {
    if (remaining - 1 >= slack(s)) return mask(s);
    std::span<std::uint32_t> bits(scratch.bits);
    std::fill(bits.begin(), bits.end(), 0u);
    walk(vocab_->trie(), s, scratch.states, [&](std::int32_t tok, std::int32_t t) {
      if (dist_[static_cast<std::size_t>(t)] <= remaining - 1) set(bits, tok);
    });
    if (accepting(s))
      for (const std::int32_t e : vocab_->eos_ids()) set(bits, e);
    return bits;
  }

  /// The state after `token` from `s`; kDead when the token is not allowed there. An
  /// end-of-sequence id leaves the state as it is.
  std::int32_t advance(std::int32_t s, std::int32_t token) const {
    if (token < 0 || token >= vocab_size_) return kDead;
    if (is_eos(token)) return accepting(s) ? s : kDead;
    const std::uint32_t b = offsets_[static_cast<std::size_t>(token)];
    const std::uint32_t e = offsets_[static_cast<std::size_t>(token) + 1];
    if (b == e) return kDead;
    const std::int32_t t = dfa_walk(dfa_.next.data(), s, bytes_.data() + b, e - b);
    return t == kDead || dist_[static_cast<std::size_t>(t)] == kUnreachable ? kDead : t;
  }

  /// When exactly one token is allowed in `s` (and `s` is not accepting), that token; else
  /// -1. The jump-forward of a host interceptor appends it without running the model.
  std::int32_t forced_token(std::int32_t s) const { return forced_[static_cast<std::size_t>(s)]; }
  /// Whether `s` is accepting and no token may follow (only end-of-sequence): the output
  /// is complete, so the generation can end without asking the model.
  bool complete(std::int32_t s) const { return complete_[static_cast<std::size_t>(s)] != 0; }

  // The plain tables, for a device copy.
  const Dfa& dfa() const { return dfa_; }
  std::span<const std::int32_t> distances() const { return dist_; }
  std::span<const std::int32_t> slacks() const { return slack_; }
  std::span<const std::uint32_t> all_masks() const { return masks_; }
  std::span<const std::int32_t> mask_rows() const { return mask_row_; }
  std::span<const std::uint32_t> token_offsets() const { return offsets_; }
  std::span<const std::uint8_t> token_bytes() const { return bytes_; }
  std::span<const std::uint8_t> eos_flags() const { return eos_; }
  std::span<const std::int32_t> forced_tokens() const { return forced_; }
  std::span<const std::uint8_t> complete_flags() const { return complete_; }
  /// Distinct masks stored (states with equal allowed sets share one).
  std::size_t distinct_masks() const { return masks_.size() / std::max<std::size_t>(words_, 1); }

 private:
  static void set(std::span<std::uint32_t> m, std::int32_t t) {
    m[static_cast<std::size_t>(t) / 32] |= 1u << (t % 32);
  }

  // Walks the trie from DFA state `s`, skipping every subtree whose prefix leaves the live
  // automaton; calls on_token(id, state after the token) for each token that survives.
  // Returns the trie nodes visited (the lift's work).
  template <class OnToken>
  std::size_t walk(const VocabTrie& trie, std::int32_t s, std::vector<std::int32_t>& stack,
                   OnToken&& on_token) const {
    const std::int32_t* next = dfa_.next.data();
    stack[0] = s;
    const std::size_t n = trie.byte.size();
    std::size_t visited = 0;
    for (std::size_t i = 0; i < n; ++visited) {
      const std::uint16_t d = trie.depth[i];
      const std::int32_t t = dfa_step(next, stack[d - 1u], trie.byte[i]);
      if (t == kDead) {
        i = trie.end[i];
        continue;
      }
      stack[d] = t;
      for (std::uint32_t k = trie.first_id[i]; k < trie.first_id[i + 1]; ++k)
        on_token(trie.ids[k], t);
      ++i;
    }
    return visited;
  }

  void token_tables(const Vocabulary& vocab) {
    offsets_.assign(static_cast<std::size_t>(vocab_size_) + 1, 0);
    eos_.assign(static_cast<std::size_t>(vocab_size_), 0);
    for (const std::int32_t e : vocab.eos_ids()) eos_[static_cast<std::size_t>(e)] = 1;
    for (std::int32_t t = 0; t < vocab_size_; ++t) {
      const std::string_view b = vocab.bytes(t);
      bytes_.insert(bytes_.end(), b.begin(), b.end());
      offsets_[static_cast<std::size_t>(t) + 1] = static_cast<std::uint32_t>(bytes_.size());
    }
  }

  // One row being built: the bitset, and the range of words it touched, so that clearing,
  // hashing and comparing it cost what the state allows, not the vocabulary's size (a state
  // of a long chain allows a handful of tokens out of 150k).
  struct RowScratch {
    std::vector<std::uint32_t> bits;
    std::size_t lo = 0, hi = 0;  // words [lo, hi) may be non-zero
    void set(std::int32_t t) {
      const std::size_t w = static_cast<std::size_t>(t) / 32;
      if (lo == hi) lo = w, hi = w + 1;
      lo = std::min(lo, w);
      hi = std::max(hi, w + 1);
      bits[w] |= 1u << (t % 32);
    }
    void clear() {
      std::fill(bits.begin() + static_cast<std::ptrdiff_t>(lo),
                bits.begin() + static_cast<std::ptrdiff_t>(hi), 0u);
      lo = hi = 0;
    }
  };

  // The distinct masks: each row is stored once (masks_) and states point at it
  // (mask_row_). Rows are interned as they are computed, so no state x vocabulary table ever
  // exists; GrammarLimits::table_bytes bounds the distinct ones.
  class RowStore {
   public:
    RowStore(std::vector<std::uint32_t>& masks, std::size_t words, std::size_t max_bytes)
        : masks_(masks), words_(words), max_bytes_(max_bytes) {}
    std::int32_t intern(const RowScratch& row) {
      std::uint64_t h = (row.lo * 0x9E3779B97F4A7C15ull) ^ row.hi;
      for (std::size_t w = row.lo; w < row.hi; ++w)
        h = (h ^ row.bits[w] ^ (w << 32)) * 0x100000001B3ull;
      std::vector<std::int32_t>& same_hash = by_hash_[h];
      for (const std::int32_t r : same_hash) {
        const auto [lo, hi] = range_[static_cast<std::size_t>(r)];
        if (lo == row.lo && hi == row.hi &&
            std::equal(row.bits.begin() + static_cast<std::ptrdiff_t>(lo),
                       row.bits.begin() + static_cast<std::ptrdiff_t>(hi),
                       masks_.begin() + static_cast<std::ptrdiff_t>(start(r) + lo)))
          return r;
      }
      detail::check_limit((masks_.size() + words_) * sizeof(std::uint32_t), max_bytes_,
                          "table_bytes", "the distinct token masks' bytes");
      const auto id = static_cast<std::int32_t>(range_.size());
      masks_.insert(masks_.end(), row.bits.begin(), row.bits.end());
      range_.emplace_back(row.lo, row.hi);
      same_hash.push_back(id);
      return id;
    }
    /// When row r allows exactly one token, that token; else -1.
    std::int32_t single_token(std::int32_t r) const {
      std::int32_t found = -1;
      const auto [lo, hi] = range_[static_cast<std::size_t>(r)];
      for (std::size_t w = lo; w < hi; ++w) {
        const std::uint32_t bits = masks_[start(r) + w];
        if (!bits) continue;
        if (found >= 0 || (bits & (bits - 1))) return -1;
        found = static_cast<std::int32_t>(w * 32 + static_cast<std::size_t>(__builtin_ctz(bits)));
      }
      return found;
    }

   private:
    std::size_t start(std::int32_t r) const { return static_cast<std::size_t>(r) * words_; }
    std::vector<std::uint32_t>& masks_;
    std::size_t words_, max_bytes_;
    std::vector<std::pair<std::size_t, std::size_t>> range_;
    std::unordered_map<std::uint64_t, std::vector<std::int32_t>> by_hash_;
  };

  void lift(const Vocabulary& vocab, const GrammarLimits& limits) {
    const auto n = static_cast<std::size_t>(dfa_.num_states);
    std::vector<std::int32_t> stack(vocab.trie().max_depth + 1);
    RowScratch row{std::vector<std::uint32_t>(words_)};
    RowStore store(masks_, words_, limits.table_bytes);
    std::size_t work = 0;
    const auto walked = [&](std::size_t visited) {
      work = detail::saturating_add(work, visited);
      detail::check_limit(work, limits.lift_work, "lift_work",
                          "the lift over the vocabulary (trie nodes walked)");
    };
    // The row of q, interned: the tokens that stay live for which keep(state after the
    // token) holds, and end of sequence when q is accepting.
    const auto intern_row = [&](std::size_t q, auto&& keep) {
      walked(walk(vocab.trie(), static_cast<std::int32_t>(q), stack,
                  [&](std::int32_t tok, std::int32_t t) {
                    if (keep(t)) row.set(tok);
                  }));
      if (dfa_.accepting[q])
        for (const std::int32_t e : vocab.eos_ids()) row.set(e);
      mask_row_[q] = store.intern(row);
      row.clear();
    };
    // 1. Per state: the tokens that stay live (its row), and the distinct states they lead to.
    std::vector<std::vector<std::int32_t>> succ(n);
    std::vector<std::uint32_t> seen(n, 0);
    mask_row_.assign(n, 0);
    for (std::size_t q = 0; q < n; ++q) {
      const auto stamp = static_cast<std::uint32_t>(q + 1);
      intern_row(q, [&](std::int32_t t) {
        if (seen[static_cast<std::size_t>(t)] != stamp) {
          seen[static_cast<std::size_t>(t)] = stamp;
          succ[q].push_back(t);
        }
        return true;
      });
    }
    // 2. Token distance to acceptance: breadth-first over the reversed successor graph.
    std::vector<std::vector<std::int32_t>> preds(n);
    for (std::size_t q = 0; q < n; ++q)
      for (const std::int32_t t : succ[q])
        preds[static_cast<std::size_t>(t)].push_back(static_cast<std::int32_t>(q));
    dist_.assign(n, kUnreachable);
    std::deque<std::int32_t> queue;
    for (std::size_t q = 0; q < n; ++q)
      if (dfa_.accepting[q]) dist_[q] = 0, queue.push_back(static_cast<std::int32_t>(q));
    while (!queue.empty()) {
      const auto q = static_cast<std::size_t>(queue.front());
      queue.pop_front();
      for (const std::int32_t p : preds[q])
        if (dist_[static_cast<std::size_t>(p)] == kUnreachable)
          dist_[static_cast<std::size_t>(p)] = dist_[q] + 1, queue.push_back(p);
    }
    BATON_CHECK(dist_[0] != kUnreachable, grammar_error,
                "the vocabulary's tokens cannot spell any string of the grammar (", vocab_size_,
                " tokens)");
    // 3. Tokens into states that cannot finish (a vocabulary missing bytes) are dropped: the
    // row is computed again without them.
    slack_.assign(n, 0);
    complete_.assign(n, 0);
    bool dropped = false;
    for (std::size_t q = 0; q < n; ++q) {
      bool drops = false, goes_on = false;
      for (const std::int32_t t : succ[q]) {
        const std::int32_t d = dist_[static_cast<std::size_t>(t)];
        if (d == kUnreachable) {
          drops = true;
        } else {
          goes_on = true;
          slack_[q] = std::max(slack_[q], d);
        }
      }
      complete_[q] = dfa_.accepting[q] && !goes_on;
      if (drops)
        intern_row(
            q, [&](std::int32_t t) { return dist_[static_cast<std::size_t>(t)] != kUnreachable; });
      dropped = dropped || drops;
    }
    // 4. The forced single tokens (an accepting state also allows end of sequence).
    forced_.assign(n, -1);
    for (std::size_t q = 0; q < n; ++q)
      if (!dfa_.accepting[q]) forced_[q] = store.single_token(mask_row_[q]);
    if (dropped) drop_unused_rows();
  }

  // Removes the rows no state points at any more (replaced in step 3), keeping the order.
  void drop_unused_rows() {
    const std::size_t rows = masks_.size() / std::max<std::size_t>(words_, 1);
    std::vector<std::int32_t> renumber(rows, -1);
    for (const std::int32_t r : mask_row_) renumber[static_cast<std::size_t>(r)] = 0;
    std::int32_t kept = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      if (renumber[r] < 0) continue;
      const auto to = static_cast<std::size_t>(kept);
      if (to != r)
        std::copy_n(masks_.begin() + static_cast<std::ptrdiff_t>(r * words_), words_,
                    masks_.begin() + static_cast<std::ptrdiff_t>(to * words_));
      renumber[r] = kept++;
    }
    masks_.resize(static_cast<std::size_t>(kept) * words_);
    masks_.shrink_to_fit();
    for (std::int32_t& r : mask_row_) r = renumber[static_cast<std::size_t>(r)];
  }

  Dfa dfa_;
  std::shared_ptr<const Vocabulary> vocab_;
  std::int32_t vocab_size_;
  std::size_t words_;
  std::uint64_t key_;
  std::vector<std::int32_t> dist_, slack_, forced_, mask_row_;
  std::vector<std::uint32_t> masks_;
  std::vector<std::uint32_t> offsets_;
  std::vector<std::uint8_t> bytes_, eos_, complete_;
};

}  // namespace baton::grammar
