// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The bf16 products on the AMX tile unit (Intel Sapphire Rapids and later):
///        Y[n, out] (= or +=) X[n, in] · W[out, in]^T with bf16 W, under the contract of the
///        vdpbf16ps kernel in host_dot.hpp (HostContextOptions::bf16_products: the activations
///        split once into two bf16 terms hi + lo, products summed in f32), for every row count
///        alike.
///
/// One TDPBF16PS multiplies a 16 x 32 bf16 tile by a 32 x 16 one into 16 x 16 f32 sums: 16 times
/// the work of a 512-bit vdpbf16ps. The weights are the left operand exactly as they lie in
/// memory (a tile is 16 output rows x 32 inputs, rows `in` apart), so no weight is packed or
/// widened per call. The activations are the right operand, split into bf16 terms once per call
/// into XT[token block of 16][depth step][hi, lo][16 pairs][16 tokens] (32-bit words of two
/// bf16, zero past n and past in). Each depth step multiplies the weight tiles by the hi tile,
/// then by the lo tile, into the same sums.
/// A task takes 32 output rows at a time against 32 tokens at a time: four accumulator tiles
/// (2 row blocks x 2 token blocks) stay in the tile registers over the whole depth, then are
/// stored and added into Y transposed. Every output is summed in one fixed order (the depth's
/// tiles front to back), so results depend neither on the thread count nor on the other tokens
/// of the call: a token alone (a decode step, padded with zero columns) gets the bits it gets
/// beside 63 others. Depths that are not a multiple of 32 take their last
/// inputs from a zero-padded copy of the rows' tails; output rows past the last whole 32 go to
/// the AVX512-BF16 kernel. Linux grants a process the tile state only on request
/// (host_simd::cpu_supports_amx_bf16 asks once).
/// Host only: never included from .cu files.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "baton/backend/host_context.hpp"
#include "baton/backend/host_dot.hpp"
#include "baton/backend/host_parallel.hpp"
#include "baton/backend/host_simd.hpp"
#include "baton/core/dtype.hpp"

