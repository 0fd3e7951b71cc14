// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The GPT-2 byte-level alphabet: each of the 256 byte values has a printable code
/// point, so any byte string becomes a string of vocabulary symbols and back.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "baton/text/utf8.hpp"

namespace baton::text {

/// The byte <-> code point table of byte-level BPE (GPT-2, Llama-3, Qwen). Printable
/// Latin-1 bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for themselves; the other
/// 68 bytes are given the code points U+0100, U+0101, ... in byte order. Immutable once built.
class ByteLevelAlphabet {
 public:
  ByteLevelAlphabet() {
    char32_t next = 0x100;
    byte_of_.fill(-1);
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const char32_t cp = printable ? static_cast<char32_t>(b) : next++;
      code_point_[b] = cp;
      byte_of_[cp] = b;
      std::string utf8;
      utf8_append(utf8, cp);
      symbol_len_[b] = static_cast<std::uint8_t>(utf8.size());
      for (std::size_t k = 0; k < utf8.size(); ++k) symbol_[b][k] = utf8[k];
    }
  }

  /// The code point that stands for byte `b`.
  char32_t code_point(std::uint8_t b) const { return code_point_[b]; }
  /// The UTF-8 encoding of byte `b`'s symbol (1 or 2 bytes).
  std::string_view symbol(std::uint8_t b) const { return {symbol_[b].data(), symbol_len_[b]}; }
  /// The byte a code point stands for, or -1 when `cp` is not in the alphabet.
  int byte_of(char32_t cp) const { return cp < byte_of_.size() ? byte_of_[cp] : -1; }

  /// Maps raw bytes to their symbols, appending to `out`.
  void encode_append(std::string_view bytes, std::string& out) const {
    for (const char c : bytes) out.append(symbol(static_cast<std::uint8_t>(c)));
  }

  /// Maps a token string back to bytes, appending to `out`. Like Hugging Face's ByteLevel
  /// decoder, a token containing any code point outside the alphabet (an added token such as
  /// "<|im_end|>" is inside it; one with a space is not) is copied as its raw UTF-8 instead.
  void decode_append(std::string_view token, std::string& out) const {
    const std::size_t start = out.size();
    std::size_t i = 0;
    while (i < token.size()) {
      const std::size_t len = utf8_sequence_length(token, i);
      const int b = len ? byte_of(utf8_decode_at(token, i, len)) : -1;
      if (b < 0) {
        out.resize(start);
        out.append(token);
        return;
      }
      out.push_back(static_cast<char>(b));
      i += len;
    }
  }

 private:
  std::array<char32_t, 256> code_point_{};
  std::array<std::array<char, 2>, 256> symbol_{};
  std::array<std::uint8_t, 256> symbol_len_{};
  std::array<std::int16_t, 0x144> byte_of_{};  // the largest code point used is U+0143
};

}  // namespace baton::text
