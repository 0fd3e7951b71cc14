// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A relay file's per-stage "sampling" object (relay/config.hpp, relay/sampling_json.hpp): every
// field read into SamplingOptions, the stage's index as its stream, and errors that name the
// file, the stage and the field (wrong types, values out of range, unknown fields, an exact
// stage asked to sample).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "baton/relay/config.hpp"
#include "support/expect_error.hpp"

using namespace baton;
using nlohmann::json;

namespace sampling_config_test {

RelaySpec parse(const json& j) { return parse_relay_spec(j, "/cfg/relay.json"); }

json with_sampling(const json& sampling, bool exact = false) {
  json j = {{"model", "m"},
            {"stages",
             {{{"name", "a"}, {"input", {{{"request", true}}}}, {"max_new", 4}},
              {{"name", "b"}, {"input", {{{"out", "a"}}}}, {"max_new", 4}}}}};
  j["stages"][1]["sampling"] = sampling;
  if (exact) j["stages"][1]["exact"] = true;
  return j;
}

}  // namespace sampling_config_test

using namespace sampling_config_test;

TEST_CASE("relay JSON: a stage's \"sampling\" object") {
  const RelaySpec s = parse(with_sampling({{"temperature", 0.7},
                                           {"top_k", 40},
                                           {"top_p", 0.9},
                                           {"min_p", 0.05},
                                           {"repeat_penalty", 1.1},
                                           {"presence_penalty", 0.5},
                                           {"frequency_penalty", -0.25},
                                           {"seed", 18446744073709551615ull},
                                           {"logit_bias", {{"198", -100}, {"7", 2.5}}},
                                           {"logprobs", true},
                                           {"top_logprobs", 4}}));
  const SamplingOptions& o = s.stages[1].sampling;
  CHECK(o.params.temperature == doctest::Approx(0.7));
  CHECK(o.params.top_k == 40);
  CHECK(o.params.top_p == doctest::Approx(0.9));
  CHECK(o.params.min_p == doctest::Approx(0.05));
  CHECK(o.params.repeat_penalty == doctest::Approx(1.1));
  CHECK(o.params.presence_penalty == doctest::Approx(0.5));
  CHECK(o.params.frequency_penalty == doctest::Approx(-0.25));
  CHECK(o.seed == 18446744073709551615ull);
  REQUIRE(o.logit_bias.size() == 2);
  CHECK(o.logit_bias[0].id == 198);  // nlohmann orders object keys: "198" < "7"
  CHECK(o.logit_bias[0].bias == -100.0f);
  CHECK(o.logit_bias[1].id == 7);
  CHECK(o.logprobs);
  CHECK(o.top_logprobs == 4);
  CHECK(o.stream == 1);  // the stage's index
  // A stage without one is greedy, on its own stream.
  CHECK(s.stages[0].sampling.plain_greedy());
  CHECK(s.stages[0].sampling.stream == 0);
  // An exact stage may ask for logprobs.
  CHECK(parse(with_sampling({{"logprobs", true}}, true)).stages[1].sampling.logprobs);
  // "stream" replaces the index; "repeat_last_n" windows the penalties (-1 by default).
  CHECK(o.repeat_last_n == -1);
  const RelaySpec named =
      parse(with_sampling({{"temperature", 1}, {"stream", 7}, {"repeat_last_n", 64}}));
  CHECK(named.stages[1].sampling.stream == 7);
  CHECK(named.stages[1].sampling.repeat_last_n == 64);
}

TEST_CASE("relay JSON: \"sampling\" errors name the file, the stage and the field") {
  const std::string at = "/cfg/relay.json: stages[1] ('b').sampling";
  const auto fails = [&](const json& sampling, std::string_view what, bool exact = false) {
    test::expect_error<config_error>([&] { (void)parse(with_sampling(sampling, exact)); },
                                     {std::string_view(at).substr(0, 30), what});
  };
  fails({{"temperature", -1}}, "temperature = -1 is out of range");
  fails({{"temperature", "hot"}}, "field 'temperature' = \"hot\" is not a number");
  fails({{"top_p", 1.5}}, "top_p = 1.5 is out of range");
  fails({{"top_k", 2.5}}, "field 'top_k'");
  fails({{"min_p", -0.5}}, "min_p = -0.5");
  fails({{"repeat_penalty", 0}}, "repeat_penalty = 0");
  fails({{"presence_penalty", 2.5}}, "presence_penalty = 2.5");
  fails({{"seed", -3}}, "field 'seed' = -3 is not an integer in [0, 2^64)");
  fails({{"stream", -1}}, "field 'stream' = -1 is not an integer in [0, 2^64)");
  fails({{"stream", 1.5}}, "field 'stream' = 1.5");
  fails({{"repeat_last_n", -2}}, "repeat_last_n = -2 is out of range");
  fails({{"repeat_last_n", 1.5}}, "field 'repeat_last_n'");
  fails({{"logit_bias", {{"x", 1}}}}, "'logit_bias' has key 'x', not a token id");
  fails({{"logit_bias", {{"5", 101}}}}, "logit_bias[5] = 101");
  fails({{"logit_bias", json::array({1})}}, "'logit_bias' must be an object");
  fails({{"top_logprobs", 21}}, "top_logprobs = 21");
  fails({{"temprature", 1}}, "unknown field 'temprature'");
  fails(json::array({1}), "must be an object of sampling options");
  fails({{"temperature", 0.5}}, "an exact stage", true);
}
