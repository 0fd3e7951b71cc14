#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
#
# ctest fixture: builds the corpus and writes the reference ids of each tokenizer with Hugging
# Face's Rust `tokenizers` (PyPI binding, the version pinned in requirements.txt here) run by
# $BATON_REFERENCE_PYTHON (scripts/test.sh sets it from scripts/pyenv.sh; reference_env.sh
# adds the pinned version when that environment has another). WORK/status says what the check
# tests do (tests/support/fixture_status.sh); a reference that was found but did not run is a
# failure.
# A tokenizer whose file is absent (the shared folder ../shared/tokenizers is not there) gets
# no reference file; its check reports that and is skipped, also under CI.
# Exits 0 unless the status is "fail".
#   setup_reference.sh SOURCE_DIR WORK_DIR NAME=TOKENIZER.json...
set -u
src=$1
work=$2
shift 2
mkdir -p "$work"
status=$work/status
rm -f "$work"/corpus.bin "$work"/ref_*.json
source "$(dirname "${BASH_SOURCE[0]}")/../support/fixture_status.sh"
fixture_begin "$status" "reference tokenizers"

py=${BATON_REFERENCE_PYTHON:-}
[ -n "$py" ] || finish skip "no tokenizers (BATON_REFERENCE_PYTHON is not set; scripts/test.sh sets it)"
ver=$("$py" -c 'import tokenizers; print(tokenizers.__version__)' 2>&1) ||
  finish skip "no tokenizers (import tokenizers failed in $py: $(echo "$ver" | tail -n 1))"
# The pinned reference version (requirements.txt here), installed beside the environment when
# the environment has another one.
source "$src/reference_env.sh"
pypath=$(tokref_pythonpath "$py" 2>"$work/pip.log") ||
  finish skip "$(tail -n 1 "$work/pip.log")"
export PYTHONPATH=$pypath${PYTHONPATH:+:$PYTHONPATH}
ver=$("$py" -c 'import tokenizers; print(tokenizers.__version__)')
echo "reference: tokenizers $ver ($py${pypath:+, PYTHONPATH=$pypath})"

"$py" "$src/reference.py" corpus "$work/corpus.bin" || finish fail "building the corpus failed"
export RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
for pair in "$@"; do
  name=${pair%%=*}
  file=${pair#*=}
  if [ ! -f "$file" ]; then
    echo "$name: $file is absent; its check will be skipped"
    continue
  fi
  "$py" "$src/reference.py" encode "$file" "$work/corpus.bin" "$work/ref_$name.json" ||
    finish fail "the reference tokenizer failed on $file"
done
finish ok
