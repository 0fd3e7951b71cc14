// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The byte-level DFA of a grammar: subset construction over byte classes, states
/// that cannot reach acceptance removed (their transitions become kDead), then minimized.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/core/macros.hpp"
#include "baton/grammar/nfa.hpp"

namespace baton::grammar {

/// The transition to nowhere: the bytes read so far start no string of the language.
inline constexpr std::int32_t kDead = -1;
/// The most DFA states a grammar may have.
inline constexpr std::size_t kMaxDfaStates = 200'000;

/// A minimal DFA over bytes. State 0 is the start; every state can reach acceptance.
struct Dfa {
  std::int32_t num_states = 0;
  std::vector<std::int32_t> next;       ///< [state * 256 + byte] -> state or kDead
  std::vector<std::uint8_t> accepting;  ///< [state] -> 1 when the bytes so far are a match
  std::int32_t step(std::int32_t s, std::uint8_t b) const {
    return next[static_cast<std::size_t>(s) * 256 + b];
  }
};

/// One DFA step as plain data: the host and the device walk tokens through this.
BATON_HD inline std::int32_t dfa_step(const std::int32_t* next, std::int32_t s, std::uint8_t b) {
  return next[static_cast<std::size_t>(s) * 256 + b];
}

namespace detail {

// Bytes that every NFA edge treats alike share a class; the DFA is built per class.
struct ByteClasses {
  std::array<std::uint8_t, 256> of{};
  std::vector<std::uint8_t> representative;
};

inline ByteClasses byte_classes(const Nfa& nfa) {
  std::array<bool, 257> boundary{};
  boundary[0] = true;
  for (const auto& st : nfa.states)
    for (const auto& e : st.edges) {
      boundary[e.lo] = true;
      boundary[e.hi + 1] = true;
    }
  ByteClasses c;
  int id = -1;
  for (int b = 0; b < 256; ++b) {
    if (boundary[b]) {
      ++id;
      c.representative.push_back(static_cast<std::uint8_t>(b));
    }
    c.of[b] = static_cast<std::uint8_t>(id);
  }
  return c;
}

inline void epsilon_closure(const Nfa& nfa, std::vector<std::int32_t>& set,
                            std::vector<std::uint32_t>& mark, std::uint32_t stamp) {
  std::vector<std::int32_t> stack(set.begin(), set.end());
  for (const auto s : set) mark[static_cast<std::size_t>(s)] = stamp;
  while (!stack.empty()) {
    const std::int32_t s = stack.back();
    stack.pop_back();
    for (const std::int32_t t : nfa.states[static_cast<std::size_t>(s)].eps) {
      if (mark[static_cast<std::size_t>(t)] == stamp) continue;
      mark[static_cast<std::size_t>(t)] = stamp;
      set.push_back(t);
      stack.push_back(t);
    }
  }
  std::sort(set.begin(), set.end());
}

// Per-class transition table of the raw subset automaton.
struct RawDfa {
  std::int32_t classes = 0;
  std::vector<std::int32_t> next;  // [state * classes + class]
  std::vector<std::uint8_t> accepting;
};

inline RawDfa subset_construction(const Nfa& nfa, const ByteClasses& bc) {
  RawDfa d;
  d.classes = static_cast<std::int32_t>(bc.representative.size());
  std::map<std::vector<std::int32_t>, std::int32_t> ids;
  std::deque<std::vector<std::int32_t>> queue;
  std::vector<std::uint32_t> mark(nfa.states.size(), 0);
  std::uint32_t stamp = 0;
  const auto intern = [&](std::vector<std::int32_t> set) -> std::int32_t {
    if (set.empty()) return kDead;
    const auto [it, fresh] = ids.emplace(set, static_cast<std::int32_t>(ids.size()));
    if (fresh) {
      BATON_CHECK(ids.size() <= kMaxDfaStates, grammar_error,
                  "grammar too large: its DFA has more than ", kMaxDfaStates,
                  " states (lower the repetition counts or string lengths)");
      d.accepting.push_back(std::binary_search(set.begin(), set.end(), nfa.accept) ? 1 : 0);
      d.next.resize(d.next.size() + static_cast<std::size_t>(d.classes), kDead);
      queue.push_back(std::move(set));
    }
    return it->second;
  };
  std::vector<std::int32_t> start{nfa.start};
  epsilon_closure(nfa, start, mark, ++stamp);
  intern(std::move(start));
  for (std::int32_t s = 0; !queue.empty(); ++s) {
    const std::vector<std::int32_t> set = std::move(queue.front());
    queue.pop_front();
    for (std::int32_t c = 0; c < d.classes; ++c) {
      const std::uint8_t b = bc.representative[static_cast<std::size_t>(c)];
      std::vector<std::int32_t> to;
      ++stamp;
      for (const std::int32_t q : set)
        for (const auto& e : nfa.states[static_cast<std::size_t>(q)].edges)
          if (e.lo <= b && b <= e.hi && mark[static_cast<std::size_t>(e.to)] != stamp) {
            mark[static_cast<std::size_t>(e.to)] = stamp;
            to.push_back(e.to);
          }
      epsilon_closure(nfa, to, mark, ++stamp);
      const std::int32_t t = intern(std::move(to));
      d.next[static_cast<std::size_t>(s) * static_cast<std::size_t>(d.classes) +
             static_cast<std::size_t>(c)] = t;
    }
  }
  return d;
}

// States from which acceptance is reachable.
inline std::vector<std::uint8_t> live_states(const RawDfa& d) {
  const std::size_t n = d.accepting.size(), k = static_cast<std::size_t>(d.classes);
  std::vector<std::vector<std::int32_t>> preds(n);
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t c = 0; c < k; ++c)
      if (const std::int32_t t = d.next[s * k + c]; t != kDead)
        preds[static_cast<std::size_t>(t)].push_back(static_cast<std::int32_t>(s));
  std::vector<std::uint8_t> live(n, 0);
  std::vector<std::int32_t> stack;
  for (std::size_t s = 0; s < n; ++s)
    if (d.accepting[s]) live[s] = 1, stack.push_back(static_cast<std::int32_t>(s));
  while (!stack.empty()) {
    const auto s = static_cast<std::size_t>(stack.back());
    stack.pop_back();
    for (const std::int32_t p : preds[s])
      if (!live[static_cast<std::size_t>(p)])
        live[static_cast<std::size_t>(p)] = 1, stack.push_back(p);
  }
  return live;
}

// Moore's partition refinement over the live states; returns the block of each state.
inline std::vector<std::int32_t> minimize_blocks(const RawDfa& d,
                                                 const std::vector<std::uint8_t>& live) {
  const std::size_t n = d.accepting.size(), k = static_cast<std::size_t>(d.classes);
  std::vector<std::int32_t> block(n, kDead);
  for (std::size_t s = 0; s < n; ++s)
    if (live[s]) block[s] = d.accepting[s];
  for (std::size_t blocks = 0;;) {
    std::map<std::vector<std::int32_t>, std::int32_t> sig_ids;
    std::vector<std::int32_t> refined(n, kDead);
    std::vector<std::int32_t> sig(k + 1);
    for (std::size_t s = 0; s < n; ++s) {
      if (!live[s]) continue;
      sig[0] = block[s];
      for (std::size_t c = 0; c < k; ++c) {
        const std::int32_t t = d.next[s * k + c];
        sig[c + 1] = t == kDead ? kDead : block[static_cast<std::size_t>(t)];
      }
      refined[s] = sig_ids.emplace(sig, static_cast<std::int32_t>(sig_ids.size())).first->second;
    }
    block = std::move(refined);
    if (sig_ids.size() == blocks) return block;
    blocks = sig_ids.size();
  }
}

}  // namespace detail

