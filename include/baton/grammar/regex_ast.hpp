// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The regular-language syntax tree both grammar front ends (regex, JSON Schema)
/// produce: sets of code points, concatenation, alternation and bounded repetition.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/text/utf8.hpp"

namespace baton::grammar {

/// The largest Unicode scalar value.
inline constexpr char32_t kMaxCodePoint = 0x10FFFF;

/// An inclusive range of code points.
struct CodeRange {
  char32_t lo = 0, hi = 0;
  friend bool operator==(const CodeRange&, const CodeRange&) = default;
};

/// A node of a regular expression over Unicode scalar values. The automaton steps through
/// the UTF-8 bytes of these code points (tokens split characters).
///
/// A repetition holds what it repeats once; the NFA writes it out `max` times. `size` is the
/// node count as if every repetition were written out, kept up to date by the factories, so
/// that the front ends can refuse a tree (GrammarLimits::syntax_nodes) before the NFA
/// construction pays for it.
struct RegexNode {
  enum class Kind : std::uint8_t {
    empty,   ///< matches the empty string
    set,     ///< one code point out of `set` (sorted, disjoint, surrogates excluded)
    concat,  ///< `kids` one after another
    alt,     ///< one of `kids`
    repeat,  ///< `kids[0]` between `min` and `max` times (`max` < 0: unbounded), with
             ///< `kids[1]` (when present) between two repetitions
  };
  Kind kind = Kind::empty;
  std::vector<CodeRange> set;
  std::vector<RegexNode> kids;
  int min = 0, max = 0;
  std::size_t size = 1;  ///< nodes, counted repetitions written out (saturates)

  static RegexNode empty_string() { return {}; }
  static RegexNode of_set(std::vector<CodeRange> ranges);
  static RegexNode code_point(char32_t c) { return of_set({{c, c}}); }
  /// The UTF-8 string `s` literally (no syntax).
  static RegexNode literal(std::string_view s);
  static RegexNode seq(std::vector<RegexNode> kids) {
    if (kids.size() == 1) return std::move(kids.front());
    RegexNode n;
    n.kind = kids.empty() ? Kind::empty : Kind::concat;
    n.kids = std::move(kids);
    n.size = 1 + total_size(n.kids);
    return n;
  }
  static RegexNode any_of(std::vector<RegexNode> kids) {
    if (kids.size() == 1) return std::move(kids.front());
    RegexNode n;
    n.kind = Kind::alt;
    n.kids = std::move(kids);
    n.size = 1 + total_size(n.kids);
    return n;
  }
  static RegexNode repeated(RegexNode kid, int min, int max) {
    RegexNode n;
    n.kind = Kind::repeat;
    n.kids.push_back(std::move(kid));
    n.min = min;
    n.max = max;
    n.size = n.repeat_size();
    return n;
  }
  /// `item` between `min` and `max` times (`max` < 0: unbounded) with `sep` between two of
  /// them: a JSON array's items. Unlike `item (sep item)*` it holds `item` once, and the NFA
  /// needs one copy of it when the count is unbounded, so nested arrays grow linearly.
  static RegexNode separated(RegexNode item, RegexNode sep, int min, int max) {
    RegexNode n = repeated(std::move(item), min, max);
    n.kids.push_back(std::move(sep));
    n.size = n.repeat_size();
    return n;
  }
  static RegexNode optional(RegexNode kid) { return repeated(std::move(kid), 0, 1); }

  /// How many copies of the repeated node the NFA builds: `max` when bounded, else the
  /// mandatory ones with the last one looping (at least one).
  std::size_t copies() const { return static_cast<std::size_t>(max >= 0 ? max : std::max(min, 1)); }

 private:
  static constexpr std::size_t kSaturated = static_cast<std::size_t>(-1);
  static std::size_t add(std::size_t a, std::size_t b) {
    return a > kSaturated - b ? kSaturated : a + b;
  }
  static std::size_t total_size(const std::vector<RegexNode>& kids) {
    std::size_t total = 0;
    for (const RegexNode& k : kids) total = add(total, k.size);
    return total;
  }
  // 1 + copies x (item + separator), saturating.
  std::size_t repeat_size() const {
    const std::size_t each = total_size(kids), n = copies();
    return add(1, n != 0 && each > kSaturated / n ? kSaturated : n * each);
  }
};

/// Sorts and merges `ranges` and removes the surrogates U+D800..U+DFFF (not scalar values,
/// so UTF-8 cannot spell them).
inline std::vector<CodeRange> normalize_ranges(std::vector<CodeRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const CodeRange& a, const CodeRange& b) { return a.lo < b.lo; });
  std::vector<CodeRange> merged;
  for (const CodeRange& r : ranges) {
    if (!merged.empty() && r.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  std::vector<CodeRange> out;
  for (const CodeRange& r : merged) {
    if (r.hi < 0xD800 || r.lo > 0xDFFF) {
      out.push_back(r);
      continue;
    }
    if (r.lo < 0xD800) out.push_back({r.lo, 0xD7FF});
    if (r.hi > 0xDFFF) out.push_back({0xE000, r.hi});
  }
  return out;
}

/// The code points not in `ranges` (which must be normalized).
inline std::vector<CodeRange> complement_ranges(const std::vector<CodeRange>& ranges) {
  std::vector<CodeRange> out;
  char32_t next = 0;
  for (const CodeRange& r : ranges) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return normalize_ranges(std::move(out));
}

inline RegexNode RegexNode::of_set(std::vector<CodeRange> ranges) {
  RegexNode n;
  n.kind = Kind::set;
  n.set = normalize_ranges(std::move(ranges));
  return n;
}

// Invalid UTF-8 bytes (callers validate first) are taken as the Latin-1 code point.
inline RegexNode RegexNode::literal(std::string_view s) {
  std::vector<RegexNode> kids;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = text::utf8_sequence_length(s, i);
    const char32_t c = len ? text::utf8_decode_at(s, i, len) : static_cast<unsigned char>(s[i]);
    kids.push_back(code_point(c));
    i += len ? len : 1;
  }
  return seq(std::move(kids));
}

}  // namespace baton::grammar
