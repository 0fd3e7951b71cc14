// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The values a chat template computes with, and how Python prints them: jinja2 runs on
/// Python objects, so `{{ 1.0 }}`, `{{ [1, 'a'] }}`, `{{ none }}` must print as Python's str()
/// and repr() do for the output to match byte for byte.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "baton/text/jinja/error.hpp"
#include "baton/text/utf8.hpp"

namespace baton::jinja {

struct Value;
struct Callable;
struct LoopInfo;

/// jinja2's Undefined: a missing name or attribute. Prints as "", is false, iterates as empty;
/// most operations on it raise, with `hint` ("'x' is undefined") as the message.
struct Undefined {
  std::string hint;
};
struct None {};

/// A Python list, or a tuple when `tuple` is set (only printing differs), or what a jinja2
/// filter such as select or map returns when `generator` is set: iterable once more, always
/// true, without a length, an index or a JSON form (templates that forget `| list` fail in
/// jinja2, and must here too).
struct List {
  std::vector<Value> items;
  bool tuple = false;
  bool generator = false;
  int depth = 1;  ///< lists and dicts nested in it, itself included (see kMaxValueNesting)
};

/// A Python dict in insertion order (json.loads and dict literals keep it); `ns` marks a jinja2
/// namespace(), the one object a template may assign attributes to. Keys are strings; the
/// rare number or None key (`{512: 128}`) is stored under key_string()'s encoding.
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  bool ns = false;
  int depth = 1;  ///< as List::depth
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  void set(std::string key, Value v);
};

using ListPtr = std::shared_ptr<List>;
using DictPtr = std::shared_ptr<Dict>;
using CallablePtr = std::shared_ptr<Callable>;
using LoopPtr = std::shared_ptr<LoopInfo>;

/// One template value. Lists and dicts are shared (Python objects are references); the
/// immutable sandbox forbids changing them, so sharing is never observable, except through a
/// namespace, which is shared as Python shares it.
struct Value {
  std::variant<Undefined, None, bool, std::int64_t, double, std::string, ListPtr, DictPtr,
               CallablePtr, LoopPtr>
      v;
  /// A string marked safe (markupsafe's Markup, from `|safe` or `|escape`): adding a plain
  /// string to it HTML-escapes that string, as Python's Markup.__add__ does.
  bool markup = false;

  Value() = default;
  Value(Undefined u) : v(std::move(u)) {}
  Value(None) : v(None{}) {}
  Value(bool b) : v(b) {}
  Value(std::int64_t i) : v(i) {}
  Value(int i) : v(static_cast<std::int64_t>(i)) {}
  Value(double d) : v(d) {}
  Value(std::string s) : v(std::move(s)) {}
  Value(const char* s) : v(std::string(s)) {}
  Value(ListPtr l) : v(std::move(l)) {}
  Value(DictPtr d) : v(std::move(d)) {}
  Value(CallablePtr c) : v(std::move(c)) {}
  Value(LoopPtr l) : v(std::move(l)) {}

  bool is_undefined() const { return std::holds_alternative<Undefined>(v); }
  bool is_none() const { return std::holds_alternative<None>(v); }
  bool is_bool() const { return std::holds_alternative<bool>(v); }
  bool is_int() const { return std::holds_alternative<std::int64_t>(v); }
  bool is_float() const { return std::holds_alternative<double>(v); }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return std::holds_alternative<std::string>(v); }
  bool is_list() const { return std::holds_alternative<ListPtr>(v); }
  bool is_dict() const { return std::holds_alternative<DictPtr>(v); }
  bool is_callable() const { return std::holds_alternative<CallablePtr>(v); }
  bool is_loop() const { return std::holds_alternative<LoopPtr>(v); }

  const std::string& str() const { return std::get<std::string>(v); }
  const List& list() const { return *std::get<ListPtr>(v); }
  Dict& dict() const { return *std::get<DictPtr>(v); }
  std::int64_t integer() const { return std::get<std::int64_t>(v); }
  double real() const { return std::get<double>(v); }
  bool boolean() const { return std::get<bool>(v); }
};

