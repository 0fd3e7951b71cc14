// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Decode's matrix-vector rows (y[o] = W[o, :] · x, W in f32 / bf16 / f16) with the
///        instruction set chosen at run time: the portable kernel (kernels::dot_row, which the
///        baseline x86-64 build compiles to SSE2), AVX2 + FMA + F16C, or AVX-512 (F, BW, VL).
///
/// The library is header-only and installed by package managers, so it cannot be built for
/// the user's CPU (-march=native): each kernel carries its own target attribute, and
/// `best_isa()` asks the CPU (and, through libgcc, the OS's saved vector state) what it runs.
/// Vectors never cross a function boundary whose target differs (every vector helper is
/// always_inline into its kernel), so the build stays free of -Wpsabi notes.
///
/// The SIMD kernels stream one row at a time, front to back: the weights are read as one
/// sequential stream per thread. Taking four rows at a time (one x load feeding four weight
/// streams) halved the bf16 rate on AMD EPYC (Zen 4): four interleaved streams a row apart read
/// 10 GB/s on one core where one stream reads 20 (docs/performance.md, "Where the time goes").
/// 16-bit weights are widened to f32 in registers (bf16: a 16-bit shift; f16: the F16C/AVX-512
/// conversion) and multiplied with the f32 activations, accumulating in f32: the products are
/// those of the portable kernel, only the order of the additions differs (relative 1e-6).
/// AVX512-BF16's dot product is not used here: it would round the activations to bf16 as well,
/// and decode waits on memory, not on multiply-adds (prefill's opt-in kernel in host_gemm.hpp
/// uses it).
/// Host only: never included from .cu files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "baton/core/dtype.hpp"
#include "baton/core/error.hpp"
#include "baton/kernels/dot.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BATON_HOST_SIMD_X86 1
#include <cpuid.h>
#include <immintrin.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#else
#define BATON_HOST_SIMD_X86 0
#endif

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

#if BATON_HOST_SIMD_X86
/// F16C from CPUID leaf 1 (ECX bit 29): clang before 17 has no "f16c" for
/// __builtin_cpu_supports, and the sanitizer build is compiled with clang 16.
inline bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}
#endif

/// Whether this CPU (and OS) can run the kernels of `i`.
inline bool cpu_supports(Isa i) {
#if BATON_HOST_SIMD_X86
  switch (i) {
    case Isa::portable:
      return true;
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return i == Isa::portable;
#endif
}

/// Whether this CPU runs AVX512-BF16's dot products (vdpbf16ps), which prefill's opt-in bf16
/// GEMM kernel needs beside the avx512 family (HostContextOptions::bf16_products).
inline bool cpu_supports_bf16_products() {
#if BATON_HOST_SIMD_X86
  return cpu_supports(Isa::avx512) && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

/// Whether this CPU runs AVX512-VNNI's 8-bit dot products (vpdpbusd) on 256-bit vectors, which
/// the avx512 family's kernels for Q8_0 / Q4_0 weights use where present
/// (host_quant_groups.hpp).
inline bool cpu_supports_vnni() {
#if BATON_HOST_SIMD_X86
  return cpu_supports(Isa::avx512) && __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

/// Whether this CPU runs AMX-BF16's tile products (TDPBF16PS) and the OS lets this process use
/// the tile state, which the opt-in bf16 products prefer (host_gemm_amx.hpp). Linux enables the
/// tile data per process on request (arch_prctl ARCH_REQ_XCOMP_PERM): the first call asks, and
/// the answer is the process's from then on, so it is kept. Other systems: no.
inline bool cpu_supports_amx_bf16() {
#if BATON_HOST_SIMD_X86 && defined(__linux__)
  static const bool granted = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!cpu_supports_bf16_products() || __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0)
      return false;
    const bool tile = (edx >> 24) & 1u, tile_bf16 = (edx >> 22) & 1u;
    constexpr long kRequestPermission = 0x1023, kTileData = 18;  // ARCH_REQ_XCOMP_PERM, XTILEDATA
    return tile && tile_bf16 && syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  }();
  return granted;
#else
  return false;
#endif
}

/// The fastest family this CPU runs.
inline Isa best_isa() {
  if (cpu_supports(Isa::avx512)) return Isa::avx512;
  if (cpu_supports(Isa::avx2)) return Isa::avx2;
  return Isa::portable;
}

#if BATON_HOST_SIMD_X86
namespace detail {

#define BATON_AVX2 __attribute__((target("avx2,fma,f16c"), always_inline)) inline
#define BATON_AVX512 \
  __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"), always_inline)) inline

template <class W>
BATON_AVX2 __m256 load8(const W* p) {
  if constexpr (std::is_same_v<W, f32>) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  } else if constexpr (std::is_same_v<W, bf16>) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
}

BATON_AVX2 float hsum8(__m256 v) {  // inlined into AVX-512 kernels too (a subset of theirs)
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

template <class W>
__attribute__((target("avx2,fma,f16c"))) void rows_avx2(const W* w, const float* x, int in, int o0,
                                                        int o1, float* y, bool accumulate) {
  for (int o = o0; o < o1; ++o) {
    const W* r = w + static_cast<std::size_t>(o) * in;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0;
    int i = 0;
    for (; i + 16 <= in; i += 16) {
      a0 = _mm256_fmadd_ps(load8(r + i), _mm256_loadu_ps(x + i), a0);
      a1 = _mm256_fmadd_ps(load8(r + i + 8), _mm256_loadu_ps(x + i + 8), a1);
    }
    for (; i + 8 <= in; i += 8) a0 = _mm256_fmadd_ps(load8(r + i), _mm256_loadu_ps(x + i), a0);
    float sum = hsum8(_mm256_add_ps(a0, a1));
    for (; i < in; ++i) sum += widen(r[i]) * x[i];
    y[o] = accumulate ? y[o] + sum : sum;
  }
}

/// rows_avx2 for `n` <= 4 activation rows at once (x row k at x + k * ldx, y row k at
/// y + k * ldy): each weight vector is widened once and used for every row, while each row's
/// dot product sums in exactly rows_avx2's order (two accumulators over 16-blocks, an 8-block
/// into the first, the scalar tail last), so a row's result is the same bit for bit.
template <class W, int N>
__attribute__((target("avx2,fma,f16c"))) void rows_multi_avx2(const W* w, const float* x, int ldx,
                                                              int in, int o0, int o1, float* y,
                                                              int ldy, bool accumulate) {
  const std::size_t sx = static_cast<std::size_t>(ldx), sy = static_cast<std::size_t>(ldy);
  for (int o = o0; o < o1; ++o) {
    const W* r = w + static_cast<std::size_t>(o) * in;
    __m256 a0[N], a1[N];
    for (int k = 0; k < N; ++k) a0[k] = a1[k] = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= in; i += 16) {
      const __m256 w0 = load8(r + i), w1 = load8(r + i + 8);
      for (int k = 0; k < N; ++k) {
        a0[k] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + k * sx + i), a0[k]);
        a1[k] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + k * sx + i + 8), a1[k]);
      }
    }
    for (; i + 8 <= in; i += 8) {
      const __m256 w0 = load8(r + i);
      for (int k = 0; k < N; ++k)
        a0[k] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + k * sx + i), a0[k]);
    }
    for (int k = 0; k < N; ++k) {
      float sum = hsum8(_mm256_add_ps(a0[k], a1[k]));
      for (int j = i; j < in; ++j) sum += widen(r[j]) * x[k * sx + j];
      float& out = y[k * sy + static_cast<std::size_t>(o)];
      out = accumulate ? out + sum : sum;
    }
  }
}

