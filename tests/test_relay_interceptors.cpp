// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Interceptors in relay files: parsing with errors that name file and field, the run-time
// negotiation (an exact stage, a graph-captured loop) naming stage and interceptor, and a
// relay built from JSON whose stages mask, stop on text and trace, against the reference.
//
// Mutation check (2026-12-01): check_card without the exact rule -> the run-time negotiation
// case fails (no error).
#include <doctest/doctest.h>

#include <fstream>

#include "baton/relay/runtime_relay_instances.hpp"  // build_relay, compiled once in dispatch/
#include "baton/text/relay_text.hpp"
#include "support/chatml_tokenizer.hpp"
#include "support/intercept_fixture.hpp"

using namespace baton;
using namespace baton::test;
using nlohmann::json;

namespace {

RelaySpec parse(const json& j) { return parse_relay_spec(j, "/cfg/relay.json"); }

json one_stage(json interceptors) {
  return {{"model", "m"},
          {"stages",
           {{{"name", "verify"},
             {"input", {{{"request", true}}}},
             {"max_new", 4},
             {"interceptors", std::move(interceptors)}}}}};
}

}  // namespace

TEST_CASE("relay JSON interceptors: parsed with their parameters; errors name file and field") {
  const RelaySpec spec = parse(one_stage(json::array({{{"stop_sequences", {"\n\n", {5, 6}}}},
                                                      {{"deny_tokens", {3, "x"}}},
                                                      {{"trace", true}},
                                                      {{"step_skip", true}}})));
  const auto& ics = spec.stages[0].interceptors;
  REQUIRE(ics.size() == 4);
  CHECK(ics[0].kind == InterceptorSpec::Kind::stop_sequences);
  REQUIRE(ics[0].stops.size() == 2);
  CHECK(ics[0].stops[0].text == "\n\n");
  CHECK(ics[0].stops[1].ids == std::vector<std::int32_t>{5, 6});
  CHECK(ics[1].kind == InterceptorSpec::Kind::deny_tokens);
  CHECK(ics[1].token_ids == std::vector<std::int32_t>{3});
  CHECK(ics[1].token_texts == std::vector<std::string>{"x"});
  CHECK(ics[2].kind == InterceptorSpec::Kind::trace);
  CHECK(ics[3].kind == InterceptorSpec::Kind::step_skip);
  CHECK(ics[1].where == "/cfg/relay.json: stages[0] ('verify').interceptors[1] (deny_tokens)");
  CHECK(spec.has_text());  // the text token and the stop sequences need the tokenizer

  CHECK_THROWS_WITH_AS(parse(one_stage(json::array({{{"beam", 4}}}))),
                       doctest::Contains("/cfg/relay.json: stages[0] ('verify').interceptors[0]: "
                                         "unknown interceptor 'beam'"),
                       config_error);
  CHECK_THROWS_WITH_AS(parse(one_stage(json::array({{{"trace", false}}}))),
                       doctest::Contains("interceptors[0].trace: write {\"trace\": true}"),
                       config_error);
  CHECK_THROWS_WITH_AS(
      parse(one_stage(json::array({{{"stop_sequences", "\n"}}}))),
      doctest::Contains("interceptors[0].stop_sequences must be a non-empty array"), config_error);
  CHECK_THROWS_WITH_AS(
      parse(one_stage(json::array({{{"allow_tokens", {1, -2}}}}))),
      doctest::Contains("interceptors[0].allow_tokens[1] holds -2, not a token id"), config_error);
  CHECK_THROWS_WITH_AS(
      parse(one_stage(json::array({{{"allow_tokens", {1}}}, {{"deny_tokens", {2}}}}))),
      doctest::Contains("interceptors[1] (deny_tokens): stage 'verify' already has allow_tokens"),
      config_error);
  json j = one_stage(json::array());
  j["stages"][0]["exact"] = "yes";
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("field 'exact' = \"yes\" is not a boolean"),
                       config_error);
}

TEST_CASE("run-time negotiation: the error names file, stage, field and interceptor") {
  json j = one_stage(json::array({{{"trace", true}}, {{"allow_tokens", {1, 2}}}}));
  j["stages"][0]["exact"] = true;
  RelaySpec spec = parse(j);
  CHECK_THROWS_WITH_AS(
      build_runtime_chain<host>(spec.stages[0], spec, 64),
      doctest::Contains("/cfg/relay.json: stages[0] ('verify').interceptors[1] (allow_tokens): "
                        "stage 'verify' is declared exact, so it accepts no distribution-altering "
                        "interceptor, but interceptor 'baton.token_set' alters the distribution"),
      config_error);
  j = one_stage(json::array({{{"deny_tokens", {1}}}, {{"trace", true}}}));
  j["stages"][0]["graph_captured"] = true;
  spec = parse(j);
  CHECK_THROWS_WITH_AS(
      build_runtime_chain<host>(spec.stages[0], spec, 64),
      doctest::Contains("stages[0] ('verify').interceptors[1] (trace): stage 'verify' has a "
                        "graph-captured decode loop, which accepts only graph-safe interceptors, "
                        "but interceptor 'baton.trace' is a host interceptor"),
      config_error);
  // The same rules accept what they should.
  j = one_stage(json::array({{{"trace", true}}}));
  j["stages"][0]["exact"] = true;
  spec = parse(j);
  CHECK_NOTHROW(build_runtime_chain<host>(spec.stages[0], spec, 64));
  // A built-in's own check becomes a config_error naming the field.
  spec = parse(one_stage(json::array({{{"allow_tokens", {70}}}})));
  try {
    build_runtime_chain<host>(spec.stages[0], spec, 64);
    FAIL("no error for an id outside the vocabulary");
  } catch (const config_error& e) {
    const std::string what = e.what();
    CHECK(what.find("interceptors[0] (allow_tokens): ") != std::string::npos);
    CHECK(what.find("id 70 at index 0 is outside the vocabulary") != std::string::npos);
  }
  spec = parse(one_stage(json::array({{{"stop_sequences", {"END"}}}})));
  CHECK_THROWS_WITH_AS(build_runtime_chain<host>(spec.stages[0], spec, 64),
                       doctest::Contains("stop sequences match decoded bytes, so they need the "
                                         "relay's tokenizer"),
                       config_error);
}

