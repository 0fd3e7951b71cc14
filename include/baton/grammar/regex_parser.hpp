// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Parses the usual regular-expression syntax into a RegexNode. The whole output
/// must match (anchors are implied), so the pattern describes a language, not a search.
///
/// Supported: literals (UTF-8), `.` (any character but newline), classes `[a-z]`, `[^...]`
/// with ranges and escapes, `\d \w \s` and their negations (ASCII: `[0-9]`,
/// `[A-Za-z0-9_]`, `[ \t\n\v\f\r]`), escapes `\n \r \t \f \v \0 \xHH \x{H...} \uHHHH` and
/// any escaped punctuation, groups `(...)`, `(?:...)`, `(?<name>...)`, `(?P<name>...)`,
/// alternation, `* + ? {m} {m,} {m,n}` (a trailing `?`, lazy, changes nothing for a whole
/// match and is accepted), `^` at the very start and `$` at the very end (no-ops).
/// Rejected with the offset and the reason: look-around, back-references, word boundaries,
/// inline flags, possessive quantifiers, a quantifier right after another (`a**`: Python's
/// "multiple repeat"), repetition counts above GrammarLimits::repeat_count, syntax trees
/// above GrammarLimits::syntax_nodes once repetitions are written out (checked as the parser
/// builds them, so `(a{1000}){1000}` stops before anything is expanded).
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/grammar/grammar_limits.hpp"
#include "baton/grammar/regex_ast.hpp"
#include "baton/text/utf8.hpp"

namespace baton::grammar {

/// The deepest group nesting accepted (the parser recurses).
inline constexpr int kMaxRegexDepth = 200;

namespace detail {

class RegexParser {
 public:
  RegexParser(std::string_view pattern, const GrammarLimits& limits)
      : p_(pattern), limits_(limits) {}

  RegexNode parse() {
    BATON_CHECK(text::first_invalid_utf8(p_) == std::string_view::npos, grammar_error,
                where(text::first_invalid_utf8(p_)), "the pattern is not valid UTF-8");
    if (peek('^')) ++i_;
    RegexNode n = alternation(0);
    if (i_ < p_.size()) fail(i_, "unbalanced ')'");
    return n;
  }

 private:
  [[noreturn]] void fail(std::size_t at, std::string_view why) const {
    BATON_FAIL(grammar_error, where(at), why);
  }
  std::string where(std::size_t at) const {
    std::string shown(p_.substr(0, 200));
    if (p_.size() > 200) shown += "...";
    return "regex /" + shown + "/ at offset " + std::to_string(at) + ": ";
  }
  // The tree so far, repetitions written out, against GrammarLimits::syntax_nodes.
  void check_size(std::size_t nodes) const { check_syntax_nodes(nodes, limits_, where(i_)); }
  bool peek(char c) const { return i_ < p_.size() && p_[i_] == c; }
  bool at_end() const { return i_ >= p_.size(); }

  RegexNode alternation(int depth) {
    if (depth > kMaxRegexDepth) fail(i_, "groups nested deeper than 200");
    std::vector<RegexNode> alts{concatenation(depth)};
    std::size_t nodes = alts.back().size;
    while (peek('|')) {
      ++i_;
      alts.push_back(concatenation(depth));
      nodes = saturating_add(nodes, alts.back().size);
      check_size(nodes);
    }
    return RegexNode::any_of(std::move(alts));
  }

  RegexNode concatenation(int depth) {
    std::vector<RegexNode> items;
    std::size_t nodes = 0;
    while (!at_end() && !peek('|') && !peek(')')) {
      if (peek('$')) {
        if (i_ + 1 == p_.size()) {
          ++i_;
          break;
        }
        fail(i_, "'$' is only allowed at the very end (anchors are implied)");
      }
      RegexNode atom_node = atom(depth);
      items.push_back(quantified(std::move(atom_node)));
      nodes = saturating_add(nodes, items.back().size);
      check_size(nodes);
    }
    return RegexNode::seq(std::move(items));
  }

  // One quantifier per atom, as in Python's re and PCRE: `a**` or `a{2}{3}` is an error
  // ("multiple repeat"), which also keeps the syntax tree as shallow as the group nesting.
  RegexNode quantified(RegexNode n) {
    int min = 0, max = 0;
    if (peek('*')) {
      min = 0, max = -1, ++i_;
    } else if (peek('+')) {
      min = 1, max = -1, ++i_;
    } else if (peek('?')) {
      min = 0, max = 1, ++i_;
    } else if (peek('{')) {
      counted(min, max);
    } else {
      return n;
    }
    if (peek('?')) ++i_;  // lazy: the same language
    if (peek('+')) fail(i_, "possessive quantifiers are not supported");
    if (peek('*') || peek('+') || peek('?') || peek('{')) {
      fail(i_, "multiple repeat (a quantifier after a quantifier; group the first one)");
    }
    RegexNode r = RegexNode::repeated(std::move(n), min, max);
    check_size(r.size);
    return r;
  }