/// 16 weights widened to f32; `m` masks the loaded lanes (the rest read as zero).
template <class W>
BATON_AVX512 __m512 load16(const W* p, __mmask16 m) {
  if constexpr (std::is_same_v<W, f32>) {
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(p));
  } else if constexpr (std::is_same_v<W, bf16>) {
    const __m256i h = _mm256_maskz_loadu_epi16(m, p);
    const __mmask16 all = 0xffff;  // masked forms: GCC 12 warns on the plain ones
    return _mm512_castsi512_ps(
        _mm512_maskz_slli_epi32(all, _mm512_maskz_cvtepu16_epi32(all, h), 16));
  } else {
    return _mm512_maskz_cvtph_ps(0xffff, _mm256_maskz_loadu_epi16(m, p));
  }
}

/// A 16-lane vector's two halves added (the AVX2 reductions take it from there). The zero-
/// masked extracts: GCC 12 warns (-Wuninitialized) on the plain ones and on the cast, which
/// pass an undefined vector through.
BATON_AVX512 __m256 fold16(__m512 v) {
  const __m512d d = _mm512_castps_pd(v);
  return _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 0)),
                       _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 1)));
}

template <class W>
__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"))) void rows_avx512(
    const W* w, const float* x, int in, int o0, int o1, float* y, bool accumulate) {
  const __mmask16 all = 0xffff;
  for (int o = o0; o < o1; ++o) {
    const W* r = w + static_cast<std::size_t>(o) * in;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0;
    int i = 0;
    for (; i + 32 <= in; i += 32) {
      a0 = _mm512_fmadd_ps(load16(r + i, all), _mm512_loadu_ps(x + i), a0);
      a1 = _mm512_fmadd_ps(load16(r + i + 16, all), _mm512_loadu_ps(x + i + 16), a1);
    }
    for (; i < in; i += 16) {
      const int left = in - i;
      const __mmask16 m = left >= 16 ? all : static_cast<__mmask16>((1u << left) - 1u);
      a0 = _mm512_fmadd_ps(load16(r + i, m), _mm512_maskz_loadu_ps(m, x + i), a0);
    }
    const float sum = hsum8(fold16(_mm512_add_ps(a0, a1)));
    y[o] = accumulate ? y[o] + sum : sum;
  }
}

