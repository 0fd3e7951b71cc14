# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""A closed-loop load test of an OpenAI-compatible server (baton serve, llama-server), on
loopback, bounded in requests and in time.

Each of C clients sends streamed /v1/completions requests one after another (prompts taken in
turn from a list) until the run has sent N requests or S seconds have passed; every request's
latency (send to [DONE]) and time to first token (send to the first chunk with text) are kept.
Reports requests/s, answer tokens/s (usage.completion_tokens), generated tokens/s (baton: all
stages, from the `baton` extension; others: the completion tokens), latency p50/p99 and time to
first token p50/p99. Plain http.client in threads (the lightest client Python has: the load
generator shares the CPU with the server).

  from load_test import run
  run("http://127.0.0.1:8080", "word-problems", prompts, concurrency=8, requests=200,
      seconds=20, extra={"max_tokens": 16})
"""
import http.client
import json
import statistics
import threading
import time
from urllib.parse import urlparse


def percentile(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))] if v else float("nan")


def one_request(host, port, body):
    """(latency s, ttft s, completion tokens, generated tokens) of one streamed completion."""
    conn = http.client.HTTPConnection(host, port, timeout=600)
    t0 = time.perf_counter()
    conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:300]!r}")
    ttft, completion, generated, chunks = None, None, None, 0
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        j = json.loads(data)
        if "error" in j:
            raise RuntimeError(f"stream error: {j['error']}")
        # The first answer: text, or ids (baton's extension, for a relay without a tokenizer).
        if ttft is None and ((j.get("choices") and j["choices"][0].get("text")) or
                             "ids" in j.get("baton", {})):
            ttft = time.perf_counter() - t0
        if j.get("choices") and j["choices"][0].get("text"):
            chunks += 1
        if j.get("usage"):
            completion = j["usage"]["completion_tokens"]
        if "generated_tokens" in j.get("baton", {}):
            generated = j["baton"]["generated_tokens"]
    latency = time.perf_counter() - t0
    conn.close()
    if completion is None:  # a server without usage in its stream: one token per chunk
        completion = chunks
    return latency, ttft if ttft is not None else latency, completion, \
        generated if generated is not None else completion


def run(url, model, prompts, concurrency, requests, seconds, extra=None):
    u = urlparse(url)

    def one(k):
        body = {"model": model, "prompt": prompts[k % len(prompts)], "stream": True,
                "stream_options": {"include_usage": True}, "temperature": 0}
        body.update(extra or {})
        return one_request(u.hostname, u.port, body)

    return run_clients(one, concurrency, requests, seconds)


def run_clients(one, concurrency, requests, seconds):
    """C clients in a closed loop, each calling one(k) for the run's k-th request, which returns
    (latency s, time to first token s, completion tokens, generated tokens); bounded in
    requests and seconds."""
    lock = threading.Lock()
    sent = [0]
    results, errors = [], []
    deadline = time.perf_counter() + seconds

    def client():
        while True:
            with lock:
                if sent[0] >= requests or time.perf_counter() >= deadline:
                    return
                k = sent[0]
                sent[0] += 1
            try:
                r = one(k)
                with lock:
                    results.append(r)
            except Exception as e:  # noqa: BLE001 - counted and reported
                with lock:
                    errors.append(str(e))

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = [r[0] for r in results]
    ttft = [r[1] for r in results]
    return {
        "concurrency": concurrency, "requests": len(results), "errors": len(errors),
        "first_error": errors[0] if errors else None, "wall_s": wall,
        "requests_per_s": len(results) / wall,
        "completion_tokens_per_s": sum(r[2] for r in results) / wall,
        "generated_tokens_per_s": sum(r[3] for r in results) / wall,
        "latency_ms_p50": percentile(lat, 0.5) * 1e3, "latency_ms_p99": percentile(lat, 0.99) * 1e3,
        "ttft_ms_p50": percentile(ttft, 0.5) * 1e3, "ttft_ms_p99": percentile(ttft, 0.99) * 1e3,
        "latency_ms_mean": statistics.fmean(lat) * 1e3 if lat else float("nan"),
    }
