// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief JSON in and out of templates. Out: transformers' `tojson`, which is Python's
/// json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...) and not
/// jinja2's HTML-escaping filter; tool schemas reach the prompt through it. In: request JSON
/// to template values, keys in file order (Python's json keeps it).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/text/jinja/value.hpp"

namespace baton::jinja {

struct JsonStyle {
  std::string indent;   ///< per level; unused unless `pretty`
  bool pretty = false;  ///< indent given: newlines between items
  std::string item_sep = ", ", key_sep = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;  ///< escape every non-ASCII character as \uXXXX (surrogate pairs)
};

namespace detail {

inline void json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (ensure_ascii && static_cast<unsigned char>(c) >= 0x80) {
      std::size_t len = text::utf8_sequence_length(s, i);
      if (len == 0) len = 1;
      const char32_t cp = text::utf8_decode_at(s, i, len);
      const auto u16 = [&](unsigned u) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "\\u%04x", u);
        out += buf;
      };
      if (cp >= 0x10000) {
        u16(0xd800 + ((cp - 0x10000) >> 10));
        u16(0xdc00 + ((cp - 0x10000) & 0x3ff));
      } else {
        u16(static_cast<unsigned>(cp));
      }
      i += len - 1;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
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
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[16];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

inline void json_dump(std::string& out, const Value& x, const JsonStyle& st, int level,
                      int depth_left) {
  if (depth_left <= 0) fail("tojson: value nested too deeply");
  const auto newline = [&](int lvl) {
    if (!st.pretty) return;
    out += '\n';
    for (int k = 0; k < lvl; ++k) out += st.indent;
  };
  if (x.is_string()) {
    json_string(out, x.str(), st.ensure_ascii);
  } else if (x.is_none()) {
    out += "null";
  } else if (x.is_bool()) {
    out += x.boolean() ? "true" : "false";
  } else if (x.is_int()) {
    out += std::to_string(x.integer());
  } else if (x.is_float()) {
    const double d = x.real();
    out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : py_float(d);
  } else if (x.is_list() && !x.list().generator) {
    const auto& items = x.list().items;
    if (items.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) out += st.item_sep;
      newline(level + 1);
      json_dump(out, items[i], st, level + 1, depth_left - 1);
    }
    newline(level);
    out += ']';
  } else if (x.is_dict() && !x.dict().ns) {
    std::vector<const std::pair<std::string, Value>*> items;
    for (const auto& kv : x.dict().items) {
      // json.dumps writes number and None keys as strings: 1 -> "1", None -> "null".
      if (!kv.first.empty() && kv.first[0] == '\0')
        fail("tojson: dicts with number or None keys are not supported by baton");
      items.push_back(&kv);
    }
    if (items.empty()) {
      out += "{}";
      return;
    }
    if (st.sort_keys)
      std::stable_sort(items.begin(), items.end(),
                       [](auto* a, auto* b) { return a->first < b->first; });
    out += '{';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) out += st.item_sep;
      newline(level + 1);
      json_string(out, items[i]->first, st.ensure_ascii);
      out += st.key_sep;
      json_dump(out, items[i]->second, st, level + 1, depth_left - 1);
    }
    newline(level);
    out += '}';
  } else {
    fail("Object of type " + type_name(x) + " is not JSON serializable");
  }
}

}  // namespace detail

/// json.dumps(x) with `st`; `max_depth` bounds nesting.
inline std::string to_json(const Value& x, const JsonStyle& st, int max_depth = 512) {
  std::string out;
  detail::json_dump(out, x, st, 0, max_depth);
  return out;
}

/// A parsed JSON document (ordered keys) as a template value.
inline Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value(None{});
    case nlohmann::ordered_json::value_t::boolean:
      return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<std::int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(from_json(e));
      return make_list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<std::pair<std::string, Value>> items;
      items.reserve(j.size());
      for (const auto& [k, v] : j.items()) items.emplace_back(k, from_json(v));
      return make_dict(std::move(items));
    }
    default:
      fail("unsupported JSON value");
  }
}

}  // namespace baton::jinja
