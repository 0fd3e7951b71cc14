# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Sourced by setup_reference.sh and benchmarks/run_tokenizer_bench.sh.
# tokref_pythonpath PY: makes the pinned tokenizer reference (requirements.txt beside this file)
# importable by PY. Prints the folder to put on PYTHONPATH (an empty line when PY already has
# the pinned version); on failure prints the reason on stderr and returns 1.
#   BATON_TOKREF_CACHE  where the pin is installed (default: ~/.cache/baton/tokref-<hash>)
tokref_pythonpath() {
  local py=$1 here req want have hash dir
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  req=$here/requirements.txt
  want=$(sed -n 's/^tokenizers==//p' "$req")
  have=$("$py" -c 'import tokenizers; print(tokenizers.__version__)' 2>/dev/null) || have=
  if [ "$have" = "$want" ]; then
    echo
    return 0
  fi
  hash=$(sha256sum "$req" | cut -c1-12)
  dir=${BATON_TOKREF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/tokref-$hash}
  if [ ! -f "$dir/.complete" ]; then
    echo "installing tokenizers==$want into $dir (once; the reference environment has ${have:-none})" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    if ! timeout 300 "$py" -m pip install --quiet --disable-pip-version-check --no-deps \
      --target "$dir" -r "$req" >&2; then
      rm -rf "$dir"
      echo "no tokenizers $want (pip install into $dir failed: no PyPI access?)" >&2
      return 1
    fi
    touch "$dir/.complete"
  fi
  have=$(PYTHONPATH=$dir "$py" -c 'import tokenizers; print(tokenizers.__version__)' 2>&1) &&
    [ "$have" = "$want" ] || {
    echo "no tokenizers $want (the copy in $dir does not load: $have)" >&2
    return 1
  }
  echo "$dir"
}
