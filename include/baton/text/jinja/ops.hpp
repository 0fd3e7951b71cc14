// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Operators, attribute and item access, slicing and iteration with Python's meaning and
/// jinja2's sandbox rules: `.x` tries the attribute then the item, `[x]` the item then the
/// attribute, and what neither finds is Undefined (not an error until it is used).
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "baton/text/jinja/call.hpp"
#include "baton/text/jinja/methods.hpp"
#include "baton/text/jinja/value.hpp"

namespace baton::jinja {

/// Raises jinja2's UndefinedError for an operation on an undefined value.
[[noreturn]] inline void undefined_error(const Value& u) {
  fail(std::get<Undefined>(u.v).hint.empty() ? "undefined value" : std::get<Undefined>(u.v).hint);
}

/// How jinja2 names an object in "... has no attribute" messages.
inline std::string object_name(const Value& x) {
  if (x.is_none()) return "None";
  return type_name(x) + " object";
}

inline Value no_attribute(const Value& obj, std::string_view name) {
  return Value(
      Undefined{"'" + object_name(obj) + "' has no attribute '" + std::string(name) + "'"});
}

/// The loop object's attributes.
inline Value loop_attr(const LoopInfo& l, std::string_view name) {
  const auto n = static_cast<std::int64_t>(l.items->size());
  const auto i = static_cast<std::int64_t>(l.index0);
  if (name == "index") return Value(i + 1);
  if (name == "index0") return Value(i);
  if (name == "revindex") return Value(n - i);
  if (name == "revindex0") return Value(n - i - 1);
  if (name == "first") return Value(i == 0);
  if (name == "last") return Value(i == n - 1);
  if (name == "length") return Value(n);
  if (name == "depth") return Value(l.depth0 + 1);
  if (name == "depth0") return Value(l.depth0);
  if (name == "previtem")
    return i > 0 ? (*l.items)[l.index0 - 1] : Value(Undefined{"there is no previous item"});
  if (name == "nextitem")
    return i + 1 < n ? (*l.items)[l.index0 + 1] : Value(Undefined{"there is no next item"});
  return Value(Undefined{"'LoopContext object' has no attribute '" + std::string(name) + "'"});
}

/// `obj.name`.
inline Value get_attr(const Value& obj, std::string_view name) {
  if (obj.is_undefined()) undefined_error(obj);
  if (obj.is_loop()) {
    if (name == "cycle") return Value(CallablePtr(std::make_shared<BoundMethod>(obj, "cycle")));
    return loop_attr(*std::get<LoopPtr>(obj.v), name);
  }
  if (has_method(obj, name))
    return Value(CallablePtr(std::make_shared<BoundMethod>(obj, std::string(name))));
  if (obj.is_dict()) {
    if (const Value* v = obj.dict().find(name)) return *v;
  }
  return no_attribute(obj, name);
}

/// Python's index normalisation: negative counts from the end; nullopt when out of range.
inline bool normalize_index(std::int64_t& i, std::size_t n) {
  if (i < 0) i += static_cast<std::int64_t>(n);
  return i >= 0 && i < static_cast<std::int64_t>(n);
}

/// `obj[key]`.
inline Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) undefined_error(obj);
  if (obj.is_dict() && !obj.dict().ns) {
    if (key.is_string()) {
      if (const Value* v = obj.dict().find(key.str())) return *v;
      if (has_method(obj, key.str())) return get_attr(obj, key.str());
      return no_attribute(obj, key.str());
    }
    if (key.is_number() || key.is_none())
      if (const Value* v = obj.dict().find(key_string(key))) return *v;
    return Value(Undefined{"'dict object' has no attribute " + to_str(key)});
  }
  if (obj.is_list() && obj.list().generator)  // not subscriptable: jinja2 gives Undefined
    return Value(Undefined{"'generator object' has no attribute " + to_str(key)});
  if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    std::int64_t i = key.is_int() ? key.integer() : key.boolean();
    if (obj.is_list()) {
      const auto& items = obj.list().items;
      if (!normalize_index(i, items.size()))
        return Value(Undefined{"'" + object_name(obj) + "' has no element " + to_str(key)});
      return items[static_cast<std::size_t>(i)];
    }
    const std::u32string cps = to_code_points(obj.str());
    if (!normalize_index(i, cps.size()))
      return Value(Undefined{"'str object' has no element " + to_str(key)});
    return Value(to_utf8(std::u32string_view(&cps[static_cast<std::size_t>(i)], 1)));
  }
  if (key.is_string()) return get_attr(obj, key.str());
  return Value(Undefined{"'" + object_name(obj) + "' has no element " + to_str(key)});
}

