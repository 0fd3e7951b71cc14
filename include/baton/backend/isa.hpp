// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host kernels' families by name (host_simd.hpp runs them): plain data, so a relay
///        file's "host": {"isa": ...} parses where no host kernel is compiled (.cu units).
#pragma once

#include <optional>
#include <string_view>

namespace baton::host_simd {

/// The kernel families, slowest first.
enum class Isa : int { portable = 0, avx2 = 1, avx512 = 2 };

inline std::string_view isa_name(Isa i) {
  switch (i) {
    case Isa::portable:
      return "portable";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "?";
}

/// The family named `name` ("avx512", "avx2", "portable"), or none.
inline std::optional<Isa> parse_isa(std::string_view name) {
  for (const Isa i : {Isa::avx512, Isa::avx2, Isa::portable})
    if (name == isa_name(i)) return i;
  return std::nullopt;
}

}  // namespace baton::host_simd
