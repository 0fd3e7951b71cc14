// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host's products with Q8_0 / Q4_0 weights in the grouped layout (`q8_0x8`,
///        `q4_0x8`: core/quant.hpp), decode and prefill alike: activations quantized to 8 bits
///        per 32-block (host_quant.hpp's quantize_rows), integer dot products, eight weight rows
///        a vector.
///
/// Why grouped. In GGML's row layout a block's 32 products land in eight 32-bit partial sums
/// of one vector that still belong to one row: each block then costs a conversion, a scale
/// permute and an FMA of its own, besides unpacking and the dot itself (host_quant.hpp's row
/// kernels: ~7 vector operations per block on top of the loads). With eight rows' blocks side
/// by side in 4-byte chunks, lane r of every chunk is row r's: the dot products of a whole
/// block accumulate inside lane r (one instruction per chunk with AVX512-VNNI's `vpdpbusd`,
/// three without), and the conversion, the eight scales (one `vcvtph2ps`) and the FMA serve
/// eight rows at once: ~3 operations per row-block with VNNI, ~5 without. Each activation chunk
/// is one broadcast load. Prefill uses the same kernel on tiles of activation rows: the
/// weights are read once per tile from the caches, and the products run on 8-bit integers
/// (four multiply-adds a lane an instruction) instead of f32 FMAs.
///
/// Exactness: a block's integer sum is exact; the blocks' scaled sums are added in column
/// order, in f32, the same order for every tile size and instruction set.
/// Host only: never included from .cu files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "baton/backend/host_quant.hpp"
#include "baton/backend/host_simd.hpp"
#include "baton/core/error.hpp"
#include "baton/core/quant.hpp"

namespace baton::host_quant {

namespace detail {

/// The portable kernel: each row's block gathered out of its group block (ungroup_block) and
/// multiplied as the row kernels do (weight_int), its sum in integers, the scaled sums added in
/// column order (as the SIMD kernels do).
template <class Blk>
void groups_portable(const std::uint8_t* w, const QuantizedActivations& x, int t0, int t1, int in,
                     int g0, int g1, float* y, int ldy, bool accumulate) {
  const int blocks = in / kQuantBlock;
  const std::size_t gbb = kGroupRows * sizeof(Blk);
  for (int g = g0; g < g1; ++g)
    for (int t = t0; t < t1; ++t)
      for (int lane = 0; lane < kGroupRows; ++lane) {
        float acc = 0.0f;
        for (int b = 0; b < blocks; ++b) {
          const std::uint8_t* gb = w + (static_cast<std::size_t>(g) * blocks + b) * gbb;
          const std::int8_t* xq = x.qs.data() + static_cast<std::size_t>(t) * in + b * kQuantBlock;
          const Blk blk = ungroup_block<Blk>(gb, lane);
          int s = 0;
          for (int i = 0; i < kQuantBlock; ++i) s += weight_int(blk, i) * xq[i];
          const std::size_t xb = static_cast<std::size_t>(t) * blocks + b;
          acc += static_cast<float>(s) * (widen(blk.d) * x.d[xb]);
        }
        float& out = y[static_cast<std::size_t>(t) * ldy + g * kGroupRows + lane];
        out = accumulate ? out + acc : acc;
      }
}

#if BATON_HOST_SIMD_X86
#define BATON_GROUPS_AVX2 __attribute__((target("avx2,fma,f16c"), always_inline)) inline

/// Four activation bytes in every 32-bit lane.
BATON_GROUPS_AVX2 __m256i broadcast4(const std::int8_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

/// s += per lane, the four unsigned bytes of u times the four signed bytes of v. With VNNI one
/// `vpdpbusd` (AVX512-VNNI's 256-bit form; written as assembly because this function is
/// compiled for AVX2, and the caller runs it only where cpu_supports_vnni() holds); without,
/// `vpmaddubsw` (pairs into int16: |u·v| pairs stay below 2^15 for the ranges used here) and
/// `vpmaddwd` by ones.
template <bool Vnni>
BATON_GROUPS_AVX2 __m256i dot4(__m256i s, __m256i u, __m256i v) {
  if constexpr (Vnni) {
    __asm__("vpdpbusd %[v], %[u], %[s]" : [s] "+x"(s) : [u] "x"(u), [v] "x"(v));
    return s;
  } else {
    return _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_maddubs_epi16(u, v), _mm256_set1_epi16(1)));
  }
}

/// Activation rows k < N (row k's values at xq + k * in, scales and block sums at
/// xd / xs + k * blocks) against groups [g0, g1); y row k at y + k * ldy.
/// Q8_0: |w| times x with w's sign (the dot takes unsigned times signed). Q4_0: the nibbles
/// (q + 8, unsigned) times x, and 8 · sum(x) taken off each block's sum.
template <class Blk, int N, bool Vnni>
__attribute__((target("avx2,fma,f16c"))) void groups_avx2(const std::uint8_t* w,
                                                          const std::int8_t* xq, const float* xd,
                                                          const float* xs, int in, int g0, int g1,
                                                          float* y, int ldy, bool accumulate) {
  constexpr bool kQ4 = std::is_same_v<Blk, BlockQ4_0>;
  const int blocks = in / kQuantBlock;
  const std::size_t gbb = kGroupRows * sizeof(Blk);
  const auto sx = static_cast<std::size_t>(in), sd = static_cast<std::size_t>(blocks);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  for (int g = g0; g < g1; ++g) {
    const std::uint8_t* p = w + static_cast<std::size_t>(g) * blocks * gbb;
    __m256 acc[N];
    for (int k = 0; k < N; ++k) acc[k] = _mm256_setzero_ps();
    for (int b = 0; b < blocks; ++b, p += gbb) {
      __m256i s[N];
      for (int k = 0; k < N; ++k) s[k] = _mm256_setzero_si256();
      const std::int8_t* xb = xq + static_cast<std::size_t>(b) * kQuantBlock;
      if constexpr (kQ4) {
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {  // chunk i: weights 4i.. (low nibbles), 16 + 4i.. (high)
          const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16 + 32 * i));
          const __m256i lo = _mm256_and_si256(raw, low4);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
          for (int k = 0; k < N; ++k) {
            s[k] = dot4<Vnni>(s[k], lo, broadcast4(xb + k * sx + 4 * i));
            s[k] = dot4<Vnni>(s[k], hi, broadcast4(xb + k * sx + 16 + 4 * i));
          }
        }
      } else {
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) {
          const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16 + 32 * i));
          const __m256i aw = _mm256_abs_epi8(wq);
          for (int k = 0; k < N; ++k)
            s[k] = dot4<Vnni>(s[k], aw, _mm256_sign_epi8(broadcast4(xb + k * sx + 4 * i), wq));
        }
      }
      const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      for (int k = 0; k < N; ++k) {
        __m256 f = _mm256_cvtepi32_ps(s[k]);
        if constexpr (kQ4)
          f = _mm256_fnmadd_ps(_mm256_set1_ps(8.0f), _mm256_broadcast_ss(xs + k * sd + b), f);
        acc[k] =
            _mm256_fmadd_ps(f, _mm256_mul_ps(dw, _mm256_broadcast_ss(xd + k * sd + b)), acc[k]);
      }
    }
    for (int k = 0; k < N; ++k) {
      float* out = y + static_cast<std::size_t>(k) * ldy + static_cast<std::size_t>(g) * kGroupRows;
      _mm256_storeu_ps(out, accumulate ? _mm256_add_ps(_mm256_loadu_ps(out), acc[k]) : acc[k]);
    }
  }
}

