// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The grammar constraint in the decode loop (host backend), on random tiny models x random
// grammars: every output matches its grammar by an independent matcher (PCRE2 on the text,
// or a JSON parse plus a schema check written here); the output equals constrained greedy
// decoding on the naive f64 reference; when the free output already matches, the
// constrained output is the same; jump-forward gives the same output with fewer forwards;
// a budget that cannot fit the grammar is refused and leaves the stage usable.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/grammar/grammar.hpp"
#include "baton/intercept/grammar_constraint.hpp"
#include "baton/intercept/step_skip.hpp"
#include "support/constrained_reference.hpp"
#include "support/expect_error.hpp"
#include "support/grammar_world.hpp"
#include "support/relay_fixture.hpp"

using namespace baton;
using namespace baton::test;
using namespace baton::wire;
namespace g = baton::grammar;

namespace {

constexpr KvShape kShape{.prefix_capacity = 16, .tail_capacity = 80, .slots = 1};

using World = GrammarWorld;

// An independent check of the schema subset on parsed JSON (ordered: keys in output order).
bool conforms(const nlohmann::ordered_json& v, const nlohmann::ordered_json& s) {
  if (s.contains("enum"))
    return std::find(s["enum"].begin(), s["enum"].end(), v) != s["enum"].end();
  const std::string type = s["type"];
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "string") {
    if (!v.is_string()) return false;
    const std::string str = v.get<std::string>();
    std::size_t chars = 0;
    for (const char c : str) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return chars <= s.value("maxLength", 1u << 30);
  }
  if (type == "array") {
    if (!v.is_array() || v.size() > s.value("maxItems", 1u << 30)) return false;
    for (const auto& item : v)
      if (!conforms(item, s["items"])) return false;
    return true;
  }
  if (!v.is_object() || v.size() != s["properties"].size()) return false;
  auto it = v.begin();
  for (const auto& [key, sub] : s["properties"].items()) {
    if (it.key() != key || !conforms(it.value(), sub)) return false;
    ++it;
  }
  return true;
}

const std::vector<nlohmann::ordered_json>& schemas() {
  static const std::vector<nlohmann::ordered_json> s = [] {
    using J = nlohmann::ordered_json;
    const auto obj = [](J props) {
      J o = {{"type", "object"}, {"properties", props}};
      J req = J::array();
      for (const auto& [k, v] : props.items()) req.push_back(k);
      o["required"] = req;
      o["additionalProperties"] = false;
      return o;
    };
    return std::vector<J>{
        obj({{"a", {{"type", "integer"}}},
             {"op", {{"type", "string"}, {"enum", {"+", "*"}}}},
             {"b", {{"type", "integer"}}}}),
        obj({{"name", {{"type", "string"}, {"maxLength", 6}}},
             {"ok", {{"type", "boolean"}}},
             {"xs", {{"type", "array"}, {"items", {{"type", "number"}}}, {"maxItems", 3}}}}),
        J{{"type", "array"}, {"items", {{"type", "string"}, {"maxLength", 3}}}, {"maxItems", 2}},
    };
  }();
  return s;
}

using GStage = Stage<RModel, RSlice, RCache, Chain<GrammarConstraint<host>>>;
using JStage = Stage<RModel, RSlice, RCache, Chain<GrammarConstraint<host>, StepSkip>>;

const std::vector<std::int32_t> kPrefix = {40, 41, 42, 17, 3};

}  // namespace

