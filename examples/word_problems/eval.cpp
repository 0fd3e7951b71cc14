// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Held-out evaluation of the bundled word-problem relay, run through baton (not PyTorch): each
// stage alone and the whole relay, with the stages' adapters and on the base model alone.
//
//   word_problems_eval [--relay RELAY_JSON] [--limit N] [--json OUT.json] HELDOUT.jsonl
//
// HELDOUT.jsonl: one problem per line, {"question", "facts", "worked", "answer", "wrong"}
// (training/problems.py writes it from a seed the training never saw). Figures:
//   extract   parse rate (output is exactly "a op b") and exact match with the facts
//   reason    accuracy alone: from the question and the correct facts, its result is right
//   verify    how often the relay's gate passes it on the correct worked answer, and fails it
//             on a wrong one (one whose result differs)
//   relay     end to end: the first cycle's result (ungated), and the result after the verify
//             gate with up to max_cycles cycles (gated); how often the gate passed a wrong one
#include "word_problems.hpp"

#include <baton/core/error.hpp>
#include <baton/relay/gate.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

using Ids = std::vector<std::int32_t>;

struct Problem {
  std::string question, facts, worked, wrong;
  long answer = 0;
};

std::vector<Problem> read_problems(const std::filesystem::path& path, int limit) {
  std::ifstream in(path);
  BATON_CHECK(in.good(), baton::config_error, "cannot read ", path.string());
  std::vector<Problem> out;
  for (std::string line; std::getline(in, line) && static_cast<int>(out.size()) < limit;) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    const auto& answer = j.at("answer");  // a number, or its digits as a string
    out.push_back({j.at("question"), j.at("facts"), j.at("worked"), j.at("wrong"),
                   answer.is_string() ? std::stol(answer.get<std::string>()) : answer.get<long>()});
  }
  BATON_CHECK(!out.empty(), baton::config_error, path.string(), ": no problems");
  return out;
}

struct Rate {
  int hits = 0, total = 0;
  void add(bool hit) { hits += hit, ++total; }
  double value() const { return total ? static_cast<double>(hits) / total : 0.0; }
};

struct Figures {
  Rate extract_parse, extract_parse_free, extract_exact, reason_alone, verify_correct, verify_wrong,
      ungated, gated, gate_passed_wrong;
  double mean_cycles = 0;

  nlohmann::json json() const {
    const auto r = [](const Rate& x) {
      return nlohmann::json{{"rate", x.value()}, {"hits", x.hits}, {"n", x.total}};
    };
    return {{"extract_parse", r(extract_parse)},
            {"extract_parse_unconstrained", r(extract_parse_free)},
            {"extract_exact", r(extract_exact)},
            {"reason_alone", r(reason_alone)},
            {"verify_on_correct", r(verify_correct)},
            {"verify_on_wrong", r(verify_wrong)},
            {"relay_ungated", r(ungated)},
            {"relay_gated", r(gated)},
            {"gate_passed_wrong", r(gate_passed_wrong)},
            {"mean_cycles", mean_cycles}};
  }
};

// The relay file's gate, as the relay applies it to the verify stage's output.
baton::Gate gate_of(const baton::RelaySpec& spec) {
  const auto& needle = spec.gate.needle.ids;
  return spec.gate.kind == baton::GateSpec::Kind::contains ? baton::contains(needle)
                                                           : baton::starts_with(needle);
}

