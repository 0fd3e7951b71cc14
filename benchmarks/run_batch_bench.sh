#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The batching benchmark, one command (see docs/performance.md, "Many requests at once"):
#   benchmarks/run_batch_bench.sh [batch_bench.py options, e.g. --rounds 3 --parallel 1,4,16,64]
# Builds the baton CLI (build/dev, Release) and the cached llama.cpp environment
# (benchmarks/llama_cpp/pyenv.sh: minutes, once), writes the bf16 model, its GGUF and three
# adapters once into ~/.cache/baton/batch-bench, runs baton's batched relay, the same requests
# one after another, and llama.cpp's batched decoding side by side, and writes
# build/dev/benchmarks/batch_bench.json and batch_bench.png.
#   BATON_BENCH_JOBS  build parallelism (default 2)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BATON_BENCH_BUILD:-$root/build/dev}
jobs=${BATON_BENCH_JOBS:-2}
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBATON_ENABLE_CUDA=OFF
cmake --build "$build" --target baton_cli --parallel "$jobs"
python=$("$root/benchmarks/llama_cpp/pyenv.sh")
work=${BATON_BENCH_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/batch-bench}
out="$build/benchmarks/batch_bench.json"
"$python" "$root/benchmarks/batching/batch_bench.py" --baton "$build/tools/baton" --work "$work" \
  --out "$out" "$@"
"$python" "$root/benchmarks/batching/plot.py" "$out" "${out%.json}.png"
