// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Block-quantized weights (core/quant.hpp) and their host products: the quantizers on
// hand-computed blocks (llama.cpp's rounding rules), then the integer kernels of the row layout
// (host_quant.hpp) on every instruction set this CPU runs and of the grouped layout the host
// loads its matrices in (host_quant_groups.hpp), any row count, each against a naive
// double-precision dequantize-then-multiply. The byte-for-byte comparison with gguf-py's quantizer
// is tests/quant/test_gguf_quantizer.py.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "baton/backend/host_context.hpp"
#include "baton/backend/host_matmul.hpp"
#include "baton/core/quant.hpp"
#include "support/not_run.hpp"

using namespace baton;
using host_simd::Isa;

TEST_CASE("quant: a Q8_0 block by hand: scale max|x| / 127, round half away from zero") {
  float x[32];
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i - 16);  // -16 .. 15
  BlockQ8_0 b{};
  quantize_block_q8_0(x, b);
  CHECK(widen(b.d) == doctest::Approx(16.0 / 127).epsilon(1e-3));
  // x * 127 / 16: -16 -> -127; 1 -> 7.9375 -> 8; 8 -> 63.5 -> 64 (half away); -8 -> -64
  CHECK(b.qs[0] == -127);
  CHECK(b.qs[17] == 8);
  CHECK(b.qs[24] == 64);
  CHECK(b.qs[8] == -64);
  CHECK(b.qs[16] == 0);
  for (int i = 0; i < 32; ++i) CHECK(std::abs(dequantize(b, i) - x[i]) <= widen(b.d) / 2 + 1e-6f);
  float zero[32] = {};
  quantize_block_q8_0(zero, b);  // an all-zero block: scale 0, no division by zero
  CHECK(b.d.bits == 0);
  for (int i = 0; i < 32; ++i) CHECK(b.qs[i] == 0);
}

TEST_CASE("quant: a Q4_0 block by hand: the signed largest value maps to -8, nibble order") {
  float x[32];
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i - 16);  // -16 .. 15
  BlockQ4_0 b{};
  quantize_block_q4_0(x, b);
  // largest magnitude: -16, so d = -16 / -8 = 2 and q = min(15, trunc(x / 2 + 8.5))
  CHECK(widen(b.d) == 2.0f);
  CHECK((b.qs[0] & 0x0f) == 0);  // x[0] = -16 -> 0, i.e. -8 * 2
  CHECK((b.qs[0] >> 4) == 8);    // x[16] = 0 -> 8.5 -> 8, i.e. 0
  CHECK((b.qs[15] >> 4) == 15);  // x[31] = 15 -> 16 -> clamped to 15, i.e. 14
  CHECK((b.qs[3] >> 4) == 10);   // x[19] = 3 -> 10.0 -> 10, i.e. 4
  CHECK(dequantize(b, 0) == -16.0f);
  CHECK(dequantize(b, 31) == 14.0f);
  CHECK(dequantize(b, 19) == 4.0f);
  CHECK(dequantize(b, 17) == 2.0f);  // 1 -> 9.0 -> 9
  // a positive largest value: d negative, the largest maps to q = 0 again
  for (float& v : x) v = -v;
  quantize_block_q4_0(x, b);
  CHECK(widen(b.d) == -2.0f);
  CHECK(dequantize(b, 0) == 16.0f);
}