TEST_CASE("constrained outputs match their grammar and the naive reference (random x random)") {
  std::mt19937 rng(15);
  int regexes = 0, jsons = 0, skipped_forwards = 0, plain_forwards = 0, jump_forwards = 0;
  for (unsigned seed = 1; seed <= 4; ++seed) {
    World w(seed);
    for (int k = 0; k < 10; ++k) {
      const bool json = k % 3 == 2;
      const std::string re = random_regex(rng);
      const auto& schema = schemas()[static_cast<std::size_t>(k) % schemas().size()];
      const g::GrammarSpec spec =
          json ? g::GrammarSpec::json_schema(schema) : g::GrammarSpec::regex(re);
      INFO("seed " << seed << " grammar " << spec.source);
      const auto tg = g::compile_grammar(spec, w.vocab);
      const int max_new = std::max(tg->distance(0), 1) + static_cast<int>(rng() % 30);
      const std::vector<std::int32_t> req = {static_cast<std::int32_t>(rng() % 90),
                                             static_cast<std::int32_t>(rng() % 90)};
      const StageLimits limits{max_new, {w.eos}};
      auto plain = make_stage<RCache>("extract", *w.model, w.no_adapter(), kShape, kPrefix,
                                      input(request), limits, Chain{GrammarConstraint<host>(tg)});
      plain.prewarm();
      const DecodeResult r = plain.run(req);
      const std::string text = w.text(r.ids);
      if (json) {
        ++jsons;
        nlohmann::ordered_json parsed;
        REQUIRE_NOTHROW(parsed = nlohmann::ordered_json::parse(text));
        CHECK_MESSAGE(conforms(parsed, schema), text);
      } else {
        ++regexes;
        CHECK_MESSAGE(pcre_full_match(re, text), "output \"" << text << "\"");
      }
      // The same as constrained greedy decoding on the naive reference, with the grammar as
      // the predicate (the loop's caching, masking and state advance are what is checked).
      const NaiveModel ref(w.tm);
      std::vector<int> seq(kPrefix.begin(), kPrefix.end());
      seq.insert(seq.end(), req.begin(), req.end());
      auto scratch = tg->make_scratch();
      const auto state_after = [&](const std::vector<int>& out) {
        std::int32_t q = 0;
        for (const int t : out) q = tg->advance(q, t);
        return q;
      };
      const auto want = constrained_greedy(
          ref, seq, max_new,
          [&](const std::vector<int>& out, int id) {
            const int remaining = max_new - static_cast<int>(out.size());
            return g::TokenGrammar::test(tg->mask(state_after(out), remaining, scratch), id);
          },
          [&](const std::vector<int>& out) {
            return out.back() == w.eos || tg->complete(state_after(out));
          });
      std::vector<int> want_ids = want.ids;
      if (!want_ids.empty() && want_ids.back() == w.eos) want_ids.pop_back();
      CHECK(std::vector<int>(r.ids.begin(), r.ids.end()) == want_ids);
      // Jump-forward: the same output, and every forced step saves its forward.
      auto jumping =
          make_stage<RCache>("extract", *w.model, w.no_adapter(), kShape, kPrefix, input(request),
                             limits, Chain{GrammarConstraint<host>(tg), StepSkip{}});
      jumping.prewarm();
      const DecodeResult j = jumping.run(req);
      CHECK(j.ids == r.ids);
      // A skipped step needs no forward, but its token still goes through the next one (in
      // a batch), so the saving is at most one forward per skipped step.
      CHECK(j.forwards <= r.forwards);
      CHECK(j.forwards + j.skipped >= r.forwards);
      skipped_forwards += j.skipped;
      plain_forwards += r.forwards;
      jump_forwards += j.forwards;
    }
  }
  MESSAGE(regexes << " regex and " << jsons << " JSON runs; jump-forward skipped "
                  << skipped_forwards << " steps: " << jump_forwards << " forwards instead of "
                  << plain_forwards);
  CHECK(skipped_forwards > 0);
  CHECK(jump_forwards < plain_forwards);
}

