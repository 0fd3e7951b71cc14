// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Python methods templates call on strings, dicts and lists (`content.strip()`,
/// `message.get('x')`, `text.split('</think>')`), and the sandbox's refusal of the ones that
/// change an object (`messages.pop(0)`), with jinja2's message.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/text/jinja/call.hpp"
#include "baton/text/jinja/value.hpp"

namespace baton::jinja {

namespace detail {

/// Python's str.strip/lstrip/rstrip: whitespace, or any code point of `chars`.
inline std::string py_strip(std::string_view s, const Value& chars, bool left, bool right) {
  const std::u32string cps = to_code_points(s);
  std::u32string set;
  const bool ws = chars.is_none() || chars.is_undefined();
  if (!ws) {
    if (!chars.is_string()) fail("strip arg must be None or str");
    set = to_code_points(chars.str());
  }
  const auto drop = [&](char32_t c) {
    return ws ? is_py_space(c) : set.find(c) != std::u32string::npos;
  };
  std::size_t b = 0, e = cps.size();
  if (left)
    while (b < e && drop(cps[b])) ++b;
  if (right)
    while (e > b && drop(cps[e - 1])) --e;
  return to_utf8(std::u32string_view(cps).substr(b, e - b));
}

/// Python's str.split(sep=None, maxsplit=-1) (rsplit when `from_right`).
inline Value py_split(std::string_view s, const Value& sep, std::int64_t maxsplit,
                      bool from_right) {
  std::vector<Value> parts;
  if (sep.is_none() || sep.is_undefined()) {
    // Runs of whitespace separate; none at either end.
    const std::u32string cps = to_code_points(s);
    std::vector<std::pair<std::size_t, std::size_t>> words;
    std::size_t i = 0;
    while (i < cps.size()) {
      while (i < cps.size() && is_py_space(cps[i])) ++i;
      if (i == cps.size()) break;
      std::size_t j = i;
      while (j < cps.size() && !is_py_space(cps[j])) ++j;
      words.emplace_back(i, j);
      i = j;
    }
    if (maxsplit >= 0 && static_cast<std::int64_t>(words.size()) > maxsplit + 1) {
      const std::size_t keep = static_cast<std::size_t>(maxsplit);
      std::vector<std::pair<std::size_t, std::size_t>> w2;
      if (!from_right) {
        // Python keeps the remainder's whitespace on the side that was not split.
        for (std::size_t k = 0; k < keep; ++k) w2.push_back(words[k]);
        w2.emplace_back(words[keep].first, cps.size());
      } else {
        w2.emplace_back(0, words[words.size() - keep - 1].second);
        for (std::size_t k = words.size() - keep; k < words.size(); ++k) w2.push_back(words[k]);
      }
      words = std::move(w2);
    }
    for (auto [b, e] : words)
      parts.emplace_back(to_utf8(std::u32string_view(cps).substr(b, e - b)));
    return make_list(std::move(parts));
  }
  if (!sep.is_string()) fail("must be str or None, not " + type_name(sep));
  const std::string& d = sep.str();
  if (d.empty()) fail("empty separator");
  std::vector<std::string> pieces;
  if (!from_right) {
    std::size_t start = 0;
    for (std::int64_t n = 0; maxsplit < 0 || n < maxsplit; ++n) {
      const auto at = s.find(d, start);
      if (at == std::string_view::npos) break;
      pieces.emplace_back(s.substr(start, at - start));
      start = at + d.size();
    }
    pieces.emplace_back(s.substr(start));
  } else {
    std::size_t end = s.size();
    for (std::int64_t n = 0; maxsplit < 0 || n < maxsplit; ++n) {
      if (end < d.size()) break;
      const auto at = s.rfind(d, end - d.size());
      if (at == std::string_view::npos) break;
      pieces.emplace_back(s.substr(at + d.size(), end - at - d.size()));
      end = at;
    }
    pieces.emplace_back(s.substr(0, end));
    std::reverse(pieces.begin(), pieces.end());
  }
  for (auto& p : pieces) parts.emplace_back(std::move(p));
  return make_list(std::move(parts));
}

/// Python's str.replace(old, new, count=-1).
inline std::string py_replace(std::string_view s, std::string_view from, std::string_view to,
                              std::int64_t count) {
  std::string out;
  if (from.empty()) {
    // Python inserts `to` between code points and at both ends.
    const std::u32string cps = to_code_points(s);
    std::int64_t n = 0;
    for (std::size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || n < count) {
        out += to;
        ++n;
      }
      if (i < cps.size()) text::utf8_append(out, cps[i]);
    }
    return out;
  }
  std::size_t start = 0;
  for (std::int64_t n = 0; count < 0 || n < count; ++n) {
    const auto at = s.find(from, start);
    if (at == std::string_view::npos) break;
    out.append(s.substr(start, at - start)).append(to);
    start = at + from.size();
  }
  out.append(s.substr(start));
  return out;
}

/// The prefixes (or suffixes) startswith/endswith accept: one string or a tuple of them.
inline bool affix_match(std::string_view s, const Value& affix, bool prefix) {
  const auto one = [&](const Value& a) {
    if (!a.is_string())
      fail(std::string(prefix ? "startswith" : "endswith") +
           " first arg must be str or a tuple of str, not " + type_name(a));
    const std::string& t = a.str();
    return t.size() <= s.size() &&
           (prefix ? s.substr(0, t.size()) == t : s.substr(s.size() - t.size()) == t);
  };
  if (affix.is_list()) {
    for (const Value& a : affix.list().items)
      if (one(a)) return true;
    return false;
  }
  return one(affix);
}

inline std::string py_case(std::string_view s, int mode) {  // 0 lower, 1 upper, 2 title, 3 cap
  std::string out;
  bool prev_cased = false;
  bool first = true;
  for (char32_t c : to_code_points(s)) {
    // ASCII and Latin-1/Greek/Cyrillic simple case mappings cover chat text; other scripts
    // have no case.
    const auto lower = [](char32_t x) -> char32_t {
      if ((x >= 'A' && x <= 'Z') || (x >= 0xc0 && x <= 0xde && x != 0xd7) ||
          (x >= 0x410 && x <= 0x42f))
        return x + (x >= 0x410 ? 0x20 : 0x20);
      if (x >= 0x391 && x <= 0x3a9 && x != 0x3a2) return x + 0x20;
      return x;
    };
    const auto upper = [](char32_t x) -> char32_t {
      if ((x >= 'a' && x <= 'z') || (x >= 0xe0 && x <= 0xfe && x != 0xf7) ||
          (x >= 0x430 && x <= 0x44f))
        return x - 0x20;
      if (x >= 0x3b1 && x <= 0x3c9 && x != 0x3c2) return x - 0x20;
      return x;
    };
    const bool cased = lower(c) != c || upper(c) != c;
    char32_t r = c;
    if (mode == 0) r = lower(c);
    if (mode == 1) r = upper(c);
    if (mode == 2) r = prev_cased ? lower(c) : upper(c);
    if (mode == 3) r = first ? upper(c) : lower(c);
    prev_cased = cased;
    first = false;
    text::utf8_append(out, r);
  }
  return out;
}

inline bool is_mutating(const Value& self, std::string_view name) {
  static constexpr std::string_view kList[] = {"append", "clear",  "extend",  "insert",
                                               "pop",    "remove", "reverse", "sort"};
  static constexpr std::string_view kDict[] = {"clear", "pop", "popitem", "setdefault", "update"};
  if (self.is_list() && !self.list().tuple)
    return std::find(std::begin(kList), std::end(kList), name) != std::end(kList);
  if (self.is_dict() && !self.dict().ns)
    return std::find(std::begin(kDict), std::end(kDict), name) != std::end(kDict);
  return false;
}

inline std::int64_t int_arg(const Value& v, std::string_view what) {
  if (v.is_int()) return v.integer();
  if (v.is_bool()) return v.boolean();
  fail("'" + type_name(v) + "' object cannot be interpreted as an integer (" + std::string(what) +
       ")");
}

}  // namespace detail

