// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// `baton serve`'s request framing (tools/serve/http_parse.hpp): what a head and a chunked body
// mean, and every refusal with its status. tests/serve/test_serve_hostile.py drives the same
// cases through the server's sockets; fuzz/fuzz_http.cpp feeds it arbitrary bytes.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>

#include "serve/http_parse.hpp"

namespace {

using baton::serve::http::ChunkedBody;
using baton::serve::http::HttpError;
using baton::serve::http::Limits;
using baton::serve::http::parse_head;
using baton::serve::http::RequestHead;

std::optional<RequestHead> head(std::string_view text, std::size_t* used = nullptr,
                                const Limits& limits = {}) {
  std::size_t n = 0;
  auto h = parse_head(text, limits, n);
  if (used) *used = n;
  return h;
}

/// The status `text` is refused with (0: accepted or incomplete).
int refusal(std::string_view text, const Limits& limits = {}) {
  try {
    (void)head(text, nullptr, limits);
    return 0;
  } catch (const HttpError& e) {
    return e.status();
  }
}

int chunked_refusal(std::string_view body, const Limits& limits = {}) {
  try {
    ChunkedBody c(limits);
    std::string out;
    (void)c.feed(body, out);
    return 0;
  } catch (const HttpError& e) {
    return e.status();
  }
}

}  // namespace

TEST_CASE("a request head: fields, framing, the connection, pipelined bytes left over") {
  std::size_t used = 0;
  const std::string first =
      "POST /v1/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n"
      "X-Spaces:   padded  \r\n\r\n";
  const auto h = head(first + "{}GET /health HTTP/1.1\r\n\r\n", &used);
  REQUIRE(h);
  CHECK(used == first.size());  // the body and the next request stay in the buffer
  CHECK(h->method == "POST");
  CHECK(h->path == "/v1/completions");
  CHECK(h->target == "/v1/completions?x=1");
  CHECK(h->content_length == 2);
  CHECK(h->keep_alive);
  REQUIRE(h->header("x-spaces"));
  CHECK(*h->header("x-spaces") == "padded");
  // Incomplete until the blank line; bare LF line ends and a leading CRLF are accepted.
  CHECK_FALSE(head("GET / HTTP/1.1\r\nHost: a\r\n"));
  CHECK(head("\r\nGET / HTTP/1.1\nHost: a\n\n"));
  // HTTP/1.0 closes unless asked; Connection: close closes 1.1.
  CHECK_FALSE(head("GET / HTTP/1.0\r\n\r\n")->keep_alive);
  CHECK(head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")->keep_alive);
  CHECK_FALSE(head("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n")->keep_alive);
  CHECK(head("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n")->chunked);
  CHECK(head("POST / HTTP/1.1\r\nExpect: 100-Continue\r\n\r\n")->expect_continue);
}

TEST_CASE("ambiguous framing is refused (request smuggling)") {
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n") ==
        400);
  CHECK(refusal("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked"
                "\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n") == 501);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length : 2\r\n\r\n") == 400);
  CHECK(refusal("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n") == 400);
  CHECK(refusal("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n") == 400);
  CHECK(refusal(std::string("GET / HTTP/1.1\r\nX: a") + '\0' + "b\r\n\r\n") == 400);
  CHECK(refusal("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == 400);
  CHECK(refusal("GET / HTTP/1.1\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n") == 400);
  CHECK(refusal("GET / HTTP/1.1\r\nExpect: 200-ok\r\n\r\n") == 417);
  CHECK(refusal("GET / HTTP/2.0\r\n\r\n") == 505);
  CHECK(refusal("GET http://x/ HTTP/1.1\r\n\r\n") == 400);
  CHECK(refusal("GET  / HTTP/1.1\r\n\r\n") == 400);
}

TEST_CASE("a head's sizes are bounded as it arrives") {
  Limits small;
  small.request_line = 64;
  small.header_bytes = 128;
  small.header_count = 3;
  small.body = 100;
  // Refused before the line ends: a client cannot make the server buffer past the limits.
  CHECK(refusal("GET /" + std::string(100, 'a'), small) == 414);
  CHECK(refusal("GET / HTTP/1.1\r\nX: " + std::string(200, 'a'), small) == 431);
  CHECK(refusal("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", small) == 0);
  CHECK(refusal("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n", small) == 431);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", small) == 413);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n", small) == 0);
}

TEST_CASE("a chunked body: pieces of any size, extensions, trailers, the body limit") {
  const std::string wire = "4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nTrailer: x\r\n\r\nNEXT";
  for (std::size_t step = 1; step <= wire.size(); ++step) {
    ChunkedBody c(Limits{});
    std::string body, pending;
    std::size_t fed = 0;
    while (!c.done() && fed < wire.size()) {
      pending += wire.substr(fed, step);
      fed += step;
      pending.erase(0, c.feed(pending, body));
    }
    CHECK(c.done());
    CHECK(body == "Wikipedia");
    CHECK(pending + (fed < wire.size() ? wire.substr(fed) : "") == "NEXT");  // left for later
  }
  Limits small;
  small.body = 8;
  CHECK(chunked_refusal("9\r\n", small) == 413);  // before the data is read
  CHECK(chunked_refusal("4\r\nWiki\r\n5\r\n", small) == 413);
  CHECK(chunked_refusal("4\r\nWiki\r\n4\r\npedi\r\n0\r\n\r\n", small) == 0);
  CHECK(chunked_refusal("zz\r\n") == 400);
  CHECK(chunked_refusal("fffffffffffffffff\r\n") == 400);  // no overflow: too many digits
  CHECK(chunked_refusal("4\r\nWikipedia\r\n") == 400);     // data longer than its size
  CHECK(chunked_refusal(std::string(2000, '1')) == 400);   // an endless size line
}
