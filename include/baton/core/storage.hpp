// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The storage a program asks a model's weights to be held in, as a run-time value: a
///        relay file's "storage", the CLI's --storage. Unset, a model keeps its files' dtype.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <type_traits>

#include "baton/core/dtype.hpp"
#include "baton/core/quant.hpp"

namespace baton {

/// The storages a base model may be loaded in (the WeightStorage types, as values).
enum class Storage : std::uint8_t { f32, bf16, f16, q8_0, q4_0 };

/// The name relay files and the CLI use.
constexpr std::string_view storage_name(Storage s) {
  switch (s) {
    case Storage::f32:
      return "f32";
    case Storage::bf16:
      return "bf16";
    case Storage::f16:
      return "f16";
    case Storage::q8_0:
      return "q8_0";
    case Storage::q4_0:
      return "q4_0";
  }
  return "?";
}

/// "f32", "bf16", "f16", "q8_0" or "q4_0"; nullopt for anything else.
constexpr std::optional<Storage> parse_storage(std::string_view name) {
  for (Storage s : {Storage::f32, Storage::bf16, Storage::f16, Storage::q8_0, Storage::q4_0})
    if (storage_name(s) == name) return s;
  return std::nullopt;
}

/// The storage of a checkpoint's float dtype (what a model is loaded in when nothing is asked).
constexpr Storage storage_of_dtype(dtype t) {
  return t == dtype::f32 ? Storage::f32 : t == dtype::bf16 ? Storage::bf16 : Storage::f16;
}

/// The value of a WeightStorage type.
template <WeightStorage S>
inline constexpr Storage storage_of = std::is_same_v<S, f32>    ? Storage::f32
                                      : std::is_same_v<S, bf16> ? Storage::bf16
                                      : std::is_same_v<S, f16>  ? Storage::f16
                                      : std::is_same_v<S, q8_0> ? Storage::q8_0
                                                                : Storage::q4_0;

}  // namespace baton
