# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Many requests through a three-stage relay at once: baton's batched relay at 1/4/16/64
concurrent requests, side by side in one run with (a) the same requests one after another
through the relay itself (`baton relay --requests F --sequential`, run beside every parallelism) and (b) llama.cpp's batched
decoding of the same model with the same token counts and the same number of parallel
sequences (llama_batch_worker.py).

Run through benchmarks/run_batch_bench.sh. Workload (docs/performance.md, "Batching"): the
155M Qwen2 benchmark model (benchmarks/llama_cpp/models.py) in bf16; three stages, each with a
32-token pre-warmed prefix and its own rank-16 adapter on q/k/v/o: extract reads the request,
reason the request and extract's output, verify reason's output; max_new 32 per stage, one
cycle; requests of 64 random ids; 2 threads. Every engine runs in its own process; at each
parallelism baton and llama.cpp alternate (which goes first flips with the round). Writes one
JSON file: each run's figures, the ratios within a round, and their medians over rounds."""

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "llama_cpp"))
import models  # noqa: E402

PREFIX, REQUEST, MAX_NEW, RANK = 32, 64, 32, 16
STAGES = [("extract", ["request"]), ("reason", ["request", 0]), ("verify", [1])]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def bf16_bits(a: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bit patterns, rounded to nearest even (what torch's .to(bfloat16) does
    for finite values)."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def write_safetensors(path: Path, tensors: dict[str, np.ndarray], dtype: str) -> None:
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = tensors[name]
        raw = bf16_bits(a).tobytes() if dtype == "BF16" else \
            np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def make_model(work: Path, gguf_too: bool = True) -> tuple[Path, Path]:
    """The bf16 Hugging Face folder and the bf16 GGUF of the benchmark model (cached; the GGUF
    only with `gguf_too`: writing it needs gguf-py)."""
    s = models.QWEN2
    hf, gguf = work / f"{s.name}-bf16", work / f"{s.name}-bf16.gguf"
    if not (hf / "model.safetensors").exists() or (gguf_too and not gguf.exists()):
        log(f"writing {s.name} (bf16) into {work}")
        t = models.random_tensors(s)
        hf.mkdir(parents=True, exist_ok=True)
        cfg = models.hf_config(s)
        cfg["torch_dtype"] = "bfloat16"
        (hf / "config.json").write_text(json.dumps(cfg, indent=2))
        write_safetensors(hf / "model.safetensors", t, "BF16")
        if gguf_too:
            models.write_gguf(s, t, "bf16", gguf)
    return hf, gguf


def make_adapter(folder: Path, seed: int) -> Path:
    """A PEFT LoRA adapter, rank 16 on q/k/v/o, random A and B (B nonzero, so it changes the
    outputs), f32."""
    s = models.QWEN2
    if (folder / "adapter_model.safetensors").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    q, kv, h = s.heads * s.head_dim, s.kv_heads * s.head_dim, s.hidden
    shapes = {"q_proj": (q, h), "k_proj": (kv, h), "v_proj": (kv, h), "o_proj": (h, q)}
    t = {}
    for i in range(s.layers):
        for m, (out, inp) in shapes.items():
            p = f"base_model.model.model.layers.{i}.self_attn.{m}."
            t[p + "lora_A.weight"] = rng.uniform(-1, 1, (RANK, inp)).astype(np.float32) / np.sqrt(inp)
            t[p + "lora_B.weight"] = rng.uniform(-1, 1, (out, RANK)).astype(np.float32) * 0.05
    write_safetensors(folder / "adapter_model.safetensors", t, "F32")
    (folder / "adapter_config.json").write_text(json.dumps({
        "peft_type": "LORA", "r": RANK, "lora_alpha": 2 * RANK, "bias": "none",
        "target_modules": list(shapes), "use_rslora": False}))
    return folder


def ids(rng, n: int) -> list[int]:
    return [int(x) for x in rng.integers(3, models.QWEN2.vocab, n)]


def workload(work: Path, hf: Path, requests: int, threads: int, bf16_products: bool | None,
             seed: int = 7) -> tuple[Path, dict]:
    """The relay file and its requests. bf16_products None leaves baton's default (the bf16
    products where the CPU has AVX512-BF16 or AMX); True or False forces them on or off."""
    rng = np.random.default_rng(seed)
    prefixes = [ids(rng, PREFIX) for _ in STAGES]
    stages = []
    for k, (name, inputs) in enumerate(STAGES):
        stages.append({
            "name": name, "prefix": prefixes[k], "max_new": MAX_NEW, "stop": [],
            "adapter": str(make_adapter(work / f"adapter-{name}", 100 + k)),
            "input": [{"request": True} if x == "request" else {"out": STAGES[x][0]}
                      for x in inputs]})
    host = {"threads": threads}
    if bf16_products is not None:
        host["bf16_products"] = bf16_products
    relay = {"model": str(hf), "stages": stages, "max_request_tokens": REQUEST, "host": host}
    (work / "relay.json").write_text(json.dumps(relay))
    reqs = [ids(rng, REQUEST) for _ in range(requests)]
    return work / "relay.json", {"prefixes": prefixes, "requests": reqs, "max_new": MAX_NEW,
                                 "inputs": [x for _, x in STAGES]}


def run_json_lines(cmd: list[str], env) -> dict:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def baton(baton_bin: str, relay: Path, reqs: Path, env, concurrency: int | None) -> dict:
    mode = ["--sequential"] if concurrency is None else ["--concurrency", str(concurrency)]
    out = run_json_lines([baton_bin, "relay", "--config", str(relay), "--requests", str(reqs),
                          "--json", *mode], env)["summary"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baton", required=True, help="the baton CLI")
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--parallel", default="1,4,16,64")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sequential-requests", type=int, default=8,
                    help="requests of the sequential baseline run beside each parallelism")
    products = ap.add_mutually_exclusive_group()
    products.add_argument("--bf16-products", dest="bf16_products", action="store_const",
                          const=True, help="baton's bf16 products required (AVX512-BF16 / AMX)")
    products.add_argument("--f32-products", dest="bf16_products", action="store_const",
                          const=False, help="baton's bf16 weights times f32 activations")
    ap.add_argument("--min-requests", type=int, default=16,
                    help="requests per run: max(this, parallelism)")
    ap.add_argument("--no-llama", action="store_true",
                    help="baton batched beside baton sequential only (no llama-cpp-python "
                         "needed; the relay beside llama.cpp is the serving benchmark's, "
                         "benchmarks/serve)")
    a = ap.parse_args()
    levels = [int(x) for x in a.parallel.split(",")]
    a.work.mkdir(parents=True, exist_ok=True)
    hf, gguf = make_model(a.work, gguf_too=not a.no_llama)
    n_req = max([a.min_requests] + levels)
    relay, wl = workload(a.work, hf, n_req, a.threads, a.bf16_products)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))

    def files(n: int) -> tuple[Path, Path]:
        r = a.work / f"requests-{n}.jsonl"
        r.write_text("".join(json.dumps({"ids": x}) + "\n" for x in wl["requests"][:n]))
        w = a.work / f"workload-{n}.json"
        w.write_text(json.dumps(dict(wl, requests=wl["requests"][:n])))
        return r, w

    # KV bytes per request in flight: each stage's slot (input + max_new positions; the
    # prefixes are shared), f32 K and V for every layer.
    s = models.QWEN2
    per_pos = 2 * s.kv_heads * s.head_dim * 4 * s.layers
    slot_positions = {"extract": REQUEST + MAX_NEW, "reason": REQUEST + 2 * MAX_NEW,
                      "verify": 2 * MAX_NEW}
    runs = []
    seq_file, _ = files(a.sequential_requests)
    for rnd in range(a.rounds):
        for i, n in enumerate(levels):
            r, w = files(max(a.min_requests, n))
            # The three side by side, the first flipping with round and level: this machine's
            # speed drifts within minutes, so each ratio is taken between neighbouring runs.
            order = ["sequential", "baton"] + ([] if a.no_llama else ["llama"])
            if (rnd + i) % 2:
                order.reverse()
            for eng in order:
                log(f"round {rnd}, {n} in flight: {eng}")
                if eng == "sequential":
                    res = baton(a.baton, relay, seq_file, env, None)
                    runs.append({"round": rnd, "engine": "baton-sequential", "parallel": n, **res})
                    log(f"  {res['generated_tokens_per_s']:.1f} tok/s")
                elif eng == "baton":
                    res = baton(a.baton, relay, r, env, n)
                    runs.append({"round": rnd, "engine": "baton-batched", "parallel": n, **res})
                    log(f"  {res['generated_tokens_per_s']:.1f} tok/s, "
                        f"{res['mean_rows_per_step']:.1f} rows/step")
                else:
                    res = run_json_lines([sys.executable, str(HERE.parent / "llama_cpp" /
                                                              "llama_batch_worker.py"),
                                          "--gguf", str(gguf), "--workload", str(w),
                                          "--parallel", str(n), "--threads", str(a.threads)], env)
                    runs.append({"round": rnd, "engine": "llama.cpp", **res})
                    log(f"  {res['generated_tokens_per_s']:.1f} tok/s")

    def pick(eng, n, rnd):
        return next(x for x in runs if x["engine"] == eng and x["parallel"] == n
                    and x["round"] == rnd)

    summary = []
    for n in levels:
        rows = []
        for rnd in range(a.rounds):
            b, sq = pick("baton-batched", n, rnd), pick("baton-sequential", n, rnd)
            nan = {"generated_tokens_per_s": float("nan"), "latency_ms_p50": float("nan"),
                   "latency_ms_p99": float("nan")}
            l = nan if a.no_llama else pick("llama.cpp", n, rnd)
            rows.append({"tps": b["generated_tokens_per_s"], "llama": l["generated_tokens_per_s"],
                         "seq": sq["generated_tokens_per_s"],
                         "p50": b["latency_ms_p50"], "p99": b["latency_ms_p99"],
                         "llama_p50": l["latency_ms_p50"], "llama_p99": l["latency_ms_p99"],
                         "vs_seq": b["generated_tokens_per_s"] / sq["generated_tokens_per_s"],
                         "vs_llama": b["generated_tokens_per_s"] / l["generated_tokens_per_s"],
                         "rows": b["mean_rows_per_step"]})
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        summary.append({"parallel": n, **med,
                        "kv_bytes_per_request": per_pos * sum(slot_positions.values())})
    out = {"workload": {"model": s.name, "storage": "bf16", "bf16_products": a.bf16_products,
                        "stages": len(STAGES),
                        "prefix": PREFIX, "request": REQUEST, "max_new": MAX_NEW, "rank": RANK,
                        "threads": a.threads, "requests": n_req},
           "summary": summary, "runs": runs}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
    print(f"{'N':>3} {'baton tok/s':>12} {'sequential':>11} {'llama.cpp':>10} {'x seq':>6} "
          f"{'x llama':>8} {'p50 ms':>8} {'p99 ms':>8} {'rows/step':>9}")
    for r in summary:
        print(f"{r['parallel']:>3} {r['tps']:>12.1f} {r['seq']:>11.1f} {r['llama']:>10.1f} "
              f"{r['vs_seq']:>6.2f} {r['vs_llama']:>8.2f} {r['p50']:>8.0f} {r['p99']:>8.0f} "
              f"{r['rows']:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
