// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief ChatML prompts (Qwen): `<|im_start|>role\n...<|im_end|>\n` turns as token ids, for
/// a stage's fixed prefix (system prompt + few-shot examples) and per-request turns.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/text/tokenizer.hpp"

namespace baton {

/// One few-shot example: what the user said and what the assistant answered.
struct ChatExample {
  std::string user;
  std::string assistant;
};

/// The ChatML template over one tokenizer. Each piece is rendered as text and encoded with
/// Tokenizer::encode, exactly as rendering the whole conversation and tokenizing it would do
/// (added tokens cut the text into independent segments, so concatenating the pieces' ids
/// equals encoding the concatenated text). As with Hugging Face's chat templates, control
/// tags written inside message text are recognised; strip them from untrusted input first.
class ChatMl {
 public:
  /// Looks up `<|im_start|>` and `<|im_end|>`; throws tokenizer_error if either is missing.
  explicit ChatMl(const Tokenizer& tok) : tok_(tok) {
    const auto start = tok_.token_to_id("<|im_start|>");
    const auto end = tok_.token_to_id("<|im_end|>");
    BATON_CHECK(start && end, tokenizer_error, tok_.source(),
                ": not a ChatML tokenizer (needs the added tokens <|im_start|> and <|im_end|>)");
    im_start_ = *start;
    im_end_ = *end;
  }

  /// `<|im_start|>{role}\n{content}<|im_end|>\n`
  std::vector<std::int32_t> turn(std::string_view role, std::string_view content) const {
    std::vector<std::int32_t> ids;
    append_turn(ids, role, content);
    return ids;
  }

  /// A stage prefix: the system turn (omitted when `system` is empty), then each example as a
  /// user turn followed by an assistant turn.
  std::vector<std::int32_t> prefix(std::string_view system,
                                   std::span<const ChatExample> examples = {}) const {
    std::vector<std::int32_t> ids;
    if (!system.empty()) append_turn(ids, "system", system);
    for (const ChatExample& ex : examples) {
      append_turn(ids, "user", ex.user);
      append_turn(ids, "assistant", ex.assistant);
    }
    return ids;
  }

  /// `<|im_start|>assistant\n`: generation continues after it.
  std::vector<std::int32_t> assistant_header() const {
    std::vector<std::int32_t> ids{im_start_};
    tok_.encode_append("assistant\n", ids);
    return ids;
  }

  /// A user turn followed by the assistant header: what a request appends to the prefix.
  std::vector<std::int32_t> user_request(std::string_view content) const {
    auto ids = turn("user", content);
    const auto header = assistant_header();
    ids.insert(ids.end(), header.begin(), header.end());
    return ids;
  }

  /// `<|im_end|>`: ends a turn, so generation stops at it.
  std::int32_t stop_id() const { return im_end_; }
  std::int32_t im_start_id() const { return im_start_; }

 private:
  void append_turn(std::vector<std::int32_t>& ids, std::string_view role,
                   std::string_view content) const {
    std::string text;
    text.reserve(role.size() + content.size() + 32);
    text.append("<|im_start|>").append(role).append("\n").append(content);
    text.append("<|im_end|>\n");
    tok_.encode_append(text, ids);
  }

  Tokenizer tok_;  // own copy: shares the tables, has its own encode cache
  std::int32_t im_start_ = -1, im_end_ = -1;
};

}  // namespace baton
