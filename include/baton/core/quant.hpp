// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Block-quantized weights: GGML's Q8_0 and Q4_0 block layouts, the round-to-nearest
///        quantizer llama.cpp's reference code uses, and their dequantization — plain math
///        shared by host and device (BATON_HD).
///
/// A block is 32 consecutive weights of one row with one f16 scale d:
///   Q8_0: qs[i] = round(x[i] / d) in [-127, 127], d = max|x| / 127 (34 bytes: 8.5 bits/weight)
///   Q4_0: the value v of largest magnitude (its sign kept) gives d = v / -8; each weight is
///         q = min(15, trunc(x / d + 8.5)) in [0, 15], stored as q - 8 ∈ [-8, 7] times d.
///         Byte j holds weight j in its low nibble and weight j + 16 in its high one
///         (18 bytes: 4.5 bits/weight).
/// Rounding: round half away from zero for Q8_0 (C's roundf), the reciprocal of the f32 scale
/// (not of its f16 rounding), the scale rounded to f16 to nearest even: what llama.cpp's
/// quantize_row_q8_0_ref / q4_0_ref and gguf-py's numpy quantizer compute, so a matrix quantized
/// here is byte for byte the one they write (tests/quant/ checks against gguf-py).
///
/// A matrix quantizes row by row; a row whose width is not a multiple of 32 cannot, and such a
/// matrix stays f16 (`BlockFormat::f16`, listed by BaseModel::fallback_matrices()).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "baton/core/dtype.hpp"
#include "baton/core/macros.hpp"

namespace baton {

/// Weights per block.
inline constexpr int kQuantBlock = 32;

/// One Q8_0 block (GGML's block_q8_0).
struct BlockQ8_0 {
  f16 d;
  std::int8_t qs[kQuantBlock];
};
/// One Q4_0 block (GGML's block_q4_0).
struct BlockQ4_0 {
  f16 d;
  std::uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ8_0) == 34 && alignof(BlockQ8_0) == 2, "GGML's Q8_0 block is 34 bytes");
static_assert(sizeof(BlockQ4_0) == 18 && alignof(BlockQ4_0) == 2, "GGML's Q4_0 block is 18 bytes");

/// Rows of activations quantized for the host's integer dot products with Q8_0 / Q4_0 weights,
/// a scale per 32-block as in Q8_0 but kept in f32: row t's values at qs[t * cols ...] and
/// its blocks' scales at d[t * cols / 32 ...] (scales apart, so a kernel loads eight at once).
struct QuantizedActivations {
  std::vector<std::int8_t> qs;
  std::vector<float> d;
  /// each block's sum of qs (as a float): Q4_0's kernels multiply the weights' unsigned
  /// nibbles q + 8 and take 8 times this off
  std::vector<float> sum;
};

/// How one quantized model's matrix is held: its blocks row by row (GGML's layout), the same
/// blocks in groups of eight rows (`q8_0x8`, `q4_0x8`: the host's layout, below), or f16 where
/// rows are not whole blocks.
enum class BlockFormat : std::uint8_t { f16, q8_0, q4_0, q8_0x8, q4_0x8 };

/// Rows per group of the grouped formats.
inline constexpr int kGroupRows = 8;

/// 32 f16 weights: what an f16 fallback matrix holds where a block format holds one block.
struct BlockF16 {
  f16 v[kQuantBlock];
};

/// A weight format's facts, stated once: its 32-weight block, its name, its grouped layout and
/// how a weight is read. Every size, decode and dispatch of a matrix goes through them
/// (visit_format below), so a format is added here and in visit_format's switch — which has no
/// default, so a format left out of it is a -Wswitch warning (an error in CI) rather than a
/// matrix sized as another format's.
template <BlockFormat F>
struct FormatTraits;

template <>
struct FormatTraits<BlockFormat::q8_0> {
  using block = BlockQ8_0;
  static constexpr BlockFormat format = BlockFormat::q8_0, grouped = BlockFormat::q8_0x8;
  static constexpr bool quantized = true;
  static constexpr std::string_view name = "q8_0";
  /// Weight i (0..31) as the integer the block's scale multiplies.
  BATON_HD static int weight(const block& b, int i) { return b.qs[i]; }
};

template <>
struct FormatTraits<BlockFormat::q4_0> {
  using block = BlockQ4_0;
  static constexpr BlockFormat format = BlockFormat::q4_0, grouped = BlockFormat::q4_0x8;
  static constexpr bool quantized = true;
  static constexpr std::string_view name = "q4_0";
  /// Weight i (0..31): byte j holds weight j in its low nibble and j + 16 in its high one.
  BATON_HD static int weight(const block& b, int i) {
    return (i < 16 ? (b.qs[i] & 0x0f) : (b.qs[i - 16] >> 4)) - 8;
  }
};