/// What the loop object exposes (`loop.index`, `loop.last`, ...): the items walked and where.
struct LoopInfo {
  std::shared_ptr<const std::vector<Value>> items;
  std::size_t index0 = 0;
  std::int64_t depth0 = 0;
};

/// How deeply lists and dicts may nest inside each other. Printing, comparing and freeing a
/// value recurse once per level, so a template that wraps a list in a list a million times
/// (`{% set ns.x = [ns.x] %}` in a loop) must stop here, not overflow the stack.
inline constexpr int kMaxValueNesting = 256;

inline int value_depth(const Value& v);

inline int checked_depth(int depth) {
  if (depth > kMaxValueNesting)
    fail("lists and dicts nested deeper than " + std::to_string(kMaxValueNesting) +
             " levels (jinja::kMaxValueNesting)",
         template_error::Kind::limit);
  return depth;
}

inline Value make_list(std::vector<Value> items, bool tuple = false, bool generator = false) {
  int depth = 1;
  for (const Value& v : items) depth = std::max(depth, value_depth(v) + 1);
  return Value(
      std::make_shared<List>(List{std::move(items), tuple, generator, checked_depth(depth)}));
}
inline Value make_generator(std::vector<Value> items) {
  return make_list(std::move(items), false, true);
}

/// A dict key as stored: strings as they are, other keys after a NUL byte (which no key in a
/// chat request starts with), numbers equal in Python (1, 1.0, True) the same key.
inline std::string key_string(const Value& k);
/// The key a stored key string stands for.
inline Value key_value(const std::string& k);
inline Value make_dict(std::vector<std::pair<std::string, Value>> items = {}, bool ns = false) {
  int depth = 1;
  for (const auto& kv : items) depth = std::max(depth, value_depth(kv.second) + 1);
  return Value(std::make_shared<Dict>(Dict{std::move(items), ns, checked_depth(depth)}));
}

inline int value_depth(const Value& v) {
  if (v.is_list()) return v.list().depth;
  if (v.is_dict()) return v.dict().depth;
  return 0;
}

inline const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, val] : items)
    if (k == key) return &val;
  return nullptr;
}
inline Value* Dict::find(std::string_view key) {
  for (auto& [k, val] : items)
    if (k == key) return &val;
  return nullptr;
}
inline void Dict::set(std::string key, Value val) {
  // A namespace can come to hold itself (`set ns.me = [ns]`): depth then only grows, and the
  // bound stops it.
  depth = checked_depth(std::max(depth, value_depth(val) + 1));
  if (Value* old = find(key)) {
    *old = std::move(val);
    return;
  }
  items.emplace_back(std::move(key), std::move(val));
}

/// Python's name for the value's type, as jinja2's messages say it ("'dict object' has no
/// attribute 'x'").
inline std::string type_name(const Value& x) {
  if (x.is_undefined()) return "Undefined";
  if (x.is_none()) return "NoneType";
  if (x.is_bool()) return "bool";
  if (x.is_int()) return "int";
  if (x.is_float()) return "float";
  if (x.is_string()) return "str";
  if (x.is_list()) return x.list().generator ? "generator" : x.list().tuple ? "tuple" : "list";
  if (x.is_dict()) return x.dict().ns ? "Namespace" : "dict";
  if (x.is_loop()) return "LoopContext";
  return "function";
}

// --- Unicode: Python indexes strings by code point, not byte -----------------------------

/// The code points of a UTF-8 string (template input is validated UTF-8).
inline std::u32string to_code_points(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = text::utf8_sequence_length(s, i);
    if (len == 0) len = 1;  // unreachable for validated input; never loops forever
    out.push_back(text::utf8_decode_at(s, i, len));
    i += len;
  }
  return out;
}
inline std::string to_utf8(std::u32string_view cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t c : cps) text::utf8_append(out, c);
  return out;
}
/// Number of code points (Python's len()).
inline std::int64_t code_point_count(std::string_view s) {
  std::int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

/// Python's str.isspace() for one code point (what strip() and split() remove).
inline bool is_py_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
         c == 0x205f || c == 0x3000;
}

