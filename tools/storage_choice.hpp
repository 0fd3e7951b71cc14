// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `--storage f32|bf16|f16|q8_0|q4_0`, shared by `baton generate`, `baton relay` and
///        `baton serve`: what the base model's matrices are held in (converted or quantized at
///        load; core/storage.hpp). It overrides a relay file's "storage".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "args.hpp"
#include "baton/core/storage.hpp"

namespace baton::cli {

/// Consumes `arg` if it is --storage (`value` reads the option's value).
template <class Value>
bool parse_storage_option(std::string_view arg, Value&& value, std::optional<Storage>& out) {
  if (arg != "--storage") return false;
  const std::string v(value());
  out = parse_storage(v);
  if (!out) throw ArgError{"--storage " + v + ": use f32, bf16, f16, q8_0 or q4_0"};
  return true;
}

inline std::string storage_usage() {
  return "  --storage S       the base model's matrices in S: f32, bf16, f16, q8_0 or q4_0\n"
         "                    (GGML's 8-/4-bit blocks, quantized at load); default: the\n"
         "                    checkpoint's dtype (a relay file's \"storage\")\n";
}

}  // namespace baton::cli
