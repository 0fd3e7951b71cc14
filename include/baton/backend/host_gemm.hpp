// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host's matrix-matrix product Y[n, out] (= or +=) X[n, in] · W[out, in]^T for
///        prefill (more than a couple of tokens): W in f32 / bf16 / f16, X and Y in f32, the
///        instruction set chosen at run time (host_simd::Isa), loops on the HostContext's pool.
///
/// The shape is the usual blocked one. W is cut into blocks of output columns, one task each;
/// a task packs, for a depth slice of `kc` inputs at a time, its columns into micro-panels
/// [kc][NR] of f32 — 16-bit weights are widened while packing, so a 16-bit matrix is read as
/// 16 bits and only one small panel at a time ever exists in f32 — and runs an MR x NR
/// register-tile kernel over all token rows of X against each panel (the panel stays in L1,
/// X's rows stream from L2). Each output element is summed by one kernel call per depth slice
/// in a fixed order, whatever the thread count: results do not depend on the pool.
///
/// Kernels (broadcast one X value, FMA against NR packed weights):
///   avx512: 8 x 32 (16 zmm accumulators), kc 128;  avx2: 6 x 16 (12 ymm), kc 256;
///   portable: 4 x 8 plain loops (the baseline build vectorizes them with SSE2), kc 512.
///   avx512 + bf16 products (opt-in, HostContextOptions::bf16_products; bf16 weights only):
///     8 x 32 with vdpbf16ps (AVX512-BF16), kc 128. The panel keeps the weights' own bf16 bits
///     in pairs of consecutive inputs ([kc/2][NR] 32-bit words: nothing is widened), each tile
///     rounds its token rows to bf16 once per depth slice, and one instruction adds two
///     products per lane: twice the multiply-adds of the f32 kernel. The activations' rounding
///     (relative 2^-9 each) is why it is a choice and not the default. Where the CPU has
///     AMX-BF16, whole blocks of 32 output rows run on the tile unit instead (host_gemm_amx.hpp,
///     the same rounding; HostContextOptions::amx).
/// Partial tiles: missing token rows read the last row and write to a dummy row; missing
/// columns are zero in the panel and masked on store. As in host_simd.hpp, vectors never cross
/// a function boundary whose target differs, so the build stays free of -Wpsabi notes.
/// Host only: never included from .cu files.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "baton/backend/host_gemm_amx.hpp"
#include "baton/backend/host_parallel.hpp"
#include "baton/backend/host_simd.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/error.hpp"
#include "baton/core/quant.hpp"

namespace baton::host_gemm {

/// Output columns per task: a multiple of every kernel's NR.
inline constexpr int kBlockCols = 64;

namespace detail {

/// The portable kernel: C[MR rows][nr] (= or +=) A-rows[:, 0:kc] · panel[kc][NR].
struct PortableKernel {
  static constexpr int MR = 4, NR = 8, KC = 512;
  using Panel = float;  ///< a packed panel's element: [kc][NR] widened weights
  static constexpr bool kPairs = false;
  static void run(int kc, const float* const* a, const float* b, float* const* c, int nr,
                  bool add) {
    float acc[MR][NR] = {};
    for (int k = 0; k < kc; ++k) {
      const float* bk = b + static_cast<std::size_t>(k) * NR;
      for (int i = 0; i < MR; ++i) {
        const float ai = a[i][k];
        for (int j = 0; j < NR; ++j) acc[i][j] += ai * bk[j];
      }
    }
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < nr; ++j) c[i][j] = add ? c[i][j] + acc[i][j] : acc[i][j];
  }
};

#if BATON_HOST_SIMD_X86
#define BATON_GEMM_AVX2 __attribute__((target("avx2,fma,f16c")))
#define BATON_GEMM_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")))
#define BATON_GEMM_AVX512_BF16 \
  __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512bf16")))

struct Avx2Kernel {
  static constexpr int MR = 6, NR = 16, KC = 256;
  using Panel = float;
  static constexpr bool kPairs = false;
  BATON_GEMM_AVX2 static void run(int kc, const float* const* a, const float* b, float* const* c,
                                  int nr, bool add) {
    __m256 acc[MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
    for (int k = 0; k < kc; ++k, b += NR) {
      const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
      const float ak[MR] = {a0[k], a1[k], a2[k], a3[k], a4[k], a5[k]};
#pragma GCC unroll 6
      for (int i = 0; i < MR; ++i) {
        const __m256 ai = _mm256_set1_ps(ak[i]);
        acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
      }
    }
    if (nr == NR) {
      // A whole panel (all but a matrix's last): plain stores. AMD's cores run vmaskmovps
      // stores slowly (microcoded), and twelve per call cost a tenth of the call's time.
#pragma GCC unroll 6
      for (int i = 0; i < MR; ++i) {
        __m256 r0 = acc[i][0], r1 = acc[i][1];
        if (add) {
          r0 = _mm256_add_ps(r0, _mm256_loadu_ps(c[i]));
          r1 = _mm256_add_ps(r1, _mm256_loadu_ps(c[i] + 8));
        }
        _mm256_storeu_ps(c[i], r0);
        _mm256_storeu_ps(c[i] + 8, r1);
      }
      return;
    }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), lane);
    const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr - 8), lane);
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      __m256 r0 = acc[i][0], r1 = acc[i][1];
      if (add) {
        r0 = _mm256_add_ps(r0, _mm256_maskload_ps(c[i], m0));
        r1 = _mm256_add_ps(r1, _mm256_maskload_ps(c[i] + 8, m1));
      }
      _mm256_maskstore_ps(c[i], m0, r0);
      _mm256_maskstore_ps(c[i] + 8, m1, r1);
    }
  }
};

