// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The bundled word-problem relay (models/word-problems): loading it, running one stage
///        on its own, and reading the stages' text. Shared by the demo and the evaluation.
///
/// The relay file says everything about the stages (system prompts, input segments, limits,
/// gate); the programs only know the model's shape, fixed at compile time so that they
/// instantiate one relay type (build_relay_as). Loading and building are compiled once, in
/// word_problems.cpp, which both programs link.
#pragma once
#include <baton/relay/config.hpp>
#include <baton/relay/runtime_relay_on.hpp>
#include <baton/text/relay_text.hpp>
#include <baton/text/tokenizer.hpp>

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bundled_dir.hpp"

namespace word_problems {

/// A relay file with its text resolved into ids, and the tokenizer that did it.
struct RelayFile {
  baton::RelaySpec spec;
  baton::Tokenizer tok;
};

/// The relay file, its text resolved into ids by the tokenizer it names (word_problems.cpp).
RelayFile load(const std::filesystem::path& relay_json);

/// The relay of `spec` on the bundled model's storage type and head_dim (word_problems.cpp).
std::unique_ptr<baton::RuntimeRelay> build(const baton::RelaySpec& spec);

/// The same relay with every stage on the base model alone (no adapter).
inline baton::RelaySpec without_adapters(baton::RelaySpec spec) {
  for (baton::StageSpec& s : spec.stages) s.adapter.reset();
  return spec;
}

/// Stage `stage` alone, as a one-stage relay whose request is the stage's whole input: the
/// caller assembles it with `stage_input`, so one pre-warmed relay serves every problem.
inline baton::RelaySpec single_stage(const baton::RelaySpec& spec, int stage) {
  baton::RelaySpec one = spec;
  one.stages = {spec.stages.at(stage)};
  one.stages[0].input = {baton::SegmentSpec{baton::Segment::Kind::request, -1, {}}};
  one.gate = {};
  one.max_cycles = 1;
  one.loop_from.reset();
  one.max_request_tokens = 1024;
  return one;
}

/// What stage `stage` of `spec` reads in its first cycle, assembled as the relay engine does:
/// its segments in order, `request` = the request's ids, `out<K>` = `outputs[K]`, and every
/// `feedback<K>` empty (nothing ran before the first cycle).
inline std::vector<std::int32_t> stage_input(const baton::RelaySpec& spec, int stage,
                                             std::span<const std::int32_t> request,
                                             std::span<const std::vector<std::int32_t>> outputs) {
  std::vector<std::int32_t> ids;
  for (const baton::SegmentSpec& g : spec.stages.at(stage).input) {
    switch (g.kind) {
      case baton::Segment::Kind::literal:
        ids.insert(ids.end(), g.literal.ids.begin(), g.literal.ids.end());
        break;
      case baton::Segment::Kind::request:
        ids.insert(ids.end(), request.begin(), request.end());
        break;
      case baton::Segment::Kind::output:
        ids.insert(ids.end(), outputs[g.stage].begin(), outputs[g.stage].end());
        break;
      case baton::Segment::Kind::feedback:
      case baton::Segment::Kind::shared:  // the plain relay's stages read no shared sequence
        break;
    }
  }
  return ids;
}

/// The extract stage's structured form, "7 + 5".
struct Facts {
  long a = 0;
  char op = '+';
  long b = 0;

  long value() const { return op == '+' ? a + b : op == '-' ? a - b : a * b; }
};

namespace detail {
inline std::optional<long> read_number(std::string_view& s) {
  long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return v;
}
}  // namespace detail

/// Parses exactly "<a> <op> <b>" (op one of + - *); nullopt for anything else.
inline std::optional<Facts> parse_facts(std::string_view s) {
  Facts f;
  const auto a = detail::read_number(s);
  if (!a || s.size() < 3 || s[0] != ' ' || s[2] != ' ') return std::nullopt;
  f.a = *a;
  f.op = s[1];
  if (f.op != '+' && f.op != '-' && f.op != '*') return std::nullopt;
  s.remove_prefix(3);
  const auto b = detail::read_number(s);
  if (!b || !s.empty()) return std::nullopt;
  f.b = *b;
  return f;
}

/// The reason stage's whole output, "<a> <op> <b> = <c>"; nullopt for anything else.
struct Worked {
  Facts facts;
  long result = 0;
};
inline std::optional<Worked> parse_worked(std::string_view s) {
  const auto eq = s.find(" = ");
  if (eq == std::string_view::npos) return std::nullopt;
  const auto facts = parse_facts(s.substr(0, eq));
  std::string_view rest = s.substr(eq + 3);
  const auto c = detail::read_number(rest);
  if (!facts || !c || !rest.empty()) return std::nullopt;
  return Worked{*facts, *c};
}

/// The reason stage's result: the number after the last " = " ("7 + 5 = 12" -> 12).
inline std::optional<long> parse_result(std::string_view s) {
  const auto eq = s.rfind(" = ");
  if (eq == std::string_view::npos) return std::nullopt;
  s.remove_prefix(eq + 3);
  const auto v = detail::read_number(s);
  if (!v || !s.empty()) return std::nullopt;
  return v;
}

}  // namespace word_problems
