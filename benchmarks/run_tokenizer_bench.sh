#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# baton vs Hugging Face's Rust tokenizer (PyPI `tokenizers`, one thread) on the same corpus, in
# one run; writes one JSON with side-by-side ratios (baton MB/s / Hugging Face MB/s).
#   run_tokenizer_bench.sh TOKENIZER_BENCH_EXE SOURCE_DIR WORK_DIR OUT.json TOKENIZERS_DIR [RUNS]
# TOKENIZERS_DIR holds qwen3/tokenizer.json and llama3.2/tokenizer.json (../shared/tokenizers).
# The reference python is $BATON_REFERENCE_PYTHON, else the one scripts/pyenv.sh provides, with
# the tokenizers version the tokenizer tests pin (tests/tokenizer/reference_env.sh).
set -eu
bench=$1 src=$2 work=$3 out=$4 toks=$5 runs=${6:-7}
py=${BATON_REFERENCE_PYTHON:-}
if [ -z "$py" ]; then
  py=$("$src/scripts/pyenv.sh") || {
    echo "run_tokenizer_bench.sh: no reference python (scripts/pyenv.sh failed)" >&2
    exit 1
  }
fi
# The tokenizer tests' pinned reference version (tests/tokenizer/requirements.txt).
source "$src/tests/tokenizer/reference_env.sh"
pypath=$(tokref_pythonpath "$py") || exit 1
export PYTHONPATH=$pypath${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$work" "$(dirname "$out")"
bench=$(realpath "$bench") src=$(realpath "$src") toks=$(realpath -m "$toks")
out=$(realpath -m "$out")
cd "$work"
"$py" "$src/tests/tokenizer/reference.py" corpus corpus.bin
export RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
results=()
for t in qwen3:qwen3 llama3_2:llama3.2; do
  name=${t%%:*}
  tok=$toks/${t#*:}/tokenizer.json
  if [ ! -f "$tok" ]; then
    echo "run_tokenizer_bench.sh: $tok is absent; $name left out" >&2
    continue
  fi
  "$bench" "$tok" corpus.bin "$runs" >"baton_$name.json"
  "$py" "$src/benchmarks/tokenizer_bench.py" "$tok" corpus.bin "$runs" >"hf_$name.json"
  results+=("$name")
done
[ "${#results[@]}" -gt 0 ] || { echo "run_tokenizer_bench.sh: no tokenizer files under $toks" >&2; exit 1; }
"$py" - "$out" "${results[@]}" <<'EOF'
import json, sys
out_file, names = sys.argv[1], sys.argv[2:]
out = {"note": "single thread (RAYON_NUM_THREADS=1), median of warm runs; "
               "ratio = baton MB/s / Hugging Face MB/s", "tokenizers": {}}
for t in names:
    baton = json.load(open(f"baton_{t}.json"))
    others = json.load(open(f"hf_{t}.json"))
    ratios = {o["impl"]: baton["mb_per_s"] / o["mb_per_s"] for o in others}
    # Same documents, same tokenizer: the token counts must agree (a cheap sanity check).
    same = all(o["tokens"] == baton["tokens"] and o["bytes"] == baton["bytes"] for o in others)
    out["tokenizers"][t] = {"results": [baton, *others], "baton_speedup": ratios,
                            "same_token_count": same}
    if not same:
        print(f"WARNING: {t}: baton and Hugging Face disagree on the token count")
with open(out_file, "w") as f:
    json.dump(out, f, indent=1)
for t, r in out["tokenizers"].items():
    print(t)
    for x in r["results"]:
        print(f"  {x['impl']:<26} {x['mb_per_s']:8.2f} MB/s {x['tokens_per_s'] / 1e6:8.3f} Mtok/s")
    for k, v in r["baton_speedup"].items():
        print(f"  baton / {k}: {v:.2f}x")
EOF
echo "wrote $out"
