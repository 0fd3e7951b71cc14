#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The side-by-side benchmark's Python environment (requirements.txt beside this script), cached
# outside the clone like scripts/pyenv.sh: llama-cpp-python compiles llama.cpp from source for
# this CPU (GGML_NATIVE: llama.cpp's own build picks the host's ISA; that is the competitor's
# best case, not baton's build), once, a few minutes with 2 jobs. Prints the python on stdout.
#   BATON_BENCH_PYENV_DIR  the environment's folder (default ~/.cache/baton/bench-llama-<hash>)
#   BATON_BENCH_JOBS       build parallelism (default 2)
#   BATON_LLAMA_ISA        avx2: build llama.cpp for AVX2 + FMA + F16C only (no AVX-512, VNNI or
#                          AVX512-BF16), to stand for an AVX2-only CPU on one that has more; its
#                          own environment (default: native, GGML_NATIVE)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
req="$here/requirements.txt"
isa=${BATON_LLAMA_ISA:-native}
case "$isa" in
  native) isa_args="-DGGML_NATIVE=ON" ;;
  avx2) isa_args="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" ;;
  *) echo "llama_cpp/pyenv.sh: BATON_LLAMA_ISA is '$isa'; expected native or avx2" >&2; exit 2 ;;
esac
hash=$( (cat "$req"; uname -m; grep -m1 '^flags' /proc/cpuinfo; [ "$isa" = native ] || echo "$isa") | sha256sum | cut -c1-12)
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
export CMAKE_ARGS="$isa_args -DGGML_CUDA=OFF -DGGML_BLAS=OFF -DGGML_OPENMP=ON -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF"
# --no-cache-dir: pip's wheel cache is keyed on the source archive, not on CMAKE_ARGS, so a
# wheel built earlier for another instruction set (or another CPU) would be reused silently.
if ! "$dir/bin/pip" install --disable-pip-version-check --no-cache-dir --no-binary llama-cpp-python \
  -r "$req" >&2; then
  echo "llama_cpp/pyenv.sh: could not install $req" >&2
  rm -rf "$dir"
  exit 1
fi
# What the build runs on, as llama.cpp reports it; an AVX2 build must not report AVX-512.
info=$("$dir/bin/python" -c 'import llama_cpp; print(llama_cpp.llama_print_system_info().decode())')
echo "llama_cpp/pyenv.sh: llama.cpp built with: $info" >&2
if [ "$isa" = avx2 ] && grep -q 'AVX512 = 1' <<<"$info"; then
  echo "llama_cpp/pyenv.sh: the AVX2 build reports AVX-512; not using it" >&2
  rm -rf "$dir"
  exit 1
fi
touch "$dir/.complete"
echo "$dir/bin/python"