/// `obj[start:stop:step]` on a list or string.
inline Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  if (obj.is_undefined()) undefined_error(obj);
  const auto part = [](const Value& v, std::int64_t fallback) -> std::int64_t {
    if (v.is_none() || v.is_undefined()) return fallback;
    if (v.is_int()) return v.integer();
    if (v.is_bool()) return v.boolean();
    fail("slice indices must be integers or None");
  };
  const std::int64_t st = part(step, 1);
  if (st == 0) fail("slice step cannot be zero");
  const bool is_str = obj.is_string();
  if (obj.is_list() && obj.list().generator)
    return Value(Undefined{"'generator object' has no attribute slice"});
  if (!is_str && !obj.is_list()) fail("'" + type_name(obj) + "' object is not subscriptable");
  std::u32string cps;
  if (is_str) cps = to_code_points(obj.str());
  const auto n = static_cast<std::int64_t>(is_str ? cps.size() : obj.list().items.size());
  // Python's PySlice_AdjustIndices.
  const auto adjust = [&](const Value& v, bool is_start) {
    std::int64_t d = st > 0 ? (is_start ? 0 : n) : (is_start ? n - 1 : -1);
    if (v.is_none() || v.is_undefined()) return d;
    std::int64_t i = part(v, 0);
    if (i < 0) {
      i += n;
      if (i < 0) i = st < 0 ? -1 : 0;
    } else if (i >= n) {
      i = st < 0 ? n - 1 : n;
    }
    return i;
  };
  const std::int64_t b = adjust(start, true), e = adjust(stop, false);
  std::vector<std::int64_t> picks;
  if (st > 0)
    for (std::int64_t i = b; i < e; i += st) picks.push_back(i);
  else
    for (std::int64_t i = b; i > e; i += st) picks.push_back(i);
  if (is_str) {
    std::u32string out;
    for (auto i : picks) out.push_back(cps[static_cast<std::size_t>(i)]);
    return Value(to_utf8(out));
  }
  std::vector<Value> out;
  for (auto i : picks) out.push_back(obj.list().items[static_cast<std::size_t>(i)]);
  return make_list(std::move(out), obj.list().tuple);
}

/// The items a for loop (or a filter) walks: list items, dict keys, string characters;
/// Undefined walks as empty, as jinja2's Undefined iterates.
inline std::vector<Value> iterate(const Value& x) {
  if (x.is_list()) return x.list().items;
  if (x.is_undefined()) return {};
  if (x.is_dict() && !x.dict().ns) {
    std::vector<Value> keys;
    for (const auto& [k, v] : x.dict().items) keys.push_back(key_value(k));
    return keys;
  }
  if (x.is_string()) {
    std::vector<Value> chars;
    for (char32_t c : to_code_points(x.str()))
      chars.emplace_back(to_utf8(std::u32string_view(&c, 1)));
    return chars;
  }
  fail("'" + type_name(x) + "' object is not iterable");
}

/// Python's len().
inline std::int64_t length(const Value& x) {
  if (x.is_string()) return code_point_count(x.str());
  if (x.is_list() && !x.list().generator) return static_cast<std::int64_t>(x.list().items.size());
  if (x.is_dict() && !x.dict().ns) return static_cast<std::int64_t>(x.dict().items.size());
  if (x.is_undefined()) return 0;
  fail("object of type '" + type_name(x) + "' has no len()");
}

/// `item in container`.
inline bool contains(const Value& container, const Value& item) {
  if (container.is_undefined()) return false;
  if (container.is_string()) {
    if (item.is_undefined()) undefined_error(item);
    if (!item.is_string())
      fail("'in <string>' requires string as left operand, not " + type_name(item));
    return container.str().find(item.str()) != std::string::npos;
  }
  if (container.is_list()) {
    for (const Value& v : container.list().items)
      if (equals(v, item)) return true;
    return false;
  }
  if (container.is_dict() && !container.dict().ns)
    return (item.is_string() || item.is_number() || item.is_none()) &&
           container.dict().find(key_string(item)) != nullptr;
  fail("argument of type '" + type_name(container) + "' is not iterable");
}

/// Python's ordering for <, <=, >, >= (numbers, strings, lists); -1, 0 or 1.
inline int compare_order(const Value& a, const Value& b, std::string_view op) {
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  double da = 0, db = 0;
  std::int64_t ia = 0, ib = 0;
  bool ai = false, bi = false;
  if (as_number(a, da, ia, ai) && as_number(b, db, ib, bi)) {
    if (ai && bi) return ia < ib ? -1 : ia > ib ? 1 : 0;
    return da < db ? -1 : da > db ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    // UTF-8 byte order is code point order.
    const int c = a.str().compare(b.str());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_list() && b.is_list() && a.list().tuple == b.list().tuple) {
    const auto &la = a.list().items, &lb = b.list().items;
    for (std::size_t i = 0; i < la.size() && i < lb.size(); ++i) {
      if (equals(la[i], lb[i])) continue;
      return compare_order(la[i], lb[i], op);
    }
    return la.size() < lb.size() ? -1 : la.size() > lb.size() ? 1 : 0;
  }
  fail("'" + std::string(op) + "' not supported between instances of '" + type_name(a) + "' and '" +
       type_name(b) + "'");
}

