#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# llama.cpp's own programs — llama-batched-bench, llama-bench and llama-server — built from the
# llama.cpp sources that the pinned llama-cpp-python (requirements.txt beside this script)
# vendors, so the side-by-side benchmarks time the peer with its own tools at its own settings,
# from the same source as the Python harnesses. GGML_NATIVE (the host's ISA: the peer's best
# case), or AVX2 only with BATON_LLAMA_ISA=avx2 (as pyenv.sh), or the host's ISA without AMX
# with BATON_LLAMA_ISA=native-noamx: on a virtual machine whose AMX faults in ggml's tile
# kernels (ggml_backend_amx_mul_mat stops at ldtilecfg with SIGILL/SIGSEGV on q8_0 and q4_0),
# the peer's best configuration that runs. Once per version and ISA, cached outside the clone.
# Prints the folder holding the three programs on stdout.
#   BATON_BENCH_JOBS  build parallelism (default 2)
#   BATON_LLAMA_ISA   native (default), native-noamx or avx2
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(sed -n 's/^llama-cpp-python==//p' "$here/requirements.txt")
isa=${BATON_LLAMA_ISA:-native}
case "$isa" in
  native) isa_args=(-DGGML_NATIVE=ON) ;;
  # -mno-* set explicitly outlast the ISA -march=native implies, wherever they sit on the line.
  native-noamx) isa_args=(-DGGML_NATIVE=ON "-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
                          "-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16") ;;
  avx2) isa_args=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
                  -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF
                  -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF
                  -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF) ;;
  *) echo "build_llama_tools.sh: BATON_LLAMA_ISA is '$isa'; expected native, native-noamx or avx2" >&2
     exit 2 ;;
esac
cache=${XDG_CACHE_HOME:-$HOME/.cache}/baton/llama-tools-$version
build=$cache/build-$isa-$( (uname -m; grep -m1 '^flags' /proc/cpuinfo) | sha256sum | cut -c1-8)
targets=(llama-batched-bench llama-bench llama-server)
if [ -f "$build/.complete" ]; then
  echo "$build/bin"
  exit 0
fi
mkdir -p "$cache"
if [ ! -d "$cache/src" ]; then
  echo "build_llama_tools.sh: fetching llama-cpp-python $version's sources" >&2
  python3 -m pip download --quiet --no-deps --no-binary llama-cpp-python --dest "$cache/sdist" \
    "llama-cpp-python==$version" >&2
  rm -rf "$cache/unpack"
  mkdir -p "$cache/unpack"
  tar -xzf "$cache"/sdist/llama_cpp_python-*.tar.gz -C "$cache/unpack"
  mv "$cache"/unpack/llama_cpp_python-*/vendor/llama.cpp "$cache/src"
  rm -rf "$cache/unpack"
fi
echo "build_llama_tools.sh: building ${targets[*]} ($isa; once, minutes)" >&2
cmake -S "$cache/src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${isa_args[@]}" \
  -DGGML_CUDA=OFF -DGGML_BLAS=OFF -DGGML_OPENMP=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON >&2
cmake --build "$build" --target "${targets[@]}" --parallel "${BATON_BENCH_JOBS:-2}" >&2
for t in "${targets[@]}"; do
  [ -x "$build/bin/$t" ] || { echo "build_llama_tools.sh: $t was not built" >&2; exit 1; }
done
touch "$build/.complete"
echo "$build/bin"
