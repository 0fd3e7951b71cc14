#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
#
# A model folder's chat template and tokenizer through baton (check_ids) against transformers'
# apply_chat_template(tokenize=True) (reference_ids.py, run by $BATON_CHAT_TEMPLATE_PYTHON).
# Skips (exit 77) without that python or without the folder; fails under CI=true without the
# python.
#   ids_reference.sh CHECK_IDS SOURCE_DIR MODEL_DIR WORK_FILE [VARIANT]
# VARIANT (add_bos_token, the folder's tokenizer_config.json changed in a copy):
#   add_bos           add_bos_token: true, the template as it is (Llama 3.2's writes its own
#                     BOS): still one BOS, as apply_chat_template gives;
#   add_bos_no_bos    add_bos_token: true and the template's leading `{{- bos_token }}` removed:
#                     the BOS comes first once, as tokenizer(text)'s own special tokens put it
#                     (reference_ids.py --bos-prefix; apply_chat_template alone adds none).
set -u
check=$1
src=$2
model=$3
out=$4
variant=${5:-}
py=${BATON_CHAT_TEMPLATE_PYTHON:-}
if [ -z "$py" ]; then
  echo "no transformers reference (BATON_CHAT_TEMPLATE_PYTHON is not set; scripts/test.sh sets it)"
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi
[ -f "$model/tokenizer_config.json" ] || { echo "$model is absent: skipped"; exit 77; }
mkdir -p "$(dirname "$out")"
flags=()
if [ -n "$variant" ]; then
  folder=${out%.json}_folder
  rm -rf "$folder" && mkdir -p "$folder" || exit 1
  ln -s "$(cd "$model" && pwd)/tokenizer.json" "$folder/tokenizer.json"
  "$py" - "$model/tokenizer_config.json" "$folder/tokenizer_config.json" "$variant" <<'PY' || exit 1
import json, sys
src, dst, variant = sys.argv[1:4]
c = json.load(open(src))
c["add_bos_token"] = True
if variant == "add_bos_no_bos":
    lead = "{{- bos_token }}"
    assert c["chat_template"].startswith(lead), "the template does not start with its BOS"
    c["chat_template"] = c["chat_template"][len(lead):]
elif variant != "add_bos":
    sys.exit(f"unknown variant {variant}")
json.dump(c, open(dst, "w"))
PY
  [ "$variant" = add_bos_no_bos ] && flags+=(--bos-prefix)
  model=$folder
fi
"$py" "$src/reference_ids.py" "$model" "$out" "${flags[@]}" || exit 1
exec "$check" "$model" "$out"