/// The minimal byte-level DFA of `nfa`. Throws grammar_error when the language is empty.
inline Dfa build_dfa(const Nfa& nfa) {
  const detail::ByteClasses bc = detail::byte_classes(nfa);
  const detail::RawDfa raw = detail::subset_construction(nfa, bc);
  const std::vector<std::uint8_t> live = detail::live_states(raw);
  BATON_CHECK(live[0], grammar_error, "the grammar matches no string at all");
  // Dead transitions (to a state that cannot reach acceptance) are treated as kDead from
  // here on, by the block map; the result is numbered in breadth-first order from the start.
  const std::vector<std::int32_t> block = detail::minimize_blocks(raw, live);
  const std::size_t k = static_cast<std::size_t>(raw.classes);
  std::map<std::int32_t, std::int32_t> id_of_block;
  std::deque<std::int32_t> queue{0};
  id_of_block[block[0]] = 0;
  Dfa dfa;
  while (!queue.empty()) {
    const auto s = static_cast<std::size_t>(queue.front());
    queue.pop_front();
    const std::size_t id = dfa.accepting.size();
    dfa.accepting.push_back(raw.accepting[s]);
    dfa.next.resize(dfa.next.size() + 256, kDead);
    for (int b = 0; b < 256; ++b) {
      const std::int32_t t = raw.next[s * k + bc.of[static_cast<std::size_t>(b)]];
      if (t == kDead || block[static_cast<std::size_t>(t)] == kDead) continue;
      const std::int32_t tb = block[static_cast<std::size_t>(t)];
      auto [it, fresh] = id_of_block.emplace(tb, static_cast<std::int32_t>(id_of_block.size()));
      if (fresh) queue.push_back(t);
      dfa.next[id * 256 + static_cast<std::size_t>(b)] = it->second;
    }
  }
  dfa.num_states = static_cast<std::int32_t>(dfa.accepting.size());
  return dfa;
}

}  // namespace baton::grammar