  // `{m}`, `{m,}`, `{m,n}` at i_. A brace that is not a valid count is an error rather than
  // a literal (as some engines take it), so a typo is not silently matched as text.
  void counted(int& min, int& max) {
    const std::size_t open = i_;
    ++i_;
    const auto number = [&](int& out) {
      const std::size_t start = i_;
      long v = 0;
      while (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '9') {
        v = v * 10 + (p_[i_] - '0');
        if (v > limits_.repeat_count)
          fail(start, "repetition count above " + std::to_string(limits_.repeat_count) +
                          " (each count copies the automaton; GrammarLimits::repeat_count "
                          "allows more)");
        ++i_;
      }
      out = static_cast<int>(v);
      return i_ > start;
    };
    if (!number(min)) fail(open, "'{' must start a repetition {m}, {m,} or {m,n}");
    if (peek('}')) {
      ++i_;
      max = min;
      return;
    }
    if (!peek(',')) fail(i_, "expected ',' or '}' in the repetition");
    ++i_;
    if (peek('}')) {
      ++i_;
      max = -1;
      return;
    }
    if (!number(max)) fail(i_, "expected a number or '}' after ',' in the repetition");
    if (!peek('}')) fail(i_, "expected '}' to close the repetition");
    ++i_;
    if (max < min) fail(open, "repetition {m,n} with n < m");
  }

  RegexNode atom(int depth) {
    const std::size_t at = i_;
    const char c = p_[i_];
    switch (c) {
      case '(': {
        ++i_;
        if (peek('?')) group_kind(at);
        RegexNode inner = alternation(depth + 1);
        if (!peek(')')) fail(at, "'(' is never closed");
        ++i_;
        return inner;
      }
      case '[':
        return RegexNode::of_set(char_class());
      case '.':
        ++i_;
        return RegexNode::of_set(complement_ranges({{'\n', '\n'}}));
      case '\\':
        return escape_atom();
      case '*':
      case '+':
      case '?':
        fail(at, std::string("'") + c + "' has nothing to repeat");
      case '{':
        fail(at, "'{' has nothing to repeat (write \\{ for a literal brace)");
      case '^':
        fail(at, "'^' is only allowed at the very start (anchors are implied)");
      default:
        return RegexNode::code_point(next_code_point());
    }
  }

  void group_kind(std::size_t open) {
    ++i_;  // '?'
    if (peek(':')) {
      ++i_;
      return;
    }
    if (peek('P')) ++i_;
    if (peek('<') && i_ + 1 < p_.size() && p_[i_ + 1] != '=' && p_[i_ + 1] != '!') {
      const std::size_t close = p_.find('>', i_);
      if (close == std::string_view::npos) fail(open, "group name is never closed with '>'");
      i_ = close + 1;
      return;
    }
    if (peek('=') || peek('!') || peek('<'))
      fail(open, "look-around assertions are not supported (not a regular language over tokens)");
    fail(open, "inline flags and other (?...) groups are not supported");
  }

  char32_t next_code_point() {
    const std::size_t len = text::utf8_sequence_length(p_, i_);
    const char32_t cp = text::utf8_decode_at(p_, i_, len);
    i_ += len;
    return cp;
  }

  static std::vector<CodeRange> shorthand(char k) {
    switch (k) {
      case 'd':
      case 'D':
        return {{'0', '9'}};
      case 'w':
      case 'W':
        return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
      default:  // s, S
        return {{'\t', '\r'}, {' ', ' '}};
    }
  }

  // After a backslash: either a set (\d ...) or one code point.
  struct Escaped {
    bool is_set = false;
    std::vector<CodeRange> set;
    char32_t cp = 0;
  };

