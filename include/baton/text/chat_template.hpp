// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief baton::ChatTemplate: a checkpoint's own Jinja chat template (tokenizer_config.json's
/// `chat_template`, or chat_template.jinja), rendered as transformers' apply_chat_template
/// renders it: jinja2's ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loop
/// controls, transformers' `tojson`, `raise_exception` and `strftime_now`. docs/chat-templates.md
/// lists what is supported.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "baton/text/jinja/evaluator.hpp"
#include "baton/text/jinja/json.hpp"
#include "baton/text/jinja/lexer.hpp"
#include "baton/text/jinja/parser.hpp"

namespace baton {

using jinja::TemplateLimits;

/// What a conversation is rendered with besides its messages: the variables transformers
/// passes (add_generation_prompt, the special tokens, tools and documents when given).
struct ChatRenderOptions {
  bool add_generation_prompt = false;
  std::optional<std::string> bos_token;  ///< the tokenizer's bos_token (absent: undefined)
  std::optional<std::string> eos_token;  ///< the tokenizer's eos_token (absent: undefined)
  /// More variables (an object), e.g. {"tools": [...], "enable_thinking": false}; these win
  /// over the ones above.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

/// A parsed chat template. Immutable after construction: render() may run on many threads.
class ChatTemplate {
 public:
  /// Parses `source`; `name` (e.g. the file it came from) starts every error message. Throws
  /// template_error (Kind::syntax) when the template does not parse or names a filter or
  /// test jinja2 does not have.
  explicit ChatTemplate(std::string_view source, std::string name = "chat template",
                        TemplateLimits limits = {})
      : name_(std::move(name)), limits_(limits) {
    if (const auto bad = text::first_invalid_utf8(source); bad != std::string_view::npos)
      throw template_error(template_error::Kind::syntax, name_,
                           "invalid UTF-8 at byte offset " + std::to_string(bad));
    try {
      jinja::Parser parser(jinja::tokenize(source, name_), name_, jinja::is_known_filter,
                           jinja::is_known_test, jinja::ParseLimits{limits.max_nesting});
      body_ = std::make_shared<const jinja::Body>(parser.parse_template());
    } catch (const jinja::Failure& f) {
      throw template_error(template_error::Kind::syntax, name_, f.message);
    }
  }

  const std::string& name() const { return name_; }
  const TemplateLimits& limits() const { return limits_; }

  /// Renders with every variable given in `context` (an object): exactly the template's output.
  std::string render(const nlohmann::ordered_json& context) const {
    if (!context.is_object())
      throw template_error(template_error::Kind::runtime, name_, "the context must be an object");
    jinja::Value ctx;
    try {
      ctx = jinja::from_json(context);
    } catch (const jinja::Failure& f) {
      throw template_error(f.kind, name_, f.message);
    }
    return render_values(ctx.dict());
  }

  /// Renders a conversation (`messages`: [{"role": ..., "content": ...}, ...]) with the
  /// variables transformers passes: messages, tools=None, documents=None,
  /// add_generation_prompt, bos_token, eos_token, then `opt.extra`.
  std::string render(const nlohmann::ordered_json& messages, const ChatRenderOptions& opt) const {
    return render(context_for(messages, opt));
  }

  /// The context render(messages, opt) uses.
  static nlohmann::ordered_json context_for(const nlohmann::ordered_json& messages,
                                            const ChatRenderOptions& opt) {
    nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
    ctx["messages"] = messages;
    ctx["tools"] = nullptr;
    ctx["documents"] = nullptr;
    ctx["add_generation_prompt"] = opt.add_generation_prompt;
    if (opt.bos_token) ctx["bos_token"] = *opt.bos_token;
    if (opt.eos_token) ctx["eos_token"] = *opt.eos_token;
    if (opt.extra.is_object())
      for (const auto& [k, v] : opt.extra.items()) ctx[k] = v;
    return ctx;
  }

  /// Renders with an already converted context.
  std::string render_values(const jinja::Dict& context) const {
    jinja::Evaluator ev(name_, limits_, context);
    return ev.render(*body_);
  }

 private:
  std::string name_;
  TemplateLimits limits_;
  std::shared_ptr<const jinja::Body> body_;
};

}  // namespace baton
