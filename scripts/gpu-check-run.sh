#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Runs on the GPU machine from the folder scripts/gpu-check.sh prepare made (copied there as
# run.sh). Writes summary.txt: what the machine has (GPU, driver, the CUDA runtime's status and
# versions, compute-sanitizer), then one line per step, PASSED / FAILED / NOT RUN (with the
# reason). Exit 0 only when every step that must run passed. Budget: 3 minutes on one H200.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1
export BATON_GOLDEN_DIR=$PWD/golden BATON_GOLDEN_JSON=$PWD/golden.json
summary=summary.txt
: > "$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }

note "baton gpu-check, commit $(cat COMMIT 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"

# The programs (cuda-tests/, bin/) and the host libraries baton and decode_bench need (their
# wrappers put lib/ on the loader's path) travel compressed: python's tarfile unpacks them, so
# no xz tool is needed here.
unpack() {
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2" \
    2>/dev/null || note "$1 could not be unpacked: $3"
}
unpack programs.tar.xz . "no program of the bundle will start"
mkdir -p lib
unpack hostlibs.tar.xz lib "baton/decode_bench will not start"

# What the machine has, before any step: the GPU and its driver as nvidia-smi sees them, and
# what the CUDA runtime the programs load says (test_cuda_device --cuda-status: the runtime's
# status, the driver's and the runtime's CUDA versions, device 0's name and architecture). A
# driver too old for the CUDA 13 runtime shows here as cudaErrorInsufficientDriver.
gpu=$(nvidia-smi -L 2>/dev/null | head -n 1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
driver_cuda=$(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: *[0-9.]*' | head -n 1)
note "device: ${gpu:-nvidia-smi not available}"
note "driver: ${driver:-nvidia-smi not available}${driver_cuda:+ ($driver_cuda)}"
cuda_ok=0
if [ ! -x cuda-tests/test_cuda_device ]; then
  cuda_line="cuda-tests/test_cuda_device is missing from the bundle"
else
  timeout -k 5 20 ./cuda-tests/test_cuda_device --cuda-status > cuda-status.log 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    cuda_ok=1
    cuda_line=$(tail -n 1 cuda-status.log)
  elif [ $rc -eq 77 ]; then
    cuda_line=$(tail -n 1 cuda-status.log)
  elif grep -q 'error while loading shared libraries' cuda-status.log; then
    cuda_line="the CUDA runtime could not be loaded: $(grep -m 1 'error while loading' cuda-status.log)"
  else
    cuda_line="test_cuda_device --cuda-status exited $rc: $(tail -n 1 cuda-status.log)"
  fi
fi
note "cuda: $cuda_line"
# What a NOT RUN without its own word about the device adds: the runtime's (none when usable).
nodev=
[ $cuda_ok -eq 1 ] || nodev="; $cuda_line"
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1 || true)
if [ -n "$sanitizer" ]; then
  note "compute-sanitizer: $sanitizer ($("$sanitizer" --version 2>/dev/null | grep -m 1 -i version || echo 'version unknown'))"
else
  note "compute-sanitizer: not found"
fi

# The whole check stays within 3 minutes: each step gets at most its own limit and what is
# left of the budget; a step with under 10 s left is NOT RUN.
budget=180
# A pattern that a passing step's log must hold (set around a call, empty otherwise): a
# sanitizer step whose doctest filter matched no test case ran nothing, which is no pass.
must_match=
# step NAME TIMEOUT COMMAND...: exit 0 passed; a program that found no usable device (exit 77,
# or its log says so), no reference python (77), or cannot start (126/127, a loader error) is
# NOT RUN, with the runtime's status in the reason whenever no device is usable; anything else
# failed. stdout and stderr go to NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - SECONDS)) log="$name.log" rc why
  if [ "$left" -lt 10 ]; then
    note "NOT RUN  $name (the 3-minute budget is spent$nodev)"; status=1; return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  timeout -k 5 "$limit" "$@" > "$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && { [ -z "$must_match" ] || grep -q "$must_match" "$log"; }; then
    note "PASSED   $name"
  elif why=$(grep -m 1 -h 'no usable CUDA device\|no CUDA device is visible' "$log"); then
    # The program's own line: the CUDA runtime's status and the driver's and runtime's versions.
    note "NOT RUN  $name (exit $rc: $(echo "$why" | cut -c 1-400))"; status=1
  elif [ $rc -eq 0 ]; then
    note "FAILED   $name (exit 0, but no test case ran: the -tc filter matched none; see $log)"
    status=1
  elif [ $rc -eq 77 ]; then
    note "NOT RUN  $name (exit 77: $(tail -n 1 "$log" | cut -c 1-400)$nodev)"; status=1
  elif [ $rc -eq 126 ] || [ $rc -eq 127 ] || grep -q 'error while loading shared libraries' "$log"; then
    note "NOT RUN  $name (could not start: $(tail -n 1 "$log" | cut -c 1-400)$nodev)"; status=1
  elif grep -q 'no kernel image is available\|cudaErrorNoKernelImageForDevice\|cudaErrorUnsupportedPtxVersion' "$log"; then
    note "NOT RUN  $name (unsupported architecture: built for sm_90)"; status=1
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    note "FAILED   $name (timed out after $limit s; see $log)"; status=1
  else
    # compute-sanitizer's count of what it found, or its own error when it could not run.
    why=$(grep -m 1 -o 'ERROR SUMMARY: [0-9]* errors*' "$log" || grep -m 1 '^========= Error' "$log" || true)
    note "FAILED   $name (exit $rc${why:+, $(echo "$why" | cut -c 1-200)}; see $log)"; status=1
  fi
}

