// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief GrammarSpec: what a stage's output must match, as plain data (a regex, or a JSON
/// Schema of the subset), and its language as a syntax tree. Needs no tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"
#include "baton/grammar/grammar_limits.hpp"
#include "baton/grammar/json_schema.hpp"
#include "baton/grammar/regex_parser.hpp"
#include "baton/io/json_util.hpp"

namespace baton::grammar {

/// FNV-1a, 64 bits: a stable hash (the same on every platform and run) for cache keys.
inline std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

/// What a stage's output must match: a regex (whole output) or a JSON Schema of the subset.
struct GrammarSpec {
  enum class Kind : std::uint8_t { regex, json_schema };
  Kind kind = Kind::regex;
  std::string source;  ///< the pattern, or the schema as compact JSON (keys in order)

  static GrammarSpec regex(std::string pattern) { return {Kind::regex, std::move(pattern)}; }
  static GrammarSpec json_schema(const nlohmann::ordered_json& schema) {
    return {Kind::json_schema, schema.dump()};
  }
  /// Parses `text` as a JSON Schema (order of properties kept); `where` names it in errors.
  static GrammarSpec json_schema_text(std::string_view text, std::string_view where) {
    // Strict like every JSON input (nesting limit, duplicate keys, no trailing bytes): a
    // schema file is as untrusted as a relay file (docs/security.md).
    return json_schema(io::parse_json_strict<nlohmann::ordered_json>(text, where));
  }

  /// The language as a syntax tree (throws grammar_error for anything unsupported, or for
  /// a tree above `limits`: repetition counts, schema nesting, syntax-tree size).
  RegexNode language(const GrammarLimits& limits = {}) const {
    if (kind == Kind::regex) return parse_regex(source, limits);
    return compile_json_schema(nlohmann::ordered_json::parse(source), limits);
  }
  std::uint64_t hash() const {
    return fnv1a(source, kind == Kind::regex ? 0x5245474558ull : 0x4A534F4Eull);
  }
};

}  // namespace baton::grammar