/// Python's str.format with positional `{}`/`{0}` and keyword `{name}` fields, no format specs
/// beyond the empty one (what templates use to build tags).
inline std::string py_format(std::string_view fmt, const Args& args) {
  std::string out;
  std::size_t auto_index = 0;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '{' && i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
    } else if (c == '}' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
      out += '}';
      ++i;
    } else if (c == '{') {
      const auto close = fmt.find('}', i);
      if (close == std::string_view::npos) fail("Single '{' encountered in format string");
      const std::string_view field = fmt.substr(i + 1, close - i - 1);
      if (field.find_first_of(":!.[") != std::string_view::npos)
        fail("format specifications in str.format are not supported");
      const Value* v = nullptr;
      if (field.empty()) {
        if (auto_index >= args.pos.size())
          fail("Replacement index " + std::to_string(auto_index) +
               " out of range for positional args tuple");
        v = &args.pos[auto_index++];
      } else if (field[0] >= '0' && field[0] <= '9') {
        const auto k = static_cast<std::size_t>(std::stoul(std::string(field)));
        if (k >= args.pos.size())
          fail("Replacement index " + std::to_string(k) +
               " out of range for positional args tuple");
        v = &args.pos[k];
      } else {
        for (const auto& [k, val] : args.kw)
          if (k == field) v = &val;
        if (!v) fail("'" + std::string(field) + "'");
      }
      append_str(out, *v);
      i = close;
    } else if (c == '}') {
      fail("Single '}' encountered in format string");
    } else {
      out += c;
    }
  }
  return out;
}

