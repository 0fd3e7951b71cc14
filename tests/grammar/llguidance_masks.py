# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Reference token masks from llguidance (PyPI) for baton's grammar tests.

For each grammar (the fixed cases in cases.json plus seeded random regexes) this walks the
grammar at random with llguidance's own masks and records, at every step, the set of tokens
llguidance allows. check_llguidance.cpp then replays the same token sequences through
baton and compares the masks state by state.

llguidance is configured to baton's rules: no forcing of canonical tokens (a mask is the
set of every token whose bytes fit), JSON with the separators ", " and ": " and no other
whitespace; the end-of-sequence ids are the ones given.

  llguidance_masks.py TOKENIZER.json CASES.json OUT.json --eos ID[,ID] [--seed N] [--walks N]
"""
import argparse
import json
import random

import llguidance as llg
import numpy as np

ITEM_SEP, KEY_SEP = ", ", ": "


def lark_for(case):
    head = '%llguidance {"no_forcing": true}\n'
    if "regex" in case:
        return head + "start: /" + case["regex"].replace("/", "\\/") + "/"
    schema = dict(case["json_schema"])
    schema["x-guidance"] = {"whitespace_flexible": False, "item_separator": ITEM_SEP,
                            "key_separator": KEY_SEP}
    return head + "start: %json" + json.dumps(schema)


def runs(mask_bytes, vocab):
    """The allowed ids as [start0, end0, start1, end1, ...] (half-open runs)."""
    bits = np.unpackbits(np.frombuffer(mask_bytes, dtype=np.uint8), bitorder="little")[:vocab]
    edges = np.diff(np.concatenate(([0], bits.astype(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return [int(x) for pair in zip(starts, ends) for x in pair]


def allowed_ids(mask_bytes, vocab):
    bits = np.unpackbits(np.frombuffer(mask_bytes, dtype=np.uint8), bitorder="little")[:vocab]
    return np.flatnonzero(bits)


ATOMS = ["a", "b", "c", "0", "1", " ", "é", "\"", "ab", "the", "\\n", "[a-c]", "[0-9]",
         "[^a\\n]", ".", "[α-γ]", "x", "\\.", "-"]


def random_regex(rng, depth=0):
    roll = rng.random()
    if depth >= 3 or (depth > 0 and roll < 0.35):
        return rng.choice(ATOMS)
    if roll < 0.55:
        return "".join(random_regex(rng, depth + 1) for _ in range(rng.randint(2, 3)))
    if roll < 0.7:
        return "(" + "|".join(random_regex(rng, depth + 1) for _ in range(rng.randint(2, 3))) + ")"
    inner = "(" + random_regex(rng, depth + 1) + ")"
    q = rng.choice(["?", "*", "+", "{2}", "{1,3}", "{0,2}", "{2,}"])
    return inner + q


def walk(matcher, rng, eos, lengths, vocab, max_steps):
    tokens, masks = [], []
    for _ in range(max_steps):
        m = matcher.compute_bitmask()
        masks.append(runs(m, vocab))
        ids = allowed_ids(m, vocab)
        if len(ids) == 0:
            break
        is_end = np.isin(ids, eos)
        ends, others = ids[is_end], ids[~is_end]
        if len(ends) and (not len(others) or rng.random() < 0.25):
            tokens.append(int(ends[0]))
            assert matcher.consume_token(int(ends[0])), matcher.get_error()
            return tokens, masks
        if rng.random() < 0.5:  # favour short tokens so walks go deep into the grammar
            short = others[lengths[others] <= 2]
            others = short if len(short) else others
        t = int(others[rng.randrange(len(others))])
        tokens.append(t)
        assert matcher.consume_token(t), matcher.get_error()
    masks.append(runs(matcher.compute_bitmask(), vocab))
    return tokens, masks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tokenizer")
    ap.add_argument("cases")
    ap.add_argument("out")
    ap.add_argument("--eos", required=True)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--walks", type=int, default=4)
    ap.add_argument("--random", type=int, default=40, help="random regexes to add")
    ap.add_argument("--max-steps", type=int, default=24)
    a = ap.parse_args()
    eos = [int(x) for x in a.eos.split(",")]
    tok = llg.LLTokenizer(a.tokenizer, eos_token=eos, slices=[])
    vocab = tok.vocab_size
    lengths = np.array([len(tok.decode_bytes([i])) for i in range(vocab)])
    rng = random.Random(a.seed)
    cases = json.load(open(a.cases, encoding="utf-8"))
    cases += [{"name": f"random{k}", "regex": random_regex(rng)} for k in range(a.random)]
    out = []
    for case in cases:
        m = llg.LLMatcher(tok, lark_for(case), log_level=0)
        entry = dict(case)
        if m.is_error():
            entry["error"] = m.get_error()
            out.append(entry)
            continue
        entry["walks"] = []
        for _ in range(a.walks):
            w = m.deep_copy()
            tokens, masks = walk(w, rng, np.array(eos), lengths, vocab, a.max_steps)
            entry["walks"].append({"tokens": tokens, "masks": masks})
        out.append(entry)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"llguidance": llg.__version__, "vocab_size": vocab, "eos": eos, "cases": out}, f)


if __name__ == "__main__":
    main()