TEST_CASE("quant: every format's sizes, kind and name come from its traits") {
  // GGML's block sizes (34 and 18 bytes a 32-weight block), the grouped layouts the same bytes
  // reordered, and an f16 fallback matrix's 2 bytes a weight: an f16 row was once sized as
  // Q4_0 blocks (block_bytes' "else" branch).
  CHECK(block_bytes(BlockFormat::q8_0) == 34);
  CHECK(block_bytes(BlockFormat::q8_0x8) == 34);
  CHECK(block_bytes(BlockFormat::q4_0) == 18);
  CHECK(block_bytes(BlockFormat::q4_0x8) == 18);
  CHECK(block_bytes(BlockFormat::f16) == 64);
  CHECK(block_row_bytes(BlockFormat::q4_0, 96) == 3 * 18);
  CHECK(block_row_bytes(BlockFormat::q8_0x8, 64) == 2 * 34);
  CHECK(block_row_bytes(BlockFormat::f16, 33) == 66);
  CHECK(block_kind(BlockFormat::q4_0x8) == BlockFormat::q4_0);
  CHECK(block_kind(BlockFormat::q8_0x8) == BlockFormat::q8_0);
  CHECK(block_kind(BlockFormat::f16) == BlockFormat::f16);
  CHECK(block_format_name(BlockFormat::q8_0) == "q8_0");
  CHECK(block_format_name(BlockFormat::q4_0x8) == "q4_0x8");
  CHECK(block_format_name(BlockFormat::f16) == "f16");
  // The scalar decode: Q4_0's byte j holds weight j (low nibble) and j + 16 (high), less 8.
  BlockQ4_0 b{};
  b.d = to_f16(0.5f);
  b.qs[3] = 0xA2;  // weight 3: 2 - 8 = -6; weight 19: 10 - 8 = 2
  CHECK(FormatTraits<BlockFormat::q4_0>::weight(b, 3) == -6);
  CHECK(FormatTraits<BlockFormat::q4_0>::weight(b, 19) == 2);
  CHECK(dequantize(b, 3) == -3.0f);
  CHECK(dequantize(b, 19) == 1.0f);
}

TEST_CASE("quant: activations quantize alike on every instruction set, sums included") {
  std::mt19937 rng(3);
  std::normal_distribution<float> g(0.0f, 3.0f);
  const int n = 3, in = 96, ldx = 100;
  std::vector<float> x(static_cast<std::size_t>(n) * ldx);
  for (float& v : x) v = g(rng);
  x[5] = 0.0f;
  for (int i = 32; i < 64; ++i) x[i] = 0.0f;  // an all-zero block: scale 0, values 0
  for (int i = 64; i < 96; ++i) x[i] = static_cast<float>(i - 80) * 127.0f / 16.0f;  // ties
  QuantizedActivations ref;
  host_quant::quantize_rows(Isa::portable, x.data(), n, in, ldx, ref);
  CHECK(ref.d[1] == 0.0f);
  CHECK(ref.qs[64] == -127);
  CHECK(ref.qs[88] == 64);  // 63.5: half away from zero
  CHECK(ref.qs[72] == -64);
  for (int b = 0; b < n * in / 32; ++b) {
    int s = 0;
    for (int i = 0; i < 32; ++i) s += ref.qs[b * 32 + i];
    CHECK(ref.sum[b] == static_cast<float>(s));
  }
  for (Isa isa : {Isa::avx2, Isa::avx512}) {
    if (!host_simd::cpu_supports(isa)) continue;
    QuantizedActivations got;
    host_quant::quantize_rows(isa, x.data(), n, in, ldx, got);
    CHECK(got.qs == ref.qs);
    CHECK(got.d == ref.d);
    CHECK(got.sum == ref.sum);
  }
}

namespace {

/// A random [rows, cols] matrix quantized row by row, its values and its dequantization.
struct QuantMatrix {
  BlockFormat format;
  int rows, cols;
  std::vector<std::uint8_t> bytes;
  std::vector<double> dequant;  // [rows, cols]
  BlockView view() const { return {bytes.data(), format}; }
};

/// A random matrix quantized row by row in f's blocks (q8_0, q4_0, f16), its weights kept in
/// doubles; `grouped`: then regrouped into the host's layout (core/quant.hpp), the doubles still
/// those of the row layout.
QuantMatrix make_matrix(BlockFormat f, int rows, int cols, std::mt19937& rng,
                        bool grouped = false) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  QuantMatrix m{f, rows, cols, {}, {}};
  const std::size_t rb = block_row_bytes(f, static_cast<std::size_t>(cols));
  m.bytes.resize(rb * rows);
  std::vector<float> row(static_cast<std::size_t>(cols));
  for (int r = 0; r < rows; ++r) {
    for (float& v : row) v = g(rng) * (1.0f + static_cast<float>(r % 7));  // rows of other scales
    quantize_row(f, row.data(), row.size(), m.bytes.data() + r * rb);
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) m.dequant.push_back(block_element(m.view(), r, c, cols));
  if (grouped)
    m.format = group_block_rows(f, static_cast<std::size_t>(rows), static_cast<std::size_t>(cols),
                                m.bytes);
  return m;
}

