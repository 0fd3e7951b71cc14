// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The OpenAI wire format as `baton serve` speaks it: a request body checked field by
///        field into an ApiRequest, and the response, chunk and error objects.
///
/// Only greedy decoding exists, so sampling fields are accepted only at values that mean greedy
/// (temperature 0, top_p 1, n 1, no penalties); anything else, and any field not listed here,
/// is a 400 naming the field (as OpenAI's own API refuses unknown arguments).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

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
};

/// Parses `body` for `endpoint`; ApiError (400) names the field that is wrong.
ApiRequest parse_request(std::string_view body, Endpoint endpoint);

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
};

/// The whole response of a non-streamed request.
nlohmann::json response_body(const ApiRequest& req, const std::string& id, long long created,
                             const Answer& a);
/// One streamed chunk: a text delta, or (with `finish`) the last one with its finish_reason.
nlohmann::json chunk_body(const ApiRequest& req, const std::string& id, long long created,
                          const std::string& delta, const std::string* finish = nullptr);
/// The usage object.
nlohmann::json usage_body(const Answer& a);

/// `j` as one line of JSON; invalid UTF-8 in strings (a stage may stop mid-character) becomes
/// U+FFFD, the rest is exact.
std::string dump(const nlohmann::json& j);

}  // namespace baton::serve
