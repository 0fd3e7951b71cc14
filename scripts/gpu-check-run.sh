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

# The whole check stays within 3 minutes: each step gets at most its own limit and what is
# left of the budget; a step with under 10 s left is NOT RUN.
budget=180
# step NAME TIMEOUT COMMAND...: exit 0 passed; 77 (no device, no reference python) or a program
# that cannot start (126/127, a loader error) is NOT RUN; anything else failed. stdout and
# stderr go to NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - SECONDS)) log="$name.log" rc
  if [ "$left" -lt 10 ]; then
    note "NOT RUN  $name (the 3-minute budget is spent)"; status=1; return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  timeout "$limit" "$@" > "$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    note "PASSED   $name"
  elif [ $rc -eq 77 ]; then
    note "NOT RUN  $name (exit 77: $(tail -n 1 "$log"))"; status=1
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
  step memcheck 40 "$sanitizer" --tool memcheck --error-exitcode 1 ./test_cuda_device -tc="$small"
  step racecheck 40 "$sanitizer" --tool racecheck --error-exitcode 1 ./test_cuda_device -tc="$small"
else
  note "NOT RUN  memcheck (compute-sanitizer not on PATH)"
  note "NOT RUN  racecheck (compute-sanitizer not on PATH)"
  status=1
fi
# transformers + peft: hf_compare.py runs `baton-cuda generate` on every golden model and
# adapter; it exits 77 (NOT RUN) where this machine's python lacks torch/transformers/peft.
export BATON_REFERENCE_PYTHON=${BATON_REFERENCE_PYTHON:-$(command -v python3 || true)}
step hf_compare 60 python3 hf_compare.py --baton ./baton-cuda --golden golden
# A ~1 B-parameter bf16 random model (2 GB): large enough that a step streams weights rather
# than waiting on launches. JSON in decode_bench.log.
step decode_bench 60 ./cuda_decode_bench --runs 3 --layers 24 --hidden 2048 --ffn 5632 \
  --work-dir "$PWD"
note "total: $SECONDS s"
exit $status