/// C[8 rows][nr] (= or +=) acc, the columns past nr left untouched (both 8 x 32 kernels).
__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"), always_inline)) inline void
store_tile_8x32(__m512 (&acc)[8][2], float* const* c, int nr, bool add) {
  const auto mask = [](int cols) -> __mmask16 {
    return cols >= 16 ? __mmask16(0xffff) : cols <= 0 ? __mmask16(0) : __mmask16((1u << cols) - 1u);
  };
  const __mmask16 m0 = mask(nr), m1 = mask(nr - 16);
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    __m512 r0 = acc[i][0], r1 = acc[i][1];
    if (add) {
      r0 = _mm512_add_ps(r0, _mm512_maskz_loadu_ps(m0, c[i]));
      r1 = _mm512_add_ps(r1, _mm512_maskz_loadu_ps(m1, c[i] + 16));
    }
    _mm512_mask_storeu_ps(c[i], m0, r0);
    _mm512_mask_storeu_ps(c[i] + 16, m1, r1);
  }
}

struct Avx512Kernel {
  static constexpr int MR = 8, NR = 32, KC = 128;
  using Panel = float;
  static constexpr bool kPairs = false;
  BATON_GEMM_AVX512 static void run(int kc, const float* const* a, const float* b, float* const* c,
                                    int nr, bool add) {
    __m512 acc[MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
    const float *a4 = a[4], *a5 = a[5], *a6 = a[6], *a7 = a[7];
    for (int k = 0; k < kc; ++k, b += NR) {
      const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
      const float ak[MR] = {a0[k], a1[k], a2[k], a3[k], a4[k], a5[k], a6[k], a7[k]};
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m512 ai = _mm512_set1_ps(ak[i]);
        acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      }
    }
    store_tile_8x32(acc, c, nr, add);
  }
};

/// The 8 x 32 kernel on bf16 pairs (vdpbf16ps): b is the panel of pair words (see
/// pack_pairs), ab the tile's token rows rounded to bf16 pairs by round_rows (once per tile
/// and depth slice, for all the panels of a block).
struct Avx512Bf16Kernel {
  static constexpr int MR = 8, NR = 32, KC = 128;
  using Panel = std::uint32_t;  ///< two bf16 weights (inputs 2p, 2p + 1) of one column
  using Rows = std::uint32_t[MR][KC / 2];
  static constexpr bool kPairs = true;
  static_assert(KC % 32 == 0, "host_gemm: the bf16 kernel rounds a depth slice 32 at a time");

