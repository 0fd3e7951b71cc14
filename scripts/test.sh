#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The test command: installs missing dependencies, configures (the `cuda` preset when nvcc
# exists, else `dev`), builds everything, installs the pinned Python references (scripts/pyenv.sh,
# cached outside the clone; BATON_NO_PYENV=1 skips that), and runs every test. Exits non-zero on
# any failure. Extra arguments go to the CMake configure step (e.g. -DBATON_ENABLE_CUDA=ON).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$baton_root"
start=$SECONDS

"$baton_root/scripts/setup.sh"

if [ -n "${BATON_PRESET:-}" ]; then
  preset=$BATON_PRESET
elif command -v nvcc >/dev/null 2>&1; then
  preset=cuda  # compiles the CUDA backend and its tests; they run only where a GPU is visible
else
  preset=dev
fi
build_dir=${BATON_BUILD_DIR:-build/$preset}

baton_say "configure ($preset preset, $build_dir)"
mapfile -t args < <(baton_configure_args "$preset" "$build_dir")
cmake "${args[@]}" "$@"

# BATON_TEST_LABEL=L builds only what the tests labelled L need (target baton_L_tests) and runs
# only them: `quick` is the clean room's set-up check (CLI, golden data, installed package,
# the transformers comparison, the demo model's figures).
label=${BATON_TEST_LABEL:-}
baton_say "build ($baton_jobs jobs${label:+, only the tests labelled $label})"
cmake --build "$build_dir" --parallel "$baton_jobs" ${label:+--target "baton_${label}_tests"}

# The outside references (transformers, peft, tokenizers) in a cached virtual environment; the
# tests that use them skip without it (and fail under CI=true, where PyPI is reachable).
if [ "${BATON_NO_PYENV:-0}" != 1 ]; then
  baton_say "reference python (scripts/pyenv.sh)"
  if py=$("$baton_root/scripts/pyenv.sh"); then
    export BATON_REFERENCE_PYTHON=$py
    echo "BATON_REFERENCE_PYTHON=$py"
  else
    echo "scripts/test.sh: no reference python; the transformers/tokenizers comparisons will skip"
  fi
  # llguidance, the grammar tests' reference for token masks (its own small environment).
  if py=$("$baton_root/scripts/pyenv.sh" tests/grammar/requirements.txt); then
    export BATON_GRAMMAR_PYTHON=$py
    echo "BATON_GRAMMAR_PYTHON=$py"
  else
    echo "scripts/test.sh: no llguidance; the grammar mask comparisons will skip"
  fi
fi

baton_say "test"
ctest --test-dir "$build_dir" --output-on-failure --no-tests=error --parallel "$baton_jobs" \
  ${label:+-L "$label"}

baton_say "scripts/test.sh: all tests passed ($preset preset, $((SECONDS - start)) s)"
