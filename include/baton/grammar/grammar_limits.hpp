// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief GrammarLimits: how large a grammar may grow at each stage of its compilation, so
/// that a hostile regex or JSON schema ends in a grammar_error instead of minutes of CPU or
/// gigabytes of memory. Each stage checks its count while the structure grows (before the
/// next allocation), and the error names the field that would have to be raised.
///
/// The defaults keep every grammar they accept within about 2 s and 512 MB on a 150k-token
/// vocabulary (Qwen3) on a 2-core AVX2 machine (docs/security.md, "The limits and how to
/// raise them"); a caller that trusts its grammars raises the field the error names.
#pragma once

#include <cstddef>
#include <limits>
#include <string_view>

#include "baton/core/error.hpp"

namespace baton::grammar {

struct GrammarLimits {
  /// Largest `{m,n}` count in a regex, and largest maxLength / minLength / maxItems /
  /// minItems in a JSON schema (each count copies the automaton of what it repeats).
  int repeat_count = 1000;
  /// Deepest nesting of schemas inside a JSON schema (`items`, `properties`).
  int schema_depth = 32;
  /// Syntax-tree nodes as if every counted repetition were written out (`(a{1000}){100}`
  /// counts 100k `a`s): what the NFA construction would have to build.
  std::size_t syntax_nodes = 250'000;
  /// States of the byte-level NFA (a code point takes 2 to ~30, by its UTF-8 ranges).
  std::size_t nfa_states = 500'000;
  /// States of the DFA before minimisation (1 KiB each in the final transition table).
  std::size_t dfa_states = 100'000;
  /// Subset-construction work: NFA edges and states visited while building DFA states; it
  /// also bounds the memory of the NFA state sets kept for the DFA states.
  std::size_t subset_work = 10'000'000;
  /// Minimisation work: transitions scanned by Hopcroft's partition refinement.
  std::size_t minimize_work = 50'000'000;
  /// Bytes of the distinct allowed-token bitsets (rows x vocabulary / 8).
  std::size_t table_bytes = std::size_t{256} << 20;
  /// Vocabulary-trie nodes visited while lifting the DFA over the vocabulary (per state,
  /// a walk of the tokens that stay inside the grammar).
  std::size_t lift_work = 60'000'000;
};

namespace detail {

inline std::size_t saturating_add(std::size_t a, std::size_t b) {
  return a > std::numeric_limits<std::size_t>::max() - b ? std::numeric_limits<std::size_t>::max()
                                                         : a + b;
}
inline std::size_t saturating_mul(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a)
    return std::numeric_limits<std::size_t>::max();
  return a * b;
}

/// Throws grammar_error when `reached` is above `limit`: what grew, the value reached, and
/// the GrammarLimits field that allows more; `where` (may be empty) says where in the input.
inline void check_limit(std::size_t reached, std::size_t limit, const char* field, const char* what,
                        std::string_view where = {}) {
  BATON_CHECK(reached <= limit, grammar_error, where, "grammar too large: ", what, " reached ",
              reached, ", above GrammarLimits::", field, " = ", limit,
              " (raise GrammarLimits::", field,
              " to compile it, at the cost of time and memory; docs/security.md)");
}

/// The syntax tree so far (`nodes`, repetitions written out) against
/// GrammarLimits::syntax_nodes; both front ends check it while they build.
inline void check_syntax_nodes(std::size_t nodes, const GrammarLimits& limits,
                               std::string_view where) {
  check_limit(nodes, limits.syntax_nodes, "syntax_nodes",
              "the syntax tree's nodes (counted repetitions written out; the automaton needs "
              "at least as many states)",
              where);
}

}  // namespace detail

}  // namespace baton::grammar