  /// ab[i][p] = bf16(a[i][2p]) | bf16(a[i][2p + 1]) << 16, nearest even; zero past kc.
  BATON_GEMM_AVX512_BF16 static void round_rows(int kc, const float* const* a, Rows& ab) {
    const auto mask = [&](int at) -> __mmask16 {
      const int left = kc - at;
      return left >= 16  ? __mmask16(0xffff)
             : left <= 0 ? __mmask16(0)
                         : __mmask16((1u << left) - 1u);
    };
    for (int i = 0; i < MR; ++i)
      for (int k = 0; k < kc; k += 32) {
        const __m512 lo = _mm512_maskz_loadu_ps(mask(k), a[i] + k);
        const __m512 hi = _mm512_maskz_loadu_ps(mask(k + 16), a[i] + k + 16);
        _mm512_store_si512(&ab[i][k / 2], (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
      }
  }

  BATON_GEMM_AVX512_BF16 static void run(int kc, const Rows& ab, const std::uint32_t* b,
                                         float* const* c, int nr, bool add) {
    __m512 acc[MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    const int pairs = (kc + 1) / 2;
    for (int p = 0; p < pairs; ++p, b += NR) {
      const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
      const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 16);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m512bh ai = (__m512bh)_mm512_set1_epi32(static_cast<int>(ab[i][p]));
        acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
        acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
      }
    }
    store_tile_8x32(acc, c, nr, add);
  }
};

/// dst[k][j] = widen(rows[j][k]) for an 8 x 8 block (j: 8 weight rows, k: 8 inputs), through
/// the usual three-stage AVX transpose; dst rows are `ld` floats apart.
template <class W>
BATON_GEMM_AVX2 void pack8x8(const W* const* rows, int k, float* dst, int ld) {
  __m256 r[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) r[j] = host_simd::detail::load8(rows[j] + k);  // widened
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(dst + 0 * ld, _mm256_permute2f128_ps(s0, s4, 0x20));
  _mm256_storeu_ps(dst + 1 * ld, _mm256_permute2f128_ps(s1, s5, 0x20));
  _mm256_storeu_ps(dst + 2 * ld, _mm256_permute2f128_ps(s2, s6, 0x20));
  _mm256_storeu_ps(dst + 3 * ld, _mm256_permute2f128_ps(s3, s7, 0x20));
  _mm256_storeu_ps(dst + 4 * ld, _mm256_permute2f128_ps(s0, s4, 0x31));
  _mm256_storeu_ps(dst + 5 * ld, _mm256_permute2f128_ps(s1, s5, 0x31));
  _mm256_storeu_ps(dst + 6 * ld, _mm256_permute2f128_ps(s2, s6, 0x31));
  _mm256_storeu_ps(dst + 7 * ld, _mm256_permute2f128_ps(s3, s7, 0x31));
}

#undef BATON_GEMM_AVX2
#undef BATON_GEMM_AVX512
#undef BATON_GEMM_AVX512_BF16
#endif

/// One micro-panel of bf16 pairs: dst[p][j] = W[o0 + j][k0 + 2p] | W[o0 + j][k0 + 2p + 1] << 16
/// (the bits as stored), for 2p < kc, j < NR; zero for j >= nr and for the input past an odd
/// kc, so padded lanes add nothing.
template <int NR>
void pack_pairs(const bf16* w, int in, int o0, int nr, int k0, int kc, std::uint32_t* dst) {
  const int pairs = (kc + 1) / 2;
  int pdone = 0;
#if BATON_HOST_SIMD_X86
  // Full panels, whole pairs: the pair words of each row are its 32-bit words, so the panel is
  // their 8 x 8 transpose, moved as floats (pack8x8<f32> moves bits, it computes nothing).
  if (nr == NR) {
    std::array<const float*, NR> rows{};
    for (int j = 0; j < NR; ++j)
      rows[j] = reinterpret_cast<const float*>(w + static_cast<std::size_t>(o0 + j) * in + k0);
    float* d = reinterpret_cast<float*>(dst);
    for (; pdone + 8 <= kc / 2; pdone += 8)
      for (int j = 0; j < NR; j += 8) pack8x8(rows.data() + j, pdone, d + pdone * NR + j, NR);
  }
#endif
  for (int j = 0; j < NR; ++j) {
    std::uint32_t* d = dst + j;
    if (j >= nr) {
      for (int p = pdone; p < pairs; ++p) d[static_cast<std::size_t>(p) * NR] = 0;
      continue;
    }
    const bf16* row = w + static_cast<std::size_t>(o0 + j) * in + k0;
    for (int p = pdone; p < pairs; ++p) {
      const std::uint32_t lo = row[2 * p].bits;
      const std::uint32_t hi = 2 * p + 1 < kc ? row[2 * p + 1].bits : 0u;
      d[static_cast<std::size_t>(p) * NR] = lo | hi << 16;
    }
  }
}

/// One micro-panel: dst[k][j] = widen(W[o0 + j][k0 + k]) for k < kc, j < NR (zero for
/// j >= nr). With `simd`, full 8 x 8 blocks go through pack8x8 (the CPU runs AVX2).
template <int NR, class W>
void pack_panel(const W* w, int in, int o0, int nr, int k0, int kc, float* dst, bool simd) {
  std::array<const W*, NR> rows{};
  for (int j = 0; j < NR; ++j)
    rows[j] = w + static_cast<std::size_t>(o0 + std::min(j, nr - 1)) * in + k0;
  int kdone = 0;
#if BATON_HOST_SIMD_X86
  if (simd && nr == NR) {
    for (; kdone + 8 <= kc; kdone += 8)
      for (int j = 0; j < NR; j += 8) pack8x8(rows.data() + j, kdone, dst + kdone * NR + j, NR);
  }
#else
  (void)simd;
#endif
  for (int j = 0; j < NR; ++j) {
    float* d = dst + j;
    if (j >= nr) {
      for (int k = kdone; k < kc; ++k) d[static_cast<std::size_t>(k) * NR] = 0.0f;
      continue;
    }
    for (int k = kdone; k < kc; ++k) d[static_cast<std::size_t>(k) * NR] = widen(rows[j][k]);
  }
}

#if BATON_HOST_SIMD_X86
/// `blocks` consecutive Q8_0 / Q4_0 blocks widened to f32 into out[0, 32 * blocks): eight
/// weights a vector (sign-extend, convert, scale), where the baseline build's loop converts one
/// at a time.
template <class Blk>
__attribute__((target("avx2,fma,f16c"))) void dequantize_avx2(const Blk* b, int blocks,
                                                              float* out) {
  for (int i = 0; i < blocks; ++i, out += kQuantBlock) {
    __m128i lo, hi;  // weights 0..15 and 16..31 as signed bytes
    if constexpr (std::is_same_v<Blk, BlockQ8_0>) {
      lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].qs));
      hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].qs + 16));
    } else {
      const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].qs));
      const __m128i mask = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
      lo = _mm_sub_epi8(_mm_and_si128(packed, mask), eight);
      hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(packed, 4), mask), eight);
    }
    const __m256 s = _mm256_set1_ps(_cvtsh_ss(b[i].d.bits));
    _mm256_storeu_ps(out, _mm256_mul_ps(s, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))));
    _mm256_storeu_ps(
        out + 8, _mm256_mul_ps(s, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))));
    _mm256_storeu_ps(out + 16, _mm256_mul_ps(s, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))));
    _mm256_storeu_ps(
        out + 24,
        _mm256_mul_ps(s, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))));
  }
}
#endif

