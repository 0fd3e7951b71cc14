# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Reference ids for baton's tokenizer tests, from a tokenizer no one in baton wrote:
Hugging Face's Rust `tokenizers` through its Python binding (PyPI `tokenizers`).

  python reference.py corpus OUT.bin
      Assembles the test corpus (deterministic: sorted file lists, fixed strides, fixed sizes)
      from files on this machine plus hand-written edge cases. Format: repeated
      [u32 LE name length][name][u32 LE byte length][bytes]; bytes may be invalid UTF-8.
      Needs only the standard library.
  python reference.py encode TOKENIZER.json CORPUS.bin OUT.json
      Writes {"cases": [{name, valid, ids, ids_special, decoded}]}. Invalid UTF-8 cases are
      given to the reference as text decoded with U+FFFD for each invalid sequence (WHATWG /
      Unicode "maximal subpart" replacement, which is what Python's errors="replace" does),
      with `valid: false`.

The corpus is byte-identical to the one the former Node script (reference.mjs) built on the
same machine: the same files, strides, chunking and edge cases.
"""
import gzip
import json
import math
import os
import re
import struct
import sys
import zlib


# ---------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------
def _utf16_key(name):
    # JavaScript's Array.prototype.sort compares UTF-16 code units; match it exactly.
    return name.encode("utf-16-be")


def list_sorted(folder, keep):
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in sorted(filter(keep, names), key=_utf16_key)]


def every_nth(items, count):
    if len(items) <= count:
        return items
    step = len(items) / count
    return [items[math.floor(i * step)] for i in range(count)]


def read_text(path):
    """A file's bytes as text, each invalid UTF-8 sequence replaced by U+FFFD."""
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def chunks(text, size, max_chunks):
    """Cuts text into cases of about `size` bytes at line ends (whole lines keep the regex
    context realistic)."""
    out = []
    cur = ""
    cur_bytes = 0
    for line in re.split(r"(?<=\n)", text):
        cur += line
        cur_bytes += len(line.encode("utf-8"))
        if cur_bytes >= size:
            out.append(cur)
            cur = ""
            cur_bytes = 0
            if len(out) >= max_chunks:
                return out
    if cur:
        out.append(cur)
    return out[:max_chunks]


def mo_strings(path):
    """The translated strings of a GNU .mo catalog."""
    with open(path, "rb") as f:
        b = f.read()
    (magic,) = struct.unpack_from("<I", b, 0)
    order = "<I" if magic == 0x950412DE else ">I"

    def rd(o):
        return struct.unpack_from(order, b, o)[0]

    n, trans_off = rd(8), rd(16)
    out = []
    for i in range(n):
        length, off = rd(trans_off + 8 * i), rd(trans_off + 8 * i + 4)
        s = b[off : off + length].decode("utf-8", "replace")
        if s and not s.startswith("Project-Id-Version"):
            out.extend(s.split("\0"))
    return out


def edge_cases():
    c = []

    def add(name, s):
        c.append((name, s.encode("utf-8")))

    add("empty", "")
    add("one space", " ")
    for n in (2, 3, 4, 7, 16, 33):
        add(f"spaces {n}", " " * n)
    add("spaces before word", "a     b")
    add("trailing spaces", "word   ")
    add("space runs then newline", "x  \n  \n\n   y\n")
    add("crlf", "line one\r\nline two\r\n\r\n  indented\r\n")
    add("lone cr", "a\rb\r\r c")
    add("tabs", "\tif (x) {\n\t\treturn 1;\t// tab\t\n\t}\n")
    add("mixed whitespace", " \t \n\v\f\r\n \u00a0\u3000x")
    for n in range(1, 25):
        add(f"digits {n}", ("1234567890" * 3)[:n])
    add("digits in text", "In 2024, 1,234,567.89 units cost $12.50 (x86_64, v1.2.3, 0x1F, 1e-9).")
    add("digits after space", "a 1 22 333 4444 55555 666666")
    add("fullwidth and other digits", "１２３ ٤٥٦ ७८९ Ⅻ ½ ²³")
    add("contractions lower", "it's don't we're they've I'm we'll he'd")
    add("contractions upper", "IT'S DON'T WE'RE THEY'VE I'M WE'LL HE'D")
    add("contractions mixed", "It'S doN'T 'll 'LL 'Ll 's 'S 'T x'x ''s '")
    add("contraction long s", "the ſ 'ſ xſ 'K 'k")
    add("special alone", "<|im_start|>")
    add(
        "specials chatml",
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n",
    )
    add("specials llama", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>")
    add("specials adjacent", "<|endoftext|><|endoftext|>x<|end_of_text|><|end_of_text|>")
    add("specials in words", "a<|im_end|>b c <|im_end|> d<think>e</think>")
    add(
        "partial specials",
        "<|im_start <|im_start| |im_start|> <|im_sta <|IM_START|> <|Im_Start|> < |im_end|>",
    )
    add(
        "partial specials llama",
        "<|begin_of_text <|BEGIN_OF_TEXT|> <|eot_id| <|reserved_special_token_0",
    )
    # Flags of the hand-made tokenizers in data/ (lstrip, rstrip, single_word, normalized).
    add("flag lstrip", "x <lstrip> y \t\n<lstrip>z<lstrip>  <lstrip>")
    add("flag rstrip", "a<rstrip>  b<rstrip>\n\nc <rstrip>\u3000d<rstrip>")
    add("flag both", "a  <both>  b<both><both> \u00a0<both>\u0085c")
    add("flag single word", "word words aword word. _word word_ 1word word1 éword wordé (word) word")
    add("flag normalized", "\ufb01x fix \ufb01 \ufb01xed <s>x <s>y <s>")
    add("special then space", "<|im_end|> \n <|im_end|>\n\n")
    add("emoji", "I 😀 love 🎉 tokenizers 🚀🚀🚀!")
    add("emoji zwj", "👩‍💻 👨‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇩🇪🇯🇵 ❤️‍🔥")
    add("combining nfd", "e\u0301 cafe\u0301 n\u0303 A\u030a o\u0308\u0304 \u1100\u1161\u11a8")
    add("not nfc precomposed mix", "\u00e9 e\u0301 \u212b \u2126 \u0041\u030a Å")
    add("combining after special", "<|im_end|>\u0301x <|endoftext|>\u0308")
    add("u+0085", "a\u0085b \u0085 c\u0085\u0085 d \u0085\n")
    add("u+feff", "\ufeffstart a\ufeffb \ufeff c")
    add("u+00a0", "a\u00a0b \u00a0 c\u00a0\u00a0d")
    add("u+3000", "a\u3000b \u3000 c\u3000\u3000d 日本\u3000語")
    add("other spaces", "a\u2000b\u2009c\u200ad\u2028e\u2029f\u202fg\u205fh\u1680i\u200bj\u180ek")
    add("zero width", "a\u200bb\u200cc\u200dd\u2060e")
    add("cjk", "漢字とひらがなとカタカナ。中文测试，标点符号！한국어 텍스트입니다.")
    add("rtl", "שלום עולם! مرحبا بالعالم 123 مرحبا")
    add("indic", "नमस्ते दुनिया। வணக்கம் উদাহরণ ภาษาไทย")
    add("punctuation runs", "!!! ??? ... --- === *** ### ~~~ ```code``` ''' \"\"\" <<>> {{}} [[]]")
    add("punct newline", "end.\n\n---\n\n***\n#\n")
    add("url and email", "https://example.com/path?q=1&r=2#frag user@example.org")
    add("code", "for (int i = 0; i < n; ++i) {\n    sum += a[i] * b[i];\n}\n")
    add("json", '{"key": [1, 2.5, true, null], "nested": {"a": "b\\n"}}')
    add("long word", "Pneumonoultramicroscopicsilicovolcanoconiosis" * 8)
    add("long punct", "=" * 300 + "\n" + "-" * 77)
    add("long spaces", " " * 1000 + "x")
    add("control chars", "a\u0000b\u0001c\u001fd\u007fe")
    add("supplementary", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛 𐍈 𠀀𠀁")
    add("private use", "\ue000\uf8ff \U000f0000")

    # Invalid UTF-8: raw bytes.
    def raw(name, bs):
        c.append((name, bytes(bs)))

    raw("invalid lone continuation", [0x61, 0x80, 0x62])
    raw("invalid truncated 2", [0x61, 0xC3])
    raw("invalid truncated 3 mid", [0x61, 0xE2, 0x82, 0x20, 0x62])
    raw("invalid overlong", [0xC0, 0xAF, 0x41])
    raw("invalid surrogate", [0x41, 0xED, 0xA0, 0x80, 0x42])
    raw("invalid ff", [0xFF, 0xFE, 0x41, 0x42])
    raw("invalid above max", [0xF4, 0x90, 0x80, 0x80, 0x21])
    raw("invalid in text", [*b"hello ", 0xE6, 0x97, *b" world"])
    return c


def build_corpus():
    cases = edge_cases()

    def add_text(label, text, size, max_chunks):
        for i, t in enumerate(chunks(text, size, max_chunks)):
            cases.append((f"{label}#{i}", t.encode("utf-8")))

    def gunzip_text(path):
        with open(path, "rb") as f:
            return gzip.decompress(f.read()).decode("utf-8", "replace")

    for f in every_nth(list_sorted("/usr/share/common-licenses", lambda n: True), 12):
        try:
            if os.path.isfile(f):
                add_text(f, read_text(f), 1500, 6)
        except (OSError, ValueError):
            pass
    for f in every_nth(list_sorted("/usr/share/man/man1", lambda n: n.endswith(".gz")), 16):
        try:
            add_text(f, gunzip_text(f), 1500, 3)
        except (OSError, EOFError, ValueError, zlib.error):
            pass
    # Translated man pages: real non-Latin text (ja, ru, zh_CN, ko, uk, ...).
    for lang in list_sorted("/usr/share/man", lambda n: not n.startswith("man")):
        man1 = os.path.join(lang, "man1")
        for f in every_nth(list_sorted(man1, lambda n: n.endswith(".gz")), 2):
            try:
                add_text(f, gunzip_text(f), 1500, 2)
            except (OSError, EOFError, ValueError, zlib.error):
                pass
    for f in every_nth(list_sorted("/usr/include", lambda n: n.endswith(".h")), 14):
        try:
            add_text(f, read_text(f), 1500, 2)
        except (OSError, ValueError):
            pass
    # Message catalogs: one per language, many scripts.
    for lang in list_sorted("/usr/share/locale", lambda n: True):
        mos = list_sorted(os.path.join(lang, "LC_MESSAGES"), lambda n: n.endswith(".mo"))
        if not mos:
            continue
        try:
            add_text(mos[0], "\n".join(mo_strings(mos[0])), 1200, 1)
        except (OSError, ValueError, struct.error):
            pass
    for f in every_nth(list_sorted("/usr/share/i18n/locales", lambda n: True), 6):
        try:
            add_text(f, read_text(f), 1500, 1)
        except (OSError, ValueError):
            pass
    return cases


def write_corpus(path, cases):
    with open(path, "wb") as f:
        for name, data in cases:
            n = name.encode("utf-8")
            f.write(struct.pack("<I", len(n)) + n + struct.pack("<I", len(data)) + data)


def read_corpus(path):
    with open(path, "rb") as f:
        b = f.read()
    cases = []
    o = 0
    while o < len(b):
        (nl,) = struct.unpack_from("<I", b, o)
        o += 4
        name = b[o : o + nl].decode("utf-8")
        o += nl
        (bl,) = struct.unpack_from("<I", b, o)
        o += 4
        cases.append((name, b[o : o + bl]))
        o += bl
    return cases


# ---------------------------------------------------------------------------------------
# Reference ids
# ---------------------------------------------------------------------------------------
def encode_all(tok_file, corpus_file, out_file):
    import tokenizers  # only this command needs the reference

    tok = tokenizers.Tokenizer.from_file(tok_file)
    out = []
    invalid = 0
    for name, data in read_corpus(corpus_file):
        try:
            text = data.decode("utf-8")  # the "utf-8" codec keeps a leading U+FEFF as text
            valid = True
        except UnicodeDecodeError:
            text = data.decode("utf-8", "replace")
            valid = False
            invalid += 1
        ids = tok.encode(text, add_special_tokens=False).ids
        ids_special = tok.encode(text, add_special_tokens=True).ids
        decoded = tok.decode(ids, skip_special_tokens=False)
        out.append(
            {"name": name, "valid": valid, "ids": ids, "ids_special": ids_special, "decoded": decoded}
        )
    with open(out_file, "w", encoding="utf-8") as f:
        json.dump(
            {
                "tokenizer": tok_file,
                "reference": f"tokenizers {tokenizers.__version__} (Rust, Python binding)",
                "cases": out,
            },
            f,
        )
    print(f"{os.path.basename(out_file)}: {len(out)} cases ({invalid} invalid UTF-8)")


def main(argv):
    if len(argv) >= 2 and argv[0] == "corpus":
        cases = build_corpus()
        write_corpus(argv[1], cases)
        total = sum(len(d) for _, d in cases)
        print(f"corpus: {len(cases)} cases, {total} bytes -> {argv[1]}")
        return 0
    if len(argv) == 4 and argv[0] == "encode":
        encode_all(argv[1], argv[2], argv[3])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