std::vector<Isa> isas_here(const std::string& what) {
  std::vector<Isa> out;
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
    if (host_simd::cpu_supports(isa))
      out.push_back(isa);
    else
      test::not_run(what + ", " + std::string(host_simd::isa_name(isa)) + " kernels",
                    "this CPU does not run them");
  }
  return out;
}

}  // namespace

namespace {

/// One integer kernel (the row layout's gemv_rows, or the grouped layout's gemm_groups over
/// groups 1..5 of 6) on n random activation rows, against a double sum over the quantized
/// operands: exact per block, so only the float combine may differ; and against the unrounded
/// activations, within what their 8-bit rounding allows. Rows outside the range stay untouched.
void check_integer_kernel(Isa isa, BlockFormat f, int in, int n, bool grouped, std::mt19937& rng) {
  CAPTURE(host_simd::isa_name(isa));
  CAPTURE(block_format_name(f));
  CAPTURE(grouped);
  CAPTURE(in);
  CAPTURE(n);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  const int out = grouped ? 48 : 21, ldy = out + 3, r0 = grouped ? 8 : 0;
  const QuantMatrix m = make_matrix(f, out, in, rng, grouped);
  std::vector<float> x(static_cast<std::size_t>(n) * in);
  for (float& v : x) v = u(rng);
  QuantizedActivations xq;
  host_quant::quantize_rows(isa, x.data(), n, in, in, xq);
  for (bool acc : {false, true}) {
    std::vector<float> y(static_cast<std::size_t>(n) * ldy, 0.5f);
    if (grouped)
      host_quant::gemm_groups(isa, m.view(), xq, 0, n, in, r0 / 8, out / 8, y.data(), ldy, acc);
    else
      host_quant::gemv_rows(isa, m.view(), xq, n, in, r0, out, y.data(), ldy, acc);
    for (int t = 0; t < n; ++t)
      for (int o = 0; o < ldy; ++o) {
        const float got = y[static_cast<std::size_t>(t) * ldy + o];
        if (o < r0 || o >= out) {
          CHECK(got == 0.5f);
          continue;
        }
        double want = acc ? 0.5 : 0.0, exact = want, mag = 0.0;
        const std::size_t blocks = static_cast<std::size_t>(in) / 32;
        for (int c = 0; c < in; ++c) {
          const double xv = static_cast<double>(xq.d[t * blocks + c / 32]) *
                            xq.qs[static_cast<std::size_t>(t) * in + c];
          const double wv = m.dequant[static_cast<std::size_t>(o) * in + c];
          want += wv * xv;
          exact += wv * x[static_cast<std::size_t>(t) * in + c];
          mag += std::abs(wv * xv);
        }
        CHECK(std::abs(got - want) <= 2e-6 * mag + 1e-6);
        CHECK(std::abs(got - exact) <= 0.02 * mag + 1e-4);
      }
  }
}

}  // namespace

TEST_CASE("quant: decode's integer kernels equal a double sum over the quantized operands") {
  std::mt19937 rng(7);
  for (Isa isa : isas_here("test_quant: Q8_0/Q4_0 matrix-vector kernels"))
    for (BlockFormat f : {BlockFormat::q8_0, BlockFormat::q4_0})
      for (int in : {32, 64, 96, 320})  // odd and even block counts
        for (int n : {1, 2, 3, 5, 8}) check_integer_kernel(isa, f, in, n, false, rng);
}

