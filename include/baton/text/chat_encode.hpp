// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A conversation rendered through a chat template and encoded so that user text is
/// text: the template's own tags become control tokens, while a control tag spelled inside a
/// message (a user writing "<|im_start|>system") is encoded as the characters it is.
///
/// How: before rendering, each special token's text inside the messages is replaced by a
/// marker (U+E000 and a private-use code point naming the tag) that no template changes;
/// after rendering the markers become the tags' text again, and those byte ranges are
/// encoded with added-token matching off (Tokenizer::encode_append_literal). Text without
/// control tags encodes exactly as transformers' apply_chat_template(tokenize=True) encodes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/text/chat_template.hpp"
#include "baton/text/tokenizer.hpp"
#include "baton/text/utf8.hpp"

namespace baton {

/// Whether control tags inside message text are control tokens. `text` is the default for
/// anything a request carries; `control` only for trusted input (a relay file's author).
enum class ChatContent { text, control };

namespace detail {

inline constexpr char32_t kChatMarker = 0xE000;       // starts a marker
inline constexpr char32_t kChatMarkerBase = 0xF0000;  // + the tag's index

/// Replaces, in every string of `j`, each of `tags` by its marker; a literal U+E000 in the text
/// is the last "tag", so it survives the round trip too.
inline void mark_tags(nlohmann::ordered_json& j, const std::vector<std::string>& tags) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    std::string out;
    bool changed = false;
    for (std::size_t i = 0; i < s.size();) {
      std::size_t hit = tags.size();
      for (std::size_t k = 0; k < tags.size(); ++k) {
        if (!tags[k].empty() && s.compare(i, tags[k].size(), tags[k]) == 0 &&
            (hit == tags.size() || tags[k].size() > tags[hit].size()))
          hit = k;
      }
      if (hit == tags.size()) {
        out += s[i++];
        continue;
      }
      text::utf8_append(out, kChatMarker);
      text::utf8_append(out, kChatMarkerBase + static_cast<char32_t>(hit));
      i += tags[hit].size();
      changed = true;
    }
    if (changed) j = std::move(out);
  } else if (j.is_array() || j.is_object()) {
    for (auto& e : j) mark_tags(e, tags);
  }
}

/// The rendered text with markers turned back into their tags; `literal` gets the tags' byte
/// ranges.
inline std::string unmark_tags(std::string_view s, const std::vector<std::string>& tags,
                               std::vector<Tokenizer::Span>& literal) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    // U+E000 is EE 80 80; the index code point is 4 bytes (F3 ...).
    if (s.compare(i, 3, "\xEE\x80\x80") == 0 && i + 7 <= s.size()) {
      const std::size_t len = text::utf8_sequence_length(s, i + 3);
      if (len == 4) {
        const char32_t cp = text::utf8_decode_at(s, i + 3, 4);
        if (cp >= kChatMarkerBase && cp - kChatMarkerBase < tags.size()) {
          const std::string& tag = tags[cp - kChatMarkerBase];
          literal.emplace_back(out.size(), out.size() + tag.size());
          out += tag;
          i += 7;
          continue;
        }
      }
    }
    out += s[i++];
  }
  return out;
}

}  // namespace detail

/// A rendered conversation: its text, and the byte ranges where a message spelled a control
/// tag (to be encoded as text).
struct RenderedChat {
  std::string text;
  std::vector<Tokenizer::Span> literal;

  /// Encodes bytes [begin, end) of the text, appending to `ids`.
  void encode(const Tokenizer& tok, std::size_t begin, std::size_t end,
              std::vector<std::int32_t>& ids) const {
    std::vector<Tokenizer::Span> inside;
    for (const auto& [b, e] : literal)
      if (b >= begin && e <= end) inside.emplace_back(b - begin, e - begin);
    tok.encode_append_literal(std::string_view(text).substr(begin, end - begin), inside, ids);
  }
};

/// Renders `messages` through `tmpl` with `opt`. With ChatContent::text, the ranges where the
/// messages spell `tok`'s control tags are recorded.
inline RenderedChat render_chat(const Tokenizer& tok, const ChatTemplate& tmpl,
                                const nlohmann::ordered_json& messages,
                                const ChatRenderOptions& opt, ChatContent content) {
  RenderedChat r;
  if (content == ChatContent::control) {
    r.text = tmpl.render(messages, opt);
    return r;
  }
  std::vector<std::string> tags = tok.special_token_texts();
  std::string marker;
  text::utf8_append(marker, detail::kChatMarker);
  tags.push_back(marker);
  nlohmann::ordered_json marked = messages;
  detail::mark_tags(marked, tags);
  r.text = detail::unmark_tags(tmpl.render(marked, opt), tags, r.literal);
  return r;
}

/// Renders `messages` through `tmpl` with `opt` and encodes the result with `tok`, adding no
/// post-processor tokens (the template writes its own BOS), as apply_chat_template does.
/// With ChatContent::text, control tags inside the messages are encoded as text.
inline std::vector<std::int32_t> encode_chat(const Tokenizer& tok, const ChatTemplate& tmpl,
                                             const nlohmann::ordered_json& messages,
                                             const ChatRenderOptions& opt,
                                             ChatContent content = ChatContent::text) {
  const RenderedChat r = render_chat(tok, tmpl, messages, opt, content);
  std::vector<std::int32_t> ids;
  r.encode(tok, 0, r.text.size(), ids);
  return ids;
}

/// A conversation cut where the request goes: `before` is everything up to the user's text
/// (a stage's pre-warmed prefix: system turn, few-shot turns, the user turn's header), `after`
/// what follows it (the end of the user turn and the assistant's header, with
/// add_generation_prompt).
struct ChatAroundRequest {
  std::vector<std::int32_t> before, after;
};

/// Renders `system` (when not empty), each example as a user turn and an assistant turn, and a
/// last user turn whose content is the request, through `tmpl`; returns the ids around the
/// request. The request is not rendered: a placeholder stands for it, so the template must
/// place the user's content verbatim (chat templates do; one that changes the last user
/// message is refused with config_error). `opt.add_generation_prompt` is set.
inline ChatAroundRequest encode_chat_around_request(
    const Tokenizer& tok, const ChatTemplate& tmpl, std::string_view system,
    const std::vector<std::pair<std::string, std::string>>& examples, ChatRenderOptions opt,
    ChatContent content) {
  // U+E001 (private use) around a word: nothing a template does to text changes it.
  static constexpr std::string_view kPlaceholder =
      "\xEE\x80\x81"
      "baton-request"
      "\xEE\x80\x81";
  auto messages = nlohmann::ordered_json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  for (const auto& [user, assistant] : examples) {
    messages.push_back({{"role", "user"}, {"content", user}});
    messages.push_back({{"role", "assistant"}, {"content", assistant}});
  }
  messages.push_back({{"role", "user"}, {"content", kPlaceholder}});
  opt.add_generation_prompt = true;
  const RenderedChat r = render_chat(tok, tmpl, messages, opt, content);
  const auto at = r.text.find(kPlaceholder);
  BATON_CHECK(at != std::string::npos && r.text.find(kPlaceholder, at + 1) == std::string::npos,
              config_error, tmpl.name(),
              ": the chat template does not write the user's message exactly once as given, so "
              "the request cannot follow a pre-warmed prefix");
  ChatAroundRequest out;
  r.encode(tok, 0, at, out.before);
  r.encode(tok, at + kPlaceholder.size(), r.text.size(), out.after);
  return out;
}

}  // namespace baton
