// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A model folder's prompt conventions applied to ids: `add_bos_token` (one BOS, never
/// two) and a conversation through the folder's own chat template.
///
/// The BOS rule: when tokenizer_config.json says add_bos_token=true, the prompt starts with the
/// bos_token's id exactly once. A template that writes `{{ bos_token }}` itself already gives
/// it (transformers' apply_chat_template(tokenize=True) adds nothing to such a prompt, so
/// neither does baton); one that does not write it gets it prepended, as tokenizing the
/// rendered text with the tokenizer's own special tokens would (apply_chat_template alone
/// never adds it: docs/chat-templates.md says where the two differ). The check is on ids, not
/// text: a user who types "<|begin_of_text|>" first has typed text, and still gets the BOS.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"
#include "baton/text/chat_config.hpp"
#include "baton/text/chat_encode.hpp"
#include "baton/text/tokenizer.hpp"

namespace baton {

/// The id add_bos_token puts first, or none (add_bos_token false, or no bos_token set).
/// config_error when the bos_token is set but `tok` has no such token.
inline std::optional<std::int32_t> bos_to_add(const ChatConfig& cfg, const Tokenizer& tok) {
  if (!cfg.add_bos_token || !cfg.special_tokens.contains("bos_token")) return std::nullopt;
  const std::string text = cfg.special_tokens["bos_token"].get<std::string>();
  const auto id = tok.token_to_id(text);
  BATON_CHECK(id.has_value(), config_error, "add_bos_token is true but the bos_token \"",
              detail::excerpt(text), "\" is not a token of ", tok.source());
  return id;
}

/// Puts the BOS id before `ids` when add_bos_token asks for it and `ids` does not start with
/// it already.
inline void prepend_bos(const ChatConfig& cfg, const Tokenizer& tok,
                        std::vector<std::int32_t>& ids) {
  const auto bos = bos_to_add(cfg, tok);
  if (bos && (ids.empty() || ids.front() != *bos)) ids.insert(ids.begin(), *bos);
}

/// `ids` (a model's default stop ids), or when there are none the tokenizer config's eos_token
/// as its id (when `tok` has it).
inline std::vector<std::int32_t> stop_ids_or_eos_token(std::vector<std::int32_t> ids,
                                                       const ChatConfig& cfg,
                                                       const Tokenizer& tok) {
  if (ids.empty() && cfg.special_tokens.contains("eos_token"))
    if (const auto id = tok.token_to_id(cfg.special_tokens["eos_token"].get<std::string>()))
      ids.push_back(*id);
  return ids;
}

/// `messages` rendered through the folder's template (config_error when it has none) and
/// encoded as encode_chat does, then the BOS rule applied: the prompt `baton generate --chat`,
/// a "template": "model" stage and `baton serve --model` give the model.
inline std::vector<std::int32_t> encode_model_chat(const ChatConfig& cfg, const Tokenizer& tok,
                                                   const std::string& folder,
                                                   const nlohmann::ordered_json& messages,
                                                   const ChatRenderOptions& opt,
                                                   ChatContent content = ChatContent::text) {
  std::vector<std::int32_t> ids =
      encode_chat(tok, cfg.require_template(folder), messages, opt, content);
  prepend_bos(cfg, tok, ids);
  return ids;
}

}  // namespace baton
