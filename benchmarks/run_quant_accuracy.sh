#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Block-quantized weights' accuracy, baton against llama.cpp, one command (benchmarks/README.md):
#   benchmarks/run_quant_accuracy.sh [quant_accuracy.py options, e.g. --models qwen-c --formats q4_0]
# Builds quant_accuracy (build/dev, Release), the cached llama.cpp environment
# (benchmarks/llama_cpp/pyenv.sh: minutes, once), takes the benchmark models from
# ~/.cache/baton/bench-models (written once, shared with run_vs_llama_cpp.sh), and writes
# build/dev/benchmarks/quant_accuracy.json and a table on stdout.
#   BATON_BENCH_JOBS  build parallelism (default 2)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BATON_BENCH_BUILD:-$root/build/dev}
jobs=${BATON_BENCH_JOBS:-2}
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBATON_ENABLE_CUDA=OFF
cmake --build "$build" --target quant_accuracy --parallel "$jobs"
python=$("$root/benchmarks/llama_cpp/pyenv.sh")
work=${BATON_BENCH_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/bench-models}
"$python" "$root/benchmarks/llama_cpp/quant_accuracy.py" --quant-accuracy "$build/benchmarks/quant_accuracy" \
  --root "$root" --work "$work" --out "$build/benchmarks/quant_accuracy.json" "$@"