TEST_CASE("a relay from JSON with interceptors: masks, stops on text, traces") {
  int vocab = 0;
  const json tok_json = chatml_tokenizer_json(vocab);
  TinySpec ts;
  ts.vocab = vocab;
  ts.seed = 77;
  const TinyModel tm = make_tiny_model(ts);
  const auto dir = fresh_dir("relay_interceptors");
  write_tiny_model(tm, dir / "model");
  std::ofstream(dir / "model" / "tokenizer.json") << tok_json.dump();
  const Tokenizer tok = Tokenizer::from_file(dir / "model" / "tokenizer.json");
  const NaiveModel ref(tm);
  const auto request = tok.encode("the star");

  // Stage 1's stop string: the text across the 2nd and 3rd tokens it would generate freely.
  const auto free_b = ref.greedy(std::vector<int>(request.begin(), request.end()),
                                 8);  // stage b reads the request too
  const auto text_of = [&](int id) { return tok.decode(std::vector<std::int32_t>{id}); };
  const std::string stop =
      text_of(free_b[1]).substr(text_of(free_b[1]).size() - 1) + text_of(free_b[2]).substr(0, 1);
  std::size_t stop_len = 0;
  std::string so_far;
  for (std::size_t k = 0; k < free_b.size() && stop_len == 0; ++k) {
    so_far += text_of(free_b[k]);
    if (so_far.find(stop) != std::string::npos) stop_len = k + 1;
  }
  REQUIRE(stop_len >= 1);
  REQUIRE(stop_len <= 3);

  const std::vector<std::int32_t> allowed = {tok.encode("e")[0], tok.encode("t")[0], 100, 200};
  const json j = {
      {"model", "model"},
      {"stages",
       {{{"name", "masked"},
         {"input", {{{"request", true}}}},
         {"max_new", 6},
         {"interceptors",
          {{{"allow_tokens", {"e", "t", 100, 200}}}, {{"trace", true}}, {{"step_skip", true}}}}},
        {{"name", "b"},
         {"input", {{{"request", true}}}},
         {"max_new", 8},
         {"exact", true},
         {"interceptors", {{{"stop_sequences", {stop}}}, {{"trace", true}}}}}}}};
  std::ofstream(dir / "relay.json") << j.dump(2);
  RelaySpec spec = load_relay_spec(dir / "relay.json");
  REQUIRE(spec.has_text());
  resolve_text(spec, tok);
  CHECK_FALSE(spec.has_text());
  const auto relay = build_relay_as<f32, 8, family::Qwen2, Batching::without>(spec);
  CHECK_THROWS_AS(relay->batched({}), usage_error);  // built without the scheduler: says so
  relay->prewarm();
  const RelayResult r = relay->run(request);
  REQUIRE(r.runs.size() == 2);

  const auto want_a =
      constrained_greedy(ref, std::vector<int>(request.begin(), request.end()), 6,
                         [&](const std::vector<int>&, int id) {
                           return std::find(allowed.begin(), allowed.end(), id) != allowed.end();
                         });
  CHECK(as_int(r.runs[0].ids) == want_a.ids);
  CHECK(r.runs[0].host_waits == 6);
  CHECK(r.runs[0].skipped == 0);  // four ids allowed: never a forced token
  REQUIRE(r.runs[0].trace.size() == 6);
  for (int k = 0; k < 6; ++k) {
    CHECK(r.runs[0].trace[k].token == r.runs[0].ids[k]);
    CHECK(r.runs[0].trace[k].position == static_cast<int>(request.size()) + k);
  }

  CHECK(as_int(r.runs[1].ids) == std::vector<int>(free_b.begin(), free_b.begin() + stop_len));
  CHECK(r.runs[1].stopped);
  CHECK(r.runs[1].stopped_by == "baton.stop_sequences");
  CHECK(r.runs[1].trace.size() == stop_len);
  CHECK(r.host_waits() == static_cast<int>(6 + stop_len));  // both stages trace every step

  // A stage with no interceptors costs no host waits.
  json plain = j;
  plain["stages"][1].erase("interceptors");
  std::ofstream(dir / "plain.json") << plain.dump(2);
  RelaySpec plain_spec = load_relay_spec(dir / "plain.json");
  resolve_text(plain_spec, tok);
  const auto plain_relay = build_relay_as<f32, 8, family::Qwen2, Batching::without>(plain_spec);
  plain_relay->prewarm();
  const RelayResult pr = plain_relay->run(request);
  CHECK(as_int(pr.runs[1].ids) == free_b);
  CHECK(pr.runs[1].host_waits == 0);
  CHECK(pr.runs[1].trace.empty());
}
