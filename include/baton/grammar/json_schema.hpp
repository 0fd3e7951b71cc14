// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A JSON Schema subset compiled to a regular language (RegexNode).
///
/// The subset: `type` one of
///   - `object` with `properties` (emitted in the order written), `required` listing all of
///     them, `additionalProperties: false`;
///   - `string` with optional `maxLength` / `minLength` (in characters; an escape is one
///     character) or `enum` (a list of strings);
///   - `integer`, `number`, `boolean`;
///   - `array` with `items` (any schema of the subset) and optional `maxItems` / `minItems`.
/// Annotations (`title`, `description`, `$schema`, `$id`, `$comment`, `examples`, `default`)
/// are ignored; any other keyword or value is an error naming its JSON pointer (also beside
/// an `enum` without `type`: `{"enum": [...], "maxLength": 3}` is an error, not a silently
/// ignored bound). Counts, nesting and size are bounded by GrammarLimits.
///
/// The one whitespace rule: the output is JSON written on one line with `", "` between items
/// and members, `": "` after a key, and no other whitespace (Python's `json.dumps` default).
/// Strings: any character but `"`, `\`, U+0000..U+001F and U+007F, or the escapes
/// `\" \\ \b \f \n \r \t` and `\u00XX` for the control characters (`\u0000`..`\u001F`,
/// `\u007F`). Numbers: `-?(0|[1-9][0-9]*)`, with `(\.[0-9]+)?([eE][+-]?[0-9]+)?` for `number`.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"
#include "baton/grammar/grammar_limits.hpp"
#include "baton/grammar/regex_ast.hpp"
#include "baton/grammar/regex_parser.hpp"
#include "baton/io/json_util.hpp"

namespace baton::grammar {

/// The separator between array items and between object members.
inline constexpr std::string_view kJsonItemSeparator = ", ";
/// The separator between a key and its value.
inline constexpr std::string_view kJsonKeySeparator = ": ";

namespace detail {

/// `s` as a JSON string literal, escaped by the rule above.
inline std::string json_quote(std::string_view s) {
  std::string out = "\"";
  static constexpr char kHex[] = "0123456789abcdef";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

class SchemaCompiler {
 public:
  explicit SchemaCompiler(const GrammarLimits& limits) : limits_(limits) {}
  RegexNode compile(const nlohmann::ordered_json& schema) { return value(schema, "", 0); }

 private:
  [[noreturn]] static void fail(const std::string& where, std::string_view why) {
    BATON_FAIL(grammar_error, "JSON schema at ", where.empty() ? "/" : where, ": ", why);
  }

  // `context` says what the allowed keywords belong to, e.g. "for type \"string\"".
  static void only_keywords(const nlohmann::ordered_json& s, const std::string& where,
                            std::initializer_list<std::string_view> allowed,
                            const std::string& context) {
    static constexpr std::string_view kAnnotations[] = {"title",    "description", "$schema", "$id",
                                                        "$comment", "examples",    "default"};
    for (const auto& [key, v] : s.items()) {
      bool ok = std::find(std::begin(kAnnotations), std::end(kAnnotations), key) !=
                std::end(kAnnotations);
      for (const std::string_view a : allowed) ok = ok || key == a;
      if (!ok)
        fail(where, "keyword \"" + key + "\" is not supported " + context +
                        " (baton's JSON subset: see docs/grammar.md)");
    }
  }

  static std::string for_type(const std::string& type) { return "for type \"" + type + "\""; }

  int count(const nlohmann::ordered_json& s, const char* key, const std::string& where,
            int dflt) const {
    if (!s.contains(key)) return dflt;
    const auto& v = s[key];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
        v.get<std::int64_t>() > limits_.repeat_count)
      fail(where + "/" + key, "must be an integer from 0 to " +
                                  std::to_string(limits_.repeat_count) + ", not " +
                                  io::detail::show(v) + " (GrammarLimits::repeat_count)");
    return static_cast<int>(v.get<std::int64_t>());
  }

  // The tree being built, repetitions written out, against GrammarLimits::syntax_nodes; a
  // running total while a list of parts grows, so a huge enum stops early.
  void check_size(std::size_t nodes, const std::string& where) const {
    check_syntax_nodes(nodes, limits_,
                       "JSON schema at " + (where.empty() ? std::string("/") : where) + ": ");
  }
  RegexNode checked(RegexNode n, const std::string& where) const {
    check_size(n.size, where);
    return n;
  }

  static RegexNode lit(std::string_view s) { return RegexNode::literal(s); }

  RegexNode value(const nlohmann::ordered_json& s, const std::string& where, int depth) {
    if (depth > limits_.schema_depth)
      fail(where, "schemas nested deeper than " + std::to_string(limits_.schema_depth) +
                      " levels (GrammarLimits::schema_depth)");
    if (!s.is_object()) fail(where, "a schema must be an object, not " + io::detail::show(s));
    if (!s.contains("type") && s.contains("enum")) {
      only_keywords(s, where, {"enum"}, "beside \"enum\" (an enum lists the whole language)");
      return string_enum(s, where);
    }
    if (!s.contains("type") || !s["type"].is_string())
      fail(where, "needs \"type\" (one of object, string, integer, number, boolean, array)");
    const std::string type = s["type"].get<std::string>();
    if (type == "object") return object(s, where, depth);
    if (type == "string") return string(s, where);
    if (type == "array") return array(s, where, depth);
    if (type == "integer" || type == "number" || type == "boolean") {
      only_keywords(s, where, {"type"}, for_type(type));
      if (type == "boolean") return RegexNode::any_of({lit("true"), lit("false")});
      return parse_regex(type == "integer" ? "-?(0|[1-9][0-9]*)"
                                           : "-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?");
    }
    fail(where + "/type", "type \"" + type +
                              "\" is not supported (object, string, integer, number, boolean, "
                              "array)");
  }

  RegexNode object(const nlohmann::ordered_json& s, const std::string& where, int depth) {
    only_keywords(s, where, {"type", "properties", "required", "additionalProperties"},
                  for_type("object"));
    if (!s.contains("additionalProperties") || s["additionalProperties"] != false)
      fail(where,
           "an object must say \"additionalProperties\": false (the subset allows "
           "exactly the listed properties)");
    const nlohmann::ordered_json empty = nlohmann::ordered_json::object();
    const auto& props = s.contains("properties") ? s["properties"] : empty;
    if (!props.is_object()) fail(where + "/properties", "must be an object");
    std::set<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) fail(where + "/required", "must be an array of names");
      for (const auto& r : s["required"]) {
        if (!r.is_string() || !props.contains(r.get<std::string>()))
          fail(where + "/required", "names " + io::detail::show(r) + ", which is not a property");
        required.insert(r.get<std::string>());
      }
    }
    std::vector<RegexNode> parts{lit("{")};
    std::size_t nodes = 0;
    bool first = true;
    for (const auto& [key, sub] : props.items()) {
      if (!required.count(key))
        fail(where + "/required", "must list every property; \"" + key +
                                      "\" is missing (optional properties are not supported)");
      if (!first) parts.push_back(lit(kJsonItemSeparator));
      first = false;
      parts.push_back(lit(json_quote(key)));
      parts.push_back(lit(kJsonKeySeparator));
      parts.push_back(value(sub, where + "/properties/" + key, depth + 1));
      nodes = saturating_add(nodes, saturating_add(parts.back().size, key.size() + 4));
      check_size(nodes, where);
    }
    parts.push_back(lit("}"));
    return RegexNode::seq(std::move(parts));
  }

