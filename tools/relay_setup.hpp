// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A relay file's tokenizer and its built, pre-warmed relay, as `baton relay` and
///        `baton serve` make them.
#pragma once

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "backend_choice.hpp"
#include "baton/relay/config.hpp"
#include "baton/relay/runtime_relay_instances.hpp"  // compiled once, in dispatch/
#include "baton/text/tokenizer.hpp"

namespace baton::cli {

/// The relay's "tokenizer"; else `<model>/tokenizer.json`, which must exist when `text_used`
/// (the file or the request holds text) and is taken if it exists when `take_guess`.
inline std::optional<Tokenizer> relay_tokenizer(const RelaySpec& spec, const std::string& config,
                                                bool text_used, bool take_guess) {
  if (spec.tokenizer) return Tokenizer::from_file(*spec.tokenizer);
  const auto guess = spec.model / "tokenizer.json";
  if (spec.has_text() || text_used) {
    BATON_CHECK(std::filesystem::exists(guess), config_error, config,
                ": text is used but no tokenizer is given (field 'tokenizer') and ", guess.string(),
                " does not exist");
    return Tokenizer::from_file(guess);
  }
  if (take_guess && std::filesystem::exists(guess)) return Tokenizer::from_file(guess);
  return std::nullopt;
}

/// `spec`'s relay on `backend` (CUDA where chosen; without CUDA built in, parse_backend has
/// refused it already), its warnings printed, pre-warmed.
inline std::unique_ptr<RuntimeRelay> build_prewarmed_relay(const RelaySpec& spec,
                                                           [[maybe_unused]] BackendChoice backend) {
  std::unique_ptr<RuntimeRelay> relay;
#if BATON_CLI_CUDA
  if (backend == BackendChoice::cuda) relay = build_relay_on_cuda(spec);
#endif
  if (!relay) relay = build_relay(spec);
  for (const std::string& w : relay->warnings()) std::cerr << "baton: warning: " << w << "\n";
  relay->prewarm();
  return relay;
}

}  // namespace baton::cli
