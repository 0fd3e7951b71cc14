#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The demo: installs what is missing, builds only the demo program (host backend, one relay
# type, no tests) and runs the bundled word-problem relay (models/word-problems: a small Qwen2
# model with three LoRA adapters, extract -> reason -> verify) on a fixed list of questions.
# Extra arguments go to the demo program: [RELAY_JSON [QUESTIONS_TXT]].
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$baton_root"
start=$SECONDS

"$baton_root/scripts/setup.sh"
baton_ccache_setup  # ccache may be new

build_dir=${BATON_BUILD_DIR:-build/demo}
baton_say "configure and build the demo (demo preset: host only, examples only; $build_dir)"
mkdir -p "$build_dir"
mapfile -t args < <(baton_configure_args demo "$build_dir")
cmake "${args[@]}" >"$build_dir/configure.log" 2>&1 ||
  { cat "$build_dir/configure.log"; exit 1; }
cmake --build "$build_dir" --target word_problems_demo --parallel "$baton_jobs"

baton_say "the relay: extract -> reason -> verify on models/word-problems ($((SECONDS - start)) s so far)"
# Passive OpenMP waits unless the caller chose: on a machine busy with other work, spinning
# worker threads make each millisecond decode step take many times longer.
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} "$build_dir/examples/word_problems_demo" "$@"
baton_say "scripts/demo.sh: done in $((SECONDS - start)) s"