template <>
struct FormatTraits<BlockFormat::f16> {
  using block = BlockF16;
  static constexpr BlockFormat format = BlockFormat::f16, grouped = BlockFormat::f16;
  static constexpr bool quantized = false;
  static constexpr std::string_view name = "f16";
};

/// Calls fn(FormatTraits<K>{}) with K the block kind of f (q8_0 for q8_0 and q8_0x8, q4_0 for
/// q4_0 and q4_0x8, f16 for f16) and returns what it returns: the one dispatch on a matrix's
/// format.
template <class Fn>
BATON_HD constexpr decltype(auto) visit_format(BlockFormat f, Fn&& fn) {
  switch (f) {
    case BlockFormat::q8_0:
    case BlockFormat::q8_0x8:
      return fn(FormatTraits<BlockFormat::q8_0>{});
    case BlockFormat::q4_0:
    case BlockFormat::q4_0x8:
      return fn(FormatTraits<BlockFormat::q4_0>{});
    case BlockFormat::f16:
      break;
  }
  return fn(FormatTraits<BlockFormat::f16>{});
}

namespace detail {
// What the functions below read from a format's traits through visit_format: functors with a
// BATON_HD call operator (a lambda's would be host-only under nvcc).
struct FormatKind {
  template <class T>
  BATON_HD constexpr BlockFormat operator()(T) const {
    return T::format;
  }
};
struct FormatGrouped {
  template <class T>
  BATON_HD constexpr BlockFormat operator()(T) const {
    return T::grouped;
  }
};
struct FormatBlockBytes {
  template <class T>
  BATON_HD constexpr std::size_t operator()(T) const {
    return sizeof(typename T::block);
  }
};
}  // namespace detail

/// The traits of a block type.
template <class Blk>
using block_traits = FormatTraits<std::is_same_v<Blk, BlockQ8_0>   ? BlockFormat::q8_0
                                  : std::is_same_v<Blk, BlockQ4_0> ? BlockFormat::q4_0
                                                                   : BlockFormat::f16>;

BATON_HD constexpr bool is_grouped(BlockFormat f) {
  return f == BlockFormat::q8_0x8 || f == BlockFormat::q4_0x8;
}
/// The blocks a format holds: q8_0 for q8_0 and q8_0x8, q4_0 for q4_0 and q4_0x8, else f16.
BATON_HD constexpr BlockFormat block_kind(BlockFormat f) {
  return visit_format(f, detail::FormatKind{});
}

constexpr std::string_view block_format_name(BlockFormat f) {
  switch (f) {
    case BlockFormat::q8_0x8:
      return "q8_0x8";
    case BlockFormat::q4_0x8:
      return "q4_0x8";
    case BlockFormat::q8_0:
      return FormatTraits<BlockFormat::q8_0>::name;
    case BlockFormat::q4_0:
      return FormatTraits<BlockFormat::q4_0>::name;
    case BlockFormat::f16:
      break;
  }
  return FormatTraits<BlockFormat::f16>::name;
}

/// Bytes one block of format f takes (32 weights: an f16 matrix's are 64 bytes).
BATON_HD constexpr std::size_t block_bytes(BlockFormat f) {
  return visit_format(f, detail::FormatBlockBytes{});
}

/// Bytes of one row of `cols` weights in format f (cols a multiple of 32 for the block formats;
/// a grouped matrix takes the same bytes as its rows, only ordered otherwise).
BATON_HD constexpr std::size_t block_row_bytes(BlockFormat f, std::size_t cols) {
  return f == BlockFormat::f16 ? cols * sizeof(f16) : cols / kQuantBlock * block_bytes(f);
}

/// A read-only view of a quantized model's matrix [rows, cols] in backend memory: what the
/// products and the embedding gather take (the matrix's owner is BlockMatrix, model/).
struct BlockView {
  const std::uint8_t* data = nullptr;
  BlockFormat format = BlockFormat::f16;
};

/// Storage tags of the block-quantized base models: BaseModel<B, q8_0> holds its matrices as
/// Q8_0 blocks (LoRA slices, norms and biases stay f32).
struct q8_0 {
  static constexpr BlockFormat format = BlockFormat::q8_0;
  static constexpr std::string_view name = "q8_0";
};
struct q4_0 {
  static constexpr BlockFormat format = BlockFormat::q4_0;
  static constexpr std::string_view name = "q4_0";
};

template <class T>
inline constexpr bool is_block_storage_v = std::is_same_v<T, q8_0> || std::is_same_v<T, q4_0>;

/// A block-quantized storage tag (q8_0, q4_0).
template <class T>
concept BlockStorage = is_block_storage_v<T>;

