// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "served_model.hpp"

#include <utility>

#include "baton/text/chat_encode.hpp"
#include "baton/text/model_chat.hpp"

namespace baton::serve {

namespace {

ApiError bad_messages(std::string message, std::string code = "") {
  ApiError e;
  e.param = "messages";
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

}  // namespace

RelaySpec model_relay_spec(const ModelServeSpec& m) {
  RelaySpec spec;
  spec.source = m.dir;
  spec.model = m.dir;
  spec.tokenizer = m.dir / "tokenizer.json";
  spec.name = m.name;
  spec.max_request_tokens = m.max_prompt_tokens;
  StageSpec stage;
  stage.name = "model";
  SegmentSpec request;
  request.kind = Segment::Kind::request;
  stage.input.push_back(std::move(request));
  stage.max_new = m.max_tokens;
  stage.stop = m.stop;
  for (int k = 0; k <= m.max_loras; ++k) {
    spec.stages.push_back(stage);
    if (k > 0) spec.stages.back().name = "adapter-slot-" + std::to_string(k);
  }
  spec.output_stage = 0;
  return spec;
}

ServedModel::ServedModel(RelaySpec spec, Tokenizer tokenizer, ChatConfig chat,
                         std::unique_ptr<RuntimeRelay> relay, ServeLimits limits,
                         bool request_specials)
    : ServedRelay(std::move(spec), std::move(tokenizer), std::move(relay), limits,
                  request_specials),
      chat_(std::move(chat)) {}

ServedModel::ServedModel(RelaySpec spec, Tokenizer tokenizer, ChatConfig chat,
                         std::unique_ptr<RuntimeRelay> relay, ServeLimits limits,
                         bool request_specials, AdapterLimits adapters)
    : ServedModel(std::move(spec), std::move(tokenizer), std::move(chat), std::move(relay), limits,
                  request_specials) {
  // No request has arrived yet (the server does not listen before this returns), so the
  // stepping thread cannot look at the table before it exists.
  adapters_ = std::make_unique<AdapterTable>(relay_mut(), adapters);
}

std::vector<std::int32_t> ServedModel::prompt_ids(const ApiRequest& r) const {
  if (r.ids) return *r.ids;
  // A copy per request: encoding updates its object's cache (see encode_request).
  const Tokenizer tok(tokenizer().value());
  if (r.endpoint == Endpoint::completion) {
    if (r.text->size() > max_request_bytes())
      throw ApiError{400, "invalid_request_error",
                     "the prompt is " + std::to_string(r.text->size()) + " bytes, more than " +
                         label() + " can take in " + std::to_string(spec().max_request_tokens) +
                         " tokens (" + prompt_limit_source() + ")",
                     "prompt", "context_length_exceeded"};
    const auto lead = tok.prefix_special_ids();
    std::vector<std::int32_t> ids(lead.begin(), lead.end());
    const std::vector<std::int32_t> text = encode_request(*r.text);
    ids.insert(ids.end(), text.begin(), text.end());
    prepend_bos(chat_, tok, ids);
    return ids;
  }
  if (!chat_.chat_template)
    throw bad_messages(label() + " has no chat template (" + spec().model.string() +
                       " has neither chat_template.jinja nor a \"chat_template\" in "
                       "tokenizer_config.json): use /v1/completions");
  RenderedChat rendered;
  try {
    rendered = render_chat(tok, *chat_.chat_template, r.messages, chat_.render_options(true),
                           request_specials() ? ChatContent::control : ChatContent::text);
  } catch (const template_error& e) {
    // The template refused this conversation (raise_exception, or one of its limits).
    throw bad_messages(std::string("the chat template refused the messages: ") + e.what(),
                       "invalid_messages");
  }
  // Refused by its length before any of it is tokenized, as a relay's request is.
  if (rendered.text.size() > max_request_bytes())
    throw bad_messages("the conversation renders to " + std::to_string(rendered.text.size()) +
                           " bytes, more than " + label() + " can take in " +
                           std::to_string(spec().max_request_tokens) + " tokens (" +
                           prompt_limit_source() + ")",
                       "context_length_exceeded");
  std::vector<std::int32_t> ids;
  rendered.encode(tok, 0, rendered.text.size(), ids);
  prepend_bos(chat_, tok, ids);
  return ids;
}

nlohmann::json ServedModel::describe() const {
  return {{"folder", spec().model.string()},
          {"chat_template",
           chat_.chat_template ? nlohmann::json(chat_.chat_template->name()) : nlohmann::json()},
          {"add_bos_token", chat_.add_bos_token},
          {"stop", spec().stages[0].stop},
          {"max_prompt_tokens", spec().max_request_tokens},
          {"max_tokens", output_max_new()},
          {"concurrency", limits().concurrency},
          {"queue", limits().queue},
          {"backend", relay().backend_name()}};
}

}  // namespace baton::serve
