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
  /// spelled with the vocabulary's tokens.
  TokenGrammar(Dfa dfa, std::shared_ptr<const Vocabulary> vocab, std::uint64_t grammar_hash)
      : dfa_(std::move(dfa)),
        vocab_(std::move(vocab)),
        vocab_size_(static_cast<std::int32_t>(vocab_->size())),
        words_((vocab_->size() + 31) / 32),
        key_(grammar_hash ^ (vocab_->hash() * 0x9E3779B97F4A7C15ull)) {
    token_tables(*vocab_);
    lift(*vocab_);
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
  template <class OnToken>
  void walk(const VocabTrie& trie, std::int32_t s, std::vector<std::int32_t>& stack,
            OnToken&& on_token) const {
    const std::int32_t* next = dfa_.next.data();
    stack[0] = s;
    const std::size_t n = trie.byte.size();
    for (std::size_t i = 0; i < n;) {
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

  void lift(const Vocabulary& vocab) {
    const auto n = static_cast<std::size_t>(dfa_.num_states);
    std::vector<std::int32_t> stack(vocab.trie().max_depth + 1);
    // 1. Per state: the tokens that stay live, and the distinct states they lead to.
    std::vector<std::vector<std::int32_t>> succ(n);
    std::vector<std::uint32_t> seen(n, 0);
    std::vector<std::uint32_t> rows(n * words_, 0);
    for (std::size_t q = 0; q < n; ++q) {
      std::span<std::uint32_t> row(rows.data() + q * words_, words_);
      const auto stamp = static_cast<std::uint32_t>(q + 1);
      walk(vocab.trie(), static_cast<std::int32_t>(q), stack,
           [&](std::int32_t tok, std::int32_t t) {
             set(row, tok);
             if (seen[static_cast<std::size_t>(t)] != stamp) {
               seen[static_cast<std::size_t>(t)] = stamp;
               succ[q].push_back(t);
             }
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
    // 3. Tokens into states that cannot finish (a vocabulary missing bytes) are dropped.
    slack_.assign(n, 0);
    complete_.assign(n, 0);
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
      if (!drops) continue;
      std::span<std::uint32_t> row(rows.data() + q * words_, words_);
      std::fill(row.begin(), row.end(), 0u);
      walk(vocab.trie(), static_cast<std::int32_t>(q), stack,
           [&](std::int32_t tok, std::int32_t t) {
             if (dist_[static_cast<std::size_t>(t)] != kUnreachable) set(row, tok);
           });
    }
    // 4. End of sequence in accepting states; the forced single tokens; shared rows.
    forced_.assign(n, -1);
    std::unordered_map<std::uint64_t, std::vector<std::int32_t>> by_hash;
    mask_row_.assign(n, 0);
    for (std::size_t q = 0; q < n; ++q) {
      std::span<std::uint32_t> row(rows.data() + q * words_, words_);
      if (!dfa_.accepting[q]) forced_[q] = single_token(row);
      if (dfa_.accepting[q])
        for (const std::int32_t e : vocab.eos_ids()) set(row, e);
      const std::uint64_t h =
          fnv1a(std::string_view(reinterpret_cast<const char*>(row.data()), words_ * 4));
      std::int32_t found = -1;
      for (const std::int32_t r : by_hash[h])
        if (std::equal(row.begin(), row.end(),
                       masks_.begin() +
                           static_cast<std::ptrdiff_t>(r) * static_cast<std::ptrdiff_t>(words_)))
          found = r;
      if (found < 0) {
        found = static_cast<std::int32_t>(masks_.size() / words_);
        masks_.insert(masks_.end(), row.begin(), row.end());
        by_hash[h].push_back(found);
      }
      mask_row_[q] = found;
    }
  }

  static std::int32_t single_token(std::span<const std::uint32_t> row) {
    std::int32_t found = -1;
    for (std::size_t w = 0; w < row.size(); ++w) {
      if (!row[w]) continue;
      if (found >= 0 || (row[w] & (row[w] - 1))) return -1;
      found = static_cast<std::int32_t>(w * 32 + static_cast<std::size_t>(__builtin_ctz(row[w])));
    }
    return found;
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
