#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
#
# ctest fixture: writes llguidance's token masks along random walks of every grammar
# (cases.json plus seeded random regexes) for each tokenizer, with llguidance_masks.py run
# by $BATON_GRAMMAR_PYTHON (scripts/test.sh sets it: scripts/pyenv.sh
# tests/grammar/requirements.txt). WORK/status says what the check tests do
# (tests/support/fixture_status.sh). A tokenizer whose file is absent gets no reference; its
# check skips.
#   setup_llguidance.sh SOURCE_DIR WORK_DIR NAME=TOKENIZER.json=EOS[,EOS]...
set -u
src=$1
work=$2
shift 2
mkdir -p "$work"
status=$work/status
rm -f "$work"/llg_*.json
source "$(dirname "${BASH_SOURCE[0]}")/../support/fixture_status.sh"
fixture_begin "$status" "llguidance reference"
py=${BATON_GRAMMAR_PYTHON:-}
[ -n "$py" ] || finish skip "no llguidance (BATON_GRAMMAR_PYTHON is not set; scripts/test.sh sets it)"
ver=$("$py" -c 'import llguidance; print(llguidance.__version__)' 2>&1) ||
  finish skip "no llguidance (import failed in $py: $(echo "$ver" | tail -n 1))"
echo "reference: llguidance $ver ($py)"
for triple in "$@"; do
  name=${triple%%=*}
  rest=${triple#*=}
  file=${rest%=*}
  eos=${rest##*=}
  if [ ! -f "$file" ]; then
    echo "$name: $file is absent; its check will be skipped"
    continue
  fi
  "$py" "$src/llguidance_masks.py" "$file" "$src/cases.json" "$work/llg_$name.json" --eos "$eos" ||
    finish fail "llguidance_masks.py failed on $file"
done
finish ok