namespace {

// `s` as a regex literal (every character escaped by code).
std::string regex_literal(const std::string& s) {
  std::string out;
  char buf[16];
  for (const char c : s) {
    std::snprintf(buf, sizeof buf, "\\x{%X}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    out += buf;
  }
  return out;
}

}  // namespace

TEST_CASE("when the free output already matches, the constrained output is the same") {
  for (unsigned seed = 5; seed <= 8; ++seed) {
    World w(seed);
    const std::vector<std::int32_t> req = {static_cast<std::int32_t>(seed * 7 % 90), 33};
    const StageLimits limits{20, {w.eos}};
    auto free_stage = make_stage<RCache>("free", *w.model, w.no_adapter(), kShape, kPrefix,
                                         input(request), limits);
    free_stage.prewarm();
    const DecodeResult free_run = free_stage.run(req);
    const std::string text = w.text(free_run.ids);
    INFO("seed " << seed << " free output \"" << text << "\"");
    REQUIRE(text.size() >= 3);  // something for the grammars to agree with
    // The output itself, and a class of its characters of bounded length (the budget never
    // binds: every state accepts).
    std::string chars;
    for (const char c : text)
      if (chars.find(c) == std::string::npos) chars += c;
    const std::vector<std::string> grammars = {regex_literal(text),
                                               "[" + regex_literal(chars + "q") + "]{0,80}",
                                               "(" + regex_literal(text) + "|zzz)"};
    for (const std::string& re : grammars) {
      INFO("grammar " << re);
      const auto tg = g::compile_grammar(g::GrammarSpec::regex(re), w.vocab);
      auto st = make_stage<RCache>("c", *w.model, w.no_adapter(), kShape, kPrefix, input(request),
                                   limits, Chain{GrammarConstraint<host>(tg)});
      st.prewarm();
      CHECK(st.run(req).ids == free_run.ids);
    }
  }
}

TEST_CASE("budget: max_new at the grammar's shortest completion still completes it") {
  World w(11);
  const auto& schema = schemas()[1];
  const auto tg = g::compile_grammar(g::GrammarSpec::json_schema(schema), w.vocab);
  const std::vector<std::int32_t> req = {50, 51};
  for (int slack = 0; slack <= 4; ++slack) {
    const int max_new = tg->distance(0) + slack;
    auto st = make_stage<RCache>("tight", *w.model, w.no_adapter(), kShape, kPrefix, input(request),
                                 StageLimits{max_new, {w.eos}}, Chain{GrammarConstraint<host>(tg)});
    st.prewarm();
    const DecodeResult r = st.run(req);
    const std::string text = w.text(r.ids);
    INFO("max_new " << max_new << ": \"" << text << "\"");
    CHECK(static_cast<int>(r.ids.size()) <= max_new);
    nlohmann::ordered_json parsed;
    REQUIRE_NOTHROW(parsed = nlohmann::ordered_json::parse(text));
    CHECK(conforms(parsed, schema));
  }
  auto too_small = make_stage<RCache>("tiny", *w.model, w.no_adapter(), kShape, kPrefix,
                                      input(request), StageLimits{tg->distance(0) - 1, {w.eos}},
                                      Chain{GrammarConstraint<host>(tg)});
  too_small.prewarm();
  EXPECT_ERROR(grammar_error, too_small.run(req), "stage 'tiny'", "needs at least", "max_new is");
}

TEST_CASE("grammar state is per request: interleaved sessions give the separate runs' tokens") {
  World w(12);
  const auto tg = g::compile_grammar(g::GrammarSpec::regex("[0-9]{1,4} [+*] [0-9]{1,4}"), w.vocab);
  constexpr KvShape two{.prefix_capacity = 16, .tail_capacity = 64, .slots = 2};
  auto st = make_stage<RCache>("x", *w.model, w.no_adapter(), two, kPrefix, input(request),
                               StageLimits{16, {w.eos}}, Chain{GrammarConstraint<host>(tg)});
  st.prewarm();
  const std::vector<std::int32_t> qa = {20, 21}, qb = {60, 7};
  const auto alone_a = st.run(qa).ids, alone_b = st.run(qb).ids;
  REQUIRE(alone_a != alone_b);
  auto a = st.begin(qa, 0);
  auto b = st.begin(qb, 1);
  bool more_a = true, more_b = true;
  while (more_a || more_b) {
    if (more_a) more_a = st.step(a);
    if (more_b) more_b = st.step(b);
  }
  CHECK(st.finish(a).ids == alone_a);
  CHECK(st.finish(b).ids == alone_b);
}

TEST_CASE("a complete match ends the generation without a forward for end-of-sequence") {
  World w(13);
  // Once "x1y" is written nothing but EOS may follow: the grammar stops the loop itself.
  const auto tg = g::compile_grammar(g::GrammarSpec::regex("x1y"), w.vocab);
  auto st = make_stage<RCache>("done", *w.model, w.no_adapter(), kShape, kPrefix, input(request),
                               StageLimits{10, {w.eos}}, Chain{GrammarConstraint<host>(tg)});
  st.prewarm();
  const DecodeResult r = st.run(std::vector<std::int32_t>{9, 8});
  CHECK(w.text(r.ids) == "x1y");
  CHECK(r.stopped);
  CHECK(r.stopped_by == "baton.grammar");
  CHECK(r.stop_id == -1);
  CHECK(r.forwards == 3);  // the prefill and one per token after the first; none for EOS
}
