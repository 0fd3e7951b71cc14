#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Runs on the GPU machine from the folder scripts/gpu-check.sh prepare made (copied there as
# run.sh). Writes summary.txt: one line per step, PASSED / FAILED / NOT RUN (with the reason).
# Exit 0 only when every step that must run passed. Budget: 3 minutes on one H200.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export BATON_GOLDEN_DIR=$PWD/golden BATON_GOLDEN_JSON=$PWD/golden.json
summary=summary.txt
: > "$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }

note "baton gpu-check, commit $(cat COMMIT 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"
note "device: $(nvidia-smi -L 2>/dev/null | head -n 1 || echo 'nvidia-smi not available')"

# step NAME TIMEOUT COMMAND...: exit 0 passed; 77 (no device) or a program that cannot start
# (127/126, a loader error) is NOT RUN; anything else failed. Output goes to NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  local log="$name.log" rc
  timeout "$limit" "$@" > "$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    note "PASSED   $name"
  elif [ $rc -eq 77 ]; then
    note "NOT RUN  $name (exit 77: no CUDA device visible)"; status=1
  elif [ $rc -eq 126 ] || [ $rc -eq 127 ] || grep -q 'error while loading shared libraries' "$log"; then
    note "NOT RUN  $name (could not start: $(tail -n 1 "$log"))"; status=1
  elif grep -q 'no kernel image is available\|cudaErrorNoKernelImageForDevice\|cudaErrorUnsupportedPtxVersion' "$log"; then
    note "NOT RUN  $name (unsupported architecture: built for sm_90)"; status=1
  elif [ $rc -eq 124 ]; then
    note "FAILED   $name (timed out after $limit s)"; status=1
  else
    note "FAILED   $name (exit $rc; see $log)"; status=1
  fi
}

step cuda_tests 90 ./test_cuda_device
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1 || true)
if [ -n "$sanitizer" ]; then
  small='device kernels equal the host grid*'  # the kernel tests: the smallest shapes
  step memcheck 60 "$sanitizer" --tool memcheck --error-exitcode 1 ./test_cuda_device -tc="$small"
  step racecheck 60 "$sanitizer" --tool racecheck --error-exitcode 1 ./test_cuda_device -tc="$small"
else
  note "NOT RUN  memcheck (compute-sanitizer not on PATH)"
  note "NOT RUN  racecheck (compute-sanitizer not on PATH)"
  status=1
fi
note "NOT RUN  hf_compare (not part of this bundle yet: the CLI has no cuda backend)"
note "NOT RUN  decode_bench (not part of this bundle yet: the benchmark has no cuda backend)"
exit $status
