// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Encode throughput of baton::Tokenizer, single thread, on a corpus file
// (repeated [u32 LE name length][name][u32 LE byte length][bytes], as tests/tokenizer/
// reference.py writes it; cases that are not valid UTF-8 are left out).
//   tokenizer_bench TOKENIZER.json CORPUS.bin [RUNS]
// Prints one JSON object: bytes, tokens, docs, per-run seconds, median MB/s and tokens/s with
// the word cache warm (the steady state of a long-running process), and the first, cold run.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "baton/text/tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: tokenizer_bench TOKENIZER.json CORPUS.bin [RUNS]\n";
    return 2;
  }
  const int runs = argc > 3 ? std::max(1, std::atoi(argv[3])) : 7;
  try {
    std::ifstream in(argv[2], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string b = ss.str();
    std::vector<std::string> docs;
    std::size_t bytes = 0;
    auto u32 = [&](std::size_t& o) {
      std::uint32_t v = 0;
      for (int k = 0; k < 4; ++k)
        v |= std::uint32_t(static_cast<unsigned char>(b[o + k])) << (8 * k);
      o += 4;
      return v;
    };
    for (std::size_t o = 0; o < b.size();) {
      o += u32(o);
      const auto n = u32(o);
      std::string doc = b.substr(o, n);
      o += n;
      if (baton::text::first_invalid_utf8(doc) != std::string_view::npos) continue;
      bytes += doc.size();
      docs.push_back(std::move(doc));
    }
    const auto proto = baton::Tokenizer::from_file(argv[1]);
    baton::Tokenizer tok = proto;  // fresh cache: the first run is cold
    std::vector<double> secs;
    std::size_t tokens = 0;
    std::vector<std::int32_t> ids;
    for (int r = 0; r < runs + 1; ++r) {
      tokens = 0;
      const auto t0 = std::chrono::steady_clock::now();
      for (const auto& d : docs) {
        ids.clear();
        tok.encode_append(d, ids);
        tokens += ids.size();
      }
      secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double cold = secs.front();
    std::vector<double> warm(secs.begin() + 1, secs.end());
    std::vector<double> sorted = warm;
    std::sort(sorted.begin(), sorted.end());
    const double med = sorted[sorted.size() / 2];
    std::cout << "{\"impl\":\"baton\",\"tokenizer\":\"" << argv[1] << "\",\"docs\":" << docs.size()
              << ",\"bytes\":" << bytes << ",\"tokens\":" << tokens << ",\"runs\":" << runs
              << ",\"regex_jit\":" << (tok.regex_jit() ? "true" : "false")
              << ",\"median_s\":" << med << ",\"mb_per_s\":" << bytes / med / 1e6
              << ",\"tokens_per_s\":" << tokens / med
              << ",\"cold_first_run_mb_per_s\":" << bytes / cold / 1e6 << ",\"run_s\":[";
    for (std::size_t k = 0; k < warm.size(); ++k) std::cout << (k ? "," : "") << warm[k];
    std::cout << "]}\n";
  } catch (const std::exception& e) {
    std::cerr << "tokenizer_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