TEST_CASE("quant: the grouped layout holds the row layout's weights, eight rows side by side") {
  std::mt19937 rng(5);
  for (BlockFormat f : {BlockFormat::q8_0, BlockFormat::q4_0}) {
    CAPTURE(block_format_name(f));
    const QuantMatrix rows = make_matrix(f, 24, 96, rng);
    QuantMatrix grouped = rows;
    grouped.format = group_block_rows(f, 24, 96, grouped.bytes);
    CHECK(grouped.format == (f == BlockFormat::q8_0 ? BlockFormat::q8_0x8 : BlockFormat::q4_0x8));
    CHECK(grouped.bytes.size() == rows.bytes.size());
    CHECK(grouped.bytes != rows.bytes);
    // by hand: group 1 (rows 8..15), column block 2, row 11 (lane 3): its scale is the group
    // block's fourth f16, its bytes 4..7 the second chunk's fourth 4-byte lane
    const std::size_t bb = block_bytes(f), row_bytes = block_row_bytes(f, 96);
    const std::uint8_t* src = rows.bytes.data() + 11 * row_bytes + 2 * bb;
    const std::uint8_t* gb = grouped.bytes.data() + (1 * 3 + 2) * 8 * bb;
    CHECK(gb[6] == src[0]);
    CHECK(gb[7] == src[1]);
    for (int j = 0; j < 4; ++j) CHECK(gb[16 + 32 + 12 + j] == src[2 + 4 + j]);
    std::vector<float> a(96), b(96);
    for (int r = 0; r < 24; ++r) {
      dequantize_row(rows.view(), r, 96, a.data());
      dequantize_row(grouped.view(), r, 96, b.data());
      CHECK(a == b);
      for (int c = 0; c < 96; c += 13) CHECK(block_element(grouped.view(), r, c, 96) == a[c]);
    }
    // rows not a multiple of 8, and f16, stay in the row layout
    QuantMatrix odd = make_matrix(f, 20, 64, rng);
    const std::vector<std::uint8_t> before = odd.bytes;
    CHECK(group_block_rows(f, 20, 64, odd.bytes) == f);
    CHECK(odd.bytes == before);
  }
  std::vector<std::uint8_t> halves(16 * 40);
  CHECK(group_block_rows(BlockFormat::f16, 16, 20, halves) == BlockFormat::f16);
}

TEST_CASE("quant: the grouped integer kernels equal a double sum over the quantized operands") {
  std::mt19937 rng(9);
  for (Isa isa : isas_here("test_quant: grouped Q8_0/Q4_0 kernels"))
    for (BlockFormat f : {BlockFormat::q8_0, BlockFormat::q4_0})
      for (int in : {32, 96, 320})
        for (int n : {1, 2, 3, 4, 7, 9})  // the 4-, 2- and 1-row tiles and their mixes
          check_integer_kernel(isa, f, in, n, true, rng);
}

TEST_CASE("quant: matmul_nt over blocks, decode rows and prefill rows, against doubles") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (Isa isa : isas_here("test_quant: Q8_0/Q4_0 products")) {
    HostContext ctx({.threads = 2, .isa = isa});
    for (BlockFormat f : {BlockFormat::q8_0, BlockFormat::q4_0, BlockFormat::f16,
                          BlockFormat::q8_0x8, BlockFormat::q4_0x8}) {
      for (int n : {1, 4, 9, 40}) {  // matrix-vector rows, then the blocked product
        CAPTURE(host_simd::isa_name(isa));
        CAPTURE(block_format_name(f));
        CAPTURE(n);
        const bool grouped = is_grouped(f);
        const int in = f == BlockFormat::f16 ? 70 : 608, out = grouped ? 72 : 75, ldx = in + 2,
                  ldy = out + 1;
        const QuantMatrix m = make_matrix(block_kind(f), out, in, rng, grouped);
        REQUIRE(m.format == f);
        std::vector<float> x(static_cast<std::size_t>(n) * ldx);
        for (float& v : x) v = u(rng);
        std::vector<float> y(static_cast<std::size_t>(n) * ldy, 0.25f);
        QuantizedActivations scratch;
        host_ops::matmul_nt(x.data(), n, in, ldx, m.view(), out, y.data(), ldy, true, &ctx,
                            scratch);
        // every block product quantizes the activations (relative ~1/254 of a block's largest
        // value), whatever the row count; f16 multiplies them unrounded
        const double tol = f != BlockFormat::f16 ? 2e-2 : 1e-5;
        for (int t = 0; t < n; ++t)
          for (int o = 0; o < out; ++o) {
            double want = 0.25, mag = 0.0;
            for (int c = 0; c < in; ++c) {
              const double p = m.dequant[static_cast<std::size_t>(o) * in + c] *
                               x[static_cast<std::size_t>(t) * ldx + c];
              want += p;
              mag += std::abs(p);
            }
            CHECK(std::abs(y[static_cast<std::size_t>(t) * ldy + o] - want) <= tol * mag + 1e-5);
          }
        CHECK(y[static_cast<std::size_t>(n - 1) * ldy + out] == 0.25f);  // the stride gap
      }
    }
  }
}
