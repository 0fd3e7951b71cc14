// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The demo: the bundled word-problem relay (extract -> reason -> verify, three LoRA adapters on
// one small Qwen2 model) on a fixed list of questions. For each question it prints every stage
// run's text and time, the gate's verdict and the cycles used.
//
//   word_problems_demo [RELAY_JSON [QUESTIONS_TXT]]
//
// Defaults: models/word-problems/relay.json and demo_questions.txt beside it (one question per
// line; lines starting with '#' are shown as notes).
#include "word_problems.hpp"

#include <baton/core/error.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

namespace {

// A stage's text on one line, quoted, with its line breaks written as \n.
std::string shown(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out + "\"";
}

int run(const std::filesystem::path& relay_json, const std::filesystem::path& questions_txt) {
  const auto t0 = std::chrono::steady_clock::now();
  const word_problems::RelayFile file = word_problems::load(relay_json);
  const auto relay = word_problems::build(file.spec);
  const auto t1 = std::chrono::steady_clock::now();
  relay->prewarm();
  const auto t2 = std::chrono::steady_clock::now();
  const auto ms = [](auto a, auto b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  std::printf("model %s: loaded in %.1f ms; %zu stage prefixes pre-warmed once in %.1f ms\n",
              file.spec.model.string().c_str(), ms(t0, t1), file.spec.stages.size(), ms(t1, t2));

  std::ifstream in(questions_txt);
  BATON_CHECK(in.good(), baton::config_error, "cannot read ", questions_txt.string());
  int asked = 0, passed = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::printf("\n%s\n", line.c_str());
      continue;
    }
    ++asked;
    const baton::RelayResult r = relay->run(file.tok.encode(line));
    std::printf("\nQ: %s\n", line.c_str());
    for (const baton::StageRun& s : r.runs)
      std::printf("  [cycle %d] %-8s %-24s %6.2f ms\n", s.cycle, s.name.c_str(),
                  shown(file.tok.decode(s.ids)).c_str(), s.ms);
    const std::string answer = file.tok.decode(r.output(1));
    std::printf("  => %s after %d cycle%s: %s  (%.2f ms in all)\n", r.passed() ? "PASS" : "no pass",
                r.cycles, r.cycles == 1 ? "" : "s", answer.c_str(), r.total_ms);
    passed += r.passed();
  }
  std::printf("\n%d questions, the gate passed %d\n", asked, passed);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path relay_json =
      argc > 1 ? std::filesystem::path(argv[1]) : word_problems::bundled_dir() / "relay.json";
  const std::filesystem::path questions =
      argc > 2 ? std::filesystem::path(argv[2]) : relay_json.parent_path() / "demo_questions.txt";
  try {
    return run(relay_json, questions);
  } catch (const std::exception& e) {
    std::cerr << "word_problems_demo: " << e.what() << "\n";
    return 1;
  }
}
