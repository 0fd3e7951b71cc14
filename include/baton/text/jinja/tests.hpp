// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief jinja2's tests (`x is defined`, `x is string`, `x is divisibleby 3`), with Python's
/// type questions answered as jinja2 answers them (a dict is a sequence, True is a number but
/// not an integer, a string is iterable).
#pragma once

#include <algorithm>
#include <string_view>

#include "baton/text/jinja/call.hpp"
#include "baton/text/jinja/ops.hpp"

namespace baton::jinja {

/// Every test name jinja2 knows; a template naming another is refused before rendering.
inline bool is_known_test(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "boolean", "callable", "defined",  "divisibleby", "eq",    "equalto",  "escaped",
      "even",    "false",    "filter",   "float",       "ge",    "gt",       "greaterthan",
      "in",      "integer",  "iterable", "le",          "lower", "lessthan", "lt",
      "mapping", "ne",       "none",     "number",      "odd",   "sameas",   "sequence",
      "string",  "test",     "true",     "undefined",   "upper", "==",       "!=",
      "<",       "<=",       ">",        ">="};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

/// Runs test `name` on `x`.
inline bool run_test(std::string_view name, const Value& x, const Args& a) {
  const auto arg = [&](std::string_view what) { return a.need(0, what, name); };
  if (name == "defined") return !x.is_undefined();
  if (name == "undefined") return x.is_undefined();
  if (name == "none") return x.is_none();
  if (name == "boolean") return x.is_bool();
  if (name == "true") return x.is_bool() && x.boolean();
  if (name == "false") return x.is_bool() && !x.boolean();
  if (name == "string") return x.is_string();
  if (name == "mapping") return x.is_dict() && !x.dict().ns;
  if (name == "number") return x.is_number();
  if (name == "integer") return x.is_int();
  if (name == "float") return x.is_float();
  if (name == "callable") return x.is_callable() || x.is_loop();
  if (name == "iterable")
    return x.is_string() || x.is_list() || x.is_undefined() || (x.is_dict() && !x.dict().ns);
  if (name == "sequence")
    return x.is_string() || (x.is_list() && !x.list().generator) || x.is_undefined() ||
           (x.is_dict() && !x.dict().ns);
  if (name == "escaped") return false;
  if (name == "lower" || name == "upper") {
    // str(x).islower() / .isupper(): at least one cased letter, none of the other case.
    bool any = false, ok = true;
    for (char c : to_str(x)) {
      const bool lo = c >= 'a' && c <= 'z', up = c >= 'A' && c <= 'Z';
      any = any || (name == "lower" ? lo : up);
      ok = ok && !(name == "lower" ? up : lo);
    }
    return any && ok;
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (!x.is_int() && !x.is_bool())
      fail("unsupported operand type(s) for %: '" + type_name(x) + "'");
    const std::int64_t v = x.is_int() ? x.integer() : x.boolean();
    if (name == "odd") return v % 2 != 0;
    if (name == "even") return v % 2 == 0;
    const Value d = arg("num");
    if (!d.is_int() || d.integer() == 0) fail("divisibleby needs a non-zero integer");
    return v % d.integer() == 0;
  }
  if (name == "eq" || name == "equalto" || name == "==") return equals(x, arg("other"));
  if (name == "ne" || name == "!=") return !equals(x, arg("other"));
  if (name == "lt" || name == "lessthan" || name == "<") return compare(x, arg("other"), "<");
  if (name == "le" || name == "<=") return compare(x, arg("other"), "<=");
  if (name == "gt" || name == "greaterthan" || name == ">") return compare(x, arg("other"), ">");
  if (name == "ge" || name == ">=") return compare(x, arg("other"), ">=");
  if (name == "in") return contains(arg("seq"), x);
  if (name == "sameas") {
    const Value o = arg("other");
    // Python's `is`: the singletons compare by value; other objects are rarely the same one.
    if (x.is_none() || x.is_bool() || o.is_none() || o.is_bool())
      return x.v.index() == o.v.index() && equals(x, o);
    if (x.is_list() && o.is_list()) return std::get<ListPtr>(x.v) == std::get<ListPtr>(o.v);
    if (x.is_dict() && o.is_dict()) return std::get<DictPtr>(x.v) == std::get<DictPtr>(o.v);
    return false;
  }
  fail("the test '" + std::string(name) + "' is not supported by baton");
}

}  // namespace baton::jinja