namespace baton::host_gemm::amx {

inline constexpr int kTile = 16;        ///< rows of a tile; tokens of a token block
inline constexpr int kDepth = 32;       ///< bf16 inputs per tile row (64 bytes)
inline constexpr int kRowBlock = 32;    ///< output rows per step of a task (two tiles)
inline constexpr int kTokenBlock = 32;  ///< tokens per step (two token blocks)

/// Depth steps of 32 inputs: the depth rounded up to whole tiles.
inline int depth_steps(int in) { return (in + kDepth - 1) / kDepth; }
/// Words XT holds per token block: per depth step a tile of hi terms and a tile of lo terms.
inline std::size_t xt_block_words(int in) {
  return static_cast<std::size_t>(depth_steps(in)) * 2 * kTile * kTile;
}

#if BATON_HOST_SIMD_X86
#define BATON_GEMM_AMX __attribute__((target("amx-tile,amx-bf16")))

/// XT (see the file comment) for X[n, in] (rows ldx apart): token blocks [b0, b1). A token's 32
/// inputs of a depth step are split into their hi and lo terms (host_dot::detail::split_bf16,
/// as the AVX512-BF16 kernel splits them), 16 pair words each, which scatters write down the
/// token's column of the step's hi tile and of its lo tile.
__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512bf16"))) inline void
split_activations(const float* x, int n, int in, int ldx, long b0, long b1, std::uint32_t* xt) {
  const int steps = depth_steps(in);
  const auto mask = [&](int at) -> __mmask16 {
    const int left = in - at;
    return left >= 16 ? __mmask16(0xffff) : left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1u);
  };
  const __m512i column =
      _mm512_mullo_epi32(_mm512_set1_epi32(kTile),
                         _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  for (long b = b0; b < b1; ++b) {
    std::uint32_t* blk = xt + static_cast<std::size_t>(b) * xt_block_words(in);
    const long tokens = std::min<long>(kTile, n - b * kTile);  // the block's tokens below n
    // Columns past n are zeros: stored plainly a block at a time, not scattered a token at a
    // time (a decode step's one token used to fill two blocks, scattering 31 columns of zeros:
    // 7% of its time).
    if (tokens < kTile) {
      const __m512i zero = _mm512_setzero_si512();
      for (std::size_t w = 0; w < xt_block_words(in); w += kTile)
        _mm512_storeu_si512(blk + w, zero);
    }
    for (int j = 0; j < tokens; ++j) {
      const long t = b * kTile + j;
      for (int s = 0; s < steps; ++s) {
        const int k = s * kDepth;
        __m512i hi, lo;
        const float* row = x + static_cast<std::size_t>(t) * ldx;
        host_dot::detail::split_bf16(_mm512_maskz_loadu_ps(mask(k), row + k),
                                     _mm512_maskz_loadu_ps(mask(k + 16), row + k + 16), hi, lo);
        std::uint32_t* tile = blk + static_cast<std::size_t>(s) * 2 * kTile * kTile + j;
        _mm512_i32scatter_epi32(tile, column, hi, 4);
        _mm512_i32scatter_epi32(tile + kTile * kTile, column, lo, 4);
      }
    }
  }
}

/// The tile configuration: palette 1, tiles 0-7 each 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

/// Output rows [o_begin, o_end) (whole kRowBlocks) of Y against every token.
/// Tiles: 0-3 sums (row block r, token block c at 2r + c), 4-5 weights, 6-7 activations.
BATON_GEMM_AMX inline void rows(const bf16* w, int in, int o_begin, int o_end,
                                const std::uint32_t* xt, int n, float* y, int ldy,
                                bool accumulate) {
  const TileConfig config;
  _tile_loadconfig(&config);
  const int whole = in / kDepth, rest = in % kDepth;
  const int steps = whole + (rest > 0);  // the last one from `tails` when the depth has a rest
  const std::size_t stride = static_cast<std::size_t>(in) * sizeof(bf16);
  const std::size_t block_words = xt_block_words(in);  // one token block
  alignas(64) bf16 tails[2][kTile][kDepth];            // the rows' last `rest` inputs, zero-padded
  alignas(64) float sums[kTile][kTile];
  // sums[r][j] = output row o + r, token t + j
  const auto add_out = [&](int o, int t) {
    for (int j = 0; j < kTile && t + j < n; ++j) {
      float* yt = y + static_cast<std::size_t>(t + j) * ldy + o;
      for (int r = 0; r < kTile; ++r) yt[r] = accumulate ? yt[r] + sums[r][j] : sums[r][j];
    }
  };
  for (int o = o_begin; o < o_end; o += kRowBlock) {
    const bf16* w0 = w + static_cast<std::size_t>(o) * in;
    const bf16* w1 = w0 + static_cast<std::size_t>(kTile) * in;
    if (rest > 0) {
      for (int h = 0; h < 2; ++h)
        for (int r = 0; r < kTile; ++r)
          for (int k = 0; k < kDepth; ++k)
            tails[h][r][k] =
                k < rest ? w[static_cast<std::size_t>(o + h * kTile + r) * in + whole * kDepth + k]
                         : bf16{0};
      __asm__ volatile("" ::: "memory");  // tile loads are asm the compiler cannot see read
    }
    for (int t = 0; t < n; t += kTokenBlock) {
      const bool second = t + kTile < n;  // a second token block has tokens
      const std::uint32_t* x0 = xt + static_cast<std::size_t>(t / kTile) * block_words;
      const std::uint32_t* x1 = x0 + block_words;
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int s = 0; s < steps; ++s) {
        const std::size_t at = static_cast<std::size_t>(s) * 2 * kTile * kTile;  // XT words
        if (s < whole) {
          _tile_loadd(4, w0 + s * kDepth, stride);
          _tile_loadd(5, w1 + s * kDepth, stride);
        } else {
          _tile_loadd(4, tails[0], kDepth * sizeof(bf16));
          _tile_loadd(5, tails[1], kDepth * sizeof(bf16));
        }
        for (std::size_t term = 0; term < 2; ++term) {  // the hi terms, then the lo terms
          const std::size_t words = at + term * kTile * kTile;
          _tile_loadd(6, x0 + words, kTile * sizeof(std::uint32_t));
          _tile_dpbf16ps(0, 4, 6);
          _tile_dpbf16ps(2, 5, 6);
          if (second) {
            _tile_loadd(7, x1 + words, kTile * sizeof(std::uint32_t));
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(3, 5, 7);
          }
        }
      }
      _tile_stored(0, sums, kTile * sizeof(float));
      add_out(o, t);
      _tile_stored(2, sums, kTile * sizeof(float));
      add_out(o + kTile, t);
      if (second) {
        _tile_stored(1, sums, kTile * sizeof(float));
        add_out(o, t + kTile);
        _tile_stored(3, sums, kTile * sizeof(float));
        add_out(o + kTile, t + kTile);
      }
    }
  }
  _tile_release();
}

#undef BATON_GEMM_AMX
#endif

/// The product's whole row blocks on the tiles: output rows [0, out / kRowBlock * kRowBlock).
/// Returns how many rows it covered; the caller computes the rest. `ctx` must be an AMX context
/// (HostContext::amx()); its product scratch holds the split activations.
inline int gemm_nt_rows(HostContext* ctx, bool parallel, const float* x, int n, int in, int ldx,
                        const bf16* w, int out, float* y, int ldy, bool accumulate) {
#if BATON_HOST_SIMD_X86
  const int covered = out / kRowBlock * kRowBlock;
  if (covered == 0 || n <= 0 || in <= 0) return 0;
  // The token blocks that hold tokens: rows() reads a block of 16 only when one of its tokens
  // is below n. Every word of them is written by split_activations (zeros past n and in).
  const long token_blocks = (n + kTile - 1) / kTile;
  std::uint32_t* xt =
      ctx->product_scratch(static_cast<std::size_t>(token_blocks) * xt_block_words(in));
  host_ops::parallel_ranges(ctx, token_blocks, parallel, [&](long b0, long b1) {
    split_activations(x, n, in, ldx, b0, b1, xt);
  });
  host_ops::parallel_ranges(ctx, covered / kRowBlock, parallel, [&](long b0, long b1) {
    rows(w, in, static_cast<int>(b0) * kRowBlock, static_cast<int>(b1) * kRowBlock, xt, n, y, ldy,
         accumulate);
  });
  return covered;
#else
  (void)ctx, (void)parallel, (void)x, (void)n, (void)in, (void)ldx, (void)w, (void)out, (void)y,
      (void)ldy, (void)accumulate;
  return 0;
#endif
}

}  // namespace baton::host_gemm::amx
