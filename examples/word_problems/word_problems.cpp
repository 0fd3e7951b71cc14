// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Loading the bundled relay and building it, compiled once for the demo and the evaluation: the
// relay is a whole forward, and the relay file's reading (JSON, tokenizer, grammars) is most of
// the library's host code; compiled in each program, they took 50 s of each one's build.
#include <baton/relay/runtime_relay.hpp>

#include "word_problems.hpp"

namespace word_problems {

/// The bundled model's storage type and head_dim (models/word-problems/config.json).
using Storage = baton::bf16;
inline constexpr int kHeadDim = 32;

RelayFile load(const std::filesystem::path& relay_json) {
  baton::RelaySpec spec = baton::load_relay_spec(relay_json);
  BATON_CHECK(spec.tokenizer.has_value(), baton::config_error, relay_json.string(),
              ": the word-problem relay names its tokenizer (field 'tokenizer')");
  baton::Tokenizer tok = baton::Tokenizer::from_file(*spec.tokenizer);
  baton::resolve_text(spec, tok);
  return {std::move(spec), std::move(tok)};
}

std::unique_ptr<baton::RuntimeRelay> build(const baton::RelaySpec& spec) {
  return baton::build_relay_as<Storage, kHeadDim, baton::family::Qwen2, baton::Batching::without>(
      spec);
}

}  // namespace word_problems
