// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Strict JSON reading shared by the io/ parsers: whole-file reads, UTF-8 checks,
/// duplicate-key detection, and typed field accessors whose errors name source and field.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"

namespace baton::io {

/// Reads a whole (small) text file: config.json, adapter_config.json, an index. io_error
/// naming the path and the OS reason if it cannot be read.
inline std::string read_text_file(const std::filesystem::path& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    BATON_FAIL(io_error, "cannot open ", path.string(), ": ",
               err ? std::generic_category().message(err) : std::string("open failed"));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BATON_CHECK(!in.bad(), io_error, "error while reading ", path.string());
  return text;
}

/// Offset of the first byte that is not part of well-formed UTF-8 (overlong forms,
/// surrogates and code points past U+10FFFF are ill-formed), or nullopt if all is valid.
inline std::optional<std::size_t> find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xbf;  // allowed range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;  // overlong
      if (c == 0xed) hi = 0x9f;  // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;  // overlong
      if (c == 0xf4) hi = 0x8f;  // > U+10FFFF
    } else {
      return i;
    }
    if (n - i < len) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if (p[i + k] < 0x80 || p[i + k] > 0xbf) return i;
    }
    i += len;
  }
  return std::nullopt;
}

/// Parses `text` as JSON (Json = nlohmann::json or nlohmann::ordered_json), rejecting
/// invalid UTF-8, syntax errors and duplicate keys in any object with format_error naming
/// `source`. Duplicates matter because a plain parser silently keeps one of them, so two
/// readers of the same file could disagree about its content.
template <class Json = nlohmann::json>
Json parse_json_strict(std::string_view text, std::string_view source) {
  if (const auto bad = find_invalid_utf8(text)) {
    BATON_FAIL(format_error, source, ": not valid UTF-8 (ill-formed byte at offset ", *bad, ")");
  }
  // nlohmann's lexer treats a NUL byte as end of input, so "{}\0<anything>" would parse as
  // "{}". A raw NUL is never valid JSON (in strings it must be escaped), so reject it here.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    BATON_FAIL(format_error, source, ": invalid JSON: NUL byte at offset ", nul);
  }
  // One key set per open object, innermost last. Recording (not throwing) inside the
  // callback keeps exceptions out of the parser's internals.
  std::vector<std::set<std::string, std::less<>>> open_objects;
  std::optional<std::string> duplicate;
  int duplicate_depth = 0;
  auto callback = [&](int depth, nlohmann::json::parse_event_t event, Json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) {
      open_objects.emplace_back();
    } else if (event == E::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == E::key && !duplicate && !open_objects.empty()) {
      const auto& key = parsed.template get_ref<const typename Json::string_t&>();
      if (!open_objects.back().insert(key).second) {
        duplicate = key;
        duplicate_depth = depth;
      }
    }
    return true;
  };
  Json j;
  try {
    j = Json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true,
                    /*ignore_comments=*/false);
  } catch (const nlohmann::json::exception& e) {
    BATON_FAIL(format_error, source, ": invalid JSON: ", e.what());
  }
  BATON_CHECK(!duplicate, format_error, source, ": duplicate key '", duplicate.value_or(""),
              "' (in an object at nesting depth ", duplicate_depth,
              "); a JSON reader would silently keep only one of the values");
  return j;
}

/// A JSON integer >= 0 (signed or unsigned storage alike: parsed text gives unsigned,
/// values assigned in code give signed), or nullopt for anything else.
template <class Json>
std::optional<std::uint64_t> non_negative_integer(const Json& v) {
  if (v.is_number_unsigned()) return v.template get<std::uint64_t>();
  if (v.is_number_integer() && v.template get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(v.template get<std::int64_t>());
  }
  return std::nullopt;
}

namespace detail {

/// Short rendering of a JSON value for error messages (long values are cut).
template <class Json>
std::string show(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

}  // namespace detail

/// Typed access to the fields of one JSON object; every failure is a config_error of the
/// form "<source>: field '<name>' = <value> <problem>". Null counts as absent, because
/// Hugging Face writers emit null for unset optional fields.
template <class Json = nlohmann::json>
class FieldReader {
 public:
  FieldReader(const Json& object, std::string_view source, std::string prefix = {})
      : j_(object), source_(source), prefix_(std::move(prefix)) {}

  bool has(std::string_view key) const {
    const auto it = j_.find(key);
    return it != j_.end() && !it->is_null();
  }
  const Json* get(std::string_view key) const {
    const auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string name(std::string_view key) const { return prefix_ + std::string(key); }

  [[noreturn]] void fail(std::string_view key, const Json& v, std::string_view problem) const {
    BATON_FAIL(config_error, source_, ": field '", name(key), "' = ", detail::show(v), " ",
               problem);
  }
  void require(std::string_view key) const {
    BATON_CHECK(has(key), config_error, source_, ": missing required field '", name(key), "'");
  }

  std::optional<long long> integer(std::string_view key) const {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    if (v->is_number_unsigned()) {
      const auto u = v->template get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<long long>::max())) {
        fail(key, *v, "is out of range");
      }
      return static_cast<long long>(u);
    }
    if (v->is_number_integer()) return v->template get<long long>();
    fail(key, *v, "is not an integer");
  }
  /// An int field; `required` fields throw when absent, others give `fallback`.
  int int_or(std::string_view key, int fallback, bool required = false) const {
    if (required) require(key);
    const auto v = integer(key);
    if (!v) return fallback;
    if (*v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max()) {
      fail(key, *get(key), "does not fit in a 32-bit int");
    }
    return static_cast<int>(*v);
  }
  int required_int(std::string_view key) const { return int_or(key, 0, true); }

  std::optional<double> number(std::string_view key) const {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) fail(key, *v, "is not a number");
    const double d = v->template get<double>();
    if (!std::isfinite(d)) fail(key, *v, "is not finite");
    return d;
  }
  double number_or(std::string_view key, double fallback, bool required = false) const {
    if (required) require(key);
    return number(key).value_or(fallback);
  }

  bool bool_or(std::string_view key, bool fallback) const {
    const Json* v = get(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(key, *v, "is not a boolean");
    return v->template get<bool>();
  }

  std::optional<std::string> string(std::string_view key) const {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(key, *v, "is not a string");
    return v->template get<std::string>();
  }

 private:
  const Json& j_;
  std::string_view source_;
  std::string prefix_;
};

}  // namespace baton::io
