# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""llama.cpp's batched decoding of a relay's token counts, N sequences per llama_batch, in its
own process (the batching benchmark's reference; benchmarks/batching/batch_bench.py).

The workload is the one baton's batched relay runs: every stage has a prefix that is computed
once (llama.cpp: into a sequence of its own, copied into a request's sequence with
llama_memory_seq_cp, as baton's pre-warmed caches are shared); each request then passes
through the stages in order, each stage prefilling its input (the request, earlier stages'
outputs) after its prefix and generating `max_new` greedy tokens. Requests run in waves of N:
all N sequences' prefills go in llama_decode batches of up to n_batch tokens, then every
decode step is one batch of N tokens (one per sequence). llama.cpp applies one adapter set per
batch, so it runs the base model alone (baton's rows each add their own adapter).
Set up as llama.cpp's own llama-batched-bench sets itself up: a K/V stream of its own per
sequence (not one unified cache that every sequence would attend over), n_batch 2048 and
n_ubatch 512, flash attention at llama.cpp's default (auto); K/V in f32, as baton keeps them.
A prefix is computed once into its own sequence and copied into a request's (a whole-stream
copy). `benchmarks/batching/base_bench.py --check-worker` runs this worker on the base
workload beside llama-batched-bench in the same run, to show it within 10% of the tool.
Prints one JSON object."""

import argparse
import ctypes
import json
import sys
import time

import numpy as np
import llama_cpp as L


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--workload", required=True,
                    help="JSON: {prefixes: [[ids]..], requests: [[ids]..], max_new, inputs}")
    ap.add_argument("--parallel", type=int, required=True, help="sequences per wave (N)")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    w = json.load(open(a.workload))
    prefixes, requests, max_new = w["prefixes"], w["requests"], int(w["max_new"])
    # inputs[k]: what stage k reads after its prefix: "request" and/or earlier stages' indices
    inputs = w["inputs"]
    n_stages, n = len(prefixes), a.parallel

    L.llama_backend_init()
    mp = L.llama_model_default_params()
    mp.n_gpu_layers = 0
    model = L.llama_model_load_from_file(a.gguf.encode(), mp)
    if not model:
        print(f"llama_batch_worker: llama.cpp could not load {a.gguf}", file=sys.stderr)
        return 1
    vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    longest_in = max(len(p) for p in prefixes) + max(len(r) for r in requests) * 2 + \
        max_new * (n_stages + 1)
    cp = L.llama_context_default_params()
    cp.n_seq_max = n_stages + n  # the prefixes' sequences, then one per request in a wave
    cp.n_ctx = cp.n_seq_max * longest_in  # every stream holds the longest sequence
    cp.n_batch = 2048  # llama-batched-bench's defaults
    cp.n_ubatch = 512
    cp.n_threads = a.threads
    cp.n_threads_batch = a.threads
    cp.type_k = L.GGML_TYPE_F32
    cp.type_v = L.GGML_TYPE_F32
    cp.kv_unified = False  # a stream per sequence: each attends over its own positions only
    cp.no_perf = True
    ctx = L.llama_init_from_model(model, cp)
    if not ctx:
        print("llama_batch_worker: llama_init_from_model failed", file=sys.stderr)
        return 1
    mem = L.llama_get_memory(ctx)
    batch = L.llama_batch_init(cp.n_batch, 0, 1)

    def decode(items):
        """items: (seq, pos, token, wants_logits); runs them in batches of n_batch; returns the
        argmax for every item that wanted logits, in order."""
        out = []
        for b0 in range(0, len(items), cp.n_batch):
            chunk = items[b0:b0 + cp.n_batch]
            for i, (seq, pos, tok, want) in enumerate(chunk):
                batch.token[i] = tok
                batch.pos[i] = pos
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = seq
                batch.logits[i] = want
            batch.n_tokens = len(chunk)
            if L.llama_decode(ctx, batch) != 0:
                raise RuntimeError("llama_decode failed")
            for i, (_, _, _, want) in enumerate(chunk):
                if want:
                    p = L.llama_get_logits_ith(ctx, i)
                    row = np.ctypeslib.as_array(ctypes.cast(p, ctypes.POINTER(ctypes.c_float)),
                                                shape=(vocab,))
                    out.append(int(row.argmax()))
        return out

    # The stages' prefixes, once (not timed: baton pre-warms them before serving too).
    for k, p in enumerate(prefixes):
        decode([(k, i, t, False) for i, t in enumerate(p)])

    latencies, generated = [], 0
    t_start = time.perf_counter()
    for w0 in range(0, len(requests), n):
        wave = requests[w0:w0 + n]
        t_wave = time.perf_counter()
        outs = [[None] * n_stages for _ in wave]
        for k in range(n_stages):
            items, pos = [], []
            for j, req in enumerate(wave):
                seq = n_stages + j
                L.llama_memory_seq_rm(mem, seq, -1, -1)
                L.llama_memory_seq_cp(mem, k, seq, -1, -1)
                toks = []
                for src in inputs[k]:
                    toks += req if src == "request" else outs[j][src]
                base = len(prefixes[k])
                items += [(seq, base + i, t, i == len(toks) - 1) for i, t in enumerate(toks)]
                pos.append(base + len(toks))
            last = decode(items)
            gen = [[t] for t in last]
            for step in range(1, max_new):
                last = decode([(n_stages + j, pos[j] + step - 1, gen[j][-1], True)
                               for j in range(len(wave))])
                for j, t in enumerate(last):
                    gen[j].append(t)
            for j in range(len(wave)):
                outs[j][k] = gen[j]
                generated += len(gen[j])
        latencies += [1e3 * (time.perf_counter() - t_wave)] * len(wave)
    wall = time.perf_counter() - t_start
    lat = np.array(latencies)
    print(json.dumps({
        "engine": "llama.cpp", "parallel": n, "requests": len(requests), "wall_s": wall,
        "generated_tokens": generated, "generated_tokens_per_s": generated / wall,
        "latency_ms_p50": float(np.percentile(lat, 50)),
        "latency_ms_p99": float(np.percentile(lat, 99)),
        "system_info": L.llama_print_system_info().decode()}))
    L.llama_batch_free(batch)
    L.llama_free(ctx)
    L.llama_model_free(model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