// Every figure for one relay description (with adapters, or the base model alone).
Figures evaluate(const baton::RelaySpec& spec, const baton::Tokenizer& tok,
                 const std::vector<Problem>& problems) {
  const int n_stages = static_cast<int>(spec.stages.size());
  BATON_CHECK(n_stages == 3, baton::config_error, spec.source.string(),
              ": the word-problem relay has three stages (extract, reason, verify)");
  const baton::Gate passes = gate_of(spec);
  Figures f;

  // Each stage alone: a one-stage relay, pre-warmed once, fed the input the relay would give it.
  std::vector<std::unique_ptr<baton::RuntimeRelay>> alone;
  for (int s = 0; s < n_stages; ++s) {
    alone.push_back(word_problems::build(word_problems::single_stage(spec, s)));
    alone.back()->prewarm();
  }
  const auto run_alone = [&](int s, const Ids& request, const std::vector<Ids>& outputs) {
    return alone[s]->run(word_problems::stage_input(spec, s, request, outputs)).output(0);
  };
  // The extract stage once more without its grammar (if it has one), for the parse rate of
  // free-running generation beside the constrained one.
  baton::RelaySpec free_spec = word_problems::single_stage(spec, 0);
  free_spec.stages[0].grammar.reset();
  free_spec.stages[0].compiled_grammar.reset();
  const auto free_extract = word_problems::build(free_spec);
  free_extract->prewarm();
  const auto full = word_problems::build(spec);
  full->prewarm();

  long cycles = 0;
  for (const Problem& p : problems) {
    const Ids q = tok.encode(p.question);
    const std::string extracted = tok.decode(run_alone(0, q, {}));
    const auto facts = word_problems::parse_facts(extracted);
    f.extract_parse.add(facts.has_value());
    f.extract_exact.add(extracted == p.facts);
    f.extract_parse_free.add(
        word_problems::parse_facts(
            tok.decode(free_extract->run(word_problems::stage_input(spec, 0, q, {})).output(0)))
            .has_value());

    const Ids gold_facts = tok.encode(p.facts);
    f.reason_alone.add(word_problems::parse_result(tok.decode(run_alone(1, q, {gold_facts}))) ==
                       p.answer);
    f.verify_correct.add(passes(run_alone(2, q, {gold_facts, tok.encode(p.worked)})));
    // A wrong candidate that reaches the right number another way is not wrong for the relay.
    if (word_problems::parse_result(p.wrong) != p.answer)
      f.verify_wrong.add(!passes(run_alone(2, q, {gold_facts, tok.encode(p.wrong)})));

    const baton::RelayResult r = full->run(q);
    f.ungated.add(word_problems::parse_result(tok.decode(r.output(1, 1))) == p.answer);
    const bool right = word_problems::parse_result(tok.decode(r.output(1))) == p.answer;
    f.gated.add(right);
    if (r.passed()) f.gate_passed_wrong.add(!right);
    cycles += r.cycles;
  }
  f.mean_cycles = static_cast<double>(cycles) / static_cast<double>(problems.size());
  return f;
}

void print(const char* label, const Figures& a, const Figures& b) {
  std::printf("%-34s %12s %12s\n", label, "adapters", "base alone");
  const auto row = [](const char* name, const Rate& x, const Rate& y) {
    std::printf("%-34s %11.1f%% %11.1f%%\n", name, 100 * x.value(), 100 * y.value());
  };
  row("extract: parses as 'a op b'", a.extract_parse, b.extract_parse);
  row("  the same without its grammar", a.extract_parse_free, b.extract_parse_free);
  row("extract: equals the facts", a.extract_exact, b.extract_exact);
  row("reason alone (correct facts)", a.reason_alone, b.reason_alone);
  row("verify: PASS on a correct answer", a.verify_correct, b.verify_correct);
  row("verify: FAIL on a wrong answer", a.verify_wrong, b.verify_wrong);
  row("relay, ungated (cycle 1)", a.ungated, b.ungated);
  row("relay, gated (up to max_cycles)", a.gated, b.gated);
  row("gate passed a wrong answer", a.gate_passed_wrong, b.gate_passed_wrong);
  std::printf("%-34s %12.2f %12.2f\n", "mean cycles", a.mean_cycles, b.mean_cycles);
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path relay_json = word_problems::bundled_dir() / "relay.json";
  std::filesystem::path heldout, json_out;
  int limit = 1 << 30;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--relay" && has_value)
      relay_json = argv[++i];
    else if (a == "--limit" && has_value)
      limit = std::stoi(argv[++i]);
    else if (a == "--json" && has_value)
      json_out = argv[++i];
    else if (!a.starts_with("--") && heldout.empty())
      heldout = a;
    else {
      std::cerr << "usage: word_problems_eval [--relay RELAY_JSON] [--limit N] [--json OUT] "
                   "HELDOUT.jsonl\n";
      return 2;
    }
  }
  if (heldout.empty()) heldout = relay_json.parent_path() / "heldout.jsonl";
  try {
    const word_problems::RelayFile file = word_problems::load(relay_json);
    const std::vector<Problem> problems = read_problems(heldout, limit);
    const Figures with = evaluate(file.spec, file.tok, problems);
    const Figures base = evaluate(word_problems::without_adapters(file.spec), file.tok, problems);
    std::printf("%zu held-out problems (%s), through baton's host backend\n\n", problems.size(),
                heldout.string().c_str());
    print("", with, base);
    if (!json_out.empty()) {
      std::ofstream(json_out) << nlohmann::json{{"problems", problems.size()},
                                                {"heldout", heldout.string()},
                                                {"adapters", with.json()},
                                                {"base_alone", base.json()}}
                                     .dump(1)
                              << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "word_problems_eval: " << e.what() << "\n";
    return 1;
  }
}