/// One micro-panel of a block-quantized matrix (Q8_0 / Q4_0): dst[k][j] = W[o0 + j][k0 + k].
/// The panel's rows are dequantized front to back into a row-major slice first (k0 and kc are
/// whole blocks: every KC is a multiple of 32), which pack_panel then transposes as it does f32
/// weights (8 x 8 AVX transposes with `simd`). Storing each dequantized value straight to its
/// place NR floats apart, in a scalar loop, held q8_0 prefill to 0.89x f32's rate; now it is
/// par (docs/performance.md, "Quantized weights").
template <int NR>
void pack_panel(BlockView w, int in, int o0, int nr, int k0, int kc, float* dst, bool simd) {
  constexpr int kPanelFloats = 4096;  // NR x KC of every kernel (16 KiB)
  BATON_CHECK(NR * kc <= kPanelFloats, usage_error, "host_gemm: a panel of ", NR, " x ", kc);
  alignas(64) float slice[kPanelFloats];
  const std::size_t row_bytes = block_row_bytes(w.format, static_cast<std::size_t>(in));
  const int b0 = k0 / kQuantBlock, blocks = kc / kQuantBlock;
  for (int j = 0; j < nr; ++j) {
    const std::uint8_t* row = w.data + static_cast<std::size_t>(o0 + j) * row_bytes;
    float* out = slice + static_cast<std::size_t>(j) * kc;
#if BATON_HOST_SIMD_X86
    if (simd) {
      if (w.format == BlockFormat::q8_0)
        dequantize_avx2(reinterpret_cast<const BlockQ8_0*>(row) + b0, blocks, out);
      else
        dequantize_avx2(reinterpret_cast<const BlockQ4_0*>(row) + b0, blocks, out);
      continue;
    }
#endif
    for (int b = 0; b < blocks; ++b, out += kQuantBlock) {
      if (w.format == BlockFormat::q8_0) {
        const BlockQ8_0& q = reinterpret_cast<const BlockQ8_0*>(row)[b0 + b];
        const float s = widen(q.d);
        for (int i = 0; i < kQuantBlock; ++i) out[i] = s * static_cast<float>(q.qs[i]);
      } else {
        const BlockQ4_0& q = reinterpret_cast<const BlockQ4_0*>(row)[b0 + b];
        const float s = widen(q.d);
        for (int i = 0; i < kQuantBlock / 2; ++i) {
          out[i] = s * static_cast<float>((q.qs[i] & 0x0f) - 8);
          out[i + 16] = s * static_cast<float>((q.qs[i] >> 4) - 8);
        }
      }
    }
  }
  pack_panel<NR>(static_cast<const float*>(slice), kc, 0, nr, 0, kc, dst, simd);
}

