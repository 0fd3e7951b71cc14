// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A compiled grammar as plain pointers (host or backend memory) and the BATON_HD
/// math the sampling step runs on them: is token `id` allowed, and the state after a token.
/// Included by CUDA kernels, so nothing here needs the standard library beyond <cstdint>.
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton/core/macros.hpp"

namespace baton::grammar {

/// One request's place in a grammar: the DFA state and the tokens it may still produce.
struct GrammarCursor {
  std::int32_t state = 0;
  std::int32_t remaining = 0;
};

/// The tables of a TokenGrammar (all arrays indexed as there). Trivially copyable: a
/// kernel argument, or the params of the grammar interceptor.
struct GrammarTables {
  const std::int32_t* next = nullptr;       ///< [state * 256 + byte] -> state or -1
  const std::uint8_t* accepting = nullptr;  ///< [state]
  const std::uint8_t* complete = nullptr;   ///< [state]: accepting, nothing may follow
  const std::int32_t* dist = nullptr;       ///< [state]: fewest tokens to acceptance
  const std::int32_t* slack = nullptr;      ///< [state]: largest dist after one token
  const std::int32_t* forced = nullptr;     ///< [state]: the only allowed token, or -1
  const std::int32_t* mask_row = nullptr;   ///< [state] -> row of `masks`
  const std::uint32_t* masks = nullptr;     ///< [row * words + id / 32], bit id % 32
  const std::uint32_t* offsets = nullptr;   ///< [id]..[id + 1]: the token's bytes
  const std::uint8_t* bytes = nullptr;      ///< token bytes, concatenated
  const std::uint8_t* eos = nullptr;        ///< [id]: an end-of-sequence id
  std::uint32_t words = 0;                  ///< 32-bit words per mask
  std::int32_t vocab_size = 0;              ///< ids the tables cover (larger: never allowed)
};

/// The state after `token`'s bytes from `s`, or -1 when they leave the grammar.
BATON_HD inline std::int32_t grammar_walk(const GrammarTables& g, std::int32_t s,
                                          std::int32_t token) {
  const std::uint32_t b = g.offsets[token], e = g.offsets[token + 1];
  if (b == e) return -1;
  for (std::uint32_t k = b; k < e && s >= 0; ++k)
    s = g.next[static_cast<std::size_t>(s) * 256 + g.bytes[k]];
  return s;
}

/// Whether `id` may be chosen at `c`: in the state's mask when the budget cannot bind,
/// else only when acceptance stays reachable within the remaining tokens. An
/// end-of-sequence id is allowed exactly in accepting states.
BATON_HD inline bool grammar_allows(const GrammarTables& g, const GrammarCursor& c,
                                    std::int32_t id) {
  if (id < 0 || id >= g.vocab_size || c.state < 0) return false;
  if (g.eos[id]) return g.accepting[c.state] != 0;
  if (c.remaining - 1 >= g.slack[c.state]) {
    const std::uint32_t w = g.masks[static_cast<std::size_t>(g.mask_row[c.state]) * g.words +
                                    static_cast<std::uint32_t>(id) / 32];
    return ((w >> (static_cast<std::uint32_t>(id) % 32)) & 1u) != 0;
  }
  const std::int32_t t = grammar_walk(g, c.state, id);
  return t >= 0 && g.dist[t] <= c.remaining - 1;
}

/// Advances `c` by the chosen `token`; returns true when the grammar is complete (accepting
/// and nothing may follow) or the token left it, so the generation should end. An
/// end-of-sequence id leaves the cursor as it is.
BATON_HD inline bool grammar_advance(const GrammarTables& g, GrammarCursor& c, std::int32_t token) {
  if (c.state < 0 || token < 0 || token >= g.vocab_size) {
    c.state = -1;
    return true;
  }
  if (g.eos[token]) return true;
  c.state = grammar_walk(g, c.state, token);
  --c.remaining;
  return c.state < 0 || g.complete[c.state] != 0;
}

/// The only token allowed at `c` (never an end-of-sequence id), or -1.
BATON_HD inline std::int32_t grammar_forced(const GrammarTables& g, const GrammarCursor& c) {
  return c.state < 0 ? -1 : g.forced[c.state];
}

}  // namespace baton::grammar
