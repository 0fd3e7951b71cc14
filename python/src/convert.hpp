// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What crosses between Python and the engine: requests (text or ids), the sampling
///        options `baton generate` takes, logits rows as NumPy arrays that own the engine's
///        memory (no copy), and relay results with each stage run's text.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "baton/model/sampling.hpp"
#include "baton/relay/result.hpp"
#include "baton/text/tokenizer.hpp"

namespace baton::python {

namespace nb = nanobind;

/// A request as Python gives it: text, or token ids.
using Request = std::variant<std::string, std::vector<std::int32_t>>;

/// The request's ids: ids as given; text encoded by `tok` (usage_error naming `what` when there
/// is none), as plain text (added tokens spelled byte by byte) unless `specials`.
std::vector<std::int32_t> request_ids(const Request& request, const Tokenizer* tok, bool specials,
                                      const char* what);

/// The sampling keywords of Model.generate (`baton generate`'s --temperature ... --logprobs);
/// each unset keeps the greedy default.
struct SamplingArgs {
  std::optional<float> temperature, top_p, min_p, repeat_penalty, presence_penalty,
      frequency_penalty;
  std::optional<int> top_k, repeat_last_n, logprobs;
  std::optional<std::uint64_t> seed;
};

/// The options `args` asks for, checked against `vocab` (usage_error naming the field), with a
/// seed drawn when none is given (the result reports it, so a run can be replayed).
SamplingOptions sampling_options(const SamplingArgs& args, int vocab);

/// A 1-D float32 NumPy array that takes over `row`'s memory: no copy is made.
nb::ndarray<nb::numpy, float, nb::ndim<1>> owned_array(std::vector<float>&& row);

/// `s` as Python's repr writes a str (quoted, escaped): for the __repr__s.
std::string repr_str(const std::string& s);

/// `ids` decoded by `tok` (invalid UTF-8 replaced by U+FFFD, as `baton relay --json` prints it).
std::string decode_text(const Tokenizer& tok, const std::vector<std::int32_t>& ids);

/// One stage run of a relay, as Python sees it.
struct StageRunView {
  std::string name;
  int stage = 0, cycle = 1;
  std::vector<std::int32_t> ids;
  std::optional<std::string> text;  ///< the ids decoded, where the relay has a tokenizer
  double ms = 0;
  bool stopped = false;
  std::string stopped_by;
  int input_tokens = 0, forwards = 0, skipped = 0;
  std::vector<TokenLogprobs> logprobs;
};

/// A relay run, as Python sees it.
struct RelayResultView {
  std::vector<StageRunView> runs;
  std::string verdict;  ///< "pass", "fail" or "error" (run_many's failed request)
  int cycles = 0;
  double total_ms = 0;
  std::string error;     ///< the message, when verdict is "error"
  int output_stage = 0;  ///< the relay's answer stage ("output" in the file; default the last)
  std::vector<std::string> stage_names;
};

/// `r` with each run's text decoded by `tok` (when there is one).
RelayResultView view_of(RelayResult&& r, const Tokenizer* tok, int output_stage,
                        const std::vector<std::string>& stage_names);

}  // namespace baton::python
