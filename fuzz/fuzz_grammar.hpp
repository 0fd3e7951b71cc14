// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Shared by the grammar fuzz targets: the spec goes through compile_grammar, the call that
// `baton generate --regex/--json-schema` and relay files' "grammar" field make, over a small
// byte-level vocabulary (every byte, a few multi-byte tokens, one end-of-sequence id), and the
// result is walked a few steps, as a decode would. Any baton::error is a fine rejection.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/grammar/grammar.hpp"

namespace baton::fuzz {

inline std::shared_ptr<const grammar::Vocabulary> grammar_vocabulary() {
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  for (const char* t : {"ab", "\"a", "{\"", "\":", "12", "true", "null", " \n"})
    bytes.emplace_back(t);
  bytes.emplace_back();  // end of sequence, spelled by nothing
  const auto eos = static_cast<std::int32_t>(bytes.size() - 1);
  return std::make_shared<const grammar::Vocabulary>(std::move(bytes),
                                                     std::vector<std::int32_t>{eos});
}

// The default limits, a tenth of each: under ASan + UBSan a compile step is 5-10 times slower,
// and a grammar at the default limits (about 1 s in a release build) would pass libFuzzer's
// 10 s timeout. The fuzzers check that every stage stops at its limit, whatever the input;
// the time of the defaults is measured by tests/grammar/test_hostile_grammar.cpp.
inline grammar::GrammarLimits fuzz_grammar_limits() {
  grammar::GrammarLimits l;
  l.syntax_nodes /= 10;
  l.nfa_states /= 10;
  l.dfa_states /= 10;
  l.subset_work /= 10;
  l.minimize_work /= 10;
  l.table_bytes /= 10;
  l.lift_work /= 10;
  return l;
}

inline void compile_and_walk(const grammar::GrammarSpec& spec) {
  static const auto vocab = grammar_vocabulary();
  const auto g = grammar::compile_grammar(spec, vocab, fuzz_grammar_limits());
  // A few steps along the first allowed token of each state: masks and transitions of a
  // grammar that compiled must be usable.
  std::int32_t s = 0;
  for (int step = 0; step < 16 && s != grammar::kDead; ++step) {
    const auto mask = g->mask(s);
    std::int32_t next = -1;
    for (std::int32_t t = 0; t < g->vocab_size() && next < 0; ++t)
      if (grammar::TokenGrammar::test(mask, t)) next = t;
    if (next < 0 || g->is_eos(next)) break;
    s = g->advance(s, next);
  }
}

}  // namespace baton::fuzz
