#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
#
# A model folder's chat template and tokenizer through baton (check_ids) against transformers'
# apply_chat_template(tokenize=True) (reference_ids.py, run by $BATON_CHAT_TEMPLATE_PYTHON).
# Skips (exit 77) without that python or without the folder; fails under CI=true without the
# python.
#   ids_reference.sh CHECK_IDS SOURCE_DIR MODEL_DIR WORK_FILE
set -u
check=$1
src=$2
model=$3
out=$4
py=${BATON_CHAT_TEMPLATE_PYTHON:-}
if [ -z "$py" ]; then
  echo "no transformers reference (BATON_CHAT_TEMPLATE_PYTHON is not set; scripts/test.sh sets it)"
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi
[ -f "$model/tokenizer_config.json" ] || { echo "$model is absent: skipped"; exit 77; }
mkdir -p "$(dirname "$out")"
"$py" "$src/reference_ids.py" "$model" "$out" || exit 1
exec "$check" "$model" "$out"
