// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Compares baton's token masks with llguidance's, state by state along llguidance's random
// walks (llguidance_masks.py wrote them):
//   check_llguidance STATUS TOKENIZER.json REFERENCE.json EOS[,EOS...]
// For every grammar both engines compile, each walk's tokens are replayed through baton and
// the allowed set before every token (and after the last) must equal llguidance's, ids and
// end-of-sequence alike. A grammar only one engine compiles is a failure too. STATUS is
// the fixture's status file (see support/reference_status.hpp); an absent tokenizer skips.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/grammar/grammar.hpp"
#include "support/reference_status.hpp"

namespace {

using baton::grammar::GrammarSpec;
using baton::grammar::TokenGrammar;

std::vector<std::int32_t> parse_ids(const std::string& csv) {
  std::vector<std::int32_t> ids;
  std::stringstream s(csv);
  for (std::string item; std::getline(s, item, ',');) ids.push_back(std::stoi(item));
  return ids;
}

std::string shown(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || u == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: check_llguidance STATUS TOKENIZER.json REFERENCE.json EOS[,EOS...]\n";
    return 2;
  }
  if (const auto code = baton::test::reference_status_exit(argv[1], "llguidance reference"))
    return *code;
  if (!std::filesystem::exists(argv[2]))
    return baton::test::skip_or_fail(std::string("tokenizer file ") + argv[2] +
                                     " is absent (the shared tokenizer folder is not there; set "
                                     "-DBATON_TOKENIZERS_DIR)");
  try {
    const auto tok = baton::Tokenizer::from_file(argv[2]);
    const auto eos = parse_ids(argv[4]);
    auto vocab =
        std::make_shared<const baton::grammar::Vocabulary>(baton::grammar::vocabulary_of(tok, eos));
    std::ifstream in(argv[3]);
    const auto ref = nlohmann::ordered_json::parse(in);
    if (ref.at("vocab_size").get<std::size_t>() != vocab->size()) {
      std::cout << "FAILED: llguidance's vocabulary has " << ref.at("vocab_size")
                << " ids, baton's " << vocab->size() << "\n";
      return 1;
    }
    int failures = 0, grammars = 0, states = 0, both_rejected = 0;
    double slowest_ms = 0;
    std::string slowest;
    for (const auto& c : ref.at("cases")) {
      const std::string name = c.at("name").get<std::string>();
      const GrammarSpec spec = c.contains("regex")
                                   ? GrammarSpec::regex(c.at("regex").get<std::string>())
                                   : GrammarSpec::json_schema(c.at("json_schema"));
      std::shared_ptr<const TokenGrammar> g;
      std::string baton_error;
      const auto t0 = std::chrono::steady_clock::now();
      try {
        g = baton::grammar::compile_grammar(spec, vocab);
      } catch (const baton::grammar_error& e) {
        baton_error = e.what();
      }
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (ms > slowest_ms) slowest_ms = ms, slowest = name;
      const bool llg_error = c.contains("error");
      if (llg_error || !baton_error.empty()) {
        if (llg_error && !baton_error.empty()) {
          ++both_rejected;
          continue;
        }
        ++failures;
        std::cout << "FAILED " << name << " (" << spec.source << "): "
                  << (llg_error
                          ? "llguidance rejects it (" + c.at("error").get<std::string>() +
                                ") but baton compiles it"
                          : "baton rejects it (" + baton_error + ") but llguidance compiles it")
                  << "\n";
        continue;
      }
      ++grammars;
      for (const auto& w : c.at("walks")) {
        const auto& tokens = w.at("tokens");
        const auto& masks = w.at("masks");
        std::int32_t s = 0;
        std::string text;
        for (std::size_t k = 0; k < masks.size(); ++k) {
          // llguidance's mask as a bitset from its runs
          std::vector<std::uint32_t> want(g->mask_words(), 0);
          const auto& runs = masks[k];
          for (std::size_t r = 0; r + 1 < runs.size(); r += 2)
            for (auto t = runs[r].get<std::int32_t>(); t < runs[r + 1].get<std::int32_t>(); ++t)
              want[static_cast<std::size_t>(t) / 32] |= 1u << (t % 32);
          const auto have = g->mask(s);
          ++states;
          if (!std::equal(have.begin(), have.end(), want.begin())) {
            ++failures;
            std::cout << "FAILED " << name << " (" << spec.source << ") after \"" << shown(text)
                      << "\" (state " << s << "):";
            int listed = 0;
            for (std::int32_t t = 0; t < g->vocab_size() && listed < 12; ++t) {
              const bool a = TokenGrammar::test(have, t), b = TokenGrammar::test(want, t);
              if (a == b) continue;
              ++listed;
              std::cout << " " << t << "\"" << shown(vocab->bytes(t)) << "\""
                        << (a ? "(baton only)" : "(llguidance only)");
            }
            std::cout << "\n";
            break;
          }
          if (k == tokens.size()) break;
          const auto t = tokens[k].get<std::int32_t>();
          if (g->is_eos(t)) break;
          s = g->advance(s, t);
          text += vocab->bytes(t);
          if (s == baton::grammar::kDead) {
            ++failures;
            std::cout << "FAILED " << name << ": llguidance's token " << t << " is dead in baton\n";
            break;
          }
        }
      }
    }
    std::cout << grammars << " grammars, " << states << " states compared against llguidance "
              << ref.at("llguidance").get<std::string>() << " (" << both_rejected
              << " rejected by both); slowest compile " << slowest << " " << slowest_ms << " ms; "
              << failures << " failures\n";
    // A run that compared nothing proves nothing: an empty reference file, or every grammar
    // rejected by both, is a failure.
    if (grammars == 0 || states == 0) {
      std::cout << "FAILED: no grammar was compared (" << ref.at("cases").size() << " cases, "
                << both_rejected << " rejected by both)\n";
      return 1;
    }
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::cout << "FAILED: " << e.what() << "\n";
    return 1;
  }
}
