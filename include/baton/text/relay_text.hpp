// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Turns the text fields of a relay description into token ids, once, before the relay
///        is built. Stages still hand ids to each other; text is only the way users write it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "baton/grammar/grammar.hpp"
#include "baton/relay/config.hpp"
#include "baton/text/chat.hpp"
#include "baton/text/chat_config.hpp"
#include "baton/text/chat_encode.hpp"
#include "baton/text/model_chat.hpp"
#include "baton/text/token_bytes.hpp"
#include "baton/text/tokenizer.hpp"

namespace baton {

/// Resolves every text field of `spec` with `tok`:
///  - "text" input segments and a text gate: encoded as written (added tokens such as
///    `<|im_start|>` inside the text become their ids; no BOS is added);
///  - "system" + "examples": the ChatML prefix (system turn, then user/assistant turns); with
///    "template": "model", the model folder's own template (text/chat_config.hpp): the prefix
///    is the rendered conversation up to the user's text, the stage's input is that text, and
///    the rest of the user turn with the assistant's header follows it (the prefix starts with
///    the BOS when add_bos_token asks for one: text/model_chat.hpp); such a stage without
///    stops stops at generation_config.json's eos_token_id (else the tokenizer's eos_token).
///    Its text is encoded as text unless the relay says "trusted_text". The shared
///    sequence's "system" likewise ChatML, its "input" texts and "turn_end" and each stage's
///    "invocation" encoded as written;
///  - "stop_text": each must be exactly one token (a multi-token stop sequence is an
///    interceptor's job, not a stop id);
///  - interceptors: token-set strings become their one token each; stop sequences, and a
///    request's own stop strings (a server's `stop`), get the tokenizer's byte table
///    (RelaySpec::token_bytes: they match on decoded bytes).
///  - "grammar": compiled against the tokenizer's vocabulary, the stage's stop ids as its
///    end-of-sequence ids (allowed exactly where the output is a complete match).
inline void resolve_text(RelaySpec& spec, const Tokenizer& tok) {
  const std::string src = spec.source.string();
  spec.tokenizer_ids = tok.vocab_size();
  if (!spec.token_bytes)
    spec.token_bytes = std::make_shared<const TokenByteTable>(
        token_byte_table(tok, static_cast<int>(tok.vocab_size())));
  const auto encode_text = [&](IdsOrText& v) {
    if (!v.text) return;
    v.ids = tok.encode(*v.text);
    v.text.reset();
  };
  std::optional<ChatConfig> chat;  // the model folder's, read once when a stage needs it
  if (spec.shared) {
    SharedSpec& sh = *spec.shared;
    if (sh.system) {
      sh.prefix = ChatMl(tok).prefix(*sh.system, {});
      sh.system.reset();
    }
    for (SegmentSpec& g : sh.input) encode_text(g.literal);
    encode_text(sh.turn_end);
  }
  for (StageSpec& s : spec.stages) {
    const std::string where = src + ": stage '" + s.name + "'";
    if (s.invocation) encode_text(*s.invocation);
    if (s.model_template) {
      if (!chat) chat = load_chat_config(spec.model);
      const ChatContent content = spec.trusted_text ? ChatContent::control : ChatContent::text;
      const auto turn = encode_chat_around_request(tok, chat->require_template(spec.model.string()),
                                                   s.system.value_or(""), s.examples,
                                                   chat->render_options(true), content);
      s.prefix = turn.before;
      // The prefix is where the prompt starts: add_bos_token's BOS goes there (once).
      prepend_bos(*chat, tok, s.prefix);
      for (SegmentSpec& g : s.input) {
        if (g.literal.text && content == ChatContent::text) {
          g.literal.ids = tok.encode_ordinary_text(*g.literal.text);
          g.literal.text.reset();
        }
      }
      SegmentSpec end;
      end.literal.ids = turn.after;
      s.input.push_back(std::move(end));
      if (s.stop.empty() && s.stop_text.empty())
        s.stop = stop_ids_or_eos_token(chat->eos_token_ids, *chat, tok);
      s.system.reset();
      s.examples.clear();
    }
    if (s.system || !s.examples.empty()) {
      const ChatMl chat(tok);
      std::vector<ChatExample> shots;
      for (const auto& [u, a] : s.examples) shots.push_back({u, a});
      s.prefix = chat.prefix(s.system.value_or(""), shots);
      s.system.reset();
      s.examples.clear();
    }
    for (SegmentSpec& g : s.input) encode_text(g.literal);
    for (const std::string& t : s.stop_text) {
      const auto ids = tok.encode(t);
      BATON_CHECK(ids.size() == 1, config_error, where, ": stop_text \"", detail::excerpt(t),
                  "\" is ", ids.size(),
                  " tokens; a stop id must be one token (multi-token stop sequences are "
                  "interceptors)");
      s.stop.push_back(ids[0]);
    }
    s.stop_text.clear();
    for (InterceptorSpec& i : s.interceptors) {
      for (const std::string& t : i.token_texts) {
        const auto ids = tok.encode(t);
        BATON_CHECK(ids.size() == 1, config_error, i.where, ": \"", detail::excerpt(t), "\" is ",
                    ids.size(),
                    " tokens; a token set lists single tokens (give ids, or one string per token)");
        i.token_ids.push_back(ids[0]);
      }
      i.token_texts.clear();
    }
    if (s.grammar && !s.compiled_grammar) {
      try {
        s.compiled_grammar = grammar::compile_grammar(
            *s.grammar,
            std::make_shared<const grammar::Vocabulary>(grammar::vocabulary_of(tok, s.stop)));
      } catch (const grammar_error& e) {
        BATON_FAIL(grammar_error, where, ": grammar: ", e.what());
      }
    }
  }
  if (spec.gate.needle.text) {
    spec.gate.needle.ids = tok.encode(*spec.gate.needle.text);
    // A text that the normalizer empties would be an empty needle, which passes every output.
    BATON_CHECK(!spec.gate.needle.ids.empty(), config_error, src, ": gate's text \"",
                detail::excerpt(*spec.gate.needle.text), "\" encodes to no tokens");
    spec.gate.needle.text.reset();
  }
}

/// A request's ids: as text (control tags in it stay characters), unless the relay says
/// "trusted_text" (added tokens recognised).
inline std::vector<std::int32_t> request_ids(const RelaySpec& spec, const Tokenizer& tok,
                                             std::string_view text) {
  return spec.request_is_text ? tok.encode_ordinary_text(text) : tok.encode(text);
}

}  // namespace baton
