// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Held-out evaluation of the bundled word-problem relay, run through baton (not PyTorch): each
// stage alone, unconstrained and constrained by a grammar, and the whole relay, with the
// stages' adapters and on the base model alone, for every part of the held-out split.
//
//   word_problems_eval [--relay RELAY_JSON] [--limit N] [--json OUT.json] [--no-base] HELDOUT.jsonl
//
// --no-base leaves out the base model alone (60% of the run; the test's floors are the
// adapters' figures, and the base's are in models/word-problems/README.md).
//
// HELDOUT.jsonl: one problem per line, {"question", "facts", "worked", "answer", "wrong",
// "split"} (training/problems.py writes it; "split" is "seen", "unseen_template" or
// "unseen_fact", and a line without one counts in "all" only). Figures, per split and for all:
//   extract   parse rate (output is exactly "a op b") and exact match with the facts
//   reason    alone, from the question and the correct facts: parse rate ("a op b = c") and
//             how often its result is right
//   verify    alone: parse rate ("a op b = c vs d" and a verdict line), and how often the
//             relay's gate passes it on the correct worked answer and fails it on a wrong one
//             (one whose result differs)
//   relay     end to end as the relay file has it: the first cycle's result (ungated), and the
//             result after the verify gate with up to max_cycles cycles (gated); how often the
//             gate passed a wrong one
// Each stage runs twice: unconstrained (no grammar) and constrained (the relay file's grammar
// for the stage, or else kStageGrammar's), so that a parse rate says what the adapter does
// and what the grammar does.
#include "word_problems.hpp"

#include <baton/core/error.hpp>
#include <baton/grammar/grammar.hpp>
#include <baton/relay/gate.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace {

using Ids = std::vector<std::int32_t>;

/// What each stage writes, as a grammar for the constrained runs of a stage whose relay file
/// names none: extract "7 + 5", reason "7 + 5 = 12", verify "7 + 5 = 12 vs 13\nFAIL".
constexpr std::array<const char*, 3> kStageGrammar = {
    "[0-9]{1,3} [-+*] [0-9]{1,3}",
    "[0-9]{1,3} [-+*] [0-9]{1,3} = [0-9]{1,4}",
    "[0-9]{1,3} [-+*] [0-9]{1,3} = [0-9]{1,4} vs [0-9]{1,4}\\n(PASS|FAIL)",
};

struct Problem {
  std::string question, facts, worked, wrong, split;
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
                   j.value("split", std::string{}),
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

/// One stage alone, without a grammar and with one: [0] unconstrained, [1] constrained.
using Both = std::array<Rate, 2>;
constexpr std::array<const char*, 2> kMode = {"unconstrained", "constrained"};

struct Figures {
  Both extract_parse, extract_exact, reason_parse, reason_alone, verify_parse, verify_correct,
      verify_wrong;
  Rate ungated, gated, gate_passed_wrong;
  long cycles = 0;

