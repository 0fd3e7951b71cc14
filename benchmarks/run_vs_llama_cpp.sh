#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# baton against llama.cpp on this CPU, one command (see docs/performance.md):
#   benchmarks/run_vs_llama_cpp.sh [vs_llama_cpp.py options, e.g. --rounds 7 --threads 2]
# Builds decode_bench (build/dev, Release), the cached llama.cpp environment
# (benchmarks/llama_cpp/pyenv.sh: minutes, once), writes the models once into
# ~/.cache/baton/bench-models, runs the interleaved rounds and writes
# build/dev/benchmarks/vs_llama_cpp.json and vs_llama_cpp.png.
#   BATON_BENCH_JOBS  build parallelism (default 2)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BATON_BENCH_BUILD:-$root/build/dev}
jobs=${BATON_BENCH_JOBS:-2}
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBATON_ENABLE_CUDA=OFF
cmake --build "$build" --target decode_bench --parallel "$jobs"
python=$("$root/benchmarks/llama_cpp/pyenv.sh")
work=${BATON_BENCH_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/bench-models}
out="$build/benchmarks/vs_llama_cpp.json"
"$python" "$root/benchmarks/llama_cpp/vs_llama_cpp.py" --decode-bench "$build/benchmarks/decode_bench" \
  --root "$root" --work "$work" --out "$out" "$@"
"$python" "$root/benchmarks/llama_cpp/plot.py" "$out" "${out%.json}.png"
