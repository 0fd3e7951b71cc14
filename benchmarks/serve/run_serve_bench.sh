#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The serving benchmark, one command (docs/performance.md, "Serving"):
#   benchmarks/serve/run_serve_bench.sh [serve_bench.py options, e.g. --concurrency 1,8,32,64
#                                        --requests 256 --seconds 30 --threads 2]
# Builds the baton program (build/dev, Release), llama-server from the pinned llama.cpp sources
# (benchmarks/llama_cpp/build_llama_tools.sh: once), the benchmark's small Python environment, then load-tests
# baton serve (the word-problems relay; the 155M model's three-adapter relay) and llama-server
# (the same model) on loopback, and writes build/dev/benchmarks/serve_bench.json and .png.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BATON_BENCH_BUILD:-$root/build/dev}
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBATON_ENABLE_CUDA=OFF
cmake --build "$build" --target baton_cli --parallel "${BATON_BENCH_JOBS:-2}"
llama_server=$("$root/benchmarks/llama_cpp/build_llama_tools.sh")/llama-server
python=$("$root/scripts/pyenv.sh" benchmarks/serve/requirements.txt)
work=${BATON_BENCH_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/batch-bench}
out="$build/benchmarks/serve_bench.json"
mkdir -p "$(dirname "$out")"
"$python" "$root/benchmarks/serve/serve_bench.py" --baton "$build/tools/baton" \
  --llama-server "$llama_server" --repo "$root" --work "$work" --out "$out" "$@"
"$python" "$root/benchmarks/serve/plot.py" "$out" "${out%.json}.png"
