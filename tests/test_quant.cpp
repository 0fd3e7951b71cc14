// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Block-quantized weights (core/quant.hpp) and their host products: the quantizers on
// hand-computed blocks (llama.cpp's rounding rules), then decode's integer kernels
// (host_quant.hpp) on every instruction set this CPU runs and prefill's blocked product over
// dequantized panels (host_gemm.hpp), each against a naive double-precision
// dequantize-then-multiply. The byte-for-byte comparison with gguf-py's quantizer is
// tests/quant/test_gguf_quantizer.py.
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

QuantMatrix make_matrix(BlockFormat f, int rows, int cols, std::mt19937& rng) {
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

TEST_CASE("quant: decode's integer kernels equal a double sum over the quantized operands") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (Isa isa : isas_here("test_quant: Q8_0/Q4_0 matrix-vector kernels")) {
    for (BlockFormat f : {BlockFormat::q8_0, BlockFormat::q4_0}) {
      for (int in : {32, 64, 96, 320}) {  // odd and even block counts (the 512-bit pairs)
        for (int n : {1, 2, 3, 5, 8}) {
          CAPTURE(host_simd::isa_name(isa));
          CAPTURE(block_format_name(f));
          CAPTURE(in);
          CAPTURE(n);
          const int out = 21, ldy = out + 3;
          const QuantMatrix m = make_matrix(f, out, in, rng);
          std::vector<float> x(static_cast<std::size_t>(n) * in);
          for (float& v : x) v = u(rng);
          QuantizedActivations xq;
          host_quant::quantize_rows(isa, x.data(), n, in, in, xq);
          for (bool acc : {false, true}) {
            std::vector<float> y(static_cast<std::size_t>(n) * ldy, 0.5f);
            host_quant::gemv_rows(isa, m.view(), xq, n, in, 0, out, y.data(), ldy, acc);
            for (int t = 0; t < n; ++t)
              for (int o = 0; o < ldy; ++o) {
                const float got = y[static_cast<std::size_t>(t) * ldy + o];
                if (o >= out) {
                  CHECK(got == 0.5f);  // past the rows: untouched
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
                // the kernels' sums are exact per block; only the float combine differs
                CHECK(std::abs(got - want) <= 2e-6 * mag + 1e-6);
                // and the activations' rounding stays small against the unrounded product
                CHECK(std::abs(got - exact) <= 0.02 * mag + 1e-4);
              }
          }
        }
      }
    }
  }
}

TEST_CASE("quant: matmul_nt over blocks, decode rows and prefill rows, against doubles") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (Isa isa : isas_here("test_quant: Q8_0/Q4_0 products")) {
    HostContext ctx({.threads = 2, .isa = isa});
    for (BlockFormat f : {BlockFormat::q8_0, BlockFormat::q4_0, BlockFormat::f16}) {
      for (int n : {1, 4, 9, 40}) {  // matrix-vector rows, then the blocked product
        CAPTURE(host_simd::isa_name(isa));
        CAPTURE(block_format_name(f));
        CAPTURE(n);
        const int in = f == BlockFormat::f16 ? 70 : 608, out = 75, ldx = in + 2, ldy = out + 1;
        const QuantMatrix m = make_matrix(f, out, in, rng);
        std::vector<float> x(static_cast<std::size_t>(n) * ldx);
        for (float& v : x) v = u(rng);
        std::vector<float> y(static_cast<std::size_t>(n) * ldy, 0.25f);
        QuantizedActivations scratch;
        host_ops::matmul_nt(x.data(), n, in, ldx, m.view(), out, y.data(), ldy, true, &ctx,
                            scratch);
        // decode rows quantize the activations (relative ~1/254 of a block's largest value);
        // prefill rows and f16 multiply them unrounded
        const double tol = n <= host_ops::kMatvecRows && f != BlockFormat::f16 ? 2e-2 : 1e-5;
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