/// `self.name` bound: calling it runs the method.
struct BoundMethod final : Callable {
  Value self;
  std::string name;
  BoundMethod(Value s, std::string n)
      : Callable(&BoundMethod::run), self(std::move(s)), name(std::move(n)) {}
  static Value run(Callable& method, Runtime& rt, const Args& args) {
    return static_cast<BoundMethod&>(method).invoke(rt, args);
  }
  Value invoke(Runtime& rt, const Args& a);
};

/// Whether `self` has a method `name` that templates may call. Throws the sandbox's refusal
/// for methods that would change a list or dict.
inline bool has_method(const Value& self, std::string_view name) {
  if (detail::is_mutating(self, name))
    fail("access to attribute '" + std::string(name) + "' of '" + type_name(self) +
             "' object is unsafe.",
         template_error::Kind::runtime);
  static constexpr std::string_view kStr[] = {
      "strip",      "lstrip",  "rstrip",  "split",   "rsplit",     "startswith", "endswith",
      "replace",    "upper",   "lower",   "title",   "capitalize", "format",     "join",
      "find",       "rfind",   "count",   "isdigit", "isalpha",    "isspace",    "isalnum",
      "splitlines", "islower", "isupper", "index"};
  static constexpr std::string_view kDict[] = {"get", "items", "keys", "values"};
  static constexpr std::string_view kList[] = {"index", "count"};
  const auto in = [&](const auto& table) {
    return std::find(std::begin(table), std::end(table), name) != std::end(table);
  };
  if (self.is_string()) return in(kStr);
  if (self.is_dict() && !self.dict().ns) return in(kDict);
  if (self.is_list()) return in(kList);
  return false;
}

