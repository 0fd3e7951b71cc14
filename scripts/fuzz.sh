#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets (fuzz/, clang 16, ASan + UBSan) and runs each for SECONDS
# (default 60) from its seed corpus, then prints one line per target: executions, exec/s and
# whether it crashed. Exits non-zero if any target found a crash (its reproducer is left in
# build/fuzz/findings/<target>/: turn it into a regression test, see docs/security.md).
#   scripts/fuzz.sh [SECONDS]
# Debian 12's clang 14 cannot compile baton with libstdc++ 12 (no std::source_location);
# clang 16 and its runtime (libFuzzer, sanitizers) are Debian 12 packages, installed if missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
seconds=${1:-60}
build=build/fuzz

if ! command -v clang++-16 >/dev/null ||
  ! ls /usr/lib/llvm-16/lib/clang/16/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  baton_say "installing clang-16 and libclang-rt-16-dev"
  if [ "$(id -u)" -ne 0 ]; then
    echo "clang-16 / libclang-rt-16-dev missing and not root: apt-get install -y clang-16 libclang-rt-16-dev" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-16 libclang-rt-16-dev >/dev/null
fi

baton_say "building the fuzzers (clang 16, ASan + UBSan)"
cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --parallel "$baton_jobs"

# Seeds: generated with the tests' helpers, plus the small fixture files.
corpus=$build/corpus
rm -rf "$corpus" "$build/findings"
"$build/fuzz_seeds" "$corpus"
for d in tests/golden/*/; do
  n=$(basename "$d")
  [ -f "$d/config.json" ] && cp "$d/config.json" "$corpus/hf_config/golden_$n"
  [ -f "$d/adapter_config.json" ] && cp "$d/adapter_config.json" "$corpus/peft_config/golden_$n"
  if [ -f "$d/adapter_model.safetensors" ] && [ "$(stat -c %s "$d/adapter_model.safetensors")" -le 65536 ]; then
    cp "$d/adapter_model.safetensors" "$corpus/safetensors/golden_$n"
  fi
done

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
rows=()
failed=0
for t in safetensors hf_config peft_config tokenizer relay; do
  baton_say "fuzz_$t: $seconds s"
  findings=$build/findings/$t
  mkdir -p "$findings" "$build/work/$t"
  # The working corpus grows in build/; the seeds stay as generated.
  log=$build/fuzz_$t.log
  rc=0
  # -rss_limit_mb / -timeout make unbounded memory and hangs findings too; -max_len is
  # larger than every seed (the tokenizer seed is ~20 KB).
  "$build/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="$findings/" -print_final_stats=1 \
    "$build/work/$t" "$corpus/$t" >"$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    failed=1
    tail -40 "$log"
    rows+=("$(printf '%-12s %6s s %12s runs %8s exec/s  CRASH (see %s)' "$t" "$seconds" "${runs:-?}" "${speed:-?}" "$findings")")
  else
    rows+=("$(printf '%-12s %6s s %12s runs %8s exec/s  no crash' "$t" "$seconds" "${runs:-?}" "${speed:-?}")")
  fi
done
baton_say "fuzzers"
printf '  %s\n' "${rows[@]}"
exit "$failed"
