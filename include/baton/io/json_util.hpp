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
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"

namespace baton::io {

/// Size caps for the whole-file reads, per kind of file. Real files are far below them
/// (a Qwen config.json is ~1 KB, a tokenizer.json ~7-11 MB); a file past its cap is refused
/// before it is read, so `/dev/zero` or a multi-GB "config" cannot exhaust memory.
inline constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;      ///< config/adapter/index/relay
inline constexpr std::uintmax_t kMaxTokenizerBytes = 256u << 20;  ///< tokenizer.json

/// How deeply JSON arrays/objects may nest in any file baton reads. Real configs, headers
/// and tokenizer.json files nest fewer than 10 levels; nlohmann's dump(), copy and destructor
/// recurse once per level, so an unbounded depth is a stack overflow waiting for a message.
inline constexpr int kMaxJsonDepth = 64;

/// What reading one model folder, adapter, tokenizer or relay file may cost at most. The
/// defaults hold every real file with a wide margin; a caller with an unusual file raises a
/// cap here and passes the limits to the loader (load_model, LoraSlice::load,
/// Tokenizer::from_file, load_relay_spec) instead of going through the lower-level functions.
struct ReadLimits {
  std::uintmax_t config_bytes = kMaxConfigBytes;        ///< config/adapter/index/relay files
  std::uintmax_t tokenizer_bytes = kMaxTokenizerBytes;  ///< tokenizer.json
  int json_depth = kMaxJsonDepth;                       ///< nesting of any JSON file

  // What a relay file may ask for (relay/config.hpp). Its size cap alone does not bound what
  // it costs: each stage builds a model slot and caches (20,000 stages took 2.85 GB), a cycle
  // count or a list length multiplies the work. Real relays are far below these.
  int relay_stages = 64;    ///< "stages" entries
  int relay_cycles = 1000;  ///< "max_cycles"
  /// Token ids in one list: "prefix", "ids", "allow_tokens"/"deny_tokens", a gate's needle,
  /// one stop sequence (a vocabulary has at most a few 100k tokens).
  std::size_t relay_ids = 1u << 18;
  /// Entries of a stage's other lists: "input", "examples", "stop", "stop_text",
  /// "stop_sequences" (each is checked, matched or copied on every run or step).
  std::size_t relay_entries = 1024;
  std::size_t relay_name_bytes = 256;       ///< a stage's "name" (every message quotes it)
  std::size_t relay_text_bytes = 1u << 18;  ///< any other string: text, system, regex, stops
};

/// Reads a whole text file of at most `max_bytes`: config.json, adapter_config.json, an
/// index, a relay or tokenizer file. The path must name a regular file (a FIFO would block,
/// a device like /dev/zero never ends, a directory is not a file): io_error naming the path
/// and the reason otherwise, or when the file is larger than `max_bytes`.
inline std::string read_text_file(const std::filesystem::path& path,
                                  std::uintmax_t max_bytes = kMaxConfigBytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) BATON_FAIL(io_error, "cannot open ", path.string(), ": ", ec.message());
  BATON_CHECK(std::filesystem::is_regular_file(status), io_error, "cannot read ", path.string(),
              ": not a regular file",
              std::filesystem::is_directory(status) ? " (it is a directory)" : "");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) BATON_FAIL(io_error, "cannot read ", path.string(), ": ", ec.message());
  BATON_CHECK(size <= max_bytes, io_error, path.string(), ": file is ", size,
              " bytes, more than the limit of ", max_bytes, " bytes for this kind of file");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    BATON_FAIL(io_error, "cannot open ", path.string(), ": ",
               err ? std::generic_category().message(err) : std::string("open failed"));
  }
  // Read at most max_bytes + 1 even if the file grew after the size check.
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  BATON_CHECK(!in.bad(), io_error, "error while reading ", path.string());
  text.resize(static_cast<std::size_t>(in.gcount()));
  BATON_CHECK(in.peek() == std::char_traits<char>::eof(), io_error, path.string(),
              ": file grew while it was being read");
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

namespace detail {

/// A SAX pass that builds nothing: it enforces the nesting limit and finds duplicate keys in
/// linear time (one key set per open object). Returning false stops the parse at once, so a
/// 100k-deep input costs 65 levels of work, not 100k.
class JsonChecker {
 public:
  explicit JsonChecker(int max_depth) : max_depth_(max_depth) {}

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(std::int64_t) { return true; }
  bool number_unsigned(std::uint64_t) { return true; }
  bool number_float(double, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(std::vector<std::uint8_t>&) { return true; }
  bool start_object(std::size_t) {
    keys_.emplace_back(std::in_place);
    return enter();
  }
  bool end_object() {
    keys_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    keys_.emplace_back(std::nullopt);
    return enter();
  }
  bool end_array() {
    keys_.pop_back();
    --depth_;
    return true;
  }
  bool key(std::string& k) {
    auto& open = keys_.back();
    if (open && !open->insert(k).second) {
      duplicate_ = k;
      duplicate_depth_ = depth_;
      return false;
    }
    return true;
  }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) {
    syntax_error_ = e.what();
    syntax_error_byte_ = byte > 0 ? byte - 1 : 0;  // nlohmann counts the bytes read: 1-based
    return false;
  }