  RegexNode string_enum(const nlohmann::ordered_json& s, const std::string& where) {
    const auto& e = s["enum"];
    if (!e.is_array() || e.empty()) fail(where + "/enum", "must be a non-empty array of strings");
    std::vector<RegexNode> alts;
    std::size_t nodes = 0;
    for (const auto& v : e) {
      if (!v.is_string())
        fail(where + "/enum", "only strings are supported in an enum, not " + io::detail::show(v));
      alts.push_back(lit(json_quote(v.get<std::string>())));
      nodes = saturating_add(nodes, alts.back().size);
      check_size(nodes, where + "/enum");
    }
    return RegexNode::any_of(std::move(alts));
  }

  RegexNode string(const nlohmann::ordered_json& s, const std::string& where) {
    if (s.contains("enum")) {
      only_keywords(s, where, {"type", "enum"},
                    "beside \"enum\" (an enum lists the whole language)");
      return string_enum(s, where);
    }
    only_keywords(s, where, {"type", "maxLength", "minLength"}, for_type("string"));
    const int min = count(s, "minLength", where, 0);
    const int max = count(s, "maxLength", where, -1);
    if (max >= 0 && max < min) fail(where, "maxLength is below minLength");
    // One character: anything but '"', '\' and the control characters, or an escape.
    RegexNode ch =
        RegexNode::any_of({RegexNode::of_set(complement_ranges(normalize_ranges(
                               {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}}))),
                           parse_regex(R"(\\(["\\bfnrt]|u00[01][0-9A-Fa-f]|u007[Ff]))")});
    return checked(
        RegexNode::seq({lit("\""), RegexNode::repeated(std::move(ch), min, max), lit("\"")}),
        where);
  }

  RegexNode array(const nlohmann::ordered_json& s, const std::string& where, int depth) {
    only_keywords(s, where, {"type", "items", "maxItems", "minItems"}, for_type("array"));
    if (!s.contains("items")) fail(where, "an array needs \"items\" (the schema of its elements)");
    const int min = count(s, "minItems", where, 0);
    const int max = count(s, "maxItems", where, -1);
    if (max >= 0 && max < min) fail(where, "maxItems is below minItems");
    RegexNode item = value(s["items"], where + "/items", depth + 1);
    if (max == 0) return lit("[]");
    // "[" item (", " item)* "]" with the item held once (RegexNode::separated), so nested
    // arrays grow linearly; zero items is "[]".
    RegexNode items = RegexNode::separated(std::move(item), lit(kJsonItemSeparator), min, max);
    return checked(RegexNode::seq({lit("["), std::move(items), lit("]")}), where);
  }

  const GrammarLimits& limits_;
};

}  // namespace detail

/// The regular language of `schema` (see the file comment for the subset); throws
/// grammar_error naming the JSON pointer and the reason for anything outside it.
inline RegexNode compile_json_schema(const nlohmann::ordered_json& schema,
                                     const GrammarLimits& limits = {}) {
  return detail::SchemaCompiler(limits).compile(schema);
}

}  // namespace baton::grammar
