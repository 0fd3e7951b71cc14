// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Grammars for constrained decoding: a regex or a JSON Schema subset, compiled
/// against a vocabulary into a TokenGrammar; a cache keyed by (grammar, vocabulary); and
/// the per-request matcher that masks and advances on the host.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/grammar/dfa.hpp"
#include "baton/grammar/grammar_limits.hpp"
#include "baton/grammar/grammar_spec.hpp"
#include "baton/grammar/nfa.hpp"
#include "baton/grammar/token_grammar.hpp"
#include "baton/grammar/tokenizer_vocabulary.hpp"
#include "baton/grammar/vocabulary.hpp"

namespace baton::grammar {

/// The minimal byte-level DFA of `spec`; grammar_error when it is outside the subset or
/// would pass `limits` on the way.
inline Dfa compile_dfa(const GrammarSpec& spec, const GrammarLimits& limits = {}) {
  return build_dfa(build_nfa(spec.language(limits), limits), limits);
}

/// `spec` lifted over `vocab` (throws grammar_error when it cannot be compiled, or when it
/// would pass `limits`: GrammarLimits names what each field bounds).
inline std::shared_ptr<const TokenGrammar> compile_grammar(const GrammarSpec& spec,
                                                           std::shared_ptr<const Vocabulary> vocab,
                                                           const GrammarLimits& limits = {}) {
  return std::make_shared<const TokenGrammar>(compile_dfa(spec, limits), std::move(vocab),
                                              spec.hash(), limits);
}

/// Compiled grammars by key (grammar hash x vocabulary hash). Owned by whoever shares it
/// (a relay, a server): nothing global. Not thread-safe. Compiles with its `limits`.
class GrammarCache {
 public:
  explicit GrammarCache(const GrammarLimits& limits = {}) : limits_(limits) {}

  std::shared_ptr<const TokenGrammar> get(const GrammarSpec& spec,
                                          const std::shared_ptr<const Vocabulary>& vocab) {
    const std::uint64_t key = spec.hash() ^ (vocab->hash() * 0x9E3779B97F4A7C15ull);
    Entry& slot = by_key_[key];
    // The key is a hash: a hit is checked against the grammar and vocabulary themselves.
    if (!slot.grammar || slot.kind != spec.kind || slot.source != spec.source ||
        slot.grammar->vocabulary().hash() != vocab->hash())
      slot = Entry{spec.kind, spec.source, compile_grammar(spec, vocab, limits_)};
    return slot.grammar;
  }
  std::size_t size() const { return by_key_.size(); }

 private:
  struct Entry {
    GrammarSpec::Kind kind = GrammarSpec::Kind::regex;
    std::string source;
    std::shared_ptr<const TokenGrammar> grammar;
  };
  GrammarLimits limits_;
  std::map<std::uint64_t, Entry> by_key_;
};

/// One request's position in a grammar, on the host: the allowed set for the next token
/// (budget-aware) and the advance by the chosen token. Owns its scratch: no allocation per
/// step.
class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const TokenGrammar> g)
      : g_(std::move(g)), scratch_(g_->make_scratch()) {}

  /// Starts over; `budget` is the number of tokens the generation may still produce.
  /// Throws grammar_error when the grammar cannot finish within it.
  void reset(std::int32_t budget) {
    BATON_CHECK(g_->distance(0) <= budget, grammar_error, "the grammar needs at least ",
                g_->distance(0), " tokens but the generation may produce only ", budget);
    state_ = 0;
    remaining_ = budget;
  }
  /// The tokens allowed next (bit t of word t/32).
  std::span<const std::uint32_t> allowed() { return g_->mask(state_, remaining_, scratch_); }
  bool allows(std::int32_t token) {
    return token >= 0 && token < g_->vocab_size() && TokenGrammar::test(allowed(), token);
  }
  /// Takes `token`; throws usage_error when it is not allowed.
  void advance(std::int32_t token) {
    BATON_CHECK(allows(token), usage_error, "token ", token,
                " is not allowed by the grammar in state ", state_);
    state_ = g_->advance(state_, token);
    --remaining_;
  }
  std::int32_t state() const { return state_; }
  std::int32_t remaining() const { return remaining_; }
  bool accepting() const { return g_->accepting(state_); }
  const TokenGrammar& grammar() const { return *g_; }

 private:
  std::shared_ptr<const TokenGrammar> g_;
  MaskScratch scratch_;
  std::int32_t state_ = 0;
  std::int32_t remaining_ = std::numeric_limits<std::int32_t>::max();
};

}  // namespace baton::grammar
