// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief TokenByteTable: the bytes each token id decodes to, as plain host data (built from a
///        Tokenizer by text/token_bytes.hpp), for interceptors that match on decoded text.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "baton/core/error.hpp"

namespace baton {

/// Every id's bytes, packed: id k's bytes are bytes[offsets[k] .. offsets[k + 1]).
struct TokenByteTable {
  std::vector<std::uint8_t> bytes;
  std::vector<std::int32_t> offsets{0};  ///< [vocab + 1]

  int vocab() const { return static_cast<int>(offsets.size()) - 1; }
  /// Appends the next id's bytes.
  void push(std::string_view token_bytes) {
    bytes.insert(bytes.end(), token_bytes.begin(), token_bytes.end());
    offsets.push_back(static_cast<std::int32_t>(bytes.size()));
  }
  std::span<const std::uint8_t> token(std::int32_t id) const {
    BATON_CHECK(id >= 0 && id < vocab(), usage_error, "token byte table: id ", id,
                " is outside [0, ", vocab(), ")");
    return {bytes.data() + offsets[id], static_cast<std::size_t>(offsets[id + 1] - offsets[id])};
  }
};

}  // namespace baton
