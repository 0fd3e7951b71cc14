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
baton_ccache_setup  # ccache may be new

if [ -n "${BATON_PRESET:-}" ]; then
  preset=$BATON_PRESET
elif command -v nvcc >/dev/null 2>&1; then
  preset=cuda  # compiles the CUDA backend and its tests; they run only where a GPU is visible
else
  preset=dev
fi
build_dir=${BATON_BUILD_DIR:-build/$preset}

# The Python package's environment (nanobind builds the extension at configure time, pytest runs
# its suite: tests/python_api/requirements.txt, small, cached) comes first; without it the
# extension is not built and its tests skip (and fail under CI=true).
mkdir -p "$build_dir"
python_args=(-DBATON_BUILD_PYTHON=OFF)
if [ "${BATON_NO_PYENV:-0}" != 1 ]; then
  baton_say "python package environment (scripts/pyenv.sh tests/python_api/requirements.txt)"
  if py_api=$("$baton_root/scripts/pyenv.sh" tests/python_api/requirements.txt \
      2>"$build_dir/pyenv.log.python_api"); then
    python_args=(-DBATON_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$py_api")
    echo "the extension builds for $py_api"
  else
    cat "$build_dir/pyenv.log.python_api"
    echo "scripts/test.sh: no python package environment; the Python package's tests will skip"
  fi
fi

baton_say "configure ($preset preset, $build_dir)"
mapfile -t args < <(baton_configure_args "$preset" "$build_dir")
cmake "${args[@]}" "${python_args[@]}" "$@"

# The outside references (transformers, peft, tokenizers; llguidance) in cached virtual
# environments, installed in the background while the build runs (the first time, a 3 GB
# download); the tests that use them skip without them (and fail under CI=true, where PyPI is
# reachable).
pyenv_log=$build_dir/pyenv.log
if [ "${BATON_NO_PYENV:-0}" != 1 ]; then
  mkdir -p "$build_dir"
  ( "$baton_root/scripts/pyenv.sh" >"$build_dir/pyenv.reference" 2>"$pyenv_log.reference" || true ) &
  ( "$baton_root/scripts/pyenv.sh" tests/grammar/requirements.txt >"$build_dir/pyenv.grammar" \
      2>"$pyenv_log.grammar" || true ) &
  ( "$baton_root/scripts/pyenv.sh" tests/serve/requirements.txt >"$build_dir/pyenv.serve" \
      2>"$pyenv_log.serve" || true ) &
  ( "$baton_root/scripts/pyenv.sh" tests/quant/requirements.txt >"$build_dir/pyenv.quant" \
      2>"$pyenv_log.quant" || true ) &
  ( "$baton_root/scripts/pyenv.sh" tests/chat_template/requirements.txt \
      >"$build_dir/pyenv.chat_template" 2>"$pyenv_log.chat_template" || true ) &
fi

# BATON_TEST_LABEL=L builds only what the tests labelled L need (target baton_L_tests) and runs
# only them: `quick` is the clean room's set-up check (CLI, golden data, installed package,
# the transformers comparison); `host` what the sanitizer phase runs.
label=${BATON_TEST_LABEL:-}
baton_say "build ($baton_jobs jobs${label:+, only the tests labelled $label})"
# The build's output is kept: .ci/run reads it for warnings (a cached compile replays them).
cmake --build "$build_dir" --parallel "$baton_jobs" ${label:+--target "baton_${label}_tests"} 2>&1 |
  tee "$build_dir/build.log"

if [ "${BATON_NO_PYENV:-0}" != 1 ]; then
  baton_say "reference python (scripts/pyenv.sh)"
  wait
  # Each environment's python in a variable the tests read; a test skips without its own.
  use_pyenv() {  # NAME VARIABLE WHAT-SKIPS
    local py
    if py=$(cat "$build_dir/pyenv.$1") && [ -n "$py" ]; then
      export "$2=$py"
      echo "$2=$py"
    else
      cat "$pyenv_log.$1"
      echo "scripts/test.sh: no $1 environment; $3 will skip"
    fi
  }
  use_pyenv reference BATON_REFERENCE_PYTHON "the transformers/tokenizers comparisons"
  # llguidance, the grammar tests' reference for token masks (its own small environment).
  use_pyenv grammar BATON_GRAMMAR_PYTHON "the grammar mask comparisons"
  # The openai client, the server tests' real client (its own small environment).
  use_pyenv serve BATON_SERVE_PYTHON "the server tests"
  # gguf-py, llama.cpp's quantizer: the reference for baton's Q8_0/Q4_0 blocks.
  use_pyenv quant BATON_QUANT_PYTHON "the quantizer comparison"
  # jinja2 and transformers without torch: the chat templates' reference.
  use_pyenv chat_template BATON_CHAT_TEMPLATE_PYTHON "the chat template comparisons"
fi

baton_say "test"
# BATON_CTEST_JUNIT=FILE also writes the results as JUnit XML (.ci/run's summary reads it).
# The 10,000-request soak (label soak) and the Python wheel built afresh (label wheel) run only
# when asked for: BATON_TEST_LABEL=soak, BATON_TEST_LABEL=wheel.
ctest --test-dir "$build_dir" --output-on-failure --no-tests=error --parallel "$baton_jobs" \
  ${label:+-L "$label"} ${label:--LE "soak|wheel"} \
  ${BATON_CTEST_JUNIT:+--output-junit "$BATON_CTEST_JUNIT"}

baton_say "scripts/test.sh: all tests passed ($preset preset, $((SECONDS - start)) s)"
