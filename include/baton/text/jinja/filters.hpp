// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief jinja2's filters as chat templates use them (`|trim`, `|tojson`, `|selectattr`,
/// `|map`, `|dictsort`, ...), each the Python function's behaviour, `tojson` transformers'.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "baton/text/jinja/call.hpp"
#include "baton/text/jinja/json.hpp"
#include "baton/text/jinja/ops.hpp"
#include "baton/text/jinja/tests.hpp"

namespace baton::jinja {

/// Every filter name jinja2 knows; a template naming another is refused before rendering.
/// The few without an implementation here fail when they run, saying so.
inline bool is_known_filter(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "abs",    "attr",       "batch",       "capitalize", "center",   "count",
      "d",      "default",    "dictsort",    "e",          "escape",   "filesizeformat",
      "first",  "float",      "forceescape", "format",     "groupby",  "indent",
      "int",    "items",      "join",        "last",       "length",   "list",
      "lower",  "map",        "max",         "min",        "pprint",   "random",
      "reject", "rejectattr", "replace",     "reverse",    "round",    "safe",
      "select", "selectattr", "slice",       "sort",       "string",   "striptags",
      "sum",    "title",      "tojson",      "trim",       "truncate", "unique",
      "upper",  "urlencode",  "urlize",      "wordcount",  "wordwrap", "xmlattr"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

namespace detail {

/// jinja2's make_attrgetter: "a.b.0" walks items (getitem), numbers as indices.
inline Value attr_path(const Value& x, const std::string& path) {
  Value cur = x;
  std::size_t start = 0;
  for (;;) {
    const auto dot = path.find('.', start);
    const std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; });
    cur = get_item(cur, digits ? Value(static_cast<std::int64_t>(std::stoll(part))) : Value(part));
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

/// The key a case-insensitive sort or comparison uses: lower-cased strings.
inline Value fold(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(py_case(v.str(), 0));
  return v;
}

inline std::vector<Value> sorted(std::vector<Value> items, bool reverse, bool case_sensitive,
                                 const std::string* attribute) {
  const auto key = [&](const Value& v) {
    return fold(attribute ? attr_path(v, *attribute) : v, case_sensitive);
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    return reverse ? compare_order(key(b), key(a), "<") < 0
                   : compare_order(key(a), key(b), "<") < 0;
  });
  return items;
}

/// select/reject/selectattr/rejectattr: keep the items whose test (or truth) equals `keep`.
inline Value select(Runtime& rt, const Value& seq, const Args& a, bool keep, bool by_attr,
                    std::string_view fn) {
  std::size_t next = 0;
  std::string attribute;
  if (by_attr) {
    const Value at = a.need(0, "attribute", fn);
    attribute = to_str(at);
    next = 1;
  }
  std::string test;
  Args targs;
  if (a.pos.size() > next) {
    test = to_str(a.pos[next]);
    targs.pos.assign(a.pos.begin() + static_cast<std::ptrdiff_t>(next) + 1, a.pos.end());
    targs.kw = a.kw;
  }
  std::vector<Value> out;
  // jinja2 walks the sequence only when it is true: `none | selectattr(...)` is empty.
  const std::vector<Value> items = truthy(seq) ? iterate(seq) : std::vector<Value>{};
  rt.charge(items.size());
  for (const Value& v : items) {
    const Value subject = by_attr ? attr_path(v, attribute) : v;
    const bool ok = test.empty() ? truthy(subject) : rt.test(test, subject, targs);
    if (ok == keep) out.push_back(v);
  }
  return make_generator(std::move(out));
}

inline Value to_int(const Value& x, const Value& fallback) {
  if (x.is_int()) return x;
  if (x.is_bool()) return Value(static_cast<std::int64_t>(x.boolean()));
  if (x.is_float()) {
    if (!std::isfinite(x.real())) return fallback;
    return Value(static_cast<std::int64_t>(std::trunc(x.real())));
  }
  if (x.is_string()) {
    std::string s = py_strip(x.str(), Value(None{}), true, true);
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    std::int64_t i = 0;
    const char* b = s.data() + (!s.empty() && s[0] == '+');
    auto r = std::from_chars(b, s.data() + s.size(), i);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty()) return Value(i);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d))
      return Value(static_cast<std::int64_t>(std::trunc(d)));
  }
  return fallback;
}