# 1. The device tests: every program of tests/cuda (the kernels, the forward on the golden
#    runs, the device loop and its graph replay, the relay on the device, waits per stage).
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
  note "NOT RUN  bandwidth_8b_75pct (no decode_bench.json$nodev)"
  note "NOT RUN  host_waits_per_stage_le1 (no decode_bench.json$nodev)"
  status=1
fi
# 4. compute-sanitizer on test_cuda_device's smallest cases (doctest -tc filters, no commas
#    inside a name): the three kernel cases (each phased kernel against the host grid) and the
#    device loop's graph-replay case (the whole forward of golden qwen-c, the decode step, the
#    captured step graph replayed on the context's own stream). memcheck first: out-of-bounds
#    and misaligned accesses, API errors; then racecheck (shared-memory hazards only), synccheck
#    (barriers and warp-synchronous calls), initcheck (reads of global memory nothing wrote).
kernels='device kernels equal the host grid*'
graph='device loop on the GPU: graph replay*'
# sanitize NAME LIMIT TOOL FILTER
sanitize() {
  if [ -z "$sanitizer" ]; then
    note "NOT RUN  $1 (compute-sanitizer not found$nodev)"; status=1; return
  fi
  must_match='test cases: *[1-9]'
  step "$1" "$2" "$sanitizer" --tool "$3" --error-exitcode 1 ./cuda-tests/test_cuda_device -tc="$4"
  must_match=
}
sanitize memcheck_kernels 15 memcheck "$kernels"
sanitize memcheck_graph_replay 20 memcheck "$graph"
sanitize racecheck 25 racecheck "$kernels,$graph"
sanitize synccheck 15 synccheck "$kernels,$graph"
sanitize initcheck 10 initcheck "$kernels"
# 5. transformers + peft: hf_compare.py runs `baton generate --backend cuda` (./baton-cuda) on
#    every golden model and adapter, with what is left of the budget; it exits 77 (NOT RUN)
#    where this machine's python lacks torch/transformers/peft.
export BATON_REFERENCE_PYTHON=${BATON_REFERENCE_PYTHON:-$(command -v python3 || true)}
step hf_compare 40 python3 hf_compare.py --baton ./baton-cuda --golden golden
note "total: $SECONDS s"
exit $status
