// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A regex that must match a whole short string (a module path, a name), run as an NFA
/// simulation: time linear in the text times the automaton's size, never backtracking, so a
/// pattern read from a file cannot hang the caller or exhaust its stack.
///
/// The syntax is the grammar parser's (regex_parser.hpp): the common Python `re` subset, with
/// look-around, back-references and inline flags rejected by offset and reason.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "baton/grammar/dfa.hpp"
#include "baton/grammar/grammar_limits.hpp"
#include "baton/grammar/nfa.hpp"
#include "baton/grammar/regex_parser.hpp"

namespace baton::grammar {

class PathRegex {
 public:
  /// The automaton size a pattern may reach: real module-path patterns need a few hundred
  /// states; the bound keeps each match cheap whatever a file holds.
  static constexpr std::size_t kMaxStates = 20'000;

  PathRegex() = default;

  /// The grammar limits with the syntax tree and the NFA bounded by kMaxStates.
  static GrammarLimits limits() {
    GrammarLimits l;
    l.syntax_nodes = kMaxStates;
    l.nfa_states = kMaxStates;
    return l;
  }

  /// Compiles `pattern`; grammar_error naming the offset and reason, or the size bound.
  explicit PathRegex(std::string_view pattern)
      : pattern_(pattern), nfa_(build_nfa(parse_regex(pattern, limits()), limits())) {}

  const std::string& pattern() const { return pattern_; }

  /// Whether the whole of `text` matches (Python's re.fullmatch).
  bool full_match(std::string_view text) const {
    if (nfa_.states.empty()) return false;
    std::vector<std::int32_t> current{nfa_.start}, next;
    std::vector<std::uint32_t> mark(nfa_.states.size(), 0);
    std::uint32_t stamp = 1;
    detail::epsilon_closure(nfa_, current, mark, stamp);
    for (const char ch : text) {
      const auto byte = static_cast<std::uint8_t>(ch);
      next.clear();
      ++stamp;
      for (const std::int32_t s : current) {
        for (const Nfa::Edge& e : nfa_.states[static_cast<std::size_t>(s)].edges) {
          if (byte < e.lo || byte > e.hi || mark[static_cast<std::size_t>(e.to)] == stamp) continue;
          mark[static_cast<std::size_t>(e.to)] = stamp;
          next.push_back(e.to);
        }
      }
      if (next.empty()) return false;
      detail::epsilon_closure(nfa_, next, mark, stamp);
      current.swap(next);
    }
    for (const std::int32_t s : current) {
      if (s == nfa_.accept) return true;
    }
    return false;
  }

 private:
  std::string pattern_;
  Nfa nfa_;
};

}  // namespace baton::grammar