  Escaped escape(bool in_class) {
    const std::size_t at = i_;
    ++i_;
    if (at_end()) fail(at, "the pattern ends in a lone backslash");
    const char k = p_[i_];
    Escaped e;
    switch (k) {
      case 'd':
      case 'w':
      case 's':
      case 'D':
      case 'W':
      case 'S': {
        ++i_;
        e.is_set = true;
        e.set = normalize_ranges(shorthand(k));
        if (k >= 'A' && k <= 'Z') e.set = complement_ranges(e.set);
        return e;
      }
      case 'n':
        e.cp = '\n';
        break;
      case 'r':
        e.cp = '\r';
        break;
      case 't':
        e.cp = '\t';
        break;
      case 'f':
        e.cp = '\f';
        break;
      case 'v':
        e.cp = '\v';
        break;
      case '0':
        e.cp = 0;
        break;
      case 'x':
      case 'u': {
        ++i_;
        e.cp = hex_escape(at, k);
        return e;
      }
      case 'b':
        if (in_class) fail(at, "\\b inside a class is not supported (write \\x08)");
        [[fallthrough]];
      case 'B':
      case 'A':
      case 'z':
      case 'Z':
      case 'G':
        fail(at, std::string("the assertion \\") + k + " is not supported (anchors are implied)");
      default:
        if (k >= '1' && k <= '9') fail(at, "back-references are not supported (not regular)");
        if (static_cast<unsigned char>(k) < 0x80 && !std::isalnum(static_cast<unsigned char>(k))) {
          e.cp = static_cast<char32_t>(k);
          break;
        }
        fail(at, std::string("unknown escape \\") + k);
    }
    ++i_;
    return e;
  }

  char32_t hex_escape(std::size_t at, char kind) {
    const auto digit = [&](char h) -> int {
      if (h >= '0' && h <= '9') return h - '0';
      if (h >= 'a' && h <= 'f') return h - 'a' + 10;
      if (h >= 'A' && h <= 'F') return h - 'A' + 10;
      return -1;
    };
    std::uint32_t v = 0;
    if (peek('{')) {
      ++i_;
      int n = 0;
      while (!at_end() && digit(p_[i_]) >= 0 && n < 8) v = v * 16 + digit(p_[i_++]), ++n;
      if (n == 0 || !peek('}')) fail(at, "expected hex digits and '}' in \\x{...}");
      ++i_;
    } else {
      const int want = kind == 'x' ? 2 : 4;
      for (int n = 0; n < want; ++n) {
        if (at_end() || digit(p_[i_]) < 0)
          fail(at, std::string("\\") + kind + " needs " + std::to_string(want) + " hex digits");
        v = v * 16 + digit(p_[i_++]);
      }
    }
    if (v > kMaxCodePoint || (v >= 0xD800 && v <= 0xDFFF))
      fail(at, "escape names no Unicode scalar value (a surrogate or above U+10FFFF)");
    return static_cast<char32_t>(v);
  }

  RegexNode escape_atom() {
    Escaped e = escape(false);
    if (e.is_set) return RegexNode::of_set(std::move(e.set));
    return RegexNode::code_point(e.cp);
  }

  // '[' at i_: a class, possibly negated; returns its normalized ranges.
  std::vector<CodeRange> char_class() {
    const std::size_t open = i_;
    ++i_;
    bool negated = false;
    if (peek('^')) {
      negated = true;
      ++i_;
    }
    std::vector<CodeRange> ranges;
    bool first = true;
    for (;;) {
      if (at_end()) fail(open, "'[' is never closed");
      if (peek(']') && !first) {
        ++i_;
        break;
      }
      if (peek('[') && i_ + 1 < p_.size() && p_[i_ + 1] == ':')
        fail(i_, "POSIX classes [:name:] are not supported (write the ranges)");
      first = false;
      const std::size_t item = i_;
      char32_t lo = 0;
      if (peek('\\')) {
        Escaped e = escape(true);
        if (e.is_set) {
          ranges.insert(ranges.end(), e.set.begin(), e.set.end());
          continue;
        }
        lo = e.cp;
      } else {
        lo = next_code_point();
      }
      char32_t hi = lo;
      if (peek('-') && i_ + 1 < p_.size() && p_[i_ + 1] != ']') {
        ++i_;
        if (peek('\\')) {
          Escaped e = escape(true);
          if (e.is_set) fail(item, "a range cannot end in a class shorthand such as \\d");
          hi = e.cp;
        } else {
          hi = next_code_point();
        }
        if (hi < lo) fail(item, "range out of order (the end is below the start)");
      }
      ranges.push_back({lo, hi});
    }
    ranges = normalize_ranges(std::move(ranges));
    if (negated) ranges = complement_ranges(ranges);
    if (ranges.empty()) fail(open, "the class matches no character");
    return ranges;
  }

  std::string_view p_;
  const GrammarLimits& limits_;
  std::size_t i_ = 0;
};

}  // namespace detail

/// Parses `pattern` (UTF-8) into a syntax tree; throws grammar_error naming the offset and
/// the reason for anything outside the supported syntax (see the file comment).
inline RegexNode parse_regex(std::string_view pattern, const GrammarLimits& limits = {}) {
  return detail::RegexParser(pattern, limits).parse();
}

}  // namespace baton::grammar
