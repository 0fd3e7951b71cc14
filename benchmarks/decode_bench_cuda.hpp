// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `decode_bench --backend cuda ...`: the CUDA half of the decode benchmark
///        (decode_bench_cuda.cu, nvcc), as a plain function decode_bench.cpp calls. Linked
///        into decode_bench only when the build has CUDA (BATON_BENCH_CUDA=1).
#pragma once

/// Runs the CUDA benchmark with the options after `--backend cuda` (argv[0] is the program);
/// JSON on stdout. Returns the exit status: 0, 1 on an error, 2 on a bad command line, 77
/// without a visible CUDA device.
int decode_bench_cuda(int argc, char** argv);
