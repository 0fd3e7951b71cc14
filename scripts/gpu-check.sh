#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The one prepared script for a machine with a GPU: configure with CUDA, build only the CUDA
# test programs, run them (ctest -L cuda), and print a summary. Fails on any failed test and
# also when a test skipped, since on a GPU machine a skip means the GPU was not visible.
# Does not run setup.sh: GPU machines may have no network.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$baton_root"
start=$SECONDS

command -v nvcc >/dev/null 2>&1 || { echo "gpu-check: nvcc not found" >&2; exit 1; }
baton_say "device"
nvidia-smi -L 2>/dev/null || echo "(nvidia-smi not available)"
nvcc --version | tail -n 1

build_dir=${BATON_BUILD_DIR:-build/gpu-check}
baton_say "configure ($build_dir)"
mapfile -t args < <(baton_configure_args cuda "$build_dir")
# The preset asks for Ninja; a bare GPU machine may only have make.
command -v ninja >/dev/null 2>&1 || args+=(-G "Unix Makefiles")
cmake "${args[@]}" -DBATON_BUILD_TOOLS=OFF -DBATON_BUILD_EXAMPLES=OFF \
  -DBATON_BUILD_BENCHMARKS=OFF "$@"

baton_say "build the CUDA tests ($baton_jobs jobs)"
cmake --build "$build_dir" --target baton_cuda_tests --parallel "$baton_jobs"

baton_say "run (ctest -L cuda)"
log="$build_dir/gpu-check.log"
set +e
ctest --test-dir "$build_dir" -L cuda --output-on-failure --no-tests=error 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e

passed=$(grep -cE 'Test +#[0-9]+: .* Passed' "$log" || true)
skipped=$(grep -cE 'Test +#[0-9]+: .*\*\*\*Skipped' "$log" || true)
failed=$(grep -cE 'Test +#[0-9]+: .*\*\*\*(Failed|Exception|Timeout|Not Run)' "$log" || true)
baton_say "gpu-check summary: $passed passed, $failed failed, $skipped skipped ($((SECONDS - start)) s)"
if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
  echo "gpu-check: FAILED"
  exit 1
fi
if [ "$skipped" -ne 0 ]; then
  echo "gpu-check: FAILED: tests skipped, so no GPU was visible to them"
  exit 1
fi
echo "gpu-check: OK"
