// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Regex grammars (`baton generate --regex`, a relay stage's "grammar": {"regex": ...}): the
// parser, the NFA/DFA construction and minimisation, the lift over a vocabulary.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "fuzz_grammar.hpp"

BATON_FUZZ_TARGET(grammar_regex) {
  try {
    baton::fuzz::compile_and_walk(
        baton::grammar::GrammarSpec::regex(std::string(baton::fuzz::as_text(data, size))));
  } catch (const baton::error&) {
  }
  return 0;
}
