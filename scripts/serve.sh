#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The server on the bundled relay: installs what is missing, builds only the `baton` program
# (host backend, no tests; build/serve) and starts `baton serve` on models/word-problems
# (OpenAI's API on http://127.0.0.1:8080, this machine only; docs/serve.md). Extra arguments go
# to `baton serve` (e.g. --port 9000, --concurrency 32, --api-key KEY).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$baton_root"

"$baton_root/scripts/setup.sh"
baton_ccache_setup  # ccache may be new

build_dir=${BATON_BUILD_DIR:-build/serve}
baton_say "configure and build the baton program (host backend, no tests; $build_dir)"
mkdir -p "$build_dir"
mapfile -t args < <(baton_configure_args dev "$build_dir")
cmake "${args[@]}" -DBATON_BUILD_TESTS=OFF -DBATON_BUILD_BENCHMARKS=OFF \
  -DBATON_BUILD_EXAMPLES=OFF >"$build_dir/configure.log" 2>&1 ||
  { cat "$build_dir/configure.log"; exit 1; }
cmake --build "$build_dir" --target baton_cli --parallel "$baton_jobs"

baton_say "baton serve on models/word-problems (Ctrl-C stops it)"
exec "$build_dir/tools/baton" serve --config models/word-problems/relay.json "$@"
