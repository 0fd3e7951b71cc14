// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Philox4x32-10, the counter-based generator sampling draws from (Salmon, Moraes, Dror,
///        Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011), written from the
///        paper's definition, and the one uniform a sampling step draws.
///
/// A counter-based generator has no state to carry or to share: the draw of a request's step
/// is a pure function of (seed, stream, step). That is what makes a request's tokens
/// independent of the batch it runs in, of prefill chunking and of thread counts.
#pragma once

#include <cstdint>

#include "baton/core/macros.hpp"

namespace baton::kernels {

/// Four 32-bit words: a counter, or a block of output.
struct Philox4x32Block {
  std::uint32_t w[4];
};

/// The paper's multipliers and Weyl key increments (the golden ratio and sqrt(3) - 1 in 32-bit
/// fixed point) for Philox4x32.
inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;

/// Philox4x32 with 10 rounds: the block for counter `ctr` under key (k0, k1). Each round
/// multiplies two words into 64-bit products and mixes their halves with the other two words
/// and the round key; the key is bumped by the Weyl constants between rounds.
BATON_HD inline Philox4x32Block philox4x32_10(Philox4x32Block ctr, std::uint32_t k0,
                                              std::uint32_t k1) {
  std::uint32_t x0 = ctr.w[0], x1 = ctr.w[1], x2 = ctr.w[2], x3 = ctr.w[3];
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(kPhiloxM0) * x0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(kPhiloxM1) * x2;
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    x0 = hi1 ^ x1 ^ k0;
    x1 = lo1;
    x2 = hi0 ^ x3 ^ k1;
    x3 = lo0;
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return {{x0, x1, x2, x3}};
}

/// A block's first two words as a uniform in [0, 1): 53 random bits (a double's mantissa), so
/// the draw is exact in double and never 1.
BATON_HD inline double uniform_of(const Philox4x32Block& out) {
  const std::uint64_t bits =
      (static_cast<std::uint64_t>(out.w[0]) << 21) ^ static_cast<std::uint64_t>(out.w[1] >> 11);
  return static_cast<double>(bits & ((std::uint64_t{1} << 53) - 1)) * 0x1.0p-53;
}

/// The uniform in [0, 1) that step `step` of stream `stream` under `seed` samples with, in run
/// `run` of that stream (a relay stage's cycle - 1): the key is the seed's two halves, the
/// counter (step, run, stream's low and high halves); the first two output words give 53
/// random bits (a double's mantissa), so the draw is exact in double and never 1.
BATON_HD inline double sample_uniform(std::uint64_t seed, std::uint64_t stream, std::uint32_t step,
                                      std::uint32_t run = 0) {
  const Philox4x32Block out = philox4x32_10(
      {{step, run, static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)}},
      static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  return uniform_of(out);
}

/// The uniform of round `round` (> 0) of a draw that began with `u` (a dense draw's rejection
/// rounds: kernels::draw): Philox4x32-10 keyed by u's 53 bits, counter (round, 0, 0, 0), its
/// first two words as sample_uniform()'s. A function of u alone, so a draw stays a function of
/// its one uniform; a key no two uniforms share, so the rounds of different draws differ.
BATON_HD inline double next_uniform(double u, std::uint32_t round) {
  const auto key = static_cast<std::uint64_t>(u * 0x1.0p53);
  const Philox4x32Block out = philox4x32_10({{round, 0u, 0u, 0u}}, static_cast<std::uint32_t>(key),
                                            static_cast<std::uint32_t>(key >> 32));
  return uniform_of(out);
}

}  // namespace baton::kernels