/// rows_avx512 for `n` <= 4 activation rows at once, in rows_avx512's summation order per row
/// (see rows_multi_avx2).
template <class W, int N>
__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"))) void rows_multi_avx512(
    const W* w, const float* x, int ldx, int in, int o0, int o1, float* y, int ldy,
    bool accumulate) {
  const __mmask16 all = 0xffff;
  const std::size_t sx = static_cast<std::size_t>(ldx), sy = static_cast<std::size_t>(ldy);
  for (int o = o0; o < o1; ++o) {
    const W* r = w + static_cast<std::size_t>(o) * in;
    __m512 a0[N], a1[N];
    for (int k = 0; k < N; ++k) a0[k] = a1[k] = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= in; i += 32) {
      const __m512 w0 = load16(r + i, all), w1 = load16(r + i + 16, all);
      for (int k = 0; k < N; ++k) {
        a0[k] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x + k * sx + i), a0[k]);
        a1[k] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x + k * sx + i + 16), a1[k]);
      }
    }
    for (; i < in; i += 16) {
      const int left = in - i;
      const __mmask16 m = left >= 16 ? all : static_cast<__mmask16>((1u << left) - 1u);
      const __m512 w0 = load16(r + i, m);
      for (int k = 0; k < N; ++k)
        a0[k] = _mm512_fmadd_ps(w0, _mm512_maskz_loadu_ps(m, x + k * sx + i), a0[k]);
    }
    for (int k = 0; k < N; ++k) {
      const float sum = hsum8(fold16(_mm512_add_ps(a0[k], a1[k])));
      float& out = y[k * sy + static_cast<std::size_t>(o)];
      out = accumulate ? out + sum : sum;
    }
  }
}

#undef BATON_AVX2
#undef BATON_AVX512

}  // namespace detail
#endif

/// y[o] (= or +=) W[o, 0:in] · x for o in [o0, o1), with the kernels of `isa` (which the CPU
/// must support: see cpu_supports).
template <StorageType W>
void gemv_rows(Isa isa, const W* w, const float* x, int in, int o0, int o1, float* y,
               bool accumulate) {
#if BATON_HOST_SIMD_X86
  if (isa == Isa::avx512) return detail::rows_avx512(w, x, in, o0, o1, y, accumulate);
  if (isa == Isa::avx2) return detail::rows_avx2(w, x, in, o0, o1, y, accumulate);
#endif
  BATON_CHECK(isa == Isa::portable, usage_error, "host_simd: kernels ", isa_name(isa),
              " were not compiled for this platform");
  for (int o = o0; o < o1; ++o) {
    const float v = kernels::dot_row(w + static_cast<std::size_t>(o) * in, x, in);
    y[o] = accumulate ? y[o] + v : v;
  }
}

/// gemv_rows for `n` activation rows (x row t at x + t * ldx, y row t at y + t * ldy): on
/// AVX2 and AVX-512 four rows share each widened weight vector (rows_multi_*), so a block of
/// rows reads the weights once; every row's result equals gemv_rows on that row alone, bit for
/// bit. (The portable kernel runs gemv_rows row by row.)
template <StorageType W>
void gemv_multi_rows(Isa isa, const W* w, const float* x, int ldx, int n, int in, int o0, int o1,
                     float* y, int ldy, bool accumulate) {
#if BATON_HOST_SIMD_X86
  // Tiles of kTile weight rows (a few KiB: they stay in L1 while every block of rows uses
  // them, so DRAM delivers each weight once); within a tile, blocks of 4 rows, then 2, then 1.
  constexpr int kTile = 8;
  const auto blocks = [&](auto kernel4, auto kernel2, auto kernel1) {
    const auto sx = static_cast<std::size_t>(ldx), sy = static_cast<std::size_t>(ldy);
    for (int a = o0; a < o1; a += kTile) {
      const int b = a + kTile < o1 ? a + kTile : o1;
      int t = 0;
      for (; t + 4 <= n; t += 4) kernel4(w, x + t * sx, ldx, in, a, b, y + t * sy, ldy, accumulate);
      for (; t + 2 <= n; t += 2) kernel2(w, x + t * sx, ldx, in, a, b, y + t * sy, ldy, accumulate);
      if (t < n) kernel1(w, x + t * sx, ldx, in, a, b, y + t * sy, ldy, accumulate);
    }
  };
  if (isa == Isa::avx512)
    return blocks(detail::rows_multi_avx512<W, 4>, detail::rows_multi_avx512<W, 2>,
                  detail::rows_multi_avx512<W, 1>);
  if (isa == Isa::avx2)
    return blocks(detail::rows_multi_avx2<W, 4>, detail::rows_multi_avx2<W, 2>,
                  detail::rows_multi_avx2<W, 1>);
#endif
  for (int t = 0; t < n; ++t)
    gemv_rows(isa, w, x + static_cast<std::size_t>(t) * ldx, in, o0, o1,
              y + static_cast<std::size_t>(t) * ldy, accumulate);
}

}  // namespace baton::host_simd