inline Value BoundMethod::invoke(Runtime& rt, const Args& a) {
  using namespace detail;
  const std::string fn = name;
  if (self.is_string()) {
    const std::string& s = self.str();
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      a.check(1, {"chars"}, fn);
      return Value(
          py_strip(s, a.get(0, "chars", Value(None{}), fn), name != "rstrip", name != "lstrip"));
    }
    if (name == "split" || name == "rsplit") {
      a.check(2, {"sep", "maxsplit"}, fn);
      return py_split(s, a.get(0, "sep", Value(None{}), fn),
                      int_arg(a.get(1, "maxsplit", Value(-1), fn), "maxsplit"), name == "rsplit");
    }
    if (name == "startswith" || name == "endswith") {
      a.check(1, {}, fn);
      return Value(affix_match(s, a.need(0, "prefix", fn), name == "startswith"));
    }
    if (name == "replace") {
      a.check(3, {}, fn);
      const Value from = a.need(0, "old", fn), to = a.need(1, "new", fn);
      if (!from.is_string() || !to.is_string()) fail("replace() arguments must be str");
      std::string r =
          py_replace(s, from.str(), to.str(), int_arg(a.get(2, "count", Value(-1), fn), "count"));
      rt.check_size(r.size());
      return Value(std::move(r));
    }
    if (name == "upper") return Value(py_case(s, 1));
    if (name == "lower") return Value(py_case(s, 0));
    if (name == "title") return Value(py_case(s, 2));
    if (name == "capitalize") return Value(py_case(s, 3));
    if (name == "format") {
      std::string r = py_format(s, a);
      rt.check_size(r.size());
      return Value(std::move(r));
    }
    if (name == "join") {
      a.check(1, {}, fn);
      const Value items = a.need(0, "iterable", fn);
      if (!items.is_list()) fail("can only join an iterable of strings");
      std::string r;
      bool first = true;
      for (const Value& v : items.list().items) {
        if (!v.is_string())
          fail("sequence item: expected str instance, " + type_name(v) + " found");
        if (!first) r += s;
        first = false;
        r += v.str();
        rt.check_size(r.size());
      }
      return Value(std::move(r));
    }
    if (name == "find" || name == "rfind" || name == "index" || name == "count") {
      a.check(1, {}, fn);
      const Value sub = a.need(0, "sub", fn);
      if (!sub.is_string()) fail("must be str, not " + type_name(sub));
      if (name == "count") {
        if (sub.str().empty()) return Value(code_point_count(s) + 1);
        std::int64_t n = 0;
        for (auto at = s.find(sub.str()); at != std::string::npos;
             at = s.find(sub.str(), at + sub.str().size()))
          ++n;
        return Value(n);
      }
      const auto at = name == "rfind" ? s.rfind(sub.str()) : s.find(sub.str());
      if (at == std::string::npos) {
        if (name == "index") fail("substring not found");
        return Value(-1);
      }
      return Value(code_point_count(std::string_view(s).substr(0, at)));
    }
    if (name == "splitlines") {
      std::vector<Value> lines;
      std::string_view rest = s;
      while (!rest.empty()) {
        const auto nl = rest.find_first_of("\n\r");
        if (nl == std::string_view::npos) {
          lines.emplace_back(std::string(rest));
          break;
        }
        lines.emplace_back(std::string(rest.substr(0, nl)));
        const std::size_t skip =
            rest[nl] == '\r' && nl + 1 < rest.size() && rest[nl + 1] == '\n' ? 2 : 1;
        rest.remove_prefix(nl + skip);
      }
      return make_list(std::move(lines));
    }
    // The character-class predicates, over code points (ASCII classes; other scripts count as
    // letters).
    const std::u32string cps = to_code_points(s);
    if (cps.empty() && name.rfind("is", 0) == 0) return Value(false);
    bool all = true, any_cased = false;
    for (char32_t c : cps) {
      const bool digit = c >= '0' && c <= '9';
      const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
      if (name == "isdigit") all = all && digit;
      if (name == "isalpha") all = all && alpha && !is_py_space(c);
      if (name == "isalnum") all = all && (alpha || digit) && !is_py_space(c);
      if (name == "isspace") all = all && is_py_space(c);
      if (name == "islower") {
        all = all && !(c >= 'A' && c <= 'Z');
        any_cased = any_cased || (c >= 'a' && c <= 'z');
      }
      if (name == "isupper") {
        all = all && !(c >= 'a' && c <= 'z');
        any_cased = any_cased || (c >= 'A' && c <= 'Z');
      }
    }
    if (name == "islower" || name == "isupper") return Value(all && any_cased);
    return Value(all);
  }
  if (self.is_dict()) {
    const Dict& d = self.dict();
    if (name == "get") {
      a.check(2, {}, fn);
      const Value key = a.need(0, "key", fn);
      const Value fallback = a.get(1, "default", Value(None{}), fn);
      if (!key.is_string() && !key.is_number() && !key.is_none()) return fallback;
      const Value* v = d.find(key_string(key));
      return v ? *v : fallback;
    }
    std::vector<Value> out;
    for (const auto& [k, v] : d.items) {
      if (name == "keys") out.push_back(key_value(k));
      if (name == "values") out.push_back(v);
      if (name == "items") out.push_back(make_list({key_value(k), v}, true));
    }
    return make_list(std::move(out));
  }
  if (self.is_loop() && name == "cycle") {
    if (a.pos.empty()) fail("no items for cycling given");
    return a.pos[std::get<LoopPtr>(self.v)->index0 % a.pos.size()];
  }
  if (self.is_list()) {
    const Value x = a.need(0, "value", fn);
    std::int64_t n = 0;
    for (std::size_t i = 0; i < self.list().items.size(); ++i) {
      if (equals(self.list().items[i], x)) {
        if (name == "index") return Value(static_cast<std::int64_t>(i));
        ++n;
      }
    }
    if (name == "index") fail(to_str(x) + " is not in list");
    return Value(n);
  }
  fail("'" + type_name(self) + "' object has no method '" + name + "'");
}

}  // namespace baton::jinja