inline bool compare(const Value& a, const Value& b, std::string_view op) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return contains(b, a);
  if (op == "notin") return !contains(b, a);
  const int c = compare_order(a, b, op);
  if (op == "<") return c < 0;
  if (op == "<=") return c <= 0;
  if (op == ">") return c > 0;
  return c >= 0;
}

namespace detail {
/// Python integers do not overflow; baton's are 64-bit and say so rather than wrap.
inline std::int64_t checked_op(char op, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  const bool overflow = op == '+'   ? __builtin_add_overflow(a, b, &r)
                        : op == '-' ? __builtin_sub_overflow(a, b, &r)
                                    : __builtin_mul_overflow(a, b, &r);
  if (overflow) fail("integer overflow (baton's template integers are 64-bit)");
  return r;
}
inline double py_floor_mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}
}  // namespace detail

/// `a op b` for + - * / // % ** and ~. `rt` bounds the size of strings and lists made.
inline Value binary_op(std::string_view op, const Value& a, const Value& b, Runtime& rt) {
  if (op == "~") {
    std::string s = to_str(a);
    s += to_str(b);
    rt.check_size(s.size());
    return Value(std::move(s));
  }
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  double da = 0, db = 0;
  std::int64_t ia = 0, ib = 0;
  bool ai = false, bi = false;
  const bool na = as_number(a, da, ia, ai), nb = as_number(b, db, ib, bi);
  if (na && nb) {
    const bool ints = ai && bi;
    if (op == "+") return ints ? Value(detail::checked_op('+', ia, ib)) : Value(da + db);
    if (op == "-") return ints ? Value(detail::checked_op('-', ia, ib)) : Value(da - db);
    if (op == "*") return ints ? Value(detail::checked_op('*', ia, ib)) : Value(da * db);
    if (op == "/") {
      if (db == 0) fail("division by zero");
      return Value(da / db);
    }
    if (op == "//" || op == "%") {
      if (ints) {
        if (ib == 0)
          fail(op == "%" ? "integer modulo by zero" : "integer division or modulo by zero");
        std::int64_t q = ia / ib, m = ia % ib;
        if (m != 0 && ((m < 0) != (ib < 0))) {
          --q;
          m += ib;
        }
        return Value(op == "//" ? q : m);
      }
      if (db == 0) fail("float modulo");
      return op == "//" ? Value(std::floor(da / db)) : Value(detail::py_floor_mod(da, db));
    }
    if (op == "**") {
      if (ints && ib >= 0) {
        std::int64_t acc = 1;
        for (std::int64_t k = 0; k < ib; ++k) {
          acc = detail::checked_op('*', acc, ia);
          if (acc == 0 || acc == 1) break;
        }
        return Value(acc);
      }
      return Value(std::pow(da, db));
    }
  }
  if (op == "+" && a.is_string() && b.is_string()) {
    rt.check_size(a.str().size() + b.str().size());
    if (a.markup == b.markup) {
      Value r(a.str() + b.str());
      r.markup = a.markup;
      return r;
    }
    // Markup + str escapes the str (markupsafe), whichever side the Markup is on.
    Value r(a.markup ? a.str() + html_escape(b.str()) : html_escape(a.str()) + b.str());
    r.markup = true;
    return r;
  }
  if (op == "+" && a.is_list() && b.is_list() && a.list().tuple == b.list().tuple) {
    std::vector<Value> items = a.list().items;
    items.insert(items.end(), b.list().items.begin(), b.list().items.end());
    return make_list(std::move(items), a.list().tuple);
  }
  if (op == "*" && (((a.is_string() || a.is_list()) && (b.is_int() || b.is_bool())) ||
                    ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool())))) {
    const Value& seq = a.is_string() || a.is_list() ? a : b;
    const Value& times = &seq == &a ? b : a;
    const std::int64_t n =
        std::max<std::int64_t>(0, times.is_int() ? times.integer() : times.boolean());
    const std::size_t len = seq.is_string() ? seq.str().size() : seq.list().items.size();
    // Nothing repeated is nothing, at once: `'' * 7527542537` must not loop that many times.
    if (len == 0 || n == 0)
      return seq.is_string() ? Value(std::string()) : make_list({}, seq.list().tuple);
    // The size saturates: a count whose product would wrap is over every limit anyway.
    constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
    const std::size_t total =
        static_cast<std::uint64_t>(n) > kMax / len ? kMax : len * static_cast<std::size_t>(n);
    if (seq.is_string()) {
      rt.check_size(total);
      std::string s;
      for (std::int64_t k = 0; k < n; ++k) s += seq.str();
      return Value(std::move(s));
    }
    rt.charge(total);
    std::vector<Value> items;
    for (std::int64_t k = 0; k < n; ++k)
      items.insert(items.end(), seq.list().items.begin(), seq.list().items.end());
    return make_list(std::move(items), seq.list().tuple);
  }
  if (op == "%" && a.is_string())
    fail("printf-style '%' string formatting is not supported by baton");
  fail("unsupported operand type(s) for " + std::string(op) + ": '" + type_name(a) + "' and '" +
       type_name(b) + "'");
}

}  // namespace baton::jinja
