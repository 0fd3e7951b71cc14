// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief HTTP/1.1 request framing as `baton serve` reads it: the request head (request line and
///        header fields) and a chunked body, parsed from bytes with every size bounded.
///
/// Plain functions over byte strings (no sockets), so that a fuzzer drives them as the server
/// does (fuzz/fuzz_http.cpp). Everything that could make two readers of the same bytes disagree
/// about where a request ends is refused (RFC 9112 section 6.3, "request smuggling"): duplicate
/// or invalid Content-Length, Content-Length beside Transfer-Encoding, a transfer coding other
/// than chunked, whitespace before a header's colon, folded header lines, a bare CR.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"

namespace baton::serve::http {

/// Sizes a request may reach; past one the server answers the status named and closes.
struct Limits {                             // NOLINT: aggregate
  std::size_t request_line = 8192;          ///< bytes of the request line (then 414)
  std::size_t header_bytes = 16384;         ///< bytes of all header lines together (then 431)
  int header_count = 100;                   ///< header fields (then 431)
  std::size_t body = std::size_t(1) << 20;  ///< body bytes, chunked or not (then 413)
  std::size_t chunk_line = 1024;            ///< one chunk-size line with its extensions (then 400)
};

/// A request the HTTP layer refuses: the status to answer, a message that says why, and a
/// machine-readable code where the status alone does not say it.
class HttpError : public format_error {
 public:
  HttpError(int status, const std::string& message, std::string code = "")
      : format_error(message), status_(status), code_(std::move(code)) {}
  int status() const { return status_; }
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string code_;
};

struct Header {
  std::string name;  ///< lower case
  std::string value;
};

/// A parsed request head.
struct RequestHead {
  std::string method;
  std::string target;  ///< as sent
  std::string path;    ///< the target without its query
  int minor = 1;       ///< HTTP/1.minor
  std::vector<Header> headers;
  std::optional<std::size_t> content_length;
  bool chunked = false;
  bool keep_alive = true;
  bool expect_continue = false;

  /// The value of the field `lower_name` (lower case), nullptr when absent.
  const std::string* header(std::string_view lower_name) const {
    for (const Header& h : headers)
      if (h.name == lower_name) return &h.value;
    return nullptr;
  }
};

namespace detail {

inline bool is_tchar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

inline std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// The next line of `buf` from `pos` (without its LF and the CR before it), nullopt when no
/// LF has arrived yet. A CR anywhere else is refused: some readers end lines at a bare CR.
inline std::optional<std::string_view> next_line(std::string_view buf, std::size_t& pos) {
  const std::size_t lf = buf.find('\n', pos);
  if (lf == std::string_view::npos) return std::nullopt;
  std::string_view line = buf.substr(pos, lf - pos);
  pos = lf + 1;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find('\r') != std::string_view::npos)
    throw HttpError(400, "a bare CR inside a line of the request head");
  return line;
}

/// A decimal Content-Length: digits only (no sign, no space, no list), at most 18 of them.
inline std::size_t content_length(std::string_view v) {
  if (v.empty() || v.size() > 18 ||
      !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw HttpError(400, "Content-Length '" + baton::detail::excerpt(v) + "' is not a number");
  std::size_t n = 0;
  for (const char c : v) n = n * 10 + static_cast<std::size_t>(c - '0');
  return n;
}

inline void parse_request_line(std::string_view line, RequestHead& h) {
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == line.npos ? line.npos : line.find(' ', sp1 + 1);
  if (sp2 == line.npos || line.find(' ', sp2 + 1) != line.npos)
    throw HttpError(400, "the request line is not 'METHOD TARGET HTTP/1.1'");
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || method.size() > 32 ||
      !std::all_of(method.begin(), method.end(),
                   [](char c) { return is_tchar(static_cast<unsigned char>(c)); }))
    throw HttpError(400, "the request method is not a token");
  if (target.empty() || target.front() != '/' ||
      !std::all_of(target.begin(), target.end(), [](char c) {
        return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
      }))
    throw HttpError(400, "the request target must be a path starting with '/'");
  if (version == "HTTP/1.1") {
    h.minor = 1;
  } else if (version == "HTTP/1.0") {
    h.minor = 0;
  } else if (version.size() == 8 && version.starts_with("HTTP/") && version[6] == '.') {
    throw HttpError(505, "HTTP version '" + std::string(version) + "' is not supported (1.0, 1.1)");
  } else {
    throw HttpError(400, "the request line ends in '" + baton::detail::excerpt(version) +
                             "', not an HTTP version");
  }
  h.method = method;
  h.target = target;
  h.path = target.substr(0, target.find('?'));
}

inline Header parse_field(std::string_view line) {
  if (line.front() == ' ' || line.front() == '\t')
    throw HttpError(400, "a folded header line (obsolete line folding is not accepted)");
  const std::size_t colon = line.find(':');
  if (colon == line.npos || colon == 0) throw HttpError(400, "a header line without a name");
  const std::string_view name = line.substr(0, colon);
  if (!std::all_of(name.begin(), name.end(),
                   [](char c) { return is_tchar(static_cast<unsigned char>(c)); }))
    throw HttpError(400, "the header name '" + baton::detail::excerpt(name) +
                             "' is not a token (whitespace before the colon is not accepted)");
  const std::string_view value = trim_ows(line.substr(colon + 1));
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f)
      throw HttpError(400, "the value of header '" + baton::detail::excerpt(name) +
                               "' holds a control character");
  }
  return {lower(name), std::string(value)};
}