/// What a base model's matrices may be stored as: a float type (f32, bf16, f16, kept as is)
/// or a block format (quantized at load, or read pre-quantized).
template <class T>
concept WeightStorage = StorageType<T> || BlockStorage<T>;

/// Rounds half away from zero, as C's roundf (the quantizers' rounding).
BATON_HD inline float round_half_away(float v) {
  const float t = static_cast<float>(static_cast<int>(v < 0.0f ? -v : v));  // |v| truncated
  const float a = (v < 0.0f ? -v : v) - t >= 0.5f ? t + 1.0f : t;
  return v < 0.0f ? -a : a;
}

/// Quantizes 32 weights into one Q8_0 block.
BATON_HD inline void quantize_block_q8_0(const float* x, BlockQ8_0& b) {
  float amax = 0.0f;
  for (int i = 0; i < kQuantBlock; ++i) {
    const float a = x[i] < 0.0f ? -x[i] : x[i];
    amax = a > amax ? a : amax;
  }
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = to_f16(d);
  for (int i = 0; i < kQuantBlock; ++i)
    b.qs[i] = static_cast<std::int8_t>(round_half_away(x[i] * id));
}

/// Quantizes 32 weights into one Q4_0 block.
BATON_HD inline void quantize_block_q4_0(const float* x, BlockQ4_0& b) {
  float amax = 0.0f, vmax = 0.0f;  // the value of largest magnitude, sign kept (first wins)
  for (int i = 0; i < kQuantBlock; ++i) {
    const float a = x[i] < 0.0f ? -x[i] : x[i];
    if (amax < a) {
      amax = a;
      vmax = x[i];
    }
  }
  const float d = vmax / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = to_f16(d);
  for (int j = 0; j < kQuantBlock / 2; ++j) {
    // x * id + 8.5 >= 0 (|x * id| <= 8), so the cast truncates a non-negative value
    const int lo = static_cast<int>(static_cast<std::int8_t>(x[j] * id + 8.5f));
    const int hi = static_cast<int>(static_cast<std::int8_t>(x[j + 16] * id + 8.5f));
    b.qs[j] = static_cast<std::uint8_t>((lo < 15 ? lo : 15) | (hi < 15 ? hi : 15) << 4);
  }
}

/// Quantizes 32 activations: d = max|x| / 127 (f32), q = round(x / d) with halves away from
/// zero computed as floor(|v| + 0.5) in f32 (what the SIMD quantizer in host_quant.hpp does,
/// so every instruction set quantizes alike; it differs from roundf only for |v| within 2^-25
/// below a half).
BATON_HD inline void quantize_activations(const float* x, float& d, std::int8_t* qs, float& sum) {
  float amax = 0.0f;
  for (int i = 0; i < kQuantBlock; ++i) {
    const float a = x[i] < 0.0f ? -x[i] : x[i];
    amax = a > amax ? a : amax;
  }
  d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  int total = 0;
  for (int i = 0; i < kQuantBlock; ++i) {
    const float v = x[i] * id;
    const int q = static_cast<int>((v < 0.0f ? -v : v) + 0.5f);  // truncation = floor here
    qs[i] = static_cast<std::int8_t>(v < 0.0f ? -q : q);
    total += qs[i];
  }
  sum = static_cast<float>(total);
}

/// Weight i (0..31) of a block, in f32.
template <class Blk>
BATON_HD float dequantize(const Blk& b, int i) {
  return widen(b.d) * static_cast<float>(block_traits<Blk>::weight(b, i));
}

/// The grouped layout (`q8_0x8`, `q4_0x8`), for a matrix whose rows are a multiple of 8: rows
/// 8g .. 8g + 7 form group g; a group holds its rows' blocks column by column, and one column's
/// eight blocks ("a group block", 8 blocks' bytes) are the eight f16 scales (16 bytes), then the
/// quants in 4-byte chunks side by side: chunk i of rows 0..7 is 32 bytes, so one 256-bit vector
/// holds row r's bytes 4i .. 4i+3 in its 32-bit lane r (Q8_0: 8 chunks; Q4_0: 4 chunks, byte j
/// holding weights j and j + 16 as in the row layout). A product then sums each row's block
/// inside its own lane, with no horizontal sums, and widens eight rows' scales at once
/// (backend/host_quant_groups.hpp). The host interleaves its matrices so at load
/// (group_block_rows); the device kernels read GGML's row layout.
///
/// Group block (group g, column block b) of a grouped matrix of `cols` columns.
BATON_HD inline const std::uint8_t* group_block(BlockView w, std::size_t cols, std::size_t g,
                                                std::size_t b) {
  return w.data + (g * (cols / kQuantBlock) + b) * kGroupRows * block_bytes(w.format);
}

