// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host's float products (host_dot::product, the kernels behind every f32 / f16 /
///        bf16 matrix of the forward) on one thread, beside the physical limit: the CPU's
///        measured multiply-add rate for the same vector width.
///
///   products_bench [--rows 1,16,64,512] [--runs 7] [--out products_bench.json]
///
/// Shapes: the 155M benchmark Qwen2's matrices (benchmarks/llama_cpp/models.py's qwen2-155m:
/// q/k/v 1024 -> 1536, o 1024 -> 1024, gate/up 1024 -> 5632, down 2816 -> 1024), weights in
/// each 32-bit and 16-bit storage, x rows as a prefill chunk (512), a batch (16, 64) or a
/// decode step (1) holds them, every buffer 64-byte aligned as the host's allocations are.
/// Each figure is the median over --runs products of GFLOP/s (2 · rows · in · out / time); the
/// peak is a loop of independent multiply-adds on registers (12 chains, no memory), the rate
/// no product on this vector width can pass. Output: a table on stdout and JSON with the CPU's
/// flags.

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/baton.hpp"
#include "bench_host.hpp"

using namespace baton;
using Clock = std::chrono::steady_clock;

namespace {

#if BATON_HOST_SIMD_X86
// Multiply-adds a second on one thread: 12 independent chains (12 x 4 cycles of latency cover
// two units), nothing but registers.
constexpr long kPeakSteps = 20'000'000;

__attribute__((target("avx2,fma"))) double peak_avx2() {
  const __m256 one = _mm256_set1_ps(1.0f), tiny = _mm256_set1_ps(1e-7f);
  __m256 a[12];  // twelve different chains: equal ones would be computed once
#pragma GCC unroll 12
  for (int k = 0; k < 12; ++k) a[k] = _mm256_set1_ps(1e-7f * static_cast<float>(k + 1));
  const auto t0 = Clock::now();
  for (long s = 0; s < kPeakSteps; ++s)
#pragma GCC unroll 12
    for (auto& v : a) v = _mm256_fmadd_ps(v, one, tiny);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  volatile float sink = 0;
  for (const auto& v : a) sink = sink + _mm256_cvtss_f32(v);
  return 16.0 * 12 * kPeakSteps / s;
}

__attribute__((target("avx2,fma,avx512f"))) double peak_avx512() {
  const __m512 one = _mm512_set1_ps(1.0f), tiny = _mm512_set1_ps(1e-7f);
  __m512 a[12];  // twelve different chains: equal ones would be computed once
#pragma GCC unroll 12
  for (int k = 0; k < 12; ++k) a[k] = _mm512_set1_ps(1e-7f * static_cast<float>(k + 1));
  const auto t0 = Clock::now();
  for (long s = 0; s < kPeakSteps; ++s)
#pragma GCC unroll 12
    for (auto& v : a) v = _mm512_fmadd_ps(v, one, tiny);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  volatile float sink = 0;
  for (const auto& v : a) sink = sink + _mm512_cvtss_f32(v);
  return 32.0 * 12 * kPeakSteps / s;
}
#endif

/// Peak GFLOP/s of one thread at the vector width of `isa` (0 for the portable loops).
double peak_gflops(host_simd::Isa isa) {
#if BATON_HOST_SIMD_X86
  if (isa == host_simd::Isa::avx512) return peak_avx512() / 1e9;
  if (isa == host_simd::Isa::avx2) return peak_avx2() / 1e9;
#endif
  (void)isa;
  return 0.0;
}

struct Matrix {
  const char* name;
  int in, out;
};
constexpr Matrix kMatrices[] = {
    {"qkv", 1024, 1536}, {"o", 1024, 1024}, {"gate_up", 1024, 5632}, {"down", 2816, 1024}};

/// GFLOP/s of host_dot::product for `m` at `rows` rows: the median over `runs`.
template <class W>
double product_gflops(host_simd::Isa isa, const Matrix& m, int rows, int runs, std::mt19937& rng) {
  HostBuffer<W> w(static_cast<std::size_t>(m.in) * m.out);
  HostBuffer<float> x(static_cast<std::size_t>(rows) * m.in),
      y(static_cast<std::size_t>(rows) * m.out);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& v : w.span()) v = narrow<W>(u(rng) * 0.05f);
  for (auto& v : x.span()) v = u(rng);
  std::vector<double> rates;
  for (int r = 0; r <= runs; ++r) {  // the first run warms the caches and the pages
    const auto t0 = Clock::now();
    host_dot::product(isa, w.data(), x.data(), m.in, rows, m.in, 0, m.out, y.data(), m.out, false);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (r > 0) rates.push_back(2.0 * rows * m.in * m.out / s / 1e9);
  }
  return bench::median(rates);
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::stoi(item));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> row_counts{1, 16, 64, 512};
  int runs = 7;
  std::string out_path = "products_bench.json";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--rows" && has_value)
      row_counts = parse_list(argv[++i]);
    else if (a == "--runs" && has_value)
      runs = std::stoi(argv[++i]);
    else if (a == "--out" && has_value)
      out_path = argv[++i];
    else {
      std::cerr << "usage: products_bench [--rows 1,16,64,512] [--runs 7] [--out F.json]\n";
      return 2;
    }
  }
  std::mt19937 rng(20261208);
  nlohmann::json results = nlohmann::json::array();
  for (const host_simd::Isa isa : {host_simd::Isa::avx512, host_simd::Isa::avx2}) {
    if (!host_simd::cpu_supports(isa)) continue;
    const double peak = peak_gflops(isa);
    std::cout << host_simd::isa_name(isa) << ": multiply-add peak " << peak
              << " GFLOP/s a thread\n";
    for (const char* storage : {"f32", "f16", "bf16"}) {
      for (const Matrix& m : kMatrices) {
        for (const int rows : row_counts) {
          const std::string s = storage;
          const double g = s == "f32"   ? product_gflops<float>(isa, m, rows, runs, rng)
                           : s == "f16" ? product_gflops<f16>(isa, m, rows, runs, rng)
                                        : product_gflops<bf16>(isa, m, rows, runs, rng);
          std::cout << "  " << s << " " << m.name << " (" << m.in << " -> " << m.out << ") rows "
                    << rows << ": " << g << " GFLOP/s, " << 100.0 * g / peak << "% of peak\n";
          results.push_back({{"isa", host_simd::isa_name(isa)},
                             {"storage", s},
                             {"matrix", m.name},
                             {"in", m.in},
                             {"out", m.out},
                             {"rows", rows},
                             {"gflops", g},
                             {"peak_gflops", peak},
                             {"share_of_peak", g / peak}});
        }
      }
    }
  }
  std::ofstream(out_path) << nlohmann::json{{"cpu_flags", bench::cpu_flags()},
                                            {"threads", 1},
                                            {"runs", runs},
                                            {"results", results}}
                                 .dump(1)
                          << "\n";
  std::cout << "wrote " << out_path << "\n";
  return 0;
}
