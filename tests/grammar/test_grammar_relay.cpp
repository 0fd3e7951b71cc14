// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A stage's "grammar" in a relay file: parsed and checked with the file and field in the
// message, a schema's properties kept in the file's order, compiled against the tokenizer by
// resolve_text (the stop ids as end of sequence), refused by an "exact" stage.
#include <doctest/doctest.h>

#include <fstream>

#include "baton/relay/runtime_chain.hpp"
#include "baton/relay/runtime_relay_instances.hpp"  // build_relay, compiled once in dispatch/
#include "baton/text/relay_text.hpp"
#include "support/expect_error.hpp"
#include "support/host_model.hpp"
#include "support/test_paths.hpp"

using namespace baton;
namespace g = baton::grammar;

namespace {

const std::filesystem::path kDemo = BATON_DEMO_DIR;

nlohmann::json relay_with(nlohmann::json stage_extra) {
  nlohmann::json st = {{"name", "extract"},
                       {"input", {{{"request", true}}}},
                       {"max_new", 12},
                       {"stop_text", {"<|im_end|>"}}};
  st.update(stage_extra);
  return {{"model", kDemo.string()}, {"stages", {st}}};
}

RelaySpec parsed(const nlohmann::json& j) { return parse_relay_spec(j, "relay.json"); }

}  // namespace

TEST_CASE("relay file: grammar errors name the file, the stage and the field") {
  EXPECT_ERROR(grammar_error, parsed(relay_with({{"grammar", {{"regex", "a(?=b)"}}}})),
               "relay.json: stages[0] ('extract').grammar", "offset 1", "look-around");
  EXPECT_ERROR(config_error, parsed(relay_with({{"grammar", {{"regexp", "a"}}}})),
               "stages[0] ('extract').grammar", "must be {\"regex\"");
  EXPECT_ERROR(config_error, parsed(relay_with({{"grammar", {{"regex", 5}}}})), ".regex must");
  EXPECT_ERROR(
      grammar_error,
      parsed(relay_with({{"grammar", {{"json_schema", {{"type", "integer"}, {"minimum", 0}}}}}})),
      "('extract').grammar", "\"minimum\" is not supported");
}

TEST_CASE("relay file: a schema keeps its properties in the file's order") {
  const auto dir = test::fresh_dir("grammar_relay_order");
  const auto file = dir / "relay.json";
  std::ofstream(file) << R"({"model": ")" << kDemo.string() << R"(", "stages": [
    {"name": "x", "input": [{"request": true}], "max_new": 40,
     "grammar": {"json_schema": {"type": "object", "properties": {"zeta": {"type": "integer"},
       "alpha": {"type": "boolean"}}, "required": ["zeta", "alpha"], "additionalProperties": false}}}]})";
  const RelaySpec spec = load_relay_spec(file);
  REQUIRE(spec.stages[0].grammar);
  const std::string& src = spec.stages[0].grammar->source;
  CHECK(src.find("zeta") < src.find("alpha"));
  const g::Dfa d = g::compile_dfa(*spec.stages[0].grammar);
  std::int32_t q = 0;
  for (const char c : std::string(R"({"zeta": 3, "alpha": true})"))
    q = d.step(q, static_cast<std::uint8_t>(c));
  CHECK(q != g::kDead);
  CHECK(d.accepting[static_cast<std::size_t>(q)]);
}

TEST_CASE("resolve_text compiles the grammar with the stop ids; an exact stage refuses it") {
  const auto tok = Tokenizer::from_file(kDemo / "tokenizer.json");
  RelaySpec spec = parsed(relay_with({{"grammar", {{"regex", "[0-9]{1,6} [-+*] [0-9]{1,6}"}}}}));
  CHECK(spec.has_text());
  resolve_text(spec, tok);
  CHECK_FALSE(spec.has_text());
  const auto& tg = spec.stages[0].compiled_grammar;
  REQUIRE(tg);
  const std::int32_t im_end = *tok.token_to_id("<|im_end|>");
  CHECK(tg->is_eos(im_end));
  const auto ids = tok.encode("7 + 5");
  std::int32_t q = 0;
  CHECK_FALSE(g::TokenGrammar::test(tg->mask(q), im_end));
  for (const auto id : ids) q = tg->advance(q, id);
  REQUIRE(q != g::kDead);
  CHECK(g::TokenGrammar::test(tg->mask(q), im_end));
  // The chain of a runtime stage carries the grammar; an exact stage refuses it by name.
  const auto chain = build_runtime_chain<host>(spec.stages[0], spec, 724);
  CHECK(chain.member<0>().present());
  spec.stages[0].exact = true;
  EXPECT_ERROR(config_error, build_runtime_chain<host>(spec.stages[0], spec, 724),
               "relay.json: stage 'extract'.grammar", "declared exact", "baton.grammar");
  // A grammar with a bad vocabulary fit is named with its stage.
  RelaySpec too_short =
      parsed(relay_with({{"grammar", {{"regex", "[0-9]{1,6} [-+*] [0-9]{1,6}"}}}, {"max_new", 2}}));
  resolve_text(too_short, tok);
  EXPECT_ERROR(grammar_error, build_relay(too_short), "stage 'extract'", "needs at least");
}