/// Row `lane`'s block out of a group block: the gather the layout above describes.
template <class Blk>
BATON_HD Blk ungroup_block(const std::uint8_t* gb, int lane) {
  Blk out{};
  out.d.bits = static_cast<std::uint16_t>(gb[2 * lane] | gb[2 * lane + 1] << 8);
  constexpr int kChunks = static_cast<int>(sizeof(out.qs)) / 4;
  for (int i = 0; i < kChunks; ++i)
    for (int j = 0; j < 4; ++j)
      reinterpret_cast<std::uint8_t*>(out.qs)[4 * i + j] = gb[16 + 32 * i + 4 * lane + j];
  return out;
}

/// Block `b` (columns 32b .. 32b + 31) of `row`, in any block format.
template <class Blk>
BATON_HD Blk block_at(BlockView w, std::size_t row, std::size_t b, std::size_t cols) {
  if (is_grouped(w.format))
    return ungroup_block<Blk>(group_block(w, cols, row / kGroupRows, b),
                              static_cast<int>(row % kGroupRows));
  return reinterpret_cast<const Blk*>(w.data + row * block_row_bytes(w.format, cols))[b];
}

/// Element (row, col) of a matrix of `cols` columns held in `w`'s format.
BATON_HD inline float block_element(BlockView w, std::size_t row, std::size_t col,
                                    std::size_t cols) {
  return visit_format(w.format, [&](auto t) -> float {
    using T = decltype(t);
    if constexpr (T::quantized) {
      return dequantize(block_at<typename T::block>(w, row, col / kQuantBlock, cols),
                        static_cast<int>(col % kQuantBlock));
    } else {
      return widen(
          reinterpret_cast<const f16*>(w.data + row * block_row_bytes(w.format, cols))[col]);
    }
  });
}

/// One row of the matrix widened into dst[0, cols) (each block gathered once).
BATON_HD inline void dequantize_row(BlockView w, std::size_t row, std::size_t cols, float* dst) {
  visit_format(w.format, [&](auto t) {
    using T = decltype(t);
    if constexpr (T::quantized) {
      for (std::size_t b = 0; b < cols / kQuantBlock; ++b) {
        const auto blk = block_at<typename T::block>(w, row, b, cols);
        for (int i = 0; i < kQuantBlock; ++i) dst[b * kQuantBlock + i] = dequantize(blk, i);
      }
    } else {
      for (std::size_t c = 0; c < cols; ++c) dst[c] = block_element(w, row, c, cols);
    }
  });
}

/// Quantizes one row of `cols` weights (a multiple of 32, or any width for f16) into `dst`
/// (block_row_bytes(f, cols) bytes).
inline void quantize_row(BlockFormat f, const float* x, std::size_t cols, std::uint8_t* dst) {
  switch (f) {
    case BlockFormat::q8_0:
      for (std::size_t b = 0; b < cols / kQuantBlock; ++b)
        quantize_block_q8_0(x + b * kQuantBlock, reinterpret_cast<BlockQ8_0*>(dst)[b]);
      return;
    case BlockFormat::q4_0:
      for (std::size_t b = 0; b < cols / kQuantBlock; ++b)
        quantize_block_q4_0(x + b * kQuantBlock, reinterpret_cast<BlockQ4_0*>(dst)[b]);
      return;
    case BlockFormat::f16:
      for (std::size_t c = 0; c < cols; ++c) reinterpret_cast<f16*>(dst)[c] = to_f16(x[c]);
      return;
    case BlockFormat::q8_0x8:
    case BlockFormat::q4_0x8:
      break;  // rows quantize in the row layout; group_block_rows regroups them
  }
}

/// Regroups a matrix of `rows` rows in format f's row layout (q8_0 or q4_0) into the grouped
/// layout above and returns the grouped format; leaves any other matrix (f16, or rows not a
/// multiple of 8) as it is and returns f.
inline BlockFormat group_block_rows(BlockFormat f, std::size_t rows, std::size_t cols,
                                    std::vector<std::uint8_t>& bytes) {
  if ((f != BlockFormat::q8_0 && f != BlockFormat::q4_0) || rows % kGroupRows != 0) return f;
  const std::size_t bb = block_bytes(f), q = bb - sizeof(f16), blocks = cols / kQuantBlock;
  std::vector<std::uint8_t> out(bytes.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::uint8_t* src = bytes.data() + (r * blocks + b) * bb;
      const std::size_t lane = r % kGroupRows;
      std::uint8_t* gb = out.data() + ((r / kGroupRows) * blocks + b) * kGroupRows * bb;
      gb[2 * lane] = src[0];
      gb[2 * lane + 1] = src[1];
      for (std::size_t j = 0; j < q; ++j) gb[16 + 32 * (j / 4) + 4 * lane + j % 4] = src[2 + j];
    }
  bytes.swap(out);
  return visit_format(f, detail::FormatGrouped{});
}

}  // namespace baton
