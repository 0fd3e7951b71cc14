#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# bench_env.sh PY: installs benchmarks/grammar/requirements.txt (llguidance, xgrammar and the two
# packages xgrammar needs that the reference environment lacks) into a cached folder for PY's
# PYTHONPATH (torch and transformers come from PY's own environment), once; prints the folder.
#   BATON_GRAMMAR_BENCH_CACHE  where (default: ~/.cache/baton/grammar-bench-<hash>)
set -eu
py=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
req=$here/requirements.txt
hash=$(sha256sum "$req" | cut -c1-12)
dir=${BATON_GRAMMAR_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/grammar-bench-$hash}
if [ ! -f "$dir/.complete" ]; then
  echo "installing $req into $dir (once)" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  # xgrammar's own requirements name torch/transformers/triton: those of PY are used instead.
  grep -E '^(llguidance|xgrammar)==' "$req" >"$dir/no-deps.txt"
  grep -vE '^(#|llguidance|xgrammar|$)' "$req" >"$dir/with-deps.txt"
  if ! "$py" -m pip install --quiet --disable-pip-version-check --target "$dir" --no-deps \
    -r "$dir/no-deps.txt" >&2 ||
    ! "$py" -m pip install --quiet --disable-pip-version-check --target "$dir" \
      -r "$dir/with-deps.txt" >&2; then
    rm -rf "$dir"
    echo "bench_env.sh: could not install $req (no PyPI access?)" >&2
    exit 1
  fi
  touch "$dir/.complete"
fi
echo "$dir"
