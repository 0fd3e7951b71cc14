# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""One llama.cpp measurement in its own process (as baton's decode_bench is one process):
load a GGUF through llama-cpp-python's C API, run a warm-up and then one timed
prefill-then-decode pass, print JSON. The same work decode_bench does per run: the prompt in
one llama_decode batch with logits for the last position only, then greedy steps of one token
(argmax over the vocabulary, fed back through the KV cache). KV cache in f32 and no flash
attention, as baton computes it, so both engines do the same arithmetic."""

import argparse
import ctypes
import json
import sys
import time

import numpy as np
import llama_cpp as L


def prompt_tokens(n: int, vocab: int) -> list[int]:
    # the same pattern as benchmarks/decode_bench.cpp
    return [(i * 7919 + 13) % vocab for i in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--prompt", type=int, required=True)
    ap.add_argument("--decode", type=int, required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", help="comma-separated prompt instead of the fixed pattern")
    ap.add_argument("--runs", type=int, default=1)
    a = ap.parse_args()

    L.llama_backend_init()
    mp = L.llama_model_default_params()
    mp.n_gpu_layers = 0
    model = L.llama_model_load_from_file(a.gguf.encode(), mp)
    if not model:
        print(f"llama_worker: llama.cpp could not load {a.gguf}", file=sys.stderr)
        return 1
    vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    prompt = [int(t) for t in a.tokens.split(",")] if a.tokens else prompt_tokens(a.prompt, vocab)
    n = len(prompt)
    cp = L.llama_context_default_params()
    cp.n_ctx = max(256, n + a.decode + 8)
    cp.n_batch = max(n, 1)
    cp.n_ubatch = max(n, 1)
    cp.n_seq_max = 1
    cp.n_threads = a.threads
    cp.n_threads_batch = a.threads
    cp.type_k = L.GGML_TYPE_F32
    cp.type_v = L.GGML_TYPE_F32
    cp.flash_attn_type = L.LLAMA_FLASH_ATTN_TYPE_DISABLED
    cp.no_perf = True
    ctx = L.llama_init_from_model(model, cp)
    if not ctx:
        print("llama_worker: llama_init_from_model failed", file=sys.stderr)
        return 1
    mem = L.llama_get_memory(ctx)
    batch = L.llama_batch_init(n, 0, 1)

    def fill(tokens, pos0):
        for i, t in enumerate(tokens):
            batch.token[i] = t
            batch.pos[i] = pos0 + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = i == len(tokens) - 1
        batch.n_tokens = len(tokens)

    def argmax() -> int:
        p = L.llama_get_logits_ith(ctx, -1)
        return int(np.ctypeslib.as_array(ctypes.cast(p, ctypes.POINTER(ctypes.c_float)), shape=(vocab,)).argmax())

    res = {"prefill_tokens_per_s_runs": [], "decode_tokens_per_s_runs": []}
    for r in range(a.runs + 1):  # run 0 warms up and is dropped
        L.llama_memory_clear(mem, True)
        fill(prompt, 0)
        t0 = time.perf_counter()
        if L.llama_decode(ctx, batch) != 0:
            raise RuntimeError("llama_decode failed on the prompt")
        L.llama_synchronize(ctx)
        tok = argmax()
        prefill_s = time.perf_counter() - t0
        greedy = [tok]
        t0 = time.perf_counter()
        for s in range(a.decode):
            fill([tok], n + s)
            if L.llama_decode(ctx, batch) != 0:
                raise RuntimeError("llama_decode failed on a decode step")
            tok = argmax()
            greedy.append(tok)
        decode_s = time.perf_counter() - t0
        if r == 0:
            continue
        res["prefill_tokens_per_s_runs"].append(n / prefill_s)
        if a.decode:
            res["decode_tokens_per_s_runs"].append(a.decode / decode_s)
    res["prefill_tokens_per_s"] = float(np.median(res["prefill_tokens_per_s_runs"]))
    res["decode_tokens_per_s"] = (float(np.median(res["decode_tokens_per_s_runs"]))
                                  if a.decode else 0.0)
    res["greedy_tokens"] = greedy
    res["vocab"] = vocab
    res["system_info"] = L.llama_print_system_info().decode()
    L.llama_batch_free(batch)
    L.llama_free(ctx)
    L.llama_model_free(model)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