// --- Printing ---------------------------------------------------------------------------------

/// markupsafe.escape: what Markup + str does to the str.
inline std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// Python's repr(float): the shortest digits that round-trip, fixed notation for exponents
/// -4..15 and scientific ("1e-05", "1e+20") outside, always with a ".0" when integral.
inline std::string py_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // e.g. "-1.2345e+02"
  const auto epos = sci.find('e');
  const int exp10 = std::stoi(sci.substr(epos + 1));
  std::string mant = sci.substr(0, epos);
  const bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits.push_back(c);
  std::string out = neg ? "-" : "";
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-exp10 - 1), '0');
      out += digits;
    } else {
      const auto int_len = static_cast<std::size_t>(exp10) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
  return out + ebuf;
}

/// Whether Python's repr() prints the code point as is (str.isprintable()); an approximation
/// of Unicode's categories that covers the controls, separators and format characters
/// chat text meets.
inline bool py_printable(char32_t c) {
  if (c < 0x20 || c == 0x7f) return false;
  if (c >= 0x80 && c <= 0xa0) return false;
  if (c == 0xad || c == 0x1680 || (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f))
    return false;
  if ((c >= 0x205f && c <= 0x206f) || c == 0x3000 || c == 0xfeff) return false;
  if (c >= 0xd800 && c <= 0xdfff) return false;
  if ((c >= 0xe000 && c <= 0xf8ff) || (c >= 0xfff9 && c <= 0xfffb) || c >= 0xf0000) return false;
  return true;
}

/// Python's repr(str): single quotes unless the text has one and no double quote.
inline std::string py_repr_string(std::string_view s) {
  const bool dq = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (char32_t c : to_code_points(s)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<char32_t>(q)) {
      out += '\\';
      out += q;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (!py_printable(c)) {
      char buf[16];
      if (c < 0x100)
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      else if (c < 0x10000)
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      else
        std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
      out += buf;
    } else {
      text::utf8_append(out, c);
    }
  }
  out += q;
  return out;
}

inline void append_str(std::string& out, const Value& x);

/// Python's repr(): how a value prints inside a list or dict.
inline void append_repr(std::string& out, const Value& x) {
  if (x.is_string()) {
    out += py_repr_string(x.str());
  } else if (x.is_list() && x.list().generator) {
    out += "<generator object>";
  } else if (x.is_list()) {
    const List& l = x.list();
    out += l.tuple ? '(' : '[';
    for (std::size_t i = 0; i < l.items.size(); ++i) {
      if (i) out += ", ";
      append_repr(out, l.items[i]);
    }
    if (l.tuple && l.items.size() == 1) out += ',';
    out += l.tuple ? ')' : ']';
  } else if (x.is_dict() && !x.dict().ns) {
    out += '{';
    bool first = true;
    for (const auto& [k, val] : x.dict().items) {
      if (!first) out += ", ";
      first = false;
      append_repr(out, key_value(k));
      out += ": ";
      append_repr(out, val);
    }
    out += '}';
  } else {
    append_str(out, x);
  }
}

/// Python's str(): what `{{ x }}` prints (Undefined prints nothing).
inline void append_str(std::string& out, const Value& x) {
  if (x.is_string()) {
    out += x.str();
  } else if (x.is_undefined()) {
  } else if (x.is_none()) {
    out += "None";
  } else if (x.is_bool()) {
    out += x.boolean() ? "True" : "False";
  } else if (x.is_int()) {
    out += std::to_string(x.integer());
  } else if (x.is_float()) {
    out += py_float(x.real());
  } else if (x.is_list() || (x.is_dict() && !x.dict().ns)) {
    append_repr(out, x);
  } else if (x.is_dict()) {
    out += "<Namespace>";
  } else if (x.is_loop()) {
    out += "<LoopContext>";
  } else {
    out += "<function>";
  }
}

