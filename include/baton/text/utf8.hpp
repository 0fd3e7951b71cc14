// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief UTF-8 helpers the tokenizer needs: validation with the offending offset, the
/// WHATWG "replace each maximal invalid subpart with U+FFFD" repair, and the length of the
/// longest prefix that ends on a complete character (for incremental decoding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace baton::text {

/// Length of the valid UTF-8 sequence starting at `s[i]`, or 0 if the bytes there are not a
/// complete well-formed sequence (truncated, overlong, surrogate, > U+10FFFF, stray
/// continuation byte). `partial`, when given, is set to the number of leading bytes that do
/// form a valid *prefix* of some sequence (the WHATWG "maximal subpart"), at least 1 when the
/// function returns 0.
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i,
                                        std::size_t* partial = nullptr) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // > U+10FFFF
  } else {
    if (partial) *partial = 1;
    return 0;
  }
  std::size_t k = 1;
  for (; k < need && i + k < s.size(); ++k) {
    const unsigned char b = byte(i + k);
    const bool ok = (k == 1) ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) break;
  }
  if (k == need) return need;
  if (partial) *partial = k;
  return 0;
}

/// Offset of the first byte that is not part of well-formed UTF-8, or `npos` when all is valid.
inline std::size_t first_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    // ASCII fast path: most text is mostly ASCII.
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

/// Copy of `s` with every maximal invalid subpart replaced by U+FFFD, as the WHATWG
/// TextDecoder (and so a JavaScript caller of Hugging Face's Node binding) does.
inline std::string replace_invalid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t partial = 0;
    const std::size_t n = utf8_sequence_length(s, i, &partial);
    if (n) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      i += partial;
    }
  }
  return out;
}

/// Length of the longest prefix of `s` that does not end inside an unfinished UTF-8 sequence:
/// a trailing lead byte plus fewer continuation bytes than it announces is held back. Bytes
/// that can never become valid are not held back (they are emitted as they are).
inline std::size_t complete_utf8_prefix(std::string_view s) {
  const std::size_t n = s.size();
  // An unfinished sequence is at most 3 bytes long: look back that far for a lead byte.
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<unsigned char>(s[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    std::size_t partial = 0;
    if (b >= 0xC2 && b <= 0xF4 && utf8_sequence_length(s, n - back, &partial) == 0 &&
        partial == back) {
      return n - back;  // a valid but unfinished prefix: wait for more bytes
    }
    return n;
  }
  return n;
}

/// Decodes the code point of the valid sequence at `s[i]` of length `len`.
inline char32_t utf8_decode_at(std::string_view s, std::size_t i, std::size_t len) {
  const auto b = [&](std::size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(s[i + k]));
  };
  switch (len) {
    case 1:
      return b(0);
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

/// Appends the UTF-8 encoding of code point `c` (assumed valid) to `out`.
inline void utf8_append(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace baton::text
