#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# `baton tokenize` / `baton detokenize`: exact bytes both ways, --json, exit statuses.
#   cli_test.sh BATON_EXE TOKENIZER.json WORK_DIR
set -u
baton=$1 tok=$2 work=$3
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
printf 'line one\r\n\ttab  \xc3\xa9 <s>x \xf0\x9f\x98\x80\n\n' >"$work/in.txt"
"$baton" tokenize --tokenizer "$tok" <"$work/in.txt" >"$work/ids.txt" || fail "tokenize"
"$baton" detokenize --tokenizer "$tok" <"$work/ids.txt" >"$work/out.txt" || fail "detokenize"
cmp "$work/in.txt" "$work/out.txt" || fail "round trip is not byte-exact"
[ "$(printf 'the' | "$baton" tokenize --tokenizer "$tok" --json --add-special)" = "[269,116,257,270]" ] ||
  fail "--json --add-special"
[ "$(printf 'the\n' | "$baton" tokenize --tokenizer "$tok")" = "116 257 10" ] || fail "trailing newline kept"
[ "$(printf '[269, 116,257 ,270]' | "$baton" detokenize --tokenizer "$tok" --skip-special)" = "the" ] ||
  fail "JSON ids, --skip-special"
[ "$(printf '116,257\n270' | "$baton" detokenize --tokenizer "$tok")" = "the</s>" ] || fail "comma ids"
printf 'ab\xff' | "$baton" tokenize --tokenizer "$tok" 2>"$work/err.txt" >/dev/null
[ $? -eq 1 ] && grep -q "byte offset 2" "$work/err.txt" || fail "invalid UTF-8 must exit 1 naming offset 2"
[ "$(printf 'ab\xff' | "$baton" tokenize --tokenizer "$tok" --replace-invalid)" = "97 98 239 191 189" ] ||
  fail "--replace-invalid"
printf '99999' | "$baton" detokenize --tokenizer "$tok" >/dev/null 2>&1
[ $? -eq 1 ] || fail "unknown id must exit 1"
"$baton" tokenize --bogus </dev/null >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad option must exit 2"
echo "cli tokenize/detokenize: ok"
