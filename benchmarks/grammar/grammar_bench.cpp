// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// baton's side of the grammar benchmark (run_grammar_bench.sh runs llguidance and xgrammar on
// the same grammars and walks):
//   grammar_bench TOKENIZER.json EOS[,EOS] CASES.json WALKS_OUT.json [RUNS]
// For each grammar: compile time against the vocabulary (median of RUNS; the vocabulary and
// its trie are built once per tokenizer, timed apart), then random walks (seeded) through the
// grammar, written to WALKS_OUT for the other engines, and the cost per token along them of
// what a decode step does: the allowed set copied into a bitmask buffer, then the advance by
// the chosen token. Prints one JSON object.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/grammar/grammar.hpp"

namespace g = baton::grammar;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: grammar_bench TOKENIZER.json EOS[,EOS] CASES.json WALKS_OUT.json [RUNS]\n";
    return 2;
  }
  const int runs = argc > 5 ? std::stoi(argv[5]) : 5;
  std::vector<std::int32_t> eos;
  {
    std::stringstream s(argv[2]);
    for (std::string item; std::getline(s, item, ',');) eos.push_back(std::stoi(item));
  }
  const auto t_tok = Clock::now();
  const auto tok = baton::Tokenizer::from_file(argv[1]);
  const double tokenizer_ms = ms_since(t_tok);
  const auto t_vocab = Clock::now();
  auto vocab = std::make_shared<const g::Vocabulary>(g::vocabulary_of(tok, eos));
  const double vocab_ms = ms_since(t_vocab);
  std::ifstream in(argv[3]);
  const auto cases = nlohmann::ordered_json::parse(in);
  nlohmann::ordered_json walks_out = nlohmann::ordered_json::array();
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  std::mt19937 rng(2026);
  std::vector<std::uint32_t> buffer;
  std::uint64_t checksum = 0;
  for (const auto& c : cases) {
    const g::GrammarSpec spec = c.contains("regex") ? g::GrammarSpec::regex(c["regex"])
                                                    : g::GrammarSpec::json_schema(c["json_schema"]);
    std::vector<double> compile_ms;
    std::shared_ptr<const g::TokenGrammar> tg;
    for (int r = 0; r < runs; ++r) {
      const auto t = Clock::now();
      tg = g::compile_grammar(spec, vocab);
      compile_ms.push_back(ms_since(t));
    }
    buffer.assign(tg->mask_words(), 0);
    // Walks: random allowed tokens, favouring short ones half the time so the walk goes deep.
    nlohmann::ordered_json walks = nlohmann::ordered_json::array();
    std::vector<std::vector<std::int32_t>> token_walks;
    for (int w = 0; w < 8; ++w) {
      std::vector<std::int32_t> seq;
      std::int32_t s = 0;
      for (int step = 0; step < 48; ++step) {
        const auto mask = tg->mask(s);
        std::vector<std::int32_t> ok, short_ok;
        for (std::int32_t t = 0; t < tg->vocab_size(); ++t)
          if (g::TokenGrammar::test(mask, t) && !tg->is_eos(t)) {
            ok.push_back(t);
            if (vocab->bytes(t).size() <= 2) short_ok.push_back(t);
          }
        if (ok.empty() || (tg->accepting(s) && rng() % 4 == 0)) break;
        const auto& pool = (rng() % 2 && !short_ok.empty()) ? short_ok : ok;
        const std::int32_t t = pool[rng() % pool.size()];
        seq.push_back(t);
        s = tg->advance(s, t);
      }
      walks.push_back(seq);
      token_walks.push_back(std::move(seq));
    }
    // The per-token cost along the walks: mask into the buffer, then advance.
    std::vector<double> us;
    for (int r = 0; r < runs; ++r)
      for (const auto& seq : token_walks) {
        std::int32_t s = 0;
        for (const std::int32_t t : seq) {
          const auto t0 = Clock::now();
          const auto m = tg->mask(s);
          std::memcpy(buffer.data(), m.data(), m.size() * sizeof(std::uint32_t));
          s = tg->advance(s, t);
          us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
      }
    results.push_back({{"name", c["name"]},
                       {"states", tg->num_states()},
                       {"distinct_masks", tg->distinct_masks()},
                       {"table_mb", static_cast<double>(tg->all_masks().size() * 4) / 1e6},
                       {"compile_ms_median", percentile(compile_ms, 0.5)},
                       {"mask_us_median", percentile(us, 0.5)},
                       {"mask_us_p99", percentile(us, 0.99)},
                       {"tokens_timed", us.size()}});
    walks_out.push_back({{"name", c["name"]}, {"walks", walks}});
    for (const std::uint32_t w : buffer) checksum += w;  // the copies are observable
  }
  std::ofstream(argv[4]) << walks_out.dump();
  const nlohmann::ordered_json out = {
      {"engine", "baton"},         {"tokenizer_load_ms", tokenizer_ms},
      {"vocabulary_ms", vocab_ms}, {"vocab_size", vocab->size()},
      {"checksum", checksum},      {"grammars", results}};
  std::cout << out.dump(1) << "\n";
}
