// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A tiny world for constrained decoding tests: a vocabulary of printable ASCII bytes (one id
// each, id = byte - 0x20), some multi-byte pieces so tokens cross a grammar's boundaries, and
// the end-of-sequence id last; a random tiny model over it (host backend); PCRE2 as the
// independent regex matcher.
#pragma once

#include <pcre2.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "baton/grammar/vocabulary.hpp"
#include "support/relay_fixture.hpp"

namespace baton::test {

inline std::vector<std::string> grammar_vocab_strings() {
  std::vector<std::string> v;
  for (char c = 0x20; c < 0x7F; ++c) v.emplace_back(1, c);
  for (const char* s : {"12",   "345", " + ", " * ", "ab",   "the", "{\"", "\": ", ", \"", "\"}",
                        "true", "fal", "se",  "[\"", "\", ", "0.",  "e-",  "\n",   "yes",  "no"})
    v.emplace_back(s);
  v.emplace_back();  // EOS
  return v;
}

struct GrammarWorld {
  std::vector<std::string> strings = grammar_vocab_strings();
  std::int32_t eos = static_cast<std::int32_t>(strings.size() - 1);
  std::shared_ptr<const grammar::Vocabulary> vocab =
      std::make_shared<const grammar::Vocabulary>(strings, std::vector<std::int32_t>{eos});
  TinyModel tm;
  std::filesystem::path dir;
  std::unique_ptr<RModel> model;
  explicit GrammarWorld(unsigned seed, const std::string& tag = "grammar_decode_") {
    TinySpec s;
    s.seed = seed;
    s.vocab = static_cast<int>(strings.size());
    tm = make_tiny_model(s);
    dir = fresh_dir(tag + std::to_string(seed));
    write_tiny_model(tm, dir / "model");
    model = std::make_unique<RModel>(load_model<host, f32>(dir / "model"));
  }
  std::string text(const std::vector<std::int32_t>& ids) const {
    std::string out;
    for (const auto id : ids) out += strings[static_cast<std::size_t>(id)];
    return out;
  }
  RSlice no_adapter() const { return RSlice::none(model->config()); }
};

/// A random regex over a few atoms the vocabulary can spell (nesting depth at most 3).
inline std::string random_regex(std::mt19937& rng, int depth = 0) {
  static const std::vector<std::string> kAtoms = {
      "a", "b", "1", "2", " ", "[0-9]", "[a-c]", "x", "-", "ab", "the", "[^ab]", ".", "\\+", "y"};
  std::uniform_real_distribution<double> u(0, 1);
  const double roll = u(rng);
  if (depth >= 3 || (depth > 0 && roll < 0.35)) return kAtoms[rng() % kAtoms.size()];
  if (roll < 0.55) return random_regex(rng, depth + 1) + random_regex(rng, depth + 1);
  if (roll < 0.7)
    return "(" + random_regex(rng, depth + 1) + "|" + random_regex(rng, depth + 1) + ")";
  static const std::vector<std::string> kQuant = {"?", "*", "+", "{2}", "{1,3}", "{0,2}"};
  return "(" + random_regex(rng, depth + 1) + ")" + kQuant[rng() % kQuant.size()];
}

/// PCRE2's result for `re` anchored at both ends against `s` with match `options`.
inline int pcre_anchored_match(const std::string& re, const std::string& s, std::uint32_t options) {
  const std::string anchored = "^(?:" + re + ")\\z";
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(anchored.data()), anchored.size(),
                                   PCRE2_UTF, &err, &off, nullptr);
  REQUIRE(code != nullptr);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  const int rc =
      pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, options, md, nullptr);
  pcre2_match_data_free(md);
  pcre2_code_free(code);
  return rc;
}
/// Whether `s` matches `re` whole.
inline bool pcre_full_match(const std::string& re, const std::string& s) {
  return pcre_anchored_match(re, s, 0) >= 0;
}
/// Whether `s` is a prefix of some match of `re` (or a match): PCRE2's hard partial matching.
inline bool pcre_viable_prefix(const std::string& re, const std::string& s) {
  const int rc = pcre_anchored_match(re, s, PCRE2_PARTIAL_HARD);
  return rc >= 0 || rc == PCRE2_ERROR_PARTIAL;
}

}  // namespace baton::test
