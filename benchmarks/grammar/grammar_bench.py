# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""llguidance's and xgrammar's side of the grammar benchmark, on baton's grammars and walks.

  grammar_bench.py TOKENIZER.json EOS[,EOS] CASES.json WALKS.json [RUNS]

Each engine is set to baton's rules (llguidance: no forcing; JSON with ", " and ": " and no
other whitespace; xgrammar: any_whitespace=False, the same separators). Per grammar: compile
time (median of RUNS, caches off), and per token along the walks the cost of what a decode
step does: fill a bitmask buffer, then consume the chosen token. Prints one JSON object.
"""
import json
import statistics
import sys
import time

import numpy as np


def pct(v, p):
    if not v:
        return 0.0
    v = sorted(v)
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]


def llguidance_side(tokenizer, eos, cases, walks, runs):
    import llguidance as llg
    import llguidance.numpy as lln

    tok = llg.LLTokenizer(tokenizer, eos_token=eos)
    out = []
    for case, walk in zip(cases, walks):
        head = '%llguidance {"no_forcing": true}\n'
        if "regex" in case:
            grammar = head + "start: /" + case["regex"].replace("/", "\\/") + "/"
        else:
            schema = dict(case["json_schema"])
            schema["x-guidance"] = {"whitespace_flexible": False, "item_separator": ", ",
                                    "key_separator": ": "}
            grammar = head + "start: %json" + json.dumps(schema)
        compile_ms = []
        for _ in range(runs):
            t = time.perf_counter()
            m = llg.LLMatcher(tok, grammar, log_level=0)
            compile_ms.append((time.perf_counter() - t) * 1e3)
        if m.is_error():
            out.append({"name": case["name"], "error": m.get_error()})
            continue
        bm = lln.allocate_token_bitmask(1, tok.vocab_size)
        us = []
        for _ in range(runs):
            for seq in walk["walks"]:
                w = llg.LLMatcher(tok, grammar, log_level=0)
                for t in seq:
                    t0 = time.perf_counter_ns()
                    lln.fill_next_token_bitmask(w, bm)
                    w.consume_token(t)
                    us.append((time.perf_counter_ns() - t0) / 1e3)
        out.append({"name": case["name"], "compile_ms_median": statistics.median(compile_ms),
                    "mask_us_median": pct(us, 0.5), "mask_us_p99": pct(us, 0.99),
                    "tokens_timed": len(us)})
    return {"engine": "llguidance", "version": llg.__version__, "grammars": out}


def xgrammar_side(tokenizer, eos, cases, walks, runs):
    import xgrammar as xgr
    from transformers import PreTrainedTokenizerFast

    hf = PreTrainedTokenizerFast(tokenizer_file=tokenizer)
    info = xgr.TokenizerInfo.from_huggingface(hf, vocab_size=len(hf), stop_token_ids=eos)
    out = []
    for case, walk in zip(cases, walks):
        compile_ms = []
        try:
            for _ in range(runs):
                comp = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)
                t = time.perf_counter()
                if "regex" in case:
                    cg = comp.compile_regex(case["regex"])
                else:
                    cg = comp.compile_json_schema(json.dumps(case["json_schema"]),
                                                  any_whitespace=False, separators=(", ", ": "))
                compile_ms.append((time.perf_counter() - t) * 1e3)
        except Exception as e:  # an engine that rejects a grammar is reported, not fatal
            out.append({"name": case["name"], "error": str(e)[:300]})
            continue
        bm = xgr.allocate_token_bitmask(1, info.vocab_size)
        us, rejected = [], 0
        for _ in range(runs):
            for seq in walk["walks"]:
                m = xgr.GrammarMatcher(cg)
                for t in seq:
                    t0 = time.perf_counter_ns()
                    m.fill_next_token_bitmask(bm)
                    ok = m.accept_token(t)
                    us.append((time.perf_counter_ns() - t0) / 1e3)
                    if not ok:
                        rejected += 1
                        break
        out.append({"name": case["name"], "compile_ms_median": statistics.median(compile_ms),
                    "mask_us_median": pct(us, 0.5), "mask_us_p99": pct(us, 0.99),
                    "tokens_timed": len(us), "walk_tokens_rejected": rejected})
    return {"engine": "xgrammar", "grammars": out}


def main():
    tokenizer, eos, cases_file, walks_file = sys.argv[1:5]
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    eos = [int(x) for x in eos.split(",")]
    cases = json.load(open(cases_file, encoding="utf-8"))
    walks = json.load(open(walks_file, encoding="utf-8"))
    sides = [llguidance_side(tokenizer, eos, cases, walks, runs)]
    try:
        sides.append(xgrammar_side(tokenizer, eos, cases, walks, runs))
    except ImportError as e:
        sides.append({"engine": "xgrammar", "error": f"not installed: {e}"})
    print(json.dumps(sides, indent=1))


if __name__ == "__main__":
    main()
