#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets (fuzz/, clang 16, ASan + UBSan) and runs each for SECONDS
# (default 60) from its seed corpus, BATON_JOBS of them at a time (default: the number of
# CPUs), then prints one line per target: executions, exec/s and what it found. Exits non-zero
# if any target found a crash (its reproducer is left in build/fuzz/findings/<target>/: turn it
# into a regression test, see docs/security.md).
#   scripts/fuzz.sh [SECONDS]
# clang 16 and its runtimes (libFuzzer, sanitizers) are Debian 12 packages, installed if missing
# (scripts/setup.sh --sanitizers).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
seconds=${1:-60}
build=build/fuzz
targets=(safetensors hf_config peft_config tokenizer relay grammar_regex json_schema http chat_template)
# Targets with known slow inputs (docs/ci.md, "Known fuzzer findings"): they would fuzz in
# fork mode, where a timeout or an out-of-memory input is recorded and reported without
# failing the run (a crash still fails it). Empty since the grammar compiler is bounded by
# GrammarLimits (issue #22): every target's timeout or out-of-memory input fails the run.
known_slow=()

scripts/setup.sh --sanitizers

baton_say "building the fuzzers (clang 16, ASan + UBSan)"
cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_COMPILER_LAUNCHER=$baton_launcher" >/dev/null
cmake --build "$build" --parallel "$baton_jobs"

# Seeds: generated with the tests' helpers, the committed ones (fuzz/seeds: grammars), and
# the small fixture files.
corpus=$build/corpus
rm -rf "$corpus" "$build/findings"
"$build/fuzz_seeds" "$corpus"
cp -r fuzz/seeds/. "$corpus/"
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

# fuzz TARGET: runs one target for $seconds; its exit status is in $build/fuzz_TARGET.rc.
fuzz() {
  local t=$1 findings=$build/findings/$1 log=$build/fuzz_$1.log rc=0 mode=()
  mkdir -p "$findings" "$build/work/$t"
  if [[ " ${known_slow[*]} " == *" $t "* ]]; then
    mode=(-fork=1 -ignore_timeouts=1 -ignore_ooms=1 -ignore_crashes=0)
  fi
  # The working corpus grows in build/; the seeds stay as generated. -rss_limit_mb / -timeout
  # make unbounded memory and hangs findings too; -max_len is larger than every seed (the
  # tokenizer seed is ~20 KB).
  "$build/fuzz_$t" "${mode[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="$findings/" -print_final_stats=1 \
    "$build/work/$t" "$corpus/$t" >"$log" 2>&1 || rc=$?
  echo "$rc" >"$build/fuzz_$t.rc"
}

baton_say "fuzzing ${#targets[@]} targets, $seconds s each, $baton_jobs at a time"
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$baton_jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz "$t" &
  running=$((running + 1))
done
wait

rows=()
failed=0
for t in "${targets[@]}"; do
  log=$build/fuzz_$t.log findings=$build/findings/$t
  rc=$(cat "$build/fuzz_$t.rc")
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ -z "$runs" ]; then  # fork mode: the last progress line, "#N: cov: ... exec/s: E ..."
    runs=$(sed -n 's/^#\([0-9]*\):.*exec\/s:.*/\1/p' "$log" | tail -1)
    speed=$(sed -n 's/^#[0-9]*:.*exec\/s: *\([0-9]*\).*/\1/p' "$log" | tail -1)
  fi
  crashes=$(find "$findings" -name 'crash-*' -o -name 'leak-*' -o -name 'deadly-*' | wc -l)
  slow=$(find "$findings" -name 'timeout-*' -o -name 'oom-*' -o -name 'slow-unit-*' | wc -l)
  what="no finding"
  if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
    if [[ " ${known_slow[*]} " == *" $t "* ]] && [ "$crashes" -eq 0 ] && [ "$slow" -gt 0 ] &&
      ! grep -q 'ERROR: AddressSanitizer\|runtime error:\|deadly signal\|uncaught exception' "$log"; then
      what="$slow known finding(s): timeout/out-of-memory (docs/ci.md)"
    else
      failed=1
      tail -40 "$log"
      what="CRASH (see $findings)"
    fi
  elif [ "$slow" -gt 0 ]; then
    what="$slow known finding(s): timeout/out-of-memory (docs/ci.md)"
  fi
  rows+=("$(printf '%-14s %4s s %10s runs %7s exec/s  %s' "$t" "$seconds" "${runs:-?}" "${speed:-?}" "$what")")
done
baton_say "fuzzers"
printf '  %s\n' "${rows[@]}"
exit "$failed"
