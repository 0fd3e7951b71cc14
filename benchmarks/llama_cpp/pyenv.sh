#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The side-by-side benchmark's Python environment (requirements.txt beside this script), cached
# outside the clone like scripts/pyenv.sh: llama-cpp-python compiles llama.cpp from source for
# this CPU (GGML_NATIVE: llama.cpp's own build picks the host's ISA; that is the competitor's
# best case, not baton's build), once, a few minutes with 2 jobs. Prints the python on stdout.
#   BATON_BENCH_PYENV_DIR  the environment's folder (default ~/.cache/baton/bench-llama-<hash>)
#   BATON_BENCH_JOBS       build parallelism (default 2)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
req="$here/requirements.txt"
hash=$( (cat "$req"; uname -m; grep -m1 '^flags' /proc/cpuinfo) | sha256sum | cut -c1-12)
dir=${BATON_BENCH_PYENV_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/bench-llama-$hash}

if [ -x "$dir/bin/python" ] && [ -f "$dir/.complete" ]; then
  echo "$dir/bin/python"
  exit 0
fi
echo "llama_cpp/pyenv.sh: building llama.cpp (llama-cpp-python) into $dir (once)" >&2
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
python3 -m venv "$dir" >&2
export CMAKE_BUILD_PARALLEL_LEVEL=${BATON_BENCH_JOBS:-2}
export CMAKE_ARGS="-DGGML_NATIVE=ON -DGGML_CUDA=OFF -DGGML_BLAS=OFF -DGGML_OPENMP=ON -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF"
if ! "$dir/bin/pip" install --disable-pip-version-check --no-binary llama-cpp-python \
  -r "$req" >&2; then
  echo "llama_cpp/pyenv.sh: could not install $req" >&2
  rm -rf "$dir"
  exit 1
fi
touch "$dir/.complete"
echo "$dir/bin/python"
