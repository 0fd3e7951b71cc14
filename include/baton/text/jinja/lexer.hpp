// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Template source to tokens, with jinja2's whitespace rules as transformers sets them
/// (trim_blocks, lstrip_blocks, `-`/`+` markers, one trailing newline of the source dropped).
/// Chat templates are mostly whitespace control; a byte off here is a different prompt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "baton/text/jinja/error.hpp"
#include "baton/text/jinja/value.hpp"

namespace baton::jinja {

enum class Tok : std::uint8_t {
  data,         ///< literal text between tags
  var_begin,    ///< {{
  var_end,      ///< }}
  block_begin,  ///< {%
  block_end,    ///< %}
  name,
  string,
  integer,
  real,
  op,  ///< an operator or punctuation: text holds it
  eof,
};

struct Token {
  Tok type;
  std::string text;  ///< data, name, decoded string literal, operator
  std::int64_t integer = 0;
  double real = 0;
  int line = 1;
};

namespace detail {

inline bool ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/// Python's str.rstrip(): drops trailing whitespace code points.
inline std::string_view py_rstrip(std::string_view s) {
  while (!s.empty()) {
    std::size_t start = s.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) --start;
    const std::size_t len = s.size() - start;
    const char32_t c =
        len == 1 ? static_cast<unsigned char>(s[start]) : text::utf8_decode_at(s, start, len);
    if (!is_py_space(c)) break;
    s.remove_suffix(len);
  }
  return s;
}

/// Whether `s` is non-empty and all whitespace (Python's `\s+` fullmatch).
inline bool all_space(std::string_view s) {
  if (s.empty()) return false;
  return py_rstrip(s).empty();
}

/// jinja2 reads \r\n and \r as \n, in data and in string literals alike.
inline std::string normalize_newlines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// A string literal's body decoded as Python's "unicode-escape" codec does (what jinja2 runs
/// literals through): \n \t \\ \' \" \xNN \uNNNN \UNNNNNNNN and octal; unknown escapes stay.
inline std::string unescape(std::string_view s, const std::string& name, int line) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    switch (c) {
      case '\n':
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x':
      case 'u':
      case 'U': {
        const std::size_t n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        char32_t cp = 0;
        for (std::size_t k = 0; k < n; ++k) {
          const int d = i + 1 + k < s.size() ? hex_digit(s[i + 1 + k]) : -1;
          if (d < 0)
            throw template_error(template_error::Kind::syntax, name,
                                 "line " + std::to_string(line) + ": truncated \\" +
                                     std::string(1, c) + " escape in a string literal");
          cp = cp * 16 + static_cast<char32_t>(d);
        }
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
          throw template_error(template_error::Kind::syntax, name,
                               "line " + std::to_string(line) +
                                   ": a string literal escapes a code point UTF-8 cannot hold");
        text::utf8_append(out, cp);
        i += n;
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          char32_t cp = 0;
          std::size_t k = 0;
          for (; k < 3 && i + k < s.size() && s[i + k] >= '0' && s[i + k] <= '7'; ++k)
            cp = cp * 8 + static_cast<char32_t>(s[i + k] - '0');
          text::utf8_append(out, cp);
          i += k - 1;
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

}  // namespace detail

/// Splits `source` into tokens. `name` labels syntax errors.
inline std::vector<Token> tokenize(std::string_view raw_source, const std::string& name) {
  using detail::ascii_space;
  std::string src = detail::normalize_newlines(raw_source);
  if (!src.empty() && src.back() == '\n') src.pop_back();  // keep_trailing_newline=False
  const std::string_view s = src;
  std::vector<Token> out;
  int line = 1;
  const auto fail = [&](const std::string& msg) {
    throw template_error(template_error::Kind::syntax, name,
                         "line " + std::to_string(line) + ": " + msg);
  };
  const auto count_lines = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to; ++k) line += s[k] == '\n';
  };
  bool line_starting = true;
  std::size_t pos = 0;
  while (pos < s.size()) {
    // Root state: text up to the next {{, {% or {#.
    std::size_t open = pos;
    for (; open + 1 < s.size(); ++open)
      if (s[open] == '{' && (s[open + 1] == '{' || s[open + 1] == '%' || s[open + 1] == '#')) break;
    if (open + 1 >= s.size()) {
      out.push_back({Tok::data, std::string(s.substr(pos)), 0, 0, line});
      break;
    }
    const char kind = s[open + 1];
    std::string_view text = s.substr(pos, open - pos);
    std::size_t after = open + 2;
    char sign = 0;
    if (after < s.size() && (s[after] == '-' || s[after] == '+')) sign = s[after++];
    if (sign == '-') {
      text = detail::py_rstrip(text);
    } else if (sign != '+' && kind != '{') {
      // lstrip_blocks: a block or comment tag alone on its line takes the indentation with it.
      const auto nl = text.rfind('\n');
      const std::size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting) && detail::all_space(text.substr(l_pos)))
        text = text.substr(0, l_pos);
    }
    if (!text.empty()) out.push_back({Tok::data, std::string(text), 0, 0, line});
    count_lines(pos, after);
    if (kind == '#') {
      // A comment: up to the first #}, which may carry its own - or + marker.
      const auto close = s.find("#}", after);
      if (close == std::string_view::npos) fail("a comment is not closed");
      std::size_t end = close + 2;
      const char csign =
          close > after && (s[close - 1] == '-' || s[close - 1] == '+') ? s[close - 1] : 0;
      if (csign == '-') {
        while (end < s.size() && ascii_space(s[end])) ++end;
      } else if (csign != '+' && end < s.size() && s[end] == '\n') {
        ++end;  // trim_blocks
      }
      count_lines(after, end);
      line_starting = end > 0 && s[end - 1] == '\n';
      pos = end;
      continue;
    }
    const bool is_block = kind == '%';
    out.push_back({is_block ? Tok::block_begin : Tok::var_begin, "", 0, 0, line});
    // Inside a tag: expression tokens until the closing tag, which only counts where
    // brackets are balanced ({{ {'a': {'b': 1}} }}).
    std::vector<char> balance;
    std::size_t p = after;
    bool closed = false;
    while (p < s.size()) {
      const char c = s[p];
      if (ascii_space(c)) {
        line += c == '\n';
        ++p;
        continue;
      }
      if (balance.empty()) {
        std::size_t end = 0;
        if (is_block) {
          if (s.substr(p, 3) == "+%}") {
            end = p + 3;
          } else if (s.substr(p, 3) == "-%}") {
            end = p + 3;
            while (end < s.size() && ascii_space(s[end])) ++end;
          } else if (s.substr(p, 2) == "%}") {
            end = p + 2;
            if (end < s.size() && s[end] == '\n') ++end;  // trim_blocks
          }
        } else {
          if (s.substr(p, 3) == "-}}") {
            end = p + 3;
            while (end < s.size() && ascii_space(s[end])) ++end;
          } else if (s.substr(p, 2) == "}}") {
            end = p + 2;
          }
        }
        if (end) {
          out.push_back({is_block ? Tok::block_end : Tok::var_end, "", 0, 0, line});
          count_lines(p, end);
          line_starting = s[end - 1] == '\n';
          pos = end;
          closed = true;
          break;
        }
      }
      const auto is_digit = [&](std::size_t k) {
        return k < s.size() && s[k] >= '0' && s[k] <= '9';
      };
      const auto digits = [&](std::size_t k) {  // digits with single underscores between
        while (is_digit(k) || (s[k] == '_' && is_digit(k + 1) && k > 0 && is_digit(k - 1))) ++k;
        return k;
      };
      if (is_digit(p)) {
        std::size_t q = digits(p);
        bool is_real = false;
        if (q + 1 < s.size() && s[q] == '.' && is_digit(q + 1)) {
          q = digits(q + 1);
          is_real = true;
        }
        if (q < s.size() && (s[q] == 'e' || s[q] == 'E')) {
          std::size_t r = q + 1;
          if (r < s.size() && (s[r] == '+' || s[r] == '-')) ++r;
          if (is_digit(r)) {
            q = digits(r);
            is_real = true;
          }
        }
        std::string num;
        for (std::size_t k = p; k < q; ++k)
          if (s[k] != '_') num += s[k];
        Token t{is_real ? Tok::real : Tok::integer, num, 0, 0, line};
        if (is_real) {
          t.real = std::strtod(num.c_str(), nullptr);
        } else {
          const auto r = std::from_chars(num.data(), num.data() + num.size(), t.integer);
          if (r.ec != std::errc()) fail("integer literal " + num + " is too large");
        }
        out.push_back(std::move(t));
        p = q;
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::size_t q = p;
        while (q < s.size() && (std::isalnum(static_cast<unsigned char>(s[q])) || s[q] == '_')) ++q;
        out.push_back({Tok::name, std::string(s.substr(p, q - p)), 0, 0, line});
        p = q;
        continue;
      }
      if (c == '\'' || c == '"') {
        std::size_t q = p + 1;
        while (q < s.size() && s[q] != c) q += s[q] == '\\' ? 2 : 1;
        if (q >= s.size()) fail("a string literal is not closed");
        const int at = line;
        count_lines(p, q);
        out.push_back(
            {Tok::string, detail::unescape(s.substr(p + 1, q - p - 1), name, at), 0, 0, at});
        p = q + 1;
        continue;
      }
      static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
      std::string op;
      for (std::string_view two : kTwo)
        if (s.substr(p, 2) == two) op = two;
      if (op.empty()) {
        if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos)
          fail(std::string("unexpected character '") + c + "'");
        op = std::string(1, c);
        if (c == '(' || c == '[' || c == '{') {
          balance.push_back(c);
        } else if (c == ')' || c == ']' || c == '}') {
          const char want = c == ')' ? '(' : c == ']' ? '[' : '{';
          if (balance.empty() || balance.back() != want)
            fail(std::string("unexpected '") + c + "'");
          balance.pop_back();
        }
      }
      out.push_back({Tok::op, op, 0, 0, line});
      p += op.size();
    }
    if (!closed) fail(is_block ? "a block tag is not closed" : "a variable tag is not closed");
  }
  out.push_back({Tok::eof, "", 0, 0, line});
  return out;
}

}  // namespace baton::jinja
