// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// `baton serve`'s request framing (tools/serve/http_parse.hpp): the head as the server reads it,
// from a buffer that grows piece by piece, then a chunked body fed in pieces. The first byte
// chooses the piece size, so the same request is also tried split at every kind of boundary.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_common.hpp"
#include "serve/http_parse.hpp"

BATON_FUZZ_TARGET(http) {
  if (size == 0) return 0;
  const std::size_t step = 1 + data[0] % 64;
  const std::string_view in = baton::fuzz::as_text(data + 1, size - 1);
  baton::serve::http::Limits limits;
  limits.body = 4096;  // small, so the body limit is reached too
  try {
    std::string buf;
    std::size_t pos = 0, used = 0;
    std::optional<baton::serve::http::RequestHead> head;
    while (!head && pos < in.size()) {
      buf.append(in.substr(pos, step));
      pos += step;
      head = baton::serve::http::parse_head(buf, limits, used);
    }
    if (!head) return 0;
    buf.erase(0, used);
    buf.append(in.substr(std::min(pos, in.size())));
    baton::serve::http::ChunkedBody chunked(limits);
    std::string body, pending;
    for (std::size_t at = 0; at < buf.size() && !chunked.done(); at += step) {
      pending.append(buf.substr(at, step));
      pending.erase(0, chunked.feed(pending, body));
    }
    if (body.size() > limits.body) __builtin_trap();  // the limit must hold
  } catch (const baton::error&) {
  }
  return 0;
}
