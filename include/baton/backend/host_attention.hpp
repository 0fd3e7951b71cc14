// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The shared attention of one (token, head) (kernels::attend) compiled for the
///        instruction set chosen at run time: the same source, instantiated in functions whose
///        target attribute lets the compiler vectorize its dot products and value sums with
///        AVX2 or AVX-512 (kernels/attention.hpp shapes its loops for that). `flatten` inlines
///        the shared code into each target, so the arithmetic is the same and only the
///        vector width differs. Host only: never included from .cu files.
#pragma once

#include "baton/backend/host_simd.hpp"
#include "baton/kernels/attention.hpp"

namespace baton::host_ops {

namespace detail {
#if BATON_HOST_SIMD_X86
template <KvLayout L>
__attribute__((target("avx2,fma,f16c"), flatten)) void attend_avx2(
    const kernels::AttentionParams<L>& p, int t, int h) {
  kernels::attend<L>(p, t, h);
}
template <KvLayout L>
__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"), flatten)) void attend_avx512(
    const kernels::AttentionParams<L>& p, int t, int h) {
  kernels::attend<L>(p, t, h);
}
#endif
}  // namespace detail

/// kernels::attend(p, t, h) with the vector instructions of `isa` (which the CPU must run).
template <KvLayout L>
void attend(host_simd::Isa isa, const kernels::AttentionParams<L>& p, int t, int h) {
#if BATON_HOST_SIMD_X86
  if (isa == host_simd::Isa::avx512) return detail::attend_avx512<L>(p, t, h);
  if (isa == host_simd::Isa::avx2) return detail::attend_avx2<L>(p, t, h);
#endif
  (void)isa;
  kernels::attend<L>(p, t, h);
}

}  // namespace baton::host_ops
