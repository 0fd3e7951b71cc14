// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Portability macros: BATON_HD marks math shared by the host and CUDA backends.
#pragma once

#if defined(__CUDACC__)
/// Marks a function callable from host and device code; empty under a plain C++ compiler,
/// so the host backend runs exactly the arithmetic the CUDA kernels run.
#define BATON_HD __host__ __device__
#define BATON_DEVICE_COMPILER 1
#else
#define BATON_HD
#define BATON_DEVICE_COMPILER 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define BATON_RESTRICT __restrict__
#else
#define BATON_RESTRICT
#endif
