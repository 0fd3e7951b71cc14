// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Added tokens (`added_tokens` of tokenizer.json): literal strings such as
/// "<|im_start|>" that are cut out of the text before the BPE sees it, leftmost-longest and
/// case-sensitive, honouring the lstrip / rstrip / single_word flags the way Hugging Face does.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <utf8proc.h>

#include "baton/core/error.hpp"
#include "baton/text/utf8.hpp"

namespace baton::text {

/// One entry of `added_tokens`.
struct AddedToken {
  std::int32_t id = 0;
  std::string content;
  bool special = false;
  bool single_word = false;  ///< match only when not inside a word
  bool lstrip = false;       ///< the match swallows whitespace on its left
  bool rstrip = false;       ///< the match swallows whitespace on its right
  bool normalized = false;   ///< matched in the normalized text instead of the raw text
};

/// A piece of text after added-token matching: either an added token's id or a span of
/// ordinary text (`id < 0`).
struct Segment {
  std::int32_t id;
  std::size_t begin, end;  ///< byte range in the matched string
};

/// Rust's char::is_whitespace (the Unicode White_Space property).
inline bool is_unicode_whitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

/// A word character for single_word matching, as Hugging Face decides it: '_' or Rust's
/// char::is_alphanumeric, approximated here by the general category (L* or N*); Rust's
/// Alphabetic property also counts a few marks (Other_Alphabetic), which only matters for
/// single_word tokens next to such marks.
inline bool is_word_char(char32_t c) {
  if (c == '_') return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

/// A set of added tokens matched by one scan: candidates are bucketed by first byte and
/// tried longest first, which yields the leftmost-longest match (Hugging Face uses an
/// Aho-Corasick automaton with LeftmostLongest semantics). Immutable after construction.
class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;

  explicit AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
    std::stable_sort(tokens_.begin(), tokens_.end(), [](const AddedToken& a, const AddedToken& b) {
      return a.content.size() > b.content.size();
    });
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      if (tokens_[i].content.empty()) continue;
      by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(
          static_cast<std::uint32_t>(i));
    }
  }

  bool empty() const { return tokens_.empty(); }

  /// Splits `text` (valid UTF-8) into added tokens and ordinary spans, appending to `out`
  /// with offsets shifted by `base`. Ordinary spans may be empty only when lstrip/rstrip
  /// consumed all of them; empty spans are not emitted.
  void split(std::string_view text, std::size_t base, std::vector<Segment>& out) const {
    if (tokens_.empty()) {
      if (!text.empty()) out.push_back({-1, base, base + text.size()});
      return;
    }
    std::size_t emitted = 0;  // end of what has been emitted (start_offset in HF)
    std::size_t pos = 0;
    while (pos < text.size()) {
      const auto& bucket = by_first_byte_[static_cast<unsigned char>(text[pos])];
      const AddedToken* hit = nullptr;
      for (const std::uint32_t k : bucket) {
        const auto& t = tokens_[k];
        if (text.compare(pos, t.content.size(), t.content) == 0) {
          hit = &t;
          break;
        }
      }
      if (!hit) {
        ++pos;
        continue;
      }
      std::size_t start = pos, stop = pos + hit->content.size();
      if (hit->single_word &&
          (ends_with_word(text.substr(0, start)) || starts_with_word(text.substr(stop)))) {
        // Not a whole word: Hugging Face skips this match and resumes after it.
        pos = stop;
        continue;
      }
      if (hit->lstrip) start = std::max(emitted, whitespace_run_start(text, start));
      if (hit->rstrip) stop = whitespace_run_end(text, stop);
      if (start > emitted) out.push_back({-1, base + emitted, base + start});
      out.push_back({hit->id, base + start, base + stop});
      emitted = pos = stop;
    }
    if (emitted < text.size()) out.push_back({-1, base + emitted, base + text.size()});
  }

 private:
  // Start of the run of whitespace that ends at `end` (== end when there is none).
  static std::size_t whitespace_run_start(std::string_view s, std::size_t end) {
    std::size_t i = end;
    while (i > 0) {
      std::size_t j = i - 1;
      while (j > 0 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) --j;
      if (!is_unicode_whitespace(utf8_decode_at(s, j, i - j))) break;
      i = j;
    }
    return i;
  }
  // End of the run of whitespace that starts at `begin`.
  static std::size_t whitespace_run_end(std::string_view s, std::size_t begin) {
    std::size_t i = begin;
    while (i < s.size()) {
      const std::size_t len = utf8_sequence_length(s, i);
      if (!len || !is_unicode_whitespace(utf8_decode_at(s, i, len))) break;
      i += len;
    }
    return i;
  }
  static bool ends_with_word(std::string_view s) {
    if (s.empty()) return false;
    std::size_t j = s.size() - 1;
    while (j > 0 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) --j;
    return is_word_char(utf8_decode_at(s, j, s.size() - j));
  }
  static bool starts_with_word(std::string_view s) {
    if (s.empty()) return false;
    const std::size_t len = utf8_sequence_length(s, 0);
    return len && is_word_char(utf8_decode_at(s, 0, len));
  }

  std::vector<AddedToken> tokens_;  // longest first
  std::array<std::vector<std::uint32_t>, 256> by_first_byte_;
};

}  // namespace baton::text
