# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Encode throughput of Hugging Face's Rust tokenizer (PyPI `tokenizers`, Python binding) on the
corpus tokenizer_bench.cpp reads, measured like tokenizer_bench.cpp: the same documents (cases
that are not valid UTF-8 left out), one cold run, then the median of RUNS warm runs.

  RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false python tokenizer_bench.py TOKENIZER.json CORPUS.bin [RUNS]

Prints one JSON array with two entries: "hf rust (encode per doc)" calls encode() once per
document (includes the binding's per-call cost), "hf rust (encode_batch)" encodes all documents
in one call (closer to the Rust library itself; single thread with RAYON_NUM_THREADS=1).
"""
import json
import os
import struct
import sys
import time


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    tok_file, corpus_file = argv[0], argv[1]
    runs = max(1, int(argv[2])) if len(argv) > 2 else 7
    if os.environ.get("RAYON_NUM_THREADS") != "1":
        print("tokenizer_bench.py: set RAYON_NUM_THREADS=1 (single thread)", file=sys.stderr)
        return 2
    import tokenizers

    with open(corpus_file, "rb") as f:
        b = f.read()
    docs, nbytes, o = [], 0, 0
    while o < len(b):
        (nl,) = struct.unpack_from("<I", b, o)
        o += 4 + nl
        (bl,) = struct.unpack_from("<I", b, o)
        o += 4
        raw = b[o : o + bl]
        o += bl
        try:
            docs.append(raw.decode("utf-8"))
            nbytes += bl
        except UnicodeDecodeError:
            pass

    tok = tokenizers.Tokenizer.from_file(tok_file)

    def measure(name, fn):
        secs, tokens = [], 0
        for _ in range(runs + 1):
            t0 = time.perf_counter()
            tokens = fn()
            secs.append(time.perf_counter() - t0)
        cold = secs.pop(0)
        med = sorted(secs)[len(secs) // 2]
        return {
            "impl": name,
            "tokenizer": tok_file,
            "version": tokenizers.__version__,
            "docs": len(docs),
            "bytes": nbytes,
            "tokens": tokens,
            "runs": runs,
            "median_s": med,
            "mb_per_s": nbytes / med / 1e6,
            "tokens_per_s": tokens / med,
            "cold_first_run_mb_per_s": nbytes / cold / 1e6,
            "run_s": secs,
        }

    def per_doc():
        return sum(len(tok.encode(d, add_special_tokens=False).ids) for d in docs)

    def batch():
        return sum(len(e.ids) for e in tok.encode_batch(docs, add_special_tokens=False))

    out = [measure("hf rust (encode per doc)", per_doc), measure("hf rust (encode_batch)", batch)]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
