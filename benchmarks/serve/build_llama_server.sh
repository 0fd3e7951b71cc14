#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# llama-server, built from the llama.cpp sources that the pinned llama-cpp-python
# (benchmarks/llama_cpp/requirements.txt) vendors: the Python package's build leaves the server
# out, so it is built here from the same sources, with the same native flags (GGML_NATIVE: the
# host's ISA), once, cached outside the clone. Prints the llama-server path on stdout.
#   BATON_BENCH_JOBS  build parallelism (default 2)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(sed -n 's/^llama-cpp-python==//p' "$here/../llama_cpp/requirements.txt")
cache=${XDG_CACHE_HOME:-$HOME/.cache}/baton/llama-server-$version
bin=$cache/build/bin/llama-server
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache"
if [ ! -d "$cache/src" ]; then
  echo "build_llama_server.sh: fetching llama-cpp-python $version's sources" >&2
  python3 -m pip download --quiet --no-deps --no-binary llama-cpp-python --dest "$cache/sdist" \
    "llama-cpp-python==$version" >&2
  mkdir -p "$cache/unpack"
  tar -xzf "$cache"/sdist/llama_cpp_python-*.tar.gz -C "$cache/unpack"
  mv "$cache"/unpack/llama_cpp_python-*/vendor/llama.cpp "$cache/src"
  rm -rf "$cache/unpack"
fi
echo "build_llama_server.sh: building llama-server (once; minutes)" >&2
cmake -S "$cache/src" -B "$cache/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
  -DGGML_CUDA=OFF -DGGML_BLAS=OFF -DGGML_OPENMP=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON >&2
cmake --build "$cache/build" --target llama-server --parallel "${BATON_BENCH_JOBS:-2}" >&2
echo "$bin"
