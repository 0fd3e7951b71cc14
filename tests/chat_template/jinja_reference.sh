#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
#
# Every chat template in llama.cpp's models/templates, rendered by `baton chat-template` and by
# jinja2 with transformers' settings (compare_jinja.py), must agree byte for byte or refuse
# alike. The templates are not in this repository (their licences vary): they come at test
# time from a pinned source, the PyPI sdist of llama-cpp-python (the version
# benchmarks/llama_cpp/requirements.txt pins), which vendors llama.cpp; it is downloaded once
# into ~/.cache/baton. The python is $BATON_CHAT_TEMPLATE_PYTHON (scripts/test.sh sets it:
# scripts/pyenv.sh tests/chat_template/requirements.txt). Without it, or without PyPI, the
# test skips (exit 77), or fails under CI=true.
#   jinja_reference.sh BATON SOURCE_DIR WORK_DIR
set -u
baton=$1
src=$2
work=$3
skip() {
  echo "chat_template_jinja: $1"
  [ "${CI:-}" = true ] && exit 1
  exit 77
}
py=${BATON_CHAT_TEMPLATE_PYTHON:-}
[ -n "$py" ] || skip "no jinja2 reference (BATON_CHAT_TEMPLATE_PYTHON is not set; scripts/test.sh sets it)"
pin=$(sed -n 's/^llama-cpp-python==//p' "$src/../../benchmarks/llama_cpp/requirements.txt")
[ -n "$pin" ] || { echo "no llama-cpp-python pin in benchmarks/llama_cpp/requirements.txt"; exit 1; }
cache=${BATON_LLAMA_TEMPLATES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/llama-cpp-python-$pin-templates}
if [ ! -f "$cache/.complete" ]; then
  mkdir -p "$(dirname "$cache")"
  exec 9>"$cache.lock"
  flock 9
  if [ ! -f "$cache/.complete" ]; then
    dl=$(mktemp -d)
    trap 'rm -rf "$dl"' EXIT
    echo "downloading the llama-cpp-python $pin sdist for llama.cpp's chat templates (once)"
    timeout 600 "$py" -m pip download --quiet --disable-pip-version-check --no-deps \
      --no-binary :all: "llama-cpp-python==$pin" -d "$dl" >&2 ||
      skip "could not download llama-cpp-python==$pin (no PyPI access?)"
    rm -rf "$cache"
    mkdir -p "$cache"
    tar -xzf "$dl"/llama_cpp_python-"$pin".tar.gz -C "$dl" --wildcards \
      '*/vendor/llama.cpp/models/templates/*.jinja' ||
      { echo "the sdist holds no vendor/llama.cpp/models/templates"; exit 1; }
    cp "$dl"/llama_cpp_python-"$pin"/vendor/llama.cpp/models/templates/*.jinja "$cache"/
    touch "$cache/.complete"
  fi
fi
echo "templates: $(ls "$cache"/*.jinja | wc -l) from llama-cpp-python $pin ($cache)"
exec "$py" "$src/compare_jinja.py" "$baton" "$cache" "$work"