inline std::string to_str(const Value& x) {
  if (x.is_string()) return x.str();
  std::string out;
  append_str(out, x);
  return out;
}

/// Python's truth value.
inline bool truthy(const Value& x) {
  if (x.is_undefined() || x.is_none()) return false;
  if (x.is_bool()) return x.boolean();
  if (x.is_int()) return x.integer() != 0;
  if (x.is_float()) return x.real() != 0.0;
  if (x.is_string()) return !x.str().empty();
  if (x.is_list()) return x.list().generator || !x.list().items.empty();
  if (x.is_dict()) return x.dict().ns || !x.dict().items.empty();
  return true;
}

/// The value as a Python number (bool is an int in Python), for arithmetic and comparisons.
inline bool as_number(const Value& x, double& d, std::int64_t& i, bool& is_int) {
  if (x.is_bool()) {
    i = x.boolean();
    is_int = true;
  } else if (x.is_int()) {
    i = x.integer();
    is_int = true;
  } else if (x.is_float()) {
    d = x.real();
    is_int = false;
  } else {
    return false;
  }
  if (is_int) d = static_cast<double>(i);
  return true;
}

/// Python's ==.
inline bool equals(const Value& a, const Value& b) {
  double da = 0, db = 0;
  std::int64_t ia = 0, ib = 0;
  bool ai = false, bi = false;
  if (as_number(a, da, ia, ai) && as_number(b, db, ib, bi)) return (ai && bi) ? ia == ib : da == db;
  if (a.v.index() != b.v.index()) return false;
  if (a.is_undefined() || a.is_none()) return true;
  if (a.is_string()) return a.str() == b.str();
  if (a.is_list()) {
    const auto &la = a.list(), &lb = b.list();
    if (la.generator || lb.generator) return &la == &lb;
    if (la.tuple != lb.tuple || la.items.size() != lb.items.size()) return false;
    for (std::size_t i = 0; i < la.items.size(); ++i)
      if (!equals(la.items[i], lb.items[i])) return false;
    return true;
  }
  if (a.is_dict()) {
    const auto &da2 = a.dict(), &db2 = b.dict();
    if (da2.ns || db2.ns) return &da2 == &db2;
    if (da2.items.size() != db2.items.size()) return false;
    for (const auto& [k, val] : da2.items) {
      const Value* o = db2.find(k);
      if (!o || !equals(val, *o)) return false;
    }
    return true;
  }
  if (a.is_callable()) return std::get<CallablePtr>(a.v) == std::get<CallablePtr>(b.v);
  return std::get<LoopPtr>(a.v) == std::get<LoopPtr>(b.v);
}

inline std::string key_string(const Value& k) {
  if (k.is_string()) return k.str();
  if (k.is_bool()) return std::string("\0i", 2) + (k.boolean() ? "1" : "0");
  if (k.is_int()) return std::string("\0i", 2) + std::to_string(k.integer());
  if (k.is_float()) {
    const double d = k.real();
    if (d == std::floor(d) && std::fabs(d) < 9.2e18)
      return std::string("\0i", 2) + std::to_string(static_cast<std::int64_t>(d));
    return std::string("\0f", 2) + py_float(d);
  }
  if (k.is_none()) return std::string("\0n", 2);
  fail("unhashable type: '" + type_name(k) + "'");
}

inline Value key_value(const std::string& k) {
  if (k.empty() || k[0] != '\0') return Value(k);
  if (k[1] == 'i') return Value(static_cast<std::int64_t>(std::stoll(k.substr(2))));
  if (k[1] == 'f') return Value(std::strtod(k.c_str() + 2, nullptr));
  return Value(None{});
}

}  // namespace baton::jinja