/// What the fields mean for framing and the connection; refuses what is ambiguous.
inline void interpret(RequestHead& h) {
  int lengths = 0, encodings = 0, expects = 0;
  std::string_view te, expect;
  bool close = false, keep = false;
  for (const Header& f : h.headers) {
    if (f.name == "content-length") {
      if (++lengths > 1) throw HttpError(400, "Content-Length is given more than once");
      h.content_length = content_length(f.value);
    } else if (f.name == "transfer-encoding") {
      if (++encodings > 1) throw HttpError(400, "Transfer-Encoding is given more than once");
      te = f.value;
    } else if (f.name == "expect") {
      ++expects;
      expect = f.value;
    } else if (f.name == "connection") {
      std::string_view v = f.value;
      while (!v.empty()) {
        const std::size_t comma = v.find(',');
        const std::string t = lower(trim_ows(v.substr(0, comma)));
        close = close || t == "close";
        keep = keep || t == "keep-alive";
        v = comma == v.npos ? std::string_view() : v.substr(comma + 1);
      }
    } else if (f.name == "host" || f.name == "authorization") {
      const auto same = std::count_if(h.headers.begin(), h.headers.end(),
                                      [&](const Header& o) { return o.name == f.name; });
      if (same > 1) throw HttpError(400, "header '" + f.name + "' is given more than once");
    }
  }
  if (encodings) {
    if (h.minor == 0) throw HttpError(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (lengths) throw HttpError(400, "both Content-Length and Transfer-Encoding are given");
    if (lower(te) != "chunked")
      throw HttpError(501, "Transfer-Encoding '" + baton::detail::excerpt(te) +
                               "' is not supported (only chunked)");
    h.chunked = true;
  }
  if (expects) {
    if (expects > 1 || lower(expect) != "100-continue")
      throw HttpError(417, "Expect '" + baton::detail::excerpt(expect) +
                               "' is not supported (only 100-continue)");
    h.expect_continue = true;
  }
  h.keep_alive = close ? false : (h.minor == 1 || keep);
}

}  // namespace detail

/// Parses the head at the start of `buf`. Returns it and sets `used` to its length in bytes
/// once its blank line has arrived; nullopt while it is incomplete. Throws HttpError as soon as
/// what has arrived passes a limit (414, 431) or breaks the syntax (400, 417, 501, 505), so a
/// caller never buffers more than the limits. Empty lines before the request line are skipped
/// (RFC 9112 section 2.2: a client may send a CRLF after a body).
inline std::optional<RequestHead> parse_head(std::string_view buf, const Limits& limits,
                                             std::size_t& used) {
  std::size_t pos = 0;
  std::optional<std::string_view> first;
  while (!first) {
    const std::size_t start = pos;
    first = detail::next_line(buf, pos);
    if (!first) {
      if (buf.size() - start > limits.request_line)
        throw HttpError(414, "the request line is longer than " +
                                 std::to_string(limits.request_line) + " bytes");
      return std::nullopt;
    }
    if (first->size() > limits.request_line)
      throw HttpError(
          414, "the request line is longer than " + std::to_string(limits.request_line) + " bytes");
    if (first->empty()) {
      if (pos > limits.request_line) throw HttpError(400, "empty lines without a request");
      first.reset();
    }
  }
  RequestHead h;
  detail::parse_request_line(*first, h);
  const std::size_t fields_from = pos;
  const auto too_large = [&] {
    return HttpError(431, "the header fields are larger than " +
                              std::to_string(limits.header_bytes) + " bytes or more than " +
                              std::to_string(limits.header_count) + " fields");
  };
  for (;;) {
    const std::optional<std::string_view> line = detail::next_line(buf, pos);
    if (!line) {
      if (buf.size() - fields_from > limits.header_bytes) throw too_large();
      return std::nullopt;
    }
    if (pos - fields_from > limits.header_bytes) throw too_large();
    if (line->empty()) break;
    if (static_cast<int>(h.headers.size()) >= limits.header_count) throw too_large();
    h.headers.push_back(detail::parse_field(*line));
  }
  detail::interpret(h);
  if (h.content_length && *h.content_length > limits.body)
    throw HttpError(413, "the request body (" + std::to_string(*h.content_length) +
                             " bytes) is larger than the server's limit of " +
                             std::to_string(limits.body) + " bytes (--max-body)");
  used = pos;
  return h;
}