  nlohmann::json json() const {
    const auto r = [](const Rate& x) {
      return nlohmann::json{{"rate", x.value()}, {"hits", x.hits}, {"n", x.total}};
    };
    nlohmann::json j = {
        {"relay_ungated", r(ungated)},
        {"relay_gated", r(gated)},
        {"gate_passed_wrong", r(gate_passed_wrong)},
        {"mean_cycles", gated.total ? static_cast<double>(cycles) / gated.total : 0.0}};
    for (int m = 0; m < 2; ++m) {
      const std::string sfx = std::string("_") + kMode[m];
      j["extract_parse" + sfx] = r(extract_parse[m]);
      j["extract_exact" + sfx] = r(extract_exact[m]);
      j["reason_parse" + sfx] = r(reason_parse[m]);
      j["reason_alone" + sfx] = r(reason_alone[m]);
      j["verify_parse" + sfx] = r(verify_parse[m]);
      j["verify_on_correct" + sfx] = r(verify_correct[m]);
      j["verify_on_wrong" + sfx] = r(verify_wrong[m]);
    }
    return j;
  }
};

/// Figures for all problems ("all") and for each split by name.
using BySplit = std::map<std::string, Figures>;

// The relay file's gate, as the relay applies it to the verify stage's output.
baton::Gate gate_of(const baton::RelaySpec& spec) {
  const auto& needle = spec.gate.needle.ids;
  return spec.gate.kind == baton::GateSpec::Kind::contains ? baton::contains(needle)
                                                           : baton::starts_with(needle);
}

// Stage `s` alone, pre-warmed: mode 0 without any grammar, mode 1 with the relay file's grammar
// for it, or kStageGrammar's where it has none.
std::unique_ptr<baton::RuntimeRelay> stage_alone(const baton::RelaySpec& spec,
                                                 const baton::Tokenizer& tok, int s, int mode) {
  baton::RelaySpec one = word_problems::single_stage(spec, s);
  baton::StageSpec& st = one.stages[0];
  if (mode == 0) {
    st.grammar.reset();
    st.compiled_grammar.reset();
  } else if (!st.compiled_grammar) {
    st.grammar = baton::grammar::GrammarSpec::regex(kStageGrammar.at(s));
    st.compiled_grammar = baton::grammar::compile_grammar(
        *st.grammar, std::make_shared<const baton::grammar::Vocabulary>(
                         baton::grammar::vocabulary_of(tok, st.stop)));
  }
  auto relay = word_problems::build(one);
  relay->prewarm();
  return relay;
}

// Every figure for one relay description (with adapters, or the base model alone).
BySplit evaluate(const baton::RelaySpec& spec, const baton::Tokenizer& tok,
                 const std::vector<Problem>& problems) {
  const int n_stages = static_cast<int>(spec.stages.size());
  BATON_CHECK(n_stages == 3, baton::config_error, spec.source.string(),
              ": the word-problem relay has three stages (extract, reason, verify)");
  const baton::Gate passes = gate_of(spec);
  // verify's whole output: its working, the candidate's result, the verdict line.
  const std::regex verify_form("[0-9]+ [-+*] [0-9]+ = [0-9]+ vs [0-9]+\n(PASS|FAIL)");
  const auto verify_parses = [&](const std::string& text) {
    return std::regex_match(text, verify_form);
  };

  // Each stage alone, both ways: a one-stage relay, pre-warmed once, fed the input the relay
  // would give it.
  std::array<std::array<std::unique_ptr<baton::RuntimeRelay>, 2>, 3> alone;
  for (int s = 0; s < n_stages; ++s)
    for (int m = 0; m < 2; ++m) alone[s][m] = stage_alone(spec, tok, s, m);
  const auto run_alone = [&](int s, int m, const Ids& request, const std::vector<Ids>& outputs) {
    return alone[s][m]->run(word_problems::stage_input(spec, s, request, outputs)).output(0);
  };
  const auto full = word_problems::build(spec);
  full->prewarm();

  BySplit by;
  for (const Problem& p : problems) {
    Figures& all = by["all"];
    Figures* split = p.split.empty() ? nullptr : &by[p.split];
    const auto add = [&](auto member, bool hit) {
      (all.*member).add(hit);
      if (split) (split->*member).add(hit);
    };
    const auto add_both = [&](auto member, int m, bool hit) {
      (all.*member)[m].add(hit);
      if (split) (split->*member)[m].add(hit);
    };

    const Ids q = tok.encode(p.question);
    const Ids gold_facts = tok.encode(p.facts);
    // A wrong candidate that reaches the right number another way is not wrong for the relay.
    const bool wrong_differs = word_problems::parse_result(p.wrong) != p.answer;
    for (int m = 0; m < 2; ++m) {
      const std::string extracted = tok.decode(run_alone(0, m, q, {}));
      add_both(&Figures::extract_parse, m, word_problems::parse_facts(extracted).has_value());
      add_both(&Figures::extract_exact, m, extracted == p.facts);

      const std::string reasoned = tok.decode(run_alone(1, m, q, {gold_facts}));
      add_both(&Figures::reason_parse, m, word_problems::parse_worked(reasoned).has_value());
      add_both(&Figures::reason_alone, m, word_problems::parse_result(reasoned) == p.answer);

      const Ids on_correct = run_alone(2, m, q, {gold_facts, tok.encode(p.worked)});
      add_both(&Figures::verify_parse, m, verify_parses(tok.decode(on_correct)));
      add_both(&Figures::verify_correct, m, passes(on_correct));
      if (wrong_differs) {
        const Ids on_wrong = run_alone(2, m, q, {gold_facts, tok.encode(p.wrong)});
        add_both(&Figures::verify_parse, m, verify_parses(tok.decode(on_wrong)));
        add_both(&Figures::verify_wrong, m, !passes(on_wrong));
      }
    }

    const baton::RelayResult r = full->run(q);
    add(&Figures::ungated, word_problems::parse_result(tok.decode(r.output(1, 1))) == p.answer);
    const bool right = word_problems::parse_result(tok.decode(r.output(1))) == p.answer;
    add(&Figures::gated, right);
    if (r.passed()) add(&Figures::gate_passed_wrong, !right);
    all.cycles += r.cycles;
    if (split) split->cycles += r.cycles;
  }
  return by;
}

void print(const std::string& split, const Figures& a, const Figures* b) {
  std::printf("\n%-36s %8s %8s %8s %8s\n", ("[" + split + "]").c_str(), "adapters", "", "base", "");
  std::printf("%-36s %8s %8s %8s %8s\n", "", "free", "grammar", "free", "grammar");
  // A rate over no cases (the base model's gate never passes; the base not run) shows as "-".
  const auto pct = [](const Rate* x) {
    char buf[16];
    if (x == nullptr || x->total == 0) return std::string("-");
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * x->value());
    return std::string(buf);
  };
  const auto both = [&](const char* name, Both Figures::*m) {
    const Rate* y = b ? &(b->*m)[0] : nullptr;
    std::printf("%-36s %8s %8s %8s %8s\n", name, pct(&(a.*m)[0]).c_str(), pct(&(a.*m)[1]).c_str(),
                pct(y).c_str(), pct(y ? y + 1 : nullptr).c_str());
  };
  const auto one = [&](const char* name, Rate Figures::*m) {
    std::printf("%-36s %8s %8s %8s\n", name, pct(&(a.*m)).c_str(), "",
                pct(b ? &(b->*m) : nullptr).c_str());
  };
  both("extract: parses as 'a op b'", &Figures::extract_parse);
  both("extract: equals the facts", &Figures::extract_exact);
  both("reason alone: parses as 'a op b = c'", &Figures::reason_parse);
  both("reason alone: right (correct facts)", &Figures::reason_alone);
  both("verify: parses", &Figures::verify_parse);
  both("verify: PASS on a correct answer", &Figures::verify_correct);
  both("verify: FAIL on a wrong answer", &Figures::verify_wrong);
  std::printf("relay as its file has it (%d problems):\n", a.gated.total);
  one("  ungated (cycle 1)", &Figures::ungated);
  one("  gated (up to max_cycles)", &Figures::gated);
  one("  gate passed a wrong answer", &Figures::gate_passed_wrong);
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path relay_json = word_problems::bundled_dir() / "relay.json";
  std::filesystem::path heldout, json_out;
  int limit = 1 << 30;
  bool with_base = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--relay" && has_value)
      relay_json = argv[++i];
    else if (a == "--limit" && has_value)
      limit = std::stoi(argv[++i]);
    else if (a == "--json" && has_value)
      json_out = argv[++i];
    else if (a == "--no-base")
      with_base = false;
    else if (!a.starts_with("--") && heldout.empty())
      heldout = a;
    else {
      std::cerr << "usage: word_problems_eval [--relay RELAY_JSON] [--limit N] [--json OUT] "
                   "[--no-base] HELDOUT.jsonl\n";
      return 2;
    }
  }
  if (heldout.empty()) heldout = relay_json.parent_path() / "heldout.jsonl";
  try {
    const word_problems::RelayFile file = word_problems::load(relay_json);
    const std::vector<Problem> problems = read_problems(heldout, limit);
    const BySplit with = evaluate(file.spec, file.tok, problems);
    // The base model alone (every stage without its adapter): half the run, left out by
    // --no-base (the test's floors are the adapters' figures).
    std::optional<BySplit> base;
    if (with_base) base = evaluate(word_problems::without_adapters(file.spec), file.tok, problems);
    std::printf("%zu held-out problems (%s), through baton's host backend\n", problems.size(),
                heldout.string().c_str());
    for (const auto& [split, f] : with) print(split, f, base ? &base->at(split) : nullptr);
    if (!json_out.empty()) {
      nlohmann::json j = {{"problems", problems.size()}, {"heldout", heldout.string()}};
      for (const auto& [split, f] : with) {
        j["adapters"][split] = f.json();
        if (base) j["base_alone"][split] = base->at(split).json();
      }
      std::ofstream(json_out) << j.dump(1) << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "word_problems_eval: " << e.what() << "\n";
    return 1;
  }
}