inline Value to_float(const Value& x, const Value& fallback) {
  if (x.is_float()) return x;
  if (x.is_int()) return Value(static_cast<double>(x.integer()));
  if (x.is_bool()) return Value(x.boolean() ? 1.0 : 0.0);
  if (x.is_string()) {
    const std::string s = py_strip(x.str(), Value(None{}), true, true);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return Value(d);
  }
  return fallback;
}

/// jinja2's do_indent.
inline std::string indent(std::string s, const Value& width, bool first, bool blank) {
  const std::string pad =
      width.is_string()
          ? width.str()
          : std::string(
                static_cast<std::size_t>(std::max<std::int64_t>(0, int_arg(width, "width"))), ' ');
  s += '\n';  // jinja2 appends one so that splitlines keeps a trailing empty line
  std::vector<std::string> lines;
  {
    std::string_view rest = s;
    while (!rest.empty()) {
      const auto nl = rest.find_first_of("\n\r");
      if (nl == std::string_view::npos) {
        lines.emplace_back(rest);
        break;
      }
      lines.emplace_back(rest.substr(0, nl));
      rest.remove_prefix(
          nl + (rest[nl] == '\r' && nl + 1 < rest.size() && rest[nl + 1] == '\n' ? 2 : 1));
    }
  }
  std::string rv;
  if (blank) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i) rv += "\n" + pad;
      rv += lines[i];
    }
  } else {
    rv = lines.empty() ? "" : lines[0];
    if (lines.size() > 1) {
      rv += "\n";
      for (std::size_t i = 1; i < lines.size(); ++i) {
        if (i > 1) rv += "\n";
        if (!lines[i].empty()) rv += pad;
        rv += lines[i];
      }
    }
  }
  if (first) rv = pad + rv;
  return rv;
}

}  // namespace detail

