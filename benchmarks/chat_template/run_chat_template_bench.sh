#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Runs chat_template_bench on Llama 3.1's template: llama.cpp's copy, cached by
# tests/chat_template/jinja_reference.sh (~/.cache/baton/llama-cpp-python-*-templates), else
# the Llama 3.2 tokenizer_config.json of the shared tokenizers folder (the same template family).
#   run_chat_template_bench.sh BENCH TOKENIZERS_DIR OUT.json
set -euo pipefail
bench=$1
tokenizers=$2
out=$3
cache=${XDG_CACHE_HOME:-$HOME/.cache}/baton
template=$(ls "$cache"/llama-cpp-python-*-templates/meta-llama-Llama-3.1-8B-Instruct.jinja 2>/dev/null | head -n 1 || true)
[ -n "$template" ] || template=$tokenizers/llama3.2/tokenizer_config.json
"$bench" "$template" | tee "$out"
