#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The demo: builds baton (host backend), generates the small golden models, and runs on them
# the three-stage relay example (and `baton generate`, the plain decode it builds on).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$baton_root"

"$baton_root/scripts/setup.sh"

generator="$baton_shared/golden/make_fixtures.py"
if [ ! -f "$generator" ]; then
  echo "demo.sh: $generator not found; set BATON_SHARED_DIR to the shared/ folder" >&2
  exit 1
fi

preset=${BATON_PRESET:-dev}
build_dir=${BATON_BUILD_DIR:-build/$preset}
baton_say "configure and build ($preset preset, $build_dir)"
mapfile -t args < <(baton_configure_args "$preset" "$build_dir")
cmake "${args[@]}"
cmake --build "$build_dir" --parallel "$baton_jobs"

baton_say "generate the golden test models into build/golden (and check their SHA-256)"
python3 "$generator" --out build/golden --verify

tool="$build_dir/tools/baton"
baton_say "the relay demo: extract -> reason -> verify on qwen-c with three LoRA adapters"
baton_say "(examples/relay/golden-relay.json; each stage's prefix is pre-warmed once)"
(set -x; "$tool" relay --config examples/relay/golden-relay.json --ids 88,160,301)

baton_say "the same relay built in code (examples/three_stage_relay.cpp)"
(set -x; "$build_dir/examples/three_stage_relay" build/golden/qwen-c build/golden/qwen-c-lora-qv \
   build/golden/qwen-c-lora-all build/golden/qwen-c-lora-qv 88 160 301)
