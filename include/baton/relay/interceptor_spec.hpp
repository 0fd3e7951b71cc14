// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief InterceptorSpec: a built-in interceptor named by a stage of a relay file, with its
///        parameters, as plain data (parsed by relay/config.hpp, built by
///        relay/runtime_chain.hpp).
///
/// ```json
/// "interceptors": [
///   {"stop_sequences": ["\n\n", [151645]]},   // text, or token ids (matched on their bytes)
///   {"allow_tokens": [15, 16, "PASS"]},       // or "deny_tokens"; a string must be one token
///   {"trace": true},
///   {"step_skip": true}]
/// ```
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

/// Ids given directly, or text that a tokenizer will turn into ids.
struct IdsOrText {
  std::vector<std::int32_t> ids;
  std::optional<std::string> text;
};

struct InterceptorSpec {
  enum class Kind { stop_sequences, allow_tokens, deny_tokens, trace, step_skip };
  Kind kind = Kind::trace;
  std::vector<IdsOrText> stops;          ///< stop_sequences: each text, or ids to decode
  std::vector<std::int32_t> token_ids;   ///< allow/deny_tokens: ids
  std::vector<std::string> token_texts;  ///< allow/deny_tokens: each one token (resolve_text)
  std::string where;                     ///< "file: stages[i] ('name').interceptors[k]"
};

/// The field name a relay file uses for `k`.
inline std::string_view interceptor_field(InterceptorSpec::Kind k) {
  switch (k) {
    case InterceptorSpec::Kind::stop_sequences:
      return "stop_sequences";
    case InterceptorSpec::Kind::allow_tokens:
      return "allow_tokens";
    case InterceptorSpec::Kind::deny_tokens:
      return "deny_tokens";
    case InterceptorSpec::Kind::trace:
      return "trace";
    case InterceptorSpec::Kind::step_skip:
      return "step_skip";
  }
  return "?";
}

}  // namespace baton
