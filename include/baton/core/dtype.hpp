// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Storage element types (f32, bf16, f16) and their exact widening to f32.
///
/// Weights stay in the file's storage type; every kernel widens to f32 and accumulates in
/// f32. The conversions are bit manipulations so they behave identically on host and device.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "baton/core/macros.hpp"

namespace baton {

/// IEEE-754 single precision, stored as is.
using f32 = float;

/// bfloat16 storage: the upper 16 bits of an f32.
struct bf16 {
  std::uint16_t bits;
};

/// IEEE-754 half precision storage.
struct f16 {
  std::uint16_t bits;
};

/// Runtime tag of a tensor's element type, as named in safetensors headers.
enum class dtype : std::uint8_t { f32, bf16, f16 };

constexpr std::size_t dtype_size(dtype t) { return t == dtype::f32 ? 4 : 2; }

constexpr std::string_view dtype_name(dtype t) {
  switch (t) {
    case dtype::f32:
      return "F32";
    case dtype::bf16:
      return "BF16";
    case dtype::f16:
      return "F16";
  }
  return "?";
}

template <class T>
inline constexpr bool is_storage_type_v =
    std::is_same_v<T, f32> || std::is_same_v<T, bf16> || std::is_same_v<T, f16>;

/// A type weights may be stored as.
template <class T>
concept StorageType = is_storage_type_v<T>;

template <StorageType T>
inline constexpr dtype dtype_of = std::is_same_v<T, f32>    ? dtype::f32
                                  : std::is_same_v<T, bf16> ? dtype::bf16
                                                            : dtype::f16;

BATON_HD inline float widen(float x) { return x; }

BATON_HD inline float widen(bf16 x) {
  std::uint32_t u = static_cast<std::uint32_t>(x.bits) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

BATON_HD inline float widen(f16 x) {
  const std::uint32_t sign = static_cast<std::uint32_t>(x.bits & 0x8000u) << 16;
  std::uint32_t exp = (x.bits >> 10) & 0x1fu;
  std::uint32_t mant = x.bits & 0x3ffu;
  std::uint32_t u;
  if (exp == 0x1f) {  // inf / nan
    u = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {  // normal
    u = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {  // zero
    u = sign;
  } else {  // subnormal: renormalize
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    u = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

/// Rounds to the nearest bf16, ties to even (NaN stays NaN).
BATON_HD inline bf16 to_bf16(float f) {
  std::uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{static_cast<std::uint16_t>((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return bf16{static_cast<std::uint16_t>(u >> 16)};
}

/// Rounds to the nearest f16, ties to even; overflow becomes infinity.
BATON_HD inline f16 to_f16(float f) {
  std::uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return f16{static_cast<std::uint16_t>(sign | 0x7e00u)};
  if (absu >= 0x477ff000u) return f16{static_cast<std::uint16_t>(sign | 0x7c00u)};  // >= 65520
  if (absu < 0x38800000u) {  // below the smallest normal f16 (2^-14): subnormal or zero
    if (absu < 0x33000000u) return f16{sign};  // < 2^-25 rounds to zero
    const std::uint32_t mant = (absu & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(absu >> 23);  // 14..24 bits dropped, plus 1
    const std::uint32_t half = 1u << (shift - 1);
    std::uint32_t q = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return f16{static_cast<std::uint16_t>(sign | q)};
  }
  std::uint32_t v = absu - 0x38000000u;  // rebias exponent 127 -> 15
  v += 0xfffu + ((v >> 13) & 1u);
  return f16{static_cast<std::uint16_t>(sign | (v >> 13))};
}

template <StorageType T>
BATON_HD inline T narrow(float x) {
  if constexpr (std::is_same_v<T, f32>) {
    return x;
  } else if constexpr (std::is_same_v<T, bf16>) {
    return to_bf16(x);
  } else {
    return to_f16(x);
  }
}

}  // namespace baton
