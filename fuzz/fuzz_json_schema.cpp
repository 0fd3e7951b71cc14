// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// JSON Schema grammars (`baton generate --json-schema FILE`, a relay stage's "grammar":
// {"json_schema": ...}): strict JSON parsing, the subset compiler, the DFA, the lift.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "fuzz_grammar.hpp"

BATON_FUZZ_TARGET(json_schema) {
  try {
    baton::fuzz::compile_and_walk(baton::grammar::GrammarSpec::json_schema_text(
        baton::fuzz::as_text(data, size), "fuzz.schema.json"));
  } catch (const baton::error&) {
  }
  return 0;
}