/// The product with kernel K: one task per kBlockCols output columns. `w`: a pointer to the
/// weights (f32 / bf16 / f16), or a BlockView of Q8_0 / Q4_0 blocks.
template <class K, class Src>
void gemm(HostContext* ctx, bool parallel, bool simd_pack, const float* x, int n, int in, int ldx,
          Src w, int out, float* y, int ldy, bool accumulate) {
  static_assert(kBlockCols % K::NR == 0, "host_gemm: a block must hold whole micro-panels");
  const long blocks = (out + kBlockCols - 1) / kBlockCols;
  host_ops::parallel_ranges(ctx, blocks, parallel, [&](long b0, long b1) {
    // a panel's elements: K::KC * NR widened weights, or half as many pair words
    constexpr std::size_t kPanel = static_cast<std::size_t>(K::KC) * K::NR / (K::kPairs ? 2 : 1);
    alignas(64) std::array<typename K::Panel, kPanel*(kBlockCols / K::NR)> packed;
    alignas(64) std::array<float, K::NR> dummy{};  // where missing token rows are written
    const float* a[K::MR];
    float* c[K::MR];
    for (long blk = b0; blk < b1; ++blk) {
      const int col0 = static_cast<int>(blk) * kBlockCols;
      const int cols = std::min(kBlockCols, out - col0);
      const int panels = (cols + K::NR - 1) / K::NR;
      for (int k0 = 0; k0 < in; k0 += K::KC) {
        const int kc = std::min(K::KC, in - k0);
        const bool add = accumulate || k0 > 0;
        for (int p = 0; p < panels; ++p) {
          const int o0 = col0 + p * K::NR, nr = std::min(K::NR, cols - p * K::NR);
          if constexpr (K::kPairs)
            pack_pairs<K::NR>(w, in, o0, nr, k0, kc, packed.data() + p * kPanel);
          else
            pack_panel<K::NR>(w, in, o0, nr, k0, kc, packed.data() + p * kPanel, simd_pack);
        }
        // Tile t0's rows of X from this depth slice on, and of Y at column j0.
        const auto set_tile = [&](int t0, int j0) {
          for (int i = 0; i < K::MR; ++i) {
            const int t = std::min(t0 + i, n - 1);
            a[i] = x + static_cast<std::size_t>(t) * ldx + k0;
            c[i] = t0 + i < n ? y + static_cast<std::size_t>(t0 + i) * ldy + j0 : dummy.data();
          }
        };
        if constexpr (K::kPairs) {
          // Tiles outside, panels inside: a tile's rows are rounded to bf16 once for all the
          // block's panels (the packed block, 16 KiB, stays in L1).
          alignas(64) typename K::Rows ab;
          for (int t0 = 0; t0 < n; t0 += K::MR) {
            set_tile(t0, col0);
            K::round_rows(kc, a, ab);
            for (int p = 0; p < panels; ++p) {
              const int nr = std::min(K::NR, cols - p * K::NR);
              float* cp[K::MR];
              for (int i = 0; i < K::MR; ++i)
                cp[i] = c[i] == dummy.data() ? c[i] : c[i] + p * K::NR;
              K::run(kc, ab, packed.data() + p * kPanel, cp, nr, add);
            }
          }
        } else {
          for (int p = 0; p < panels; ++p) {
            const int j0 = col0 + p * K::NR, nr = std::min(K::NR, cols - p * K::NR);
            for (int t0 = 0; t0 < n; t0 += K::MR) {
              set_tile(t0, j0);
              K::run(kc, a, packed.data() + p * kPanel, c, nr, add);
            }
          }
        }
      }
    }
  });
}

