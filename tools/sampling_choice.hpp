// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The sampling options `baton generate` and `baton relay` share: --temperature,
///        --top-k, --top-p, --min-p, --repeat-penalty, --presence-penalty,
///        --frequency-penalty, --repeat-last-n, --seed and --logprobs N; and the JSON both print
///        for them.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "baton/model/sampling.hpp"

namespace baton::cli {

/// What the sampling options asked for.
struct SamplingChoice {
  SamplingOptions options;  ///< greedy unless an option changed it
  bool any = false;         ///< an option was given
  bool seeded = false;      ///< --seed was given
  unsigned given = 0;       ///< which fields were given (bit k: kFields[k])

  static constexpr std::string_view kFields[] = {"--temperature",
                                                 "--top-k",
                                                 "--top-p",
                                                 "--min-p",
                                                 "--repeat-penalty",
                                                 "--presence-penalty",
                                                 "--frequency-penalty",
                                                 "--seed",
                                                 "--logprobs",
                                                 "--repeat-last-n"};

  /// The options given, over `base` (a relay stage's own): the fields not given keep base's.
  SamplingOptions over(SamplingOptions base) const {
    auto& p = base.params;
    const auto& q = options.params;
    const auto has = [&](int k) { return (given >> k & 1u) != 0; };
    if (has(0)) p.temperature = q.temperature;
    if (has(1)) p.top_k = q.top_k;
    if (has(2)) p.top_p = q.top_p;
    if (has(3)) p.min_p = q.min_p;
    if (has(4)) p.repeat_penalty = q.repeat_penalty;
    if (has(5)) p.presence_penalty = q.presence_penalty;
    if (has(6)) p.frequency_penalty = q.frequency_penalty;
    base.seed = options.seed;  // given or drawn
    if (has(8)) {
      base.logprobs = true;
      base.top_logprobs = options.top_logprobs;
    }
    if (has(9)) base.repeat_last_n = options.repeat_last_n;
    return base;
  }
};

/// A finite decimal number, or an ArgError naming `what`.
inline float parse_real(std::string_view text, std::string_view what) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v))
    throw ArgError{std::string(what) + ": '" + detail::excerpt(text) + "' is not a finite number"};
  return static_cast<float>(v);
}

inline constexpr std::string_view kSamplingUsage =
    "  --temperature T     sample at temperature T (0, the default: greedy, the exact argmax)\n"
    "  --top-k K           keep the K most likely tokens (0: all)\n"
    "  --top-p P           keep the smallest top set holding probability P (1: all)\n"
    "  --min-p P           keep tokens at least P times as likely as the top one (0: all)\n"
    "  --repeat-penalty R  divide positive / multiply negative logits of generated tokens (1: "
    "off)\n"
    "  --presence-penalty X   subtract X from every generated token's logit (-2..2)\n"
    "  --frequency-penalty X  subtract X per occurrence of a generated token (-2..2)\n"
    "  --repeat-last-n N   the penalties read the last N generated tokens (-1, the default:\n"
    "                      all of them; 0: none)\n"
    "  --seed N            the generator's seed (default: drawn, and printed with --json)\n"
    "  --logprobs N        with --json: each token's log-probability and its N best (0..20)\n"
    "                      alternatives (docs/sampling.md)\n";

/// Takes `arg` (with its value from `value()`) when it is a sampling option.
template <class Value>
bool parse_sampling_option(std::string_view arg, Value&& value, SamplingChoice& c) {
  auto& p = c.options.params;
  if (arg == "--temperature") {
    p.temperature = parse_real(value(), arg);
  } else if (arg == "--top-k") {
    p.top_k = parse_int<int>(value(), arg);
  } else if (arg == "--top-p") {
    p.top_p = parse_real(value(), arg);
  } else if (arg == "--min-p") {
    p.min_p = parse_real(value(), arg);
  } else if (arg == "--repeat-penalty") {
    p.repeat_penalty = parse_real(value(), arg);
  } else if (arg == "--presence-penalty") {
    p.presence_penalty = parse_real(value(), arg);
  } else if (arg == "--frequency-penalty") {
    p.frequency_penalty = parse_real(value(), arg);
  } else if (arg == "--repeat-last-n") {
    c.options.repeat_last_n = parse_int<int>(value(), arg);
  } else if (arg == "--seed") {
    c.options.seed = parse_int<std::uint64_t>(value(), arg);
    c.seeded = true;
  } else if (arg == "--logprobs") {
    c.options.logprobs = true;
    c.options.top_logprobs = parse_int<int>(value(), arg);
  } else {
    return false;
  }
  c.any = true;
  for (std::size_t k = 0; k < std::size(SamplingChoice::kFields); ++k)
    if (arg == SamplingChoice::kFields[k]) c.given |= 1u << k;
  return true;
}

/// Checks the options' ranges (an ArgError naming the option) and draws a seed when none was
/// given: the run then prints it, so it can be replayed with --seed.
inline void finish_sampling_choice(SamplingChoice& c) {
  try {
    c.options.check(std::numeric_limits<int>::max());
  } catch (const usage_error& e) {
    std::string m = e.what();
    const std::string_view prefix = "sampling: ";
    if (m.starts_with(prefix)) m.erase(0, prefix.size());
    for (char& ch : m)  // name the option as typed: top_k -> --top-k
      if (ch == '_') ch = '-';
    if (m.starts_with("top-logprobs")) m.replace(0, 12, "logprobs");
    throw ArgError{"--" + m};
  }
  if (!c.seeded) {
    std::random_device rd;
    c.options.seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
}

/// A run's log-probabilities as JSON: [{"id", "logprob", "top": [{"id", "logprob"}, ...]}, ...].
inline nlohmann::json logprobs_json(const std::vector<TokenLogprobs>& lp) {
  nlohmann::json out = nlohmann::json::array();
  for (const TokenLogprobs& t : lp) {
    nlohmann::json top = nlohmann::json::array();
    for (int j = 0; j < t.n_top; ++j) {
      const kernels::TopLogprob& e = t.top[static_cast<std::size_t>(j)];
      top.push_back({{"id", e.id}, {"logprob", e.logprob}});
    }
    out.push_back({{"id", t.id}, {"logprob", t.logprob}, {"top", std::move(top)}});
  }
  return out;
}

}  // namespace baton::cli