  bool too_deep = false;
  std::optional<std::string> duplicate_;
  int duplicate_depth_ = 0;
  std::optional<std::string> syntax_error_;
  std::size_t syntax_error_byte_ = 0;

 private:
  bool enter() {
    if (++depth_ > max_depth_) {
      too_deep = true;
      return false;
    }
    return true;
  }
  int depth_ = 0;
  int max_depth_;
  // nullopt for an array level; objects keep their keys.
  std::vector<std::optional<std::set<std::string, std::less<>>>> keys_;
};

using ::baton::detail::excerpt;  // core/error.hpp: what a message quotes of its input

/// nlohmann's exception text without its "[json.exception.parse_error.101] " tag (an internal
/// name that means nothing to a user) nor the "parse error at " that the caller's own words
/// replace: "line 1, column 5: syntax error while parsing value - invalid literal; ...".
inline std::string_view json_reason(std::string_view what) {
  if (const auto close = what.find("] "); what.starts_with("[json.") && close != what.npos)
    what.remove_prefix(close + 2);
  if (what.starts_with("parse error at ")) what.remove_prefix(15);
  return what;
}

}  // namespace detail

/// Parses `text` as JSON (Json = nlohmann::json or nlohmann::ordered_json), rejecting
/// invalid UTF-8, syntax errors, nesting deeper than `max_depth` and duplicate keys in any
/// object with format_error naming `source`. Duplicates matter because a plain parser
/// silently keeps one of them, so two readers of the same file could disagree about its
/// content. A first SAX pass checks depth and keys without building anything (nlohmann's
/// callback parser scans the parent container at every object end: quadratic on a header
/// with many tensors); only then is the document built.
template <class Json = nlohmann::json>
Json parse_json_strict(std::string_view text, std::string_view source,
                       int max_depth = kMaxJsonDepth) {
  if (const auto bad = find_invalid_utf8(text)) {
    BATON_FAIL(format_error, source, ": not valid UTF-8 (ill-formed byte at offset ", *bad, ")");
  }
  // nlohmann's lexer treats a NUL byte as end of input, so "{}\0<anything>" would parse as
  // "{}". A raw NUL is never valid JSON (in strings it must be escaped), so reject it here.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    BATON_FAIL(format_error, source, ": invalid JSON: NUL byte at offset ", nul);
  }
  // A byte order mark is not JSON (RFC 8259 section 8.1: implementations must not add one),
  // and nlohmann skips it silently: refuse it the same way in every file.
  BATON_CHECK(!text.starts_with("\xEF\xBB\xBF"), format_error, source,
              ": starts with a UTF-8 byte order mark; JSON files must not have one");
  detail::JsonChecker checker(max_depth);
  nlohmann::json::sax_parse(text.begin(), text.end(), &checker,
                            nlohmann::json::input_format_t::json, /*strict=*/true,
                            /*ignore_comments=*/false);
  BATON_CHECK(!checker.too_deep, format_error, source, ": JSON nests deeper than ", max_depth,
              " levels (the limit for every file baton reads)");
  BATON_CHECK(!checker.syntax_error_, format_error, source, ": invalid JSON at byte ",
              checker.syntax_error_byte_, ", ",
              detail::excerpt(detail::json_reason(checker.syntax_error_.value_or("")), 200));
  BATON_CHECK(!checker.duplicate_, format_error, source, ": duplicate key '",
              detail::excerpt(checker.duplicate_.value_or("")), "' (in an object at nesting depth ",
              checker.duplicate_depth_,
              "); a JSON reader would silently keep only one of the values");
  try {
    return Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/true,
                       /*ignore_comments=*/false);
  } catch (const nlohmann::json::exception& e) {
    BATON_FAIL(format_error, source,
               ": invalid JSON: ", detail::excerpt(detail::json_reason(e.what()), 200));
  }
}

/// read_text_file + parse_json_strict, the pair every JSON file goes through; `source` in
/// messages is the path.
template <class Json = nlohmann::json>
Json read_json_file(const std::filesystem::path& path, std::uintmax_t max_bytes, int max_depth) {
  return parse_json_strict<Json>(read_text_file(path, max_bytes), path.string(), max_depth);
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
/// Values reaching here come from parse_json_strict, so dump()'s recursion is bounded by
/// kMaxJsonDepth; the text is cut so a message never echoes kilobytes of input.
template <class Json>
std::string show(const Json& v) {
  return excerpt(v.dump(-1, ' ', false, Json::error_handler_t::replace), 80);
}

}  // namespace detail

/// Runs `read`, which takes values out of the JSON at `field` (a path such as
/// "added_tokens[3]" or "pre_tokenizer.pretokenizers[1]"), and turns a JSON type or range
/// error thrown by nlohmann's accessors into a format_error naming `source` and `field`:
/// "tokenizer.json: field 'added_tokens[3]': type must be string, but is number". Errors that
/// are already baton errors pass through unchanged, so nested fields keep the innermost name.
template <class Read>
decltype(auto) with_field(std::string_view source, std::string_view field, Read&& read) {
  try {
    return std::forward<Read>(read)();
  } catch (const nlohmann::json::exception& e) {
    BATON_FAIL(format_error, source, ": field '", detail::excerpt(field),
               "': ", detail::excerpt(detail::json_reason(e.what()), 200));
  }
}

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
