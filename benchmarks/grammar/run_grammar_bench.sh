#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# baton vs llguidance vs xgrammar (PyPI) on the same grammars (tests/grammar/cases.json) and the
# same walks, on the Qwen3 and Llama 3.2 vocabularies, in one run; writes one JSON.
#   run_grammar_bench.sh GRAMMAR_BENCH_EXE SOURCE_DIR WORK_DIR OUT.json TOKENIZERS_DIR [RUNS]
# The engines run under the reference python ($BATON_REFERENCE_PYTHON, else scripts/pyenv.sh:
# it has torch and transformers, which xgrammar imports) with benchmarks/grammar/requirements.txt
# installed beside it (bench_env.sh).
set -eu
bench=$1 src=$2 work=$3 out=$4 toks=$5 runs=${6:-5}
py=${BATON_REFERENCE_PYTHON:-}
if [ -z "$py" ]; then
  py=$("$src/scripts/pyenv.sh") || { echo "run_grammar_bench.sh: no reference python" >&2; exit 1; }
fi
pypath=$(bash "$src/benchmarks/grammar/bench_env.sh" "$py") || exit 1
export PYTHONPATH=$pypath${PYTHONPATH:+:$PYTHONPATH}
export OMP_NUM_THREADS=1 RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
mkdir -p "$work" "$(dirname "$out")"
cases=$src/tests/grammar/cases.json
names=()
for t in qwen3:qwen3:151645 llama3_2:llama3.2:128009; do
  IFS=: read -r name dir eos <<<"$t"
  tok=$toks/$dir/tokenizer.json
  [ -f "$tok" ] || { echo "run_grammar_bench.sh: $tok is absent; $name left out" >&2; continue; }
  "$bench" "$tok" "$eos" "$cases" "$work/walks_$name.json" "$runs" >"$work/baton_$name.json"
  "$py" "$src/benchmarks/grammar/grammar_bench.py" "$tok" "$eos" "$cases" "$work/walks_$name.json" \
    "$runs" >"$work/others_$name.json"
  names+=("$name")
done
[ "${#names[@]}" -gt 0 ] || { echo "run_grammar_bench.sh: no tokenizer files under $toks" >&2; exit 1; }
"$py" - "$out" "$work" "${names[@]}" <<'PY'
import json, sys
out_file, work, names = sys.argv[1], sys.argv[2], sys.argv[3:]
out = {"note": "one thread each; compile = median of runs (caches off); mask = per token along the "
               "same walks: fill a bitmask buffer + consume the token (llguidance/xgrammar through "
               "their Python bindings, so ~1 us of call overhead is included); shared machine: noisy",
       "tokenizers": {}}
for t in names:
    baton = json.load(open(f"{work}/baton_{t}.json"))
    others = json.load(open(f"{work}/others_{t}.json"))
    rows = {}
    for g in baton["grammars"]:
        rows[g["name"]] = {"baton": g}
    for o in others:
        for g in o.get("grammars", []):
            rows.setdefault(g["name"], {})[o["engine"]] = g
    out["tokenizers"][t] = {"baton_vocabulary_ms": baton["vocabulary_ms"], "grammars": rows,
                            "engines": {o["engine"]: o.get("version", o.get("error", "")) for o in others}}
json.dump(out, open(out_file, "w"), indent=1)
print(f"wrote {out_file}")
PY
