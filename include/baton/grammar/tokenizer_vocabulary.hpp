// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The grammar vocabulary of a byte-level BPE tokenizer (tokenizer.json).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "baton/grammar/vocabulary.hpp"
#include "baton/text/tokenizer.hpp"

namespace baton::grammar {

/// Every ordinary token of `tok` by its bytes; added tokens (special or not) are never
/// spelled by text and so never allowed, except the `eos_ids` in accepting states.
/// `n_vocab` (0: the tokenizer's size) widens it to the model's logits row, whose extra ids
/// are never allowed.
inline Vocabulary vocabulary_of(const Tokenizer& tok, std::span<const std::int32_t> eos_ids,
                                std::size_t n_vocab = 0) {
  const std::size_t n = std::max(n_vocab, tok.vocab_size());
  std::vector<std::string> bytes(n);
  for (std::size_t id = 0; id < tok.vocab_size(); ++id) {
    const auto i = static_cast<std::int32_t>(id);
    if (tok.contains_id(i) && !tok.is_added(i)) bytes[id] = tok.token_bytes(i);
  }
  return Vocabulary(std::move(bytes), {eos_ids.begin(), eos_ids.end()});
}

}  // namespace baton::grammar
