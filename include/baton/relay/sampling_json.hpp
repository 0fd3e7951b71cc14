// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A `"sampling"` JSON object (a relay file's stage, a `--requests` line) read into
///        SamplingOptions: the one reader, so every place spells the fields the same way.
///
///   {"temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.1,
///    "presence_penalty": 0.5, "frequency_penalty": 0.5, "repeat_last_n": 64, "seed": 42,
///    "stream": 4,
///    "logit_bias": {"198": -100}, "logprobs": true, "top_logprobs": 5}
///
/// "stream" picks the generator's stream (docs/sampling.md): by default a relay stage's is its
/// index and a request's 0; choice i of a request with n choices draws from its streams shifted
/// by i x S, so giving that stream replays one choice alone.
///
/// Every field is optional (an absent one keeps `base`'s value). Types and ranges are checked
/// here (config_error naming the field); token ids in logit_bias against the vocabulary when
/// the stage is built.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "baton/core/error.hpp"
#include "baton/io/json_util.hpp"
#include "baton/model/sampling.hpp"

namespace baton {

/// `j` (a JSON object) over `base`; `where` names it in messages ("relay.json: stages[1]
/// ('reason').sampling").
template <class Json>
SamplingOptions read_sampling(const Json& j, const std::string& where, SamplingOptions base = {}) {
  BATON_CHECK(j.is_object(), config_error, where, " must be an object of sampling options");
  for (auto it = j.begin(); it != j.end(); ++it) {
    static constexpr const char* kKnown[] = {"temperature",
                                             "top_k",
                                             "top_p",
                                             "min_p",
                                             "repeat_penalty",
                                             "presence_penalty",
                                             "frequency_penalty",
                                             "repeat_last_n",
                                             "seed",
                                             "stream",
                                             "logit_bias",
                                             "logprobs",
                                             "top_logprobs"};
    bool known = false;
    for (const char* k : kKnown) known = known || it.key() == k;
    BATON_CHECK(known, config_error, where, ": unknown field '", detail::excerpt(it.key()),
                "' (temperature, top_k, top_p, min_p, repeat_penalty, presence_penalty, "
                "frequency_penalty, repeat_last_n, seed, stream, logit_bias, logprobs, "
                "top_logprobs)");
  }
  const io::FieldReader<Json> f(j, where);
  auto& p = base.params;
  auto real = [&](const char* key, float& out) {
    if (auto v = f.number(key)) out = static_cast<float>(*v);
  };
  real("temperature", p.temperature);
  p.top_k = f.int_or("top_k", p.top_k);
  real("top_p", p.top_p);
  real("min_p", p.min_p);
  real("repeat_penalty", p.repeat_penalty);
  real("presence_penalty", p.presence_penalty);
  real("frequency_penalty", p.frequency_penalty);
  // The generator's 64-bit words: any integer in [0, 2^64).
  const auto word = [&](const char* key, std::uint64_t& out) {
    const auto* s = f.get(key);
    if (!s) return;
    BATON_CHECK(
        s->is_number_unsigned() || (s->is_number_integer() && s->template get<long long>() >= 0),
        config_error, where, ": field '", key, "' = ", io::detail::show(*s),
        " is not an integer in [0, 2^64)");
    out = s->template get<std::uint64_t>();
  };
  word("seed", base.seed);
  word("stream", base.stream);
  if (const auto* b = f.get("logit_bias")) {
    BATON_CHECK(b->is_object(), config_error, where,
                ": field 'logit_bias' must be an object {\"token id\": bias}");
    base.logit_bias.clear();
    for (auto it = b->begin(); it != b->end(); ++it) {
      long long id = -1;
      std::size_t used = 0;
      try {
        id = std::stoll(it.key(), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      BATON_CHECK(used == it.key().size() && id >= 0 && id <= std::numeric_limits<int>::max(),
                  config_error, where, ": field 'logit_bias' has key '", detail::excerpt(it.key()),
                  "', not a token id");
      BATON_CHECK(it->is_number(), config_error, where, ": field 'logit_bias[", it.key(),
                  "]' = ", io::detail::show(*it), " is not a number");
      base.logit_bias.push_back(
          {static_cast<std::int32_t>(id), static_cast<float>(it->template get<double>())});
    }
  }
  base.repeat_last_n = f.int_or("repeat_last_n", base.repeat_last_n);
  base.logprobs = f.bool_or("logprobs", base.logprobs);
  base.top_logprobs = f.int_or("top_logprobs", base.top_logprobs);
  if (base.top_logprobs > 0) base.logprobs = true;
  try {
    base.check(std::numeric_limits<int>::max());
  } catch (const usage_error& e) {
    BATON_FAIL(config_error, where, ": ", e.what());
  }
  return base;
}

}  // namespace baton
