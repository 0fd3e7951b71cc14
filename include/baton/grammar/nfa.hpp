// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A byte-level NFA built from a RegexNode (Thompson's construction): code-point sets
/// become alternations of UTF-8 byte-range sequences, so the automaton reads bytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/grammar/grammar_limits.hpp"
#include "baton/grammar/regex_ast.hpp"

namespace baton::grammar {

/// An NFA over bytes: epsilon edges plus byte-range edges; one start, one accepting state.
struct Nfa {
  struct Edge {
    std::uint8_t lo, hi;
    std::int32_t to;
  };
  struct State {
    std::vector<std::int32_t> eps;
    std::vector<Edge> edges;
  };
  std::vector<State> states;
  std::int32_t start = 0, accept = 0;
};

namespace detail {

template <class Emit>
void utf8_same_length(char32_t lo, char32_t hi, Emit& emit) {
  std::string a, b;
  text::utf8_append(a, lo);
  const std::size_t n = a.size();
  // Split until lo and hi differ only where the lower bytes span full continuation ranges.
  for (std::size_t i = 1; i < n; ++i) {
    const char32_t low_bits = (char32_t{1} << (6 * i)) - 1;
    if ((lo & ~low_bits) != (hi & ~low_bits)) {
      if ((lo & low_bits) != 0) {
        utf8_same_length(lo, lo | low_bits, emit);
        utf8_same_length((lo | low_bits) + 1, hi, emit);
        return;
      }
      if ((hi & low_bits) != low_bits) {
        utf8_same_length(lo, (hi & ~low_bits) - 1, emit);
        utf8_same_length(hi & ~low_bits, hi, emit);
        return;
      }
    }
  }
  text::utf8_append(b, hi);
  std::vector<Nfa::Edge> seq(n);
  for (std::size_t k = 0; k < n; ++k)
    seq[k] = {static_cast<std::uint8_t>(a[k]), static_cast<std::uint8_t>(b[k]), -1};
  emit(seq);
}

/// Calls `emit(ranges)` for byte-range sequences that together spell exactly the UTF-8
/// encodings of the code points in [lo, hi] (one encoded length per call).
template <class Emit>
void utf8_range_sequences(char32_t lo, char32_t hi, Emit&& emit) {
  // Split at the encoded-length boundaries first.
  static constexpr char32_t kLengthEnds[] = {0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
  for (const char32_t end : kLengthEnds) {
    if (lo > hi) return;
    if (lo <= end) {
      const char32_t h = hi < end ? hi : end;
      utf8_same_length(lo, h, emit);
      lo = h + 1;
    }
  }
}

class NfaBuilder {
 public:
  explicit NfaBuilder(std::size_t max_states) : max_states_(max_states) {}

  Nfa build(const RegexNode& root) {
    const auto [s, e] = fragment(root);
    nfa_.start = s;
    nfa_.accept = e;
    return std::move(nfa_);
  }

 private:
  struct Frag {
    std::int32_t start, end;
  };

  std::int32_t new_state() {
    check_limit(nfa_.states.size() + 1, max_states_, "nfa_states", "the NFA's states");
    nfa_.states.emplace_back();
    return static_cast<std::int32_t>(nfa_.states.size() - 1);
  }
  void eps(std::int32_t from, std::int32_t to) {
    nfa_.states[static_cast<std::size_t>(from)].eps.push_back(to);
  }

  Frag fragment(const RegexNode& n) {
    switch (n.kind) {
      case RegexNode::Kind::empty: {
        const std::int32_t s = new_state();
        return {s, s};
      }
      case RegexNode::Kind::set:
        return set_fragment(n.set);
      case RegexNode::Kind::concat: {
        Frag f = fragment(n.kids.front());
        for (std::size_t k = 1; k < n.kids.size(); ++k) {
          const Frag g = fragment(n.kids[k]);
          eps(f.end, g.start);
          f.end = g.end;
        }
        return f;
      }
      case RegexNode::Kind::alt: {
        const std::int32_t s = new_state(), e = new_state();
        for (const RegexNode& kid : n.kids) {
          const Frag g = fragment(kid);
          eps(s, g.start);
          eps(g.end, e);
        }
        return {s, e};
      }
      case RegexNode::Kind::repeat:
        if (n.kids.size() == 2) return separated_fragment(n.kids[0], n.kids[1], n.min, n.max);
        return repeat_fragment(n.kids.front(), n.min, n.max);
    }
    return {0, 0};
  }

  Frag repeat_fragment(const RegexNode& kid, int min, int max) {
    const std::int32_t s = new_state();
    std::int32_t end = s;
    for (int k = 0; k < min; ++k) {
      const Frag g = fragment(kid);
      eps(end, g.start);
      end = g.end;
    }
    if (max < 0) {
      const Frag g = fragment(kid);
      eps(end, g.start);
      eps(g.end, end);
      return {s, end};
    }
    // Each optional copy may be skipped to the common exit.
    const std::int32_t exit = new_state();
    eps(end, exit);
    for (int k = min; k < max; ++k) {
      const Frag g = fragment(kid);
      eps(end, g.start);
      eps(g.end, exit);
      end = g.end;
    }
    return {s, exit};
  }

  // item (sep item){min-1, max-1}, optional as a whole when min is 0. Unbounded, the last
  // mandatory item loops back through the separator, so one copy of the item serves all
  // the repetitions (a JSON array of arrays of ... stays linear in the nesting).
  Frag separated_fragment(const RegexNode& item, const RegexNode& sep, int min, int max) {
    const std::int32_t s = new_state();
    if (max == 0) return {s, s};
    Frag last = fragment(item);
    eps(s, last.start);
    std::int32_t end = last.end;
    const int mandatory = std::max(min, 1);
    for (int k = 1; k < mandatory; ++k) {
      const Frag g = fragment(sep), h = fragment(item);
      eps(end, g.start);
      eps(g.end, h.start);
      end = h.end;
      last = h;
    }
    std::int32_t exit = end;
    if (max < 0) {
      const Frag g = fragment(sep);
      eps(last.end, g.start);
      eps(g.end, last.start);
    } else if (max > mandatory) {
      exit = new_state();
      eps(end, exit);
      for (int k = mandatory; k < max; ++k) {
        const Frag g = fragment(sep), h = fragment(item);
        eps(end, g.start);
        eps(g.end, h.start);
        eps(h.end, exit);
        end = h.end;
      }
    }
    if (min == 0) {
      const std::int32_t out = new_state();
      eps(s, out);
      eps(exit, out);
      return {s, out};
    }
    return {s, exit};
  }

  Frag set_fragment(const std::vector<CodeRange>& set) {
    const std::int32_t s = new_state(), e = new_state();
    for (const CodeRange& r : set) {
      utf8_range_sequences(r.lo, r.hi, [&](const std::vector<Nfa::Edge>& seq) {
        std::int32_t at = s;
        for (std::size_t k = 0; k < seq.size(); ++k) {
          const std::int32_t to = k + 1 == seq.size() ? e : new_state();
          nfa_.states[static_cast<std::size_t>(at)].edges.push_back({seq[k].lo, seq[k].hi, to});
          at = to;
        }
      });
    }
    return {s, e};
  }

  std::size_t max_states_;
  Nfa nfa_;
};

}  // namespace detail

/// The byte-level NFA of `root`; grammar_error when it would need more than
/// GrammarLimits::nfa_states states (checked state by state, before each allocation).
inline Nfa build_nfa(const RegexNode& root, const GrammarLimits& limits = {}) {
  return detail::NfaBuilder(limits.nfa_states).build(root);
}

}  // namespace baton::grammar
