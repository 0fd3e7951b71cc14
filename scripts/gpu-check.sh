#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The GPU check, in two halves:
#   scripts/gpu-check.sh prepare [OUT]   (here, and in every CI run) builds for sm_90 into OUT
#       (default build/gpu-check-bundle) the CUDA test program, `baton-cuda generate` (the CLI
#       on the CUDA backend) and the CUDA decode benchmark — binaries that need only the
#       CUDA 13 runtime and cuBLAS — with the golden fixtures they are compared with,
#       hf_compare.py and run.sh. Prints the command to run on the GPU machine. Fails if the
#       folder passes 30 MiB.
#   OUT/run.sh                           (on the GPU machine, from that folder) runs every
#       CUDA test, compute-sanitizer memcheck and racecheck on the smallest test shapes, the
#       comparison with transformers + peft (where that machine's python has them) and the
#       decode benchmark, and writes summary.txt. A step that cannot start (no device, unsupported architecture, a
#       library that fails to load, a missing tool) is NOT RUN, never passed. <= 3 minutes.
# BATON_BUILD_DIR picks the build folder (default build/gpu-check; an already configured one,
# such as CI's build/cuda, is reused as it is).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$baton_root"

usage() { echo "usage: scripts/gpu-check.sh prepare [OUT]" >&2; exit 2; }
[ $# -ge 1 ] || usage
cmd=$1
shift

prepare() {
  local out=${1:-build/gpu-check-bundle}
  local build_dir=${BATON_BUILD_DIR:-build/gpu-check}
  command -v nvcc >/dev/null 2>&1 || { echo "gpu-check prepare: nvcc not found" >&2; exit 1; }
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    baton_say "configure ($build_dir, sm_90)"
    mapfile -t args < <(baton_configure_args cuda "$build_dir")
    command -v ninja >/dev/null 2>&1 || args+=(-G "Unix Makefiles")
    cmake "${args[@]}" -DCMAKE_CUDA_ARCHITECTURES=90 -DBATON_BUILD_EXAMPLES=OFF \
      -DBATON_CHECK_HEADERS=OFF
  fi
  local programs=(tests/cuda/test_cuda_device tools/baton-cuda benchmarks/cuda_decode_bench)
  baton_say "build ${programs[*]##*/} ($baton_jobs jobs)"
  cmake --build "$build_dir" --target test_cuda_device baton_cuda_cli cuda_decode_bench \
    --parallel "$baton_jobs"

  # The device code must be there for the H200 (sm_90), whatever the build folder was set to.
  # (from the compile commands: the toolkit here has no cuobjdump to read the binary).
  grep -rqs 'code=\[compute_90,sm_90\]\|code=sm_90' "$build_dir/build.ninja" \
    "$build_dir/tests/cuda/CMakeFiles/test_cuda_device.dir/flags.make" ||
    { echo "gpu-check prepare: $build_dir built no sm_90 code (CMAKE_CUDA_ARCHITECTURES)" >&2; exit 1; }
  rm -rf "$out"
  mkdir -p "$out/golden"
  local p
  for p in "${programs[@]}"; do cp "$build_dir/$p" "$out/"; done
  cp tests/reference/hf_compare.py "$out/"
  python3 tests/golden/verify_fixtures.py tests/golden/golden.json "$out/golden" >/dev/null
  cp tests/golden/golden.json "$out/golden.json"
  cp scripts/gpu-check-run.sh "$out/run.sh"
  chmod +x "$out/run.sh"
  git describe --always --dirty --abbrev=40 > "$out/COMMIT" 2>/dev/null || echo unknown > "$out/COMMIT"

  # What each binary links against directly, beyond the C library: CUDA's runtime and cuBLAS
  # only (cuBLAS brings its own dependencies, which any CUDA installation has).
  local extra
  for p in "${programs[@]}"; do
    extra=$(readelf -d "$out/${p##*/}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
            grep -vE '^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64)\.so|^lib(cudart|cublas|cublasLt)\.so' || true)
    if [ -n "$extra" ]; then
      echo "gpu-check prepare: ${p##*/} needs more than the CUDA runtime and cuBLAS:" >&2
      echo "$extra" >&2
      exit 1
    fi
  done
  local kib
  kib=$(du -sk "$out" | cut -f1)
  if [ "$kib" -gt $((30 * 1024)) ]; then
    echo "gpu-check prepare: $out is $kib KiB, over the 30 MiB limit" >&2
    exit 1
  fi
  baton_say "gpu-check bundle: $out ($kib KiB, commit $(cat "$out/COMMIT"))"
  echo "On the GPU machine, from a copy of that folder, run:"
  echo "  cd $(basename "$out") && ./run.sh; cat summary.txt"
}

case "$cmd" in
  prepare) prepare "$@" ;;
  *) usage ;;
esac