/// The product with the f32 kernels of `isa` (which the CPU must run); `w` a weight pointer or a
/// BlockView (gemm's Src).
template <class Src>
void gemm_on(host_simd::Isa isa, HostContext* ctx, bool parallel, const float* x, int n, int in,
             int ldx, Src w, int out, float* y, int ldy, bool accumulate) {
#if BATON_HOST_SIMD_X86
  using host_simd::Isa;
  if (isa == Isa::avx512)
    return detail::gemm<detail::Avx512Kernel>(ctx, parallel, true, x, n, in, ldx, w, out, y, ldy,
                                              accumulate);
  if (isa == Isa::avx2)
    return detail::gemm<detail::Avx2Kernel>(ctx, parallel, true, x, n, in, ldx, w, out, y, ldy,
                                            accumulate);
#endif
  BATON_CHECK(isa == host_simd::Isa::portable, usage_error, "host_gemm: kernels ",
              host_simd::isa_name(isa), " were not compiled for this platform");
  detail::gemm<detail::PortableKernel>(ctx, parallel, false, x, n, in, ldx, w, out, y, ldy,
                                       accumulate);
}

}  // namespace detail

/// Y[n, out] (= or +=) X[n, in] · W[out, in]^T with the kernels of `isa` (which the CPU must
/// run: see host_simd::cpu_supports), on ctx's pool (OpenMP when null) when `parallel`.
template <StorageType W>
void gemm_nt(host_simd::Isa isa, HostContext* ctx, bool parallel, const float* x, int n, int in,
             int ldx, const W* w, int out, float* y, int ldy, bool accumulate) {
  if (n <= 0 || out <= 0) return;
  if (in <= 0) {  // an empty sum: zero, or Y unchanged
    if (!accumulate)
      for (int t = 0; t < n; ++t) std::fill_n(y + static_cast<std::size_t>(t) * ldy, out, 0.0f);
    return;
  }
#if BATON_HOST_SIMD_X86
  using host_simd::Isa;
  if constexpr (std::is_same_v<W, bf16>) {
    if (isa == Isa::avx512 && ctx != nullptr && ctx->bf16_products()) {
      // the tiles take whole blocks of 32 output rows; vdpbf16ps the rest (or all)
      const int done =
          ctx->amx() ? amx::gemm_nt_rows(ctx, parallel, x, n, in, ldx, w, out, y, ldy, accumulate)
                     : 0;
      if (done < out)
        detail::gemm<detail::Avx512Bf16Kernel>(ctx, parallel, true, x, n, in, ldx,
                                               w + static_cast<std::size_t>(done) * in, out - done,
                                               y + done, ldy, accumulate);
      return;
    }
  }
#endif
  detail::gemm_on(isa, ctx, parallel, x, n, in, ldx, w, out, y, ldy, accumulate);
}

/// gemm_nt for a matrix of Q8_0 / Q4_0 blocks: the panels are dequantized while packing (each
/// weight once per product, whatever the tokens), and the f32 kernels multiply them with the
/// unrounded activations. (llama.cpp multiplies 8-bit activations with integer dot products
/// here too; this product keeps f32's accuracy and speed: docs/performance.md.)
inline void gemm_nt(host_simd::Isa isa, HostContext* ctx, bool parallel, const float* x, int n,
                    int in, int ldx, BlockView w, int out, float* y, int ldy, bool accumulate) {
  if (n <= 0 || out <= 0) return;
  detail::gemm_on(isa, ctx, parallel, x, n, in, ldx, w, out, y, ldy, accumulate);
}

}  // namespace baton::host_gemm