/// A chunked body (RFC 9112 section 7.1) decoded as it arrives, counted against the body
/// limit before each chunk's data is taken in.
class ChunkedBody {
 public:
  explicit ChunkedBody(const Limits& limits) : limits_(limits) {}

  /// Takes in what it can of `in`, appending data to `body`; returns the bytes consumed (the
  /// rest is an incomplete line or the next request). Throws HttpError (400, 413, 431).
  std::size_t feed(std::string_view in, std::string& body) {
    std::size_t pos = 0;
    while (!done_ && pos < in.size()) {
      if (state_ == State::data) {
        const std::size_t n = std::min(left_, in.size() - pos);
        body.append(in.substr(pos, n));
        pos += n;
        left_ -= n;
        if (left_ == 0) state_ = State::data_end;
        continue;
      }
      std::size_t p = pos;
      const std::optional<std::string_view> line = detail::next_line(in, p);
      if (!line) {
        if (in.size() - pos > limits_.chunk_line)
          throw HttpError(400, "a chunk-size line is longer than " +
                                   std::to_string(limits_.chunk_line) + " bytes");
        break;
      }
      if (line->size() > limits_.chunk_line)
        throw HttpError(400, "a chunk-size line is longer than " +
                                 std::to_string(limits_.chunk_line) + " bytes");
      pos = p;
      if (state_ == State::data_end) {
        if (!line->empty()) throw HttpError(400, "a chunk's data is longer than its size");
        state_ = State::size;
      } else if (state_ == State::size) {
        size_line(*line, body.size());
      } else {  // trailers: bounded as header fields, then ignored
        trailer_bytes_ += line->size() + 2;
        if (line->empty()) {
          done_ = true;
        } else if (++trailers_ > limits_.header_count || trailer_bytes_ > limits_.header_bytes) {
          throw HttpError(431, "the chunked body's trailer fields are too large");
        } else {
          (void)detail::parse_field(*line);
        }
      }
    }
    return pos;
  }
  /// Whether the last chunk and the trailers have arrived.
  bool done() const { return done_; }

 private:
  enum class State { size, data, data_end, trailers };

  void size_line(std::string_view line, std::size_t so_far) {
    const std::string_view digits = detail::trim_ows(line.substr(0, line.find(';')));
    if (digits.empty() || digits.size() > 15)
      throw HttpError(400, "the chunk size '" + baton::detail::excerpt(digits) +
                               "' is not a hexadecimal number");
    std::size_t n = 0;
    for (const char c : digits) {
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') d = (c | 0x20) - 'a' + 10;
      if (d < 0)
        throw HttpError(400, "the chunk size '" + baton::detail::excerpt(digits) +
                                 "' is not a hexadecimal number");
      n = n * 16 + static_cast<std::size_t>(d);
    }
    if (n > limits_.body || so_far + n > limits_.body)
      throw HttpError(413, "the chunked request body is larger than the server's limit of " +
                               std::to_string(limits_.body) + " bytes (--max-body)");
    left_ = n;
    state_ = n == 0 ? State::trailers : State::data;
  }

  Limits limits_;
  State state_ = State::size;
  std::size_t left_ = 0;
  int trailers_ = 0;
  std::size_t trailer_bytes_ = 0;
  bool done_ = false;
};

}  // namespace baton::serve::http