#undef BATON_GROUPS_AVX2

/// Rows [t0, t1) of the activations against groups [g0, g1): tiles of kGroupTile groups (their
/// weights stay in the core's caches while every activation row passes), activation rows four
/// at a time, then two, then one.
template <class Blk, bool Vnni>
void groups_simd(const std::uint8_t* w, const QuantizedActivations& x, int t0, int t1, int in,
                 int g0, int g1, float* y, int ldy, bool accumulate) {
  constexpr int kGroupTile = 4;
  const int blocks = in / kQuantBlock;
  const auto sx = static_cast<std::size_t>(in), sd = static_cast<std::size_t>(blocks),
             sy = static_cast<std::size_t>(ldy);
  for (int a = g0; a < g1; a += kGroupTile) {
    const int e = a + kGroupTile < g1 ? a + kGroupTile : g1;
    int t = t0;
    const auto call = [&]<int N>() {
      groups_avx2<Blk, N, Vnni>(w, x.qs.data() + t * sx, x.d.data() + t * sd, x.sum.data() + t * sd,
                                in, a, e, y + t * sy, ldy, accumulate);
      t += N;
    };
    while (t + 4 <= t1) call.template operator()<4>();
    if (t + 2 <= t1) call.template operator()<2>();
    if (t < t1) call.template operator()<1>();
  }
}
#endif

}  // namespace detail

/// y row t [o] (= or +=) W[o, :] · x row t for the rows o of groups [g0, g1) (o in [8 g0, 8 g1))
/// and t in [t0, t1); W in a grouped format (`w.format` q8_0x8 or q4_0x8), x quantized by
/// quantize_rows, y row t at y + t * ldy. `isa` picks the kernel; AVX512-VNNI's dot product is
/// used within the avx512 family where the CPU has it.
inline void gemm_groups(host_simd::Isa isa, BlockView w, const QuantizedActivations& x, int t0,
                        int t1, int in, int g0, int g1, float* y, int ldy, bool accumulate) {
  BATON_CHECK(is_grouped(w.format), usage_error,
              "host_quant::gemm_groups: a grouped matrix (q8_0x8 / q4_0x8), not ",
              block_format_name(w.format));
  visit_format(w.format, [&](auto t) {
    using T = decltype(t);
    if constexpr (T::quantized) {
      using Blk = typename T::block;
#if BATON_HOST_SIMD_X86
      if (isa == host_simd::Isa::avx512 || isa == host_simd::Isa::avx2) {
        if (isa == host_simd::Isa::avx512 && host_simd::cpu_supports_vnni())
          return detail::groups_simd<Blk, true>(w.data, x, t0, t1, in, g0, g1, y, ldy, accumulate);
        return detail::groups_simd<Blk, false>(w.data, x, t0, t1, in, g0, g1, y, ldy, accumulate);
      }
#endif
      BATON_CHECK(isa == host_simd::Isa::portable, usage_error, "host_quant: kernels ",
                  host_simd::isa_name(isa), " were not compiled for this platform");
      detail::groups_portable<Blk>(w.data, x, t0, t1, in, g0, g1, y, ldy, accumulate);
    }
  });
}

}  // namespace baton::host_quant
