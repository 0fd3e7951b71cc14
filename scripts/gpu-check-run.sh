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

# The host libraries baton and decode_bench need (their wrappers put lib/ on the loader's
# path): python's tarfile, so no xz tool is needed there.
mkdir -p lib
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
  hostlibs.tar.xz lib 2>/dev/null || note "hostlibs.tar.xz could not be unpacked: baton/decode_bench will not start"

# 1. The device tests: every program of tests/cuda (the kernels, the forward on the golden
#    runs, the device loop, the relay on the device, waits per stage).
for t in cuda-tests/*; do
  step "device_${t##*/}" 60 "./$t"
done
# 2. baton generate/relay --backend cuda against --backend host: the golden fixtures and the
#    bundled model (tokens equal; <= 1 host wait per stage run on cuda).
step cli_backends 30 python3 compare_backends.py ./baton golden golden.json word-problems
# 3. The decode benchmark on the Qwen2.5-1.5B and Llama-3-8B shapes (weights made on the
#    device), JSON in decode_bench.json; its targets are judged below.
rm -f decode_bench.json
step decode_bench 50 bash -c './decode_bench --backend cuda --runs 3 --decode 32 --relay-runs 3 \
  > decode_bench.json.part && mv decode_bench.json.part decode_bench.json'
# judge TARGET: every shape's targets[TARGET] passed (printed into the step's log).
judge='
import json, sys
ok = True
for s in json.load(open("decode_bench.json"))["shapes"]:
    t = s["targets"].get(sys.argv[1])
    if t is not None:
        print(s["name"], json.dumps(t))
        ok = ok and t["passed"]
sys.exit(0 if ok else 1)'
if [ -s decode_bench.json ]; then
  step bandwidth_8b_75pct 10 python3 -c "$judge" bandwidth
  step host_waits_per_stage_le1 10 python3 -c "$judge" host_waits
else
  note "NOT RUN  bandwidth_8b_75pct (no decode_bench.json)"
  note "NOT RUN  host_waits_per_stage_le1 (no decode_bench.json)"
  status=1
fi
# 4. transformers + peft: hf_compare.py runs `baton generate --backend cuda` (./baton-cuda) on
#    every golden model and adapter; it exits 77 (NOT RUN) where this machine's python lacks
#    torch/transformers/peft.
export BATON_REFERENCE_PYTHON=${BATON_REFERENCE_PYTHON:-$(command -v python3 || true)}
step hf_compare 40 python3 hf_compare.py --baton ./baton-cuda --golden golden
# 5. compute-sanitizer on the kernel tests (the smallest shapes), while budget is left.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1 || true)
if [ -n "$sanitizer" ]; then
  small='device kernels equal the host grid*'
  step memcheck 20 "$sanitizer" --tool memcheck --error-exitcode 1 ./cuda-tests/test_cuda_device -tc="$small"
  step racecheck 20 "$sanitizer" --tool racecheck --error-exitcode 1 ./cuda-tests/test_cuda_device -tc="$small"
else
  note "NOT RUN  memcheck (compute-sanitizer not on PATH)"
  note "NOT RUN  racecheck (compute-sanitizer not on PATH)"
  status=1
fi
note "total: $SECONDS s"
exit $status
