// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The byte-level DFA of a grammar: subset construction over byte classes, states
/// that cannot reach acceptance removed (their transitions become kDead), then minimized
/// (Hopcroft). Every stage is bounded by GrammarLimits, checked as it grows.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/core/macros.hpp"
#include "baton/grammar/grammar_limits.hpp"
#include "baton/grammar/nfa.hpp"

namespace baton::grammar {

/// The transition to nowhere: the bytes read so far start no string of the language.
inline constexpr std::int32_t kDead = -1;

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

// Adds to `set` the states its epsilon edges reach, sorted; returns the edges scanned.
inline std::size_t epsilon_closure(const Nfa& nfa, std::vector<std::int32_t>& set,
                                   std::vector<std::uint32_t>& mark, std::uint32_t stamp) {
  std::size_t scanned = 0;
  std::vector<std::int32_t> stack(set.begin(), set.end());
  for (const auto s : set) mark[static_cast<std::size_t>(s)] = stamp;
  while (!stack.empty()) {
    const std::int32_t s = stack.back();
    stack.pop_back();
    const auto& eps = nfa.states[static_cast<std::size_t>(s)].eps;
    scanned += eps.size();
    for (const std::int32_t t : eps) {
      if (mark[static_cast<std::size_t>(t)] == stamp) continue;
      mark[static_cast<std::size_t>(t)] = stamp;
      set.push_back(t);
      stack.push_back(t);
    }
  }
  std::sort(set.begin(), set.end());
  return scanned;
}

// Per-class transition table of the raw subset automaton.
struct RawDfa {
  std::int32_t classes = 0;
  std::vector<std::int32_t> next;  // [state * classes + class]
  std::vector<std::uint8_t> accepting;
};

inline RawDfa subset_construction(const Nfa& nfa, const ByteClasses& bc,
                                  const GrammarLimits& limits) {
  RawDfa d;
  d.classes = static_cast<std::int32_t>(bc.representative.size());
  // The NFA state sets by DFA state: hashed (a set is compared once, not log n times), and
  // queued by address (the map's nodes stay put), so each set is stored once.
  struct SetHash {
    std::size_t operator()(const std::vector<std::int32_t>& set) const {
      std::uint64_t h = 0x9E3779B97F4A7C15ull;
      for (const std::int32_t q : set) h = (h ^ static_cast<std::uint32_t>(q)) * 0x100000001B3ull;
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<std::vector<std::int32_t>, std::int32_t, SetHash> ids;
  std::deque<const std::vector<std::int32_t>*> queue;
  std::vector<std::uint32_t> mark(nfa.states.size(), 0);
  std::uint32_t stamp = 0;
  // NFA edges scanned and states gathered: the time, and a bound on the sets kept in `ids`.
  std::size_t work = 0;
  const auto intern = [&](std::vector<std::int32_t> set) -> std::int32_t {
    if (set.empty()) return kDead;
    const auto id = static_cast<std::int32_t>(ids.size());
    const auto [it, fresh] = ids.emplace(std::move(set), id);
    if (fresh) {
      check_limit(ids.size(), limits.dfa_states, "dfa_states",
                  "the DFA's states (before minimisation)");
      const std::vector<std::int32_t>& kept = it->first;
      d.accepting.push_back(std::binary_search(kept.begin(), kept.end(), nfa.accept) ? 1 : 0);
      d.next.resize(d.next.size() + static_cast<std::size_t>(d.classes), kDead);
      queue.push_back(&kept);
    }
    return it->second;
  };
  std::vector<std::int32_t> start{nfa.start};
  epsilon_closure(nfa, start, mark, ++stamp);
  intern(std::move(start));
  for (std::int32_t s = 0; !queue.empty(); ++s) {
    const std::vector<std::int32_t>& set = *queue.front();
    queue.pop_front();
    for (std::int32_t c = 0; c < d.classes; ++c) {
      const std::uint8_t b = bc.representative[static_cast<std::size_t>(c)];
      std::vector<std::int32_t> to;
      ++stamp;
      for (const std::int32_t q : set) {
        const auto& edges = nfa.states[static_cast<std::size_t>(q)].edges;
        work += 1 + edges.size();
        for (const auto& e : edges)
          if (e.lo <= b && b <= e.hi && mark[static_cast<std::size_t>(e.to)] != stamp) {
            mark[static_cast<std::size_t>(e.to)] = stamp;
            to.push_back(e.to);
          }
      }
      work += epsilon_closure(nfa, to, mark, ++stamp) + to.size();
      check_limit(work, limits.subset_work, "subset_work",
                  "the subset construction's work (NFA states and edges visited)");
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

// Hopcroft's partition refinement over the live states; returns the block of each state
// (kDead for the states that cannot reach acceptance).
//
// Why Hopcroft and not Moore's rounds: a round of Moore's refinement may split off as little
// as one state, so a chain of n states (`(a{1000}){100}`, a string of maxLength 1000) takes
// n rounds over all n states. Hopcroft refines by one (block, byte class) splitter at a
// time and, of the two halves of a split, queues only the smaller one unless the block was
// queued already; a state is then in a processed splitter at most log2(n) times per class,
// so the work is O(classes x n log n).
//
// The algorithm wants a complete automaton: the dead states (and kDead) form the third
// initial block. Dead states only go to dead states, so that block never splits, and
// splitting by every initial block but one is splitting by all of them: leaving out the dead
// block, neither it nor the transitions into it are needed, and only live states take part.
class Hopcroft {
 public:
  Hopcroft(const RawDfa& d, const std::vector<std::uint8_t>& live, std::size_t max_work)
      : k_(static_cast<std::size_t>(d.classes)), n_(d.accepting.size()), max_work_(max_work) {
    // Predecessors by class, compressed: pred_[pred_start_[c * n + t] ...] are the live
    // states that go to the live state t on class c.
    const auto target = [&](std::size_t s, std::size_t c) -> std::int32_t {
      const std::int32_t t = d.next[s * k_ + c];
      return t == kDead || !live[static_cast<std::size_t>(t)] ? kDead : t;
    };
    pred_start_.assign(k_ * n_ + 1, 0);
    for (std::size_t s = 0; s < n_; ++s)
      if (live[s])
        for (std::size_t c = 0; c < k_; ++c)
          if (const std::int32_t t = target(s, c); t != kDead)
            ++pred_start_[c * n_ + static_cast<std::size_t>(t) + 1];
    for (std::size_t i = 1; i < pred_start_.size(); ++i) pred_start_[i] += pred_start_[i - 1];
    pred_.resize(pred_start_.back());
    {
      std::vector<std::uint32_t> fill(pred_start_.begin(), pred_start_.end() - 1);
      for (std::size_t s = 0; s < n_; ++s)
        if (live[s])
          for (std::size_t c = 0; c < k_; ++c)
            if (const std::int32_t t = target(s, c); t != kDead)
              pred_[fill[c * n_ + static_cast<std::size_t>(t)]++] = static_cast<std::uint32_t>(s);
    }
    // The initial blocks: accepting and non-accepting live states, both queued.
    block_of_.assign(n_, kNone);
    where_.assign(n_, 0);
    for (const std::uint8_t accepting : {1, 0}) {
      const auto id = static_cast<std::uint32_t>(begin_.size());
      begin_.push_back(static_cast<std::uint32_t>(elems_.size()));
      for (std::size_t s = 0; s < n_; ++s)
        if (live[s] && d.accepting[s] == accepting) {
          block_of_[s] = id;
          where_[s] = static_cast<std::uint32_t>(elems_.size());
          elems_.push_back(static_cast<std::uint32_t>(s));
        }
      end_.push_back(static_cast<std::uint32_t>(elems_.size()));
      if (end_.back() == begin_.back()) {  // no such states: no block
        begin_.pop_back();
        end_.pop_back();
        continue;
      }
      grow();
      for (std::size_t c = 0; c < k_; ++c) queue(id, c);
    }
  }

  std::vector<std::int32_t> run() {
    std::vector<std::uint32_t> touched, incoming;
    while (!work_list_.empty()) {
      const auto [a, c] = work_list_.back();
      work_list_.pop_back();
      queued_[a * k_ + c] = 0;
      // The states that go into block a on class c (gathered first: a itself may split).
      incoming.clear();
      for (std::uint32_t i = begin_[a]; i < end_[a]; ++i) {
        const std::size_t at = c * n_ + elems_[i];
        incoming.insert(incoming.end(), pred_.begin() + pred_start_[at],
                        pred_.begin() + pred_start_[at + 1]);
      }
      work_ += 1 + (end_[a] - begin_[a]) + incoming.size();
      check_limit(work_, max_work_, "minimize_work",
                  "the minimisation's work (transitions scanned)");
      // Each such state moves to the front of its block, `marked_` of which are there. A
      // state has one successor per class, so it is gathered at most once.
      for (const std::uint32_t s : incoming) {
        const std::uint32_t b = block_of_[s];
        if (marked_[b] == 0) touched.push_back(b);
        const std::uint32_t front = begin_[b] + marked_[b]++;
        const std::uint32_t other = elems_[front];
        std::swap(elems_[front], elems_[where_[s]]);
        where_[other] = where_[s];
        where_[s] = front;
      }
      for (const std::uint32_t b : touched) {
        const std::uint32_t m = marked_[b];
        marked_[b] = 0;
        if (m != end_[b] - begin_[b]) split(b, begin_[b] + m);  // else all of b goes into a
      }
      touched.clear();
    }
    std::vector<std::int32_t> block(n_, kDead);
    for (std::size_t s = 0; s < n_; ++s)
      if (block_of_[s] != kNone) block[s] = static_cast<std::int32_t>(block_of_[s]);
    return block;
  }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  void grow() {
    marked_.resize(begin_.size(), 0);
    queued_.resize(begin_.size() * k_, 0);
  }
  void queue(std::size_t b, std::size_t c) {
    if (queued_[b * k_ + c]) return;
    queued_[b * k_ + c] = 1;
    work_list_.emplace_back(static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(c));
  }
  // Splits block b at `mid`: [begin, mid) becomes a new block. Per class, the new block is
  // queued when b is (both halves must then split others), else the smaller half is.
  void split(std::uint32_t b, std::uint32_t mid) {
    const auto fresh = static_cast<std::uint32_t>(begin_.size());
    begin_.push_back(begin_[b]);
    end_.push_back(mid);
    begin_[b] = mid;
    grow();
    for (std::uint32_t i = begin_[fresh]; i < end_[fresh]; ++i) block_of_[elems_[i]] = fresh;
    const bool fresh_smaller = end_[fresh] - begin_[fresh] <= end_[b] - begin_[b];
    for (std::size_t c = 0; c < k_; ++c) queue(queued_[b * k_ + c] || fresh_smaller ? fresh : b, c);
  }

  std::size_t k_, n_, max_work_, work_ = 0;
  std::vector<std::uint32_t> pred_start_, pred_;
  std::vector<std::uint32_t> block_of_, elems_, where_, begin_, end_, marked_;
  std::vector<std::uint8_t> queued_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> work_list_;
};

inline std::vector<std::int32_t> minimize_blocks(const RawDfa& d,
                                                 const std::vector<std::uint8_t>& live,
                                                 std::size_t max_work) {
  return Hopcroft(d, live, max_work).run();
}

}  // namespace detail

/// The minimal byte-level DFA of `nfa`. Throws grammar_error when the language is empty.
inline Dfa build_dfa(const Nfa& nfa, const GrammarLimits& limits = {}) {
  const detail::ByteClasses bc = detail::byte_classes(nfa);
  const detail::RawDfa raw = detail::subset_construction(nfa, bc, limits);
  const std::vector<std::uint8_t> live = detail::live_states(raw);
  BATON_CHECK(live[0], grammar_error, "the grammar matches no string at all");
  // Dead transitions (to a state that cannot reach acceptance) are treated as kDead from
  // here on, by the block map; the result is numbered in breadth-first order from the start.
  const std::vector<std::int32_t> block = detail::minimize_blocks(raw, live, limits.minimize_work);
  const std::size_t k = static_cast<std::size_t>(raw.classes);
  // Block ids are below the number of raw states.
  std::vector<std::int32_t> id_of_block(raw.accepting.size(), kDead);
  std::int32_t blocks_seen = 1;
  std::deque<std::int32_t> queue{0};
  id_of_block[static_cast<std::size_t>(block[0])] = 0;
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
      std::int32_t& to = id_of_block[static_cast<std::size_t>(block[static_cast<std::size_t>(t)])];
      if (to == kDead) {
        to = blocks_seen++;
        queue.push_back(t);
      }
      dfa.next[id * 256 + static_cast<std::size_t>(b)] = to;
    }
  }
  dfa.num_states = static_cast<std::int32_t>(dfa.accepting.size());
  return dfa;
}

}  // namespace baton::grammar
