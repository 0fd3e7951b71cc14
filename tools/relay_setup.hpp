// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A relay file's tokenizer, as `baton relay` and `baton serve` find it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "baton/relay/config.hpp"
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

}  // namespace baton::cli
