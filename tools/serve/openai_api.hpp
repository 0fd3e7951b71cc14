// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The OpenAI wire format as `baton serve` speaks it: a request body checked field by
///        field into an ApiRequest, and the response, chunk and error objects.
///
/// The sampling fields (OpenAI's temperature, top_p, seed, presence_penalty, frequency_penalty,
/// logit_bias, logprobs, top_logprobs; llama-server's top_k, min_p, repeat_penalty) become the
/// request's SamplingOptions for the relay's output stage (docs/sampling.md); a value out of
/// range, and any field not listed here, is a 400 naming the field (as OpenAI's own API refuses
/// unknown arguments). `n` choices run from one prefill (RelayScheduler::submit_choices), choice
/// i on the request's streams shifted by i (docs/sampling.md); best_of runs that many candidates
/// the same way and returns the n most likely (mean log-probability per token).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/model/sampling.hpp"

namespace baton::serve {

/// An HTTP error with an OpenAI error object: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";
  std::string message;
  std::string param;  ///< the field at fault ("" when none)
  std::string code;   ///< a machine-readable code ("" when none)
};

/// The error object's JSON.
nlohmann::json error_body(const ApiError& e);

enum class Endpoint { chat, completion };

/// A request body, checked.
struct ApiRequest {
  Endpoint endpoint = Endpoint::chat;
  std::string model;
  std::optional<std::string> text;               ///< a completion's prompt as text ...
  std::optional<std::vector<std::int32_t>> ids;  ///< ... or as token ids
  /// A chat's conversation, checked: [{"role", "content"(, "name")}], each content a string
  /// (text parts joined) or null (an assistant's); what a served thing makes of it is its own
  /// (ServedRelay::prompt_ids).
  nlohmann::ordered_json messages;
  bool stream = false;
  bool include_usage = false;  ///< stream_options.include_usage: a last chunk with usage
  int max_tokens = 0;          ///< 0: the output stage's own max_new
  /// The output stage's sampling options, when the request sets any sampling field (else the
  /// stage's own). Without "seed" the server draws one (`seeded` false) and reports it.
  std::optional<SamplingOptions> sampling;
  bool seeded = false;
  /// "stop": the request's own stop strings (the output stage stops after the token that
  /// completes one; the answer's text ends before it, as OpenAI's API returns it).
  std::vector<std::string> stop;
  /// "n": how many choices (1..kMaxChoices; a served relay takes at most its concurrency).
  int n = 1;
  /// "best_of" (completions): how many candidates run, of which the n with the highest mean
  /// log-probability per token are returned (n..kMaxChoices; 0 when not given: n). Not streamed.
  int best_of = 0;
};

/// The most choices a request may ask for ("n"), OpenAI's own bound.
inline constexpr int kMaxChoices = 128;

/// Parses `body` for `endpoint`; ApiError (400) names the field that is wrong.
ApiRequest parse_request(std::string_view body, Endpoint endpoint);
/// A request body as one JSON object, parsed strictly (no duplicate key, no NUL, bounded
/// nesting); ApiError (400, invalid_json / duplicate_key) otherwise. Every POST endpoint's first
/// step.
nlohmann::json parse_body(std::string_view body);

/// Where an answer's text `text` ends given the request's stop strings: before the first
/// occurrence of any (`found` says whether there was one); else, while the text may still grow
/// (`final` false), before a tail that could be the start of one, so a stream never sends a
/// stop string's first bytes.
std::size_t cut_at_stop(std::string_view text, const std::vector<std::string>& stops, bool final,
                        bool* found = nullptr);

/// The content of the last message with role "user" in a checked conversation; ApiError naming
/// 'messages' when there is none.
std::string last_user_message(const nlohmann::ordered_json& messages);

/// What a finished request reports.
struct Answer {
  std::string text;           ///< the output stage's text (may hold invalid UTF-8)
  std::string finish_reason;  ///< "stop" or "length"
  int prompt_tokens = 0;      ///< the request's tokens
  int completion_tokens = 0;  ///< the output stage's tokens
  nlohmann::json baton;       ///< the extension: stages, cycles, verdict, timings
  nlohmann::json logprobs;    ///< the choice's "logprobs" (null unless asked for)
  /// The output tokens' mean log-probability, when they were computed (best_of ranks by it).
  double mean_logprob = 0.0;
};

/// The whole response of a non-streamed request: one choice per answer (choice i is
/// answers[i]), usage over all of them (the prompt counted once), and the "baton" extension
/// (one answer's own; for several, {"choices": [each answer's]}).
nlohmann::json response_body(const ApiRequest& req, const std::string& id, long long created,
                             std::span<const Answer> answers);
/// One streamed chunk of choice `index`: a text delta, or (with `finish`) the choice's last one
/// with its finish_reason.
nlohmann::json chunk_body(const ApiRequest& req, const std::string& id, long long created,
                          const std::string& delta, const std::string* finish = nullptr,
                          int index = 0);
/// The choice's "logprobs" object for `lp` (one entry per output token), in the endpoint's
/// shape: chat {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}]}, completions
/// {"tokens", "token_logprobs", "top_logprobs": [{token: logprob}], "text_offset"}. `text(id)`
/// spells one token; `text_offset` is where the first entry's text starts in the answer (a
/// streamed chunk's entries continue the earlier chunks').
nlohmann::json logprobs_body(Endpoint endpoint, std::span<const TokenLogprobs> lp,
                             const std::function<std::string(std::int32_t)>& text,
                             std::size_t text_offset = 0);
/// The usage object.
nlohmann::json usage_body(const Answer& a);
/// The usage of several choices: the prompt once, every choice's completion tokens.
nlohmann::json usage_body(std::span<const Answer> answers);
/// The "baton" extension of a response with these choices (see response_body).
nlohmann::json baton_body(std::span<const Answer> answers);

/// `j` as one line of JSON; invalid UTF-8 in strings (a stage may stop mid-character) becomes
/// U+FFFD, the rest is exact.
std::string dump(const nlohmann::json& j);

}  // namespace baton::serve
