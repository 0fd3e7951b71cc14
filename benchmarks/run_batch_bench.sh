#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The batching benchmarks, one command each (see docs/performance.md):
#   benchmarks/run_batch_bench.sh base [base_bench.py options, e.g. --rounds 3
#       --parallel 1,4,16,64 --storage bf16,f32,q8_0,q4_0,f16 --check-worker]
#     the plain base model beside llama.cpp's own llama-batched-bench ("Batched decoding of the
#     base model"); writes build/dev/benchmarks/base_bench.json
#   benchmarks/run_batch_bench.sh [relay] [batch_bench.py options, e.g. --rounds 3]
#     the three-stage relay with adapters: baton batched, the same requests one after another,
#     and llama.cpp's batched decoding through llama_batch_worker.py ("Many requests at once");
#     writes build/dev/benchmarks/batch_bench.json and batch_bench.png; with --no-llama, baton
#     batched beside baton sequential only
# Builds the baton CLI (build/dev, Release), llama.cpp's tools from the pinned sources
# (llama_cpp/build_llama_tools.sh, once) and the cached llama.cpp Python environment
# (llama_cpp/pyenv.sh: minutes, once), and writes the models, GGUFs and adapters once into
# ~/.cache/baton/batch-bench.
#   BATON_BENCH_JOBS  build parallelism (default 2)
#   BATON_LLAMA_ISA   native (default) or avx2: llama.cpp's builds; native-noamx for the base
#                     workload without --check-worker (llama_cpp/build_llama_tools.sh says when).
#                     Both engines at AVX2: BATON_LLAMA_ISA=avx2 run_batch_bench.sh base --isa avx2
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
workload=relay
case "${1:-}" in base | relay) workload=$1; shift ;; esac
build=${BATON_BENCH_BUILD:-$root/build/dev}
jobs=${BATON_BENCH_JOBS:-2}
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBATON_ENABLE_CUDA=OFF
cmake --build "$build" --target baton_cli --parallel "$jobs"
if [[ " $* " == *" --no-llama "* ]]; then
  python=$("$root/scripts/pyenv.sh")  # numpy is all batch_bench.py needs without llama.cpp
elif [ "$workload" = base ] && [[ " $* " != *" --check-worker "* ]]; then
  # The Python environment only writes the GGUFs here (its own llama.cpp, the worker's, is not
  # run), so the native one serves every BATON_LLAMA_ISA: the peer is llama-batched-bench,
  # built for that ISA by build_llama_tools.sh.
  python=$(BATON_LLAMA_ISA=native "$root/benchmarks/llama_cpp/pyenv.sh")
elif [ "${BATON_LLAMA_ISA:-}" = native-noamx ]; then
  echo "run_batch_bench.sh: BATON_LLAMA_ISA=native-noamx is for the base workload without --check-worker" >&2
  exit 2
else
  python=$("$root/benchmarks/llama_cpp/pyenv.sh")
fi
work=${BATON_BENCH_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/batch-bench}
if [ "$workload" = base ]; then
  llama_bin=$("$root/benchmarks/llama_cpp/build_llama_tools.sh")
  "$python" "$root/benchmarks/batching/base_bench.py" --baton "$build/tools/baton" \
    --llama-bin "$llama_bin" --work "$work" --out "$build/benchmarks/base_bench.json" "$@"
else
  out="$build/benchmarks/batch_bench.json"
  "$python" "$root/benchmarks/batching/batch_bench.py" --baton "$build/tools/baton" --work "$work" \
    --out "$out" "$@"
  if "$python" -c "import matplotlib" 2>/dev/null; then
    "$python" "$root/benchmarks/batching/plot.py" "$out" "${out%.json}.png"
  else  # --no-llama's environment (scripts/pyenv.sh) has no matplotlib
    echo "run_batch_bench.sh: $python has no matplotlib; $out written, no plot" >&2
  fi
fi
