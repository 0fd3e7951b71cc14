// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host's instruction sets chosen at run time — the portable kernels (which the
///        baseline x86-64 build compiles to SSE2), AVX2 + FMA + F16C, AVX-512 (F, BW, VL), and
///        the extensions some kernels add (AVX512-BF16, AVX512-VNNI, AMX-BF16) — and the vector
///        helpers the kernels share: loads that widen f32 / bf16 / f16 weights to f32, and the
///        horizontal sums of host_dot.hpp's rule.
///
/// The library is header-only and installed by package managers, so it cannot be built for
/// the user's CPU (-march=native): each kernel carries its own target attribute, and
/// `best_isa()` asks the CPU (and, through libgcc, the OS's saved vector state) what it runs.
/// Vectors never cross a function boundary whose target differs (every vector helper is
/// always_inline into its kernel), so the build stays free of -Wpsabi notes.
/// Host only: never included from .cu files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "baton/backend/isa.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/error.hpp"

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

/// Whether this CPU runs AVX512-BF16's dot products (vdpbf16ps), which the bf16 products need
/// beside the avx512 family (HostContextOptions::bf16_products, host_dot.hpp).
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
/// the tile state, which the bf16 products prefer (host_gemm_amx.hpp). Linux enables the
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

#undef BATON_AVX2
#undef BATON_AVX512

}  // namespace detail
#endif

}  // namespace baton::host_simd