/// Applies filter `name` to `x`.
inline Value run_filter(Runtime& rt, std::string_view name, const Value& x, const Args& a) {
  using namespace detail;
  if (name == "default" || name == "d") {
    const Value fallback = a.get(0, "default_value", Value(std::string()), name);
    const bool boolean = truthy(a.get(1, "boolean", Value(false), name));
    return x.is_undefined() || (boolean && !truthy(x)) ? fallback : x;
  }
  if (name == "length" || name == "count") return Value(length(x));
  if (name == "string") return Value(to_str(x));
  if (name == "safe") {
    Value r(to_str(x));
    r.markup = true;
    return r;
  }
  if (name == "trim")
    return Value(py_strip(to_str(x), a.get(0, "chars", Value(None{}), name), true, true));
  if (name == "upper") return Value(py_case(to_str(x), 1));
  if (name == "lower") return Value(py_case(to_str(x), 0));
  if (name == "capitalize") return Value(py_case(to_str(x), 3));
  if (name == "title") return Value(py_case(to_str(x), 2));
  if (name == "tojson") {
    a.check(4, {"ensure_ascii", "indent", "separators", "sort_keys"}, name);
    const Value ensure_ascii = a.get(0, "ensure_ascii", Value(false), name);
    const Value ind = a.get(1, "indent", Value(None{}), name);
    const Value seps = a.get(2, "separators", Value(None{}), name);
    JsonStyle st;
    st.sort_keys = truthy(a.get(3, "sort_keys", Value(false), name));
    st.ensure_ascii = truthy(ensure_ascii);
    if (!ind.is_none()) {
      st.pretty = true;
      st.item_sep = ",";
      st.indent = ind.is_string() ? ind.str()
                                  : std::string(static_cast<std::size_t>(std::max<std::int64_t>(
                                                    0, int_arg(ind, "indent"))),
                                                ' ');
    }
    if (!seps.is_none()) {
      if (!seps.is_list() || seps.list().items.size() != 2 || !seps.list().items[0].is_string() ||
          !seps.list().items[1].is_string())
        fail("tojson: separators must be a pair of strings");
      st.item_sep = seps.list().items[0].str();
      st.key_sep = seps.list().items[1].str();
    }
    std::string out = to_json(x, st);
    rt.check_size(out.size());
    return Value(std::move(out));
  }
  if (name == "join") {
    const Value sep = a.get(0, "d", Value(std::string()), name);
    const Value attribute = a.get(1, "attribute", Value(None{}), name);
    std::string out;
    bool first = true;
    const std::vector<Value> items = iterate(x);
    rt.charge(items.size());
    for (const Value& v : items) {
      if (!first) out += to_str(sep);
      first = false;
      append_str(out, attribute.is_none() ? v : attr_path(v, to_str(attribute)));
      rt.check_size(out.size());
    }
    return Value(std::move(out));
  }
  if (name == "items") {
    if (x.is_undefined()) return make_list({});
    if (!x.is_dict() || x.dict().ns) fail("Can only get item pairs from a mapping.");
    std::vector<Value> out;
    for (const auto& [k, v] : x.dict().items) out.push_back(make_list({key_value(k), v}, true));
    return make_generator(std::move(out));
  }
  if (name == "dictsort") {
    if (!x.is_dict() || x.dict().ns) fail("dictsort needs a mapping");
    const bool cs = truthy(a.get(0, "case_sensitive", Value(false), name));
    const std::string by = to_str(a.get(1, "by", Value("key"), name));
    const bool rev = truthy(a.get(2, "reverse", Value(false), name));
    std::vector<Value> pairs;
    for (const auto& [k, v] : x.dict().items) pairs.push_back(make_list({key_value(k), v}, true));
    const std::size_t pos = by == "value" ? 1 : 0;
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& p, const Value& q) {
      const Value kp = fold(p.list().items[pos], cs), kq = fold(q.list().items[pos], cs);
      return rev ? compare_order(kq, kp, "<") < 0 : compare_order(kp, kq, "<") < 0;
    });
    return make_list(std::move(pairs));
  }
  if (name == "list") return make_list(iterate(x));
  if (name == "first" || name == "last") {
    const std::vector<Value> items = iterate(x);
    if (items.empty())
      return Value(Undefined{"No " + std::string(name) + " item, sequence was empty."});
    return name == "first" ? items.front() : items.back();
  }
  if (name == "reverse") {
    if (x.is_string()) {
      std::u32string cps = to_code_points(x.str());
      std::reverse(cps.begin(), cps.end());
      return Value(to_utf8(cps));
    }
    std::vector<Value> items = iterate(x);
    std::reverse(items.begin(), items.end());
    return make_generator(std::move(items));  // Python's reversed(): an iterator
  }
  if (name == "replace") {
    const Value from = a.need(0, "old", name), to = a.need(1, "new", name);
    const Value count = a.get(2, "count", Value(None{}), name);
    std::string r = py_replace(to_str(x), to_str(from), to_str(to),
                               count.is_none() ? -1 : int_arg(count, "count"));
    rt.check_size(r.size());
    return Value(std::move(r));
  }
  if (name == "select" || name == "reject") return select(rt, x, a, name == "select", false, name);
  if (name == "selectattr" || name == "rejectattr")
    return select(rt, x, a, name == "selectattr", true, name);
  if (name == "map") {
    const std::vector<Value> items = truthy(x) ? iterate(x) : std::vector<Value>{};
    rt.charge(items.size());
    std::vector<Value> out;
    const Value attribute = a.get(99, "attribute", Value(None{}), name);
    if (!attribute.is_none() || a.pos.empty()) {
      const Value fallback = a.get(99, "default", Value(Undefined{}), name);
      for (const Value& v : items) {
        Value r = attr_path(v, to_str(attribute));
        out.push_back(r.is_undefined() && !fallback.is_undefined() ? fallback : r);
      }
    } else {
      const std::string f = to_str(a.pos[0]);
      if (!is_known_filter(f)) fail("No filter named '" + f + "'.");
      Args fargs;
      fargs.pos.assign(a.pos.begin() + 1, a.pos.end());
      fargs.kw = a.kw;
      for (const Value& v : items) out.push_back(rt.filter(f, v, fargs));
    }
    return make_generator(std::move(out));
  }
  if (name == "unique") {
    const bool cs = truthy(a.get(0, "case_sensitive", Value(false), name));
    const Value attribute = a.get(1, "attribute", Value(None{}), name);
    std::vector<Value> out, seen;
    for (const Value& v : iterate(x)) {
      const Value k = fold(attribute.is_none() ? v : attr_path(v, to_str(attribute)), cs);
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, k); })) {
        seen.push_back(k);
        out.push_back(v);
      }
    }
    return make_generator(std::move(out));
  }
  if (name == "sort") {
    const bool rev = truthy(a.get(0, "reverse", Value(false), name));
    const bool cs = truthy(a.get(1, "case_sensitive", Value(false), name));
    const Value attribute = a.get(2, "attribute", Value(None{}), name);
    const std::string at = to_str(attribute);
    return make_list(sorted(iterate(x), rev, cs, attribute.is_none() ? nullptr : &at));
  }
  if (name == "min" || name == "max") {
    const bool cs = truthy(a.get(0, "case_sensitive", Value(false), name));
    const Value attribute = a.get(1, "attribute", Value(None{}), name);
    const std::string at = to_str(attribute);
    const auto items = sorted(iterate(x), name == "max", cs, attribute.is_none() ? nullptr : &at);
    if (items.empty()) return Value(Undefined{"No aggregated item, sequence was empty."});
    return items.front();
  }
  if (name == "sum") {
    const Value attribute = a.get(0, "attribute", Value(None{}), name);
    Value total = a.get(1, "start", Value(0), name);
    for (const Value& v : iterate(x))
      total = binary_op("+", total, attribute.is_none() ? v : attr_path(v, to_str(attribute)), rt);
    return total;
  }
  if (name == "int") return to_int(x, a.get(0, "default", Value(0), name));
  if (name == "float") return to_float(x, a.get(0, "default", Value(0.0), name));
  if (name == "abs") {
    if (x.is_int()) return Value(x.integer() < 0 ? -x.integer() : x.integer());
    if (x.is_float()) return Value(std::fabs(x.real()));
    if (x.is_bool()) return Value(static_cast<std::int64_t>(x.boolean()));
    fail("bad operand type for abs(): '" + type_name(x) + "'");
  }
  if (name == "indent") {
    std::string r = indent(to_str(x), a.get(0, "width", Value(4), name),
                           truthy(a.get(1, "first", Value(false), name)),
                           truthy(a.get(2, "blank", Value(false), name)));
    rt.check_size(r.size());
    return Value(std::move(r));
  }
  if (name == "attr") {
    const Value at = a.need(0, "name", name);
    if (x.is_dict() && !x.dict().ns && !has_method(x, to_str(at)))
      return no_attribute(x, to_str(at));
    return get_attr(x, to_str(at));
  }
  if (name == "wordcount") {
    return Value(length(py_split(to_str(x), Value(None{}), -1, false)));
  }
  if (name == "e" || name == "escape" || name == "forceescape") {
    Value r(x.markup && name != "forceescape" ? to_str(x) : html_escape(to_str(x)));
    r.markup = true;
    return r;
  }
  fail("the filter '" + std::string(name) + "' is not supported by baton");
}

}  // namespace baton::jinja
