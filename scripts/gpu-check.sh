#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The GPU check, in two halves:
#   scripts/gpu-check.sh prepare [OUT]   (here, and in every CI run) builds for sm_90 into OUT
#       (default build/gpu-check-bundle): every CUDA test program (tests/cuda, target
#       baton_cuda_tests), `baton` (with --backend cuda) and `decode_bench` (with --backend
#       cuda), the golden fixtures and the bundled word-problems model they are compared on,
#       hf_compare.py, compare_backends.py and run.sh. The test programs need only the CUDA 13
#       runtime and cuBLAS; baton and decode_bench also run the host backend, whose libraries
#       (OpenMP, PCRE2, utf8proc and what they need) travel in hostlibs.tar.xz, the programs
#       themselves in programs.tar.xz (run.sh unpacks both).
#       Prints the command to run on the GPU machine. Fails if the folder passes 32 MiB (the
#       device machine's carry takes 64 MiB in all; half stays free for the rest of the tree).
#   OUT/run.sh                           (on the GPU machine, from that folder) heads
#       summary.txt with the GPU, the driver and the CUDA runtime's status and versions, then
#       runs the device tests, baton generate/relay on cuda against host, the decode benchmark
#       on the 1.5B and 8B shapes with its targets, compute-sanitizer (memcheck, racecheck,
#       synccheck, initcheck) on the smallest kernel cases and one graph-replay case of the
#       device loop, and the comparison with transformers + peft through `baton generate
#       --backend cuda`. A step that cannot start (no usable device: the runtime's status says
#       why; unsupported architecture, a library that fails to load, a missing tool) is NOT
#       RUN, never passed. <= 3 minutes.
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
  baton_say "build baton_cuda_tests baton_cli decode_bench ($baton_jobs jobs)"
  cmake --build "$build_dir" --target baton_cuda_tests baton_cli decode_bench \
    --parallel "$baton_jobs"

  # The device code must be there for the H200 (sm_90), whatever the build folder was set to.
  # (from the compile commands: the toolkit here has no cuobjdump to read the binary).
  grep -rqs 'code=\[compute_90,sm_90\]\|code=sm_90' "$build_dir/build.ninja" \
    "$build_dir/tests/cuda/CMakeFiles/test_cuda_device.dir/flags.make" ||
    { echo "gpu-check prepare: $build_dir built no sm_90 code (CMAKE_CUDA_ARCHITECTURES)" >&2; exit 1; }
  rm -rf "$out"
  mkdir -p "$out/golden" "$out/cuda-tests" "$out/bin" "$out/word-problems"
  # Every program labelled cuda (tests/cuda/CMakeLists.txt), whatever the test list holds
  # (ctest also lists the fixtures they require, which are no programs of tests/cuda).
  local tests=() t
  mapfile -t tests < <(ctest --test-dir "$build_dir" -N -L '^cuda$' | sed -n 's/^ *Test *#[0-9]*: *//p')
  for t in "${tests[@]}"; do
    [ -x "$build_dir/tests/cuda/$t" ] && cp "$build_dir/tests/cuda/$t" "$out/cuda-tests/"
  done
  [ -n "$(ls "$out/cuda-tests")" ] || { echo "gpu-check prepare: no cuda test program in $build_dir" >&2; exit 1; }
  cp "$build_dir/tools/baton" "$build_dir/benchmarks/decode_bench" "$out/bin/"
  # Symbols the programs do not need to run stay here: the bundle keeps room under its limit.
  strip --strip-unneeded "$out"/bin/* "$out"/cuda-tests/*
  cp tests/reference/hf_compare.py tests/reference/reference_python.py "$out/"
  cp scripts/gpu-check-compare.py "$out/compare_backends.py"
  python3 tests/golden/verify_fixtures.py tests/golden/golden.json "$out/golden" >/dev/null
  cp tests/golden/golden.json "$out/golden.json"
  cp -r models/word-problems/{config.json,model.safetensors,tokenizer.json,relay.json,adapters,demo_questions.txt} \
    "$out/word-problems/"
  cp scripts/gpu-check-run.sh "$out/run.sh"
  chmod +x "$out/run.sh"
  git describe --always --dirty --abbrev=40 > "$out/COMMIT" 2>/dev/null || echo unknown > "$out/COMMIT"

  # The bundle's baton and decode_bench run from wrappers that put the shipped host libraries
  # first on the loader's path for them alone (python and torch on that machine keep theirs);
  # `baton-cuda` is `baton <subcommand> --backend cuda`, for hf_compare.py's --baton.
  local w
  for w in baton decode_bench; do
    printf '#!/usr/bin/env bash\nhere=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)\nexport LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"\nexec "$here/bin/%s" "$@"\n' \
      "$w" > "$out/$w"
  done
  printf '#!/usr/bin/env bash\nsub=$1; shift\nexec "$(dirname "${BASH_SOURCE[0]}")/baton" "$sub" --backend cuda "$@"\n' \
    > "$out/baton-cuda"
  chmod +x "$out/baton" "$out/decode_bench" "$out/baton-cuda"

  # What each binary links against directly, beyond the C library: the test programs the CUDA
  # runtime and cuBLAS only (cuBLAS brings its own dependencies, which any CUDA installation
  # has); baton and decode_bench also the host libraries, shipped with what they load in turn.
  local system='^(libc|libm|libdl|libpthread|librt|libgcc_s|ld-linux-x86-64)\.so|^lib(cudart|cublas|cublasLt)\.so'
  local extra p
  for p in "$out"/cuda-tests/*; do
    extra=$(readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -vE "$system" || true)
    if [ -n "$extra" ]; then
      echo "gpu-check prepare: ${p##*/} needs more than the CUDA runtime and cuBLAS:" >&2
      echo "$extra" >&2
      exit 1
    fi
  done
  local libs
  libs=$(mktemp -d)
  ldd "$out/bin/baton" "$out/bin/decode_bench" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
    sort -u | while read -r name path; do
      echo "$name" | grep -qE "$system" || cp -L "$path" "$libs/$name"
    done
  for p in "$out"/bin/*; do
    for extra in $(readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -vE "$system" || true); do
      [ -f "$libs/$extra" ] || { echo "gpu-check prepare: ${p##*/} needs $extra, which was not found" >&2; exit 1; }
    done
  done
  tar -cJf "$out/hostlibs.tar.xz" -C "$libs" .
  rm -rf "$libs"
  # The programs travel compressed too (about a quarter of their size: most of it is the
  # device code of every kernel); run.sh unpacks them first.
  tar -cf - -C "$out" bin cuda-tests | xz -T0 -6 >"$out/programs.tar.xz"
  rm -rf "$out/bin" "$out/cuda-tests"
  local kib
  kib=$(du -sk "$out" | cut -f1)
  if [ "$kib" -gt $((32 * 1024)) ]; then
    echo "gpu-check prepare: $out is $kib KiB, over the 32 MiB limit" >&2
    du -sk "$out"/* "$out"/*/* 2>/dev/null | sort -n | tail -n 8 >&2
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
