#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# The outside references (torch, transformers, peft, tokenizers; tests/python/requirements.txt)
# in a virtual environment cached outside the clone, one per requirements file: installed once
# (about 3 GB: PyPI's Linux torch is the CUDA build), reused by every later clone and run.
# Prints the environment's python on stdout; exits non-zero (with the reason on stderr) when
# it cannot be had, e.g. without PyPI access. An argument names another requirements file
# (relative to the repository root), e.g. tests/grammar/requirements.txt (llguidance).
#   BATON_PYENV_DIR  the default environment's folder (default: ~/.cache/baton/pyenv-<hash>)
#   BATON_WHEEL_DIR  the wheels they are installed from (default: ~/.cache/baton/wheels); a
#                    read-only copy (the clean room's) is used as it is, without the network
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
req="$root/${1:-tests/python/requirements.txt}"
hash=$(sha256sum "$req" | cut -c1-12)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/baton/pyenv-$hash
[ $# -eq 0 ] && dir=${BATON_PYENV_DIR:-$dir}  # the override names the default environment

if [ -x "$dir/bin/python" ] && [ -f "$dir/.complete" ]; then
  echo "$dir/bin/python"
  exit 0
fi
# One installer per environment: a second caller waits for the first (then finds it complete)
# instead of deleting the folder the first is installing into.
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [ -x "$dir/bin/python" ] && [ -f "$dir/.complete" ]; then
  echo "$dir/bin/python"
  exit 0
fi
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "pyenv.sh: python3 cannot create virtual environments (install python3-venv)" >&2
  exit 1
fi
echo "pyenv.sh: installing the pinned reference packages into $dir (once)" >&2
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
python3 -m venv "$dir" >&2
pip=("$dir/bin/pip" --quiet --disable-pip-version-check)
wheels=${BATON_WHEEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/wheels}
# From the wheel cache alone when it holds everything; otherwise the wheels are downloaded into
# it first (where it is writable), so that the next environment on this machine, a clean room's
# included, installs without downloading torch's 3 GB again.
offline() { "${pip[@]}" install --no-index --find-links "$wheels" -r "$req" >&2 2>/dev/null; }
if [ -d "$wheels" ] && offline; then
  echo "pyenv.sh: installed from $wheels" >&2
elif mkdir -p "$wheels" 2>/dev/null && [ -w "$wheels" ] &&
  "${pip[@]}" download --dest "$wheels" -r "$req" >&2 && offline; then
  echo "pyenv.sh: downloaded into $wheels and installed from there" >&2
elif ! "${pip[@]}" install -r "$req" >&2; then
  echo "pyenv.sh: could not install $req (no PyPI access?)" >&2
  rm -rf "$dir"
  exit 1
fi
touch "$dir/.complete"
echo "$dir/bin/python"
