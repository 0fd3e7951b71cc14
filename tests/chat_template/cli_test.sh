#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
#
# `baton chat-template` through the real program: exact output (no newline added), a template's
# raise_exception as exit 1 with "file: message", a syntax error, command-line errors as exit 2,
# and --model on the Qwen3 folder (skipped without it) against the text transformers'
# apply_chat_template(tokenize=False) gives for the same conversation.
#   cli_test.sh BATON WORK_DIR TOKENIZERS_DIR
set -u
baton=$1
work=$2
tokenizers=$3
mkdir -p "$work"
fails=0
check() {  # DESCRIPTION COMMAND...: the command must succeed
  local what=$1
  shift
  if "$@"; then echo "ok    $what"; else echo "FAIL  $what"; fails=$((fails + 1)); fi
}
printf '%s' '[{"role": "user", "content": "Hi {{ x }} \"q\""}]' >"$work/m.json"
printf '%s\n' '{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}' \
  '{% if add_generation_prompt %}<a>{% endif %}' >"$work/t.jinja"

"$baton" chat-template --template "$work/t.jinja" --messages "$work/m.json" >"$work/out" 2>"$work/err"
check "renders, exit 0" [ $? -eq 0 ]
printf '%s\n' '<user>Hi {{ x }} "q"' >"$work/want"
# The source's last newline is dropped (jinja2's keep_trailing_newline=False) and nothing added.
head -c -1 "$work/want" >"$work/want1"
check "output byte for byte" cmp -s "$work/out" "$work/want1"
"$baton" chat-template --template "$work/t.jinja" --messages "$work/m.json" --add-generation-prompt >"$work/out"
# trim_blocks takes the newline after {% endfor %}.
printf '%s' '<user>Hi {{ x }} "q"<a>' >"$work/want2"
check "--add-generation-prompt" cmp -s "$work/out" "$work/want2"

printf '%s' "{{ raise_exception('Conversation roles must alternate') }}" >"$work/raise.jinja"
"$baton" chat-template --template "$work/raise.jinja" --messages "$work/m.json" >"$work/out" 2>"$work/err"
check "raise_exception: exit 1" [ $? -eq 1 ]
check "raise_exception: file and message on stderr" \
  grep -qF "raise.jinja: Conversation roles must alternate" "$work/err"
check "raise_exception: nothing on stdout" [ ! -s "$work/out" ]

printf '%s' '{% if %}' >"$work/bad.jinja"
"$baton" chat-template --template "$work/bad.jinja" --messages "$work/m.json" >/dev/null 2>"$work/err"
check "syntax error: exit 1 naming the file" sh -c "[ $? -eq 1 ] && grep -q 'bad.jinja: line 1' '$work/err'"

"$baton" chat-template --messages "$work/m.json" >/dev/null 2>&1
check "no template: exit 2" [ $? -eq 2 ]
"$baton" chat-template --template "$work/t.jinja" --model x --messages "$work/m.json" >/dev/null 2>&1
check "both --model and --template: exit 2" [ $? -eq 2 ]

if [ -f "$tokenizers/qwen3/tokenizer_config.json" ]; then
  printf '%s' '[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"},
    {"role": "assistant", "content": "4"}, {"role": "user", "content": "XQX"}]' >"$work/q.json"
  "$baton" chat-template --model "$tokenizers/qwen3" --messages "$work/q.json" \
    --add-generation-prompt >"$work/out"
  # transformers 4.57.1: AutoTokenizer.from_pretrained(qwen3).apply_chat_template(..., tokenize=False,
  # add_generation_prompt=True)
  printf '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\nXQX<|im_end|>\n<|im_start|>assistant\n' >"$work/want3"
  check "--model qwen3: transformers' text" cmp -s "$work/out" "$work/want3"
else
  echo "skip  --model qwen3 (no $tokenizers/qwen3)"
fi
[ "$fails" -eq 0 ]
