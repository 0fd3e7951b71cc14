// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief token_byte_table(): each id's decoded bytes from a Tokenizer, for the stop-sequence
///        interceptor (matching on bytes finds a stop string however it was tokenized).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "baton/intercept/token_bytes.hpp"
#include "baton/text/tokenizer.hpp"

namespace baton {

/// The bytes of ids 0 .. vocab-1 as the tokenizer decodes them one at a time (special tokens
/// as their text). `vocab` is the model's vocabulary, which may exceed the tokenizer's (padding
/// rows): ids the tokenizer does not know (past its end, or holes) decode to no bytes.
inline TokenByteTable token_byte_table(const Tokenizer& tok, int vocab) {
  TokenByteTable t;
  t.offsets.reserve(static_cast<std::size_t>(vocab) + 1);
  const auto known = static_cast<std::int32_t>(tok.vocab_size());
  for (std::int32_t id = 0; id < vocab; ++id) {
    std::string bytes;
    if (id < known) {
      try {
        bytes = tok.decode(std::span<const std::int32_t>(&id, 1));
      } catch (const tokenizer_error&) {
        // A hole in the tokenizer's ids (no token has it): it decodes to nothing.
      }
    }
    t.push(bytes);
  }
  return t;
}

}  // namespace baton
