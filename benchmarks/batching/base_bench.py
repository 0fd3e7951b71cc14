# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The plain base model under batching, baton beside llama.cpp's own `llama-batched-bench`:
both engines do identical work, so the ratio is the engines' and nothing else.

Workload (the issue's and docs/performance.md's "Batched decoding of the base model"): the 155M
Qwen2 benchmark model (benchmarks/llama_cpp/models.py) at each storage (f32, bf16, f16, q8_0,
q4_0; llama.cpp reads the GGUF of the same weights at the same format); N sequences of 128
random prompt ids each, 32 generated ids each, no adapter, f32 K/V in both engines, 2 threads.

- baton: `baton relay --requests F --concurrency N --json` over a one-stage relay (no prefix,
  no adapter, the request as input, max_new 32, no stop ids): all N requests in flight from the
  start, prefill chunked and interleaved with decode by the scheduler.
- llama.cpp: `llama-batched-bench -npp 128 -ntg 32 -npl N -c N*160 -ctk f32 -ctv f32 -t T -tb T
  --output-format jsonl`, everything else at its defaults (n_batch 2048, n_ubatch 512, flash
  attention auto, separate K/V per sequence): its prompt phase for all N, then 32 steps of N rows.

Figures: generated tokens per second over the whole run (llama: N*32 / t; baton: generated /
wall time), and the decode phase alone (llama's speed_tg, S_TG; baton's steps that held only
decode rows). Every (round, storage, N) runs both engines back to back, which goes first flipping
with each, in separate processes; ratios are taken within a pair, then their median over rounds.
`--check-worker` adds, to each pair, benchmarks/llama_cpp/llama_batch_worker.py (the Python
driver of llama.cpp that the relay workload needs, since no llama.cpp tool runs a relay) on the
same workload: its generated tokens/s over llama-batched-bench's, which should be within 10%.
`--isa avx2` caps baton's kernels at AVX2 (the relay file's "host": {"isa": "avx2"}) and needs
llama-batched-bench built for AVX2 (`BATON_LLAMA_ISA=avx2`, which run_batch_bench.sh passes on to
build_llama_tools.sh): both engines as on a CPU without AVX-512. Writes one JSON file with every
run, the ratios and the medians."""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "llama_cpp"))
import models  # noqa: E402

PROMPT, GENERATE = 128, 32


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def cpu_flags() -> list[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            keep = ("avx", "amx", "fma", "f16c")
            return sorted(f for f in line.split(":", 1)[1].split() if f.startswith(keep))
    return []


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def run(cmd: list[str], env) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-3000:]}")
    return p.stdout


def baton_run(baton: str, relay: Path, requests: Path, n: int, env) -> dict:
    out = run([baton, "relay", "--config", str(relay), "--requests", str(requests), "--json",
               "--concurrency", str(n)], env)
    s = json.loads(out.strip().splitlines()[-1])["summary"]
    expected = n * GENERATE
    if s["failed"] or s["generated_tokens"] != expected:
        raise RuntimeError(f"baton generated {s['generated_tokens']} ids (expected {expected}), "
                           f"{s['failed']} failed")
    return {"tps": s["generated_tokens_per_s"], "decode_tps": s["decode_steps_tokens_per_s"],
            "wall_s": s["wall_s"], "rows_per_step": s["mean_rows_per_step"]}


def llama_run(bench: str, gguf: Path, n: int, threads: int, env, extra: list[str]) -> dict:
    out = run([bench, "-m", str(gguf), "-npp", str(PROMPT), "-ntg", str(GENERATE), "-npl", str(n),
               "-c", str(n * (PROMPT + GENERATE)), "-ctk", "f32", "-ctv", "f32",
               "-t", str(threads), "-tb", str(threads), "--output-format", "jsonl", *extra], env)
    rows = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    if len(rows) != 1:
        raise RuntimeError(f"llama-batched-bench printed {len(rows)} result lines:\n{out[-2000:]}")
    r = rows[0]
    return {"tps": n * GENERATE / r["t"], "decode_tps": r["speed_tg"], "wall_s": r["t"],
            "prefill_tps": r["speed_pp"], "flash_attn": r["flash_attn"],
            "n_batch": r["n_batch"], "n_ubatch": r["n_ubatch"]}


def worker_run(workload: Path, gguf: Path, n: int, threads: int, env) -> dict:
    out = run([sys.executable, str(HERE.parent / "llama_cpp" / "llama_batch_worker.py"),
               "--gguf", str(gguf), "--workload", str(workload), "--parallel", str(n),
               "--threads", str(threads)], env)
    r = json.loads(out.strip().splitlines()[-1])
    return {"tps": r["generated_tokens_per_s"], "wall_s": r["wall_s"]}


def write_relay(work: Path, hf: Path, storage: str, threads: int) -> Path:
    relay = {"model": str(hf), "storage": storage, "max_request_tokens": PROMPT,
             "host": {"threads": threads},
             "stages": [{"name": "generate", "prefix": [], "max_new": GENERATE, "stop": [],
                         "input": [{"request": True}]}]}
    path = work / f"base-{storage}.json"
    path.write_text(json.dumps(relay))
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baton", required=True, help="the baton CLI")
    ap.add_argument("--llama-bin", required=True, type=Path,
                    help="folder with llama-batched-bench (benchmarks/llama_cpp/build_llama_tools.sh)")
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--storage", default="bf16,f32,q8_0,q4_0,f16")
    ap.add_argument("--parallel", default="1,4,16,64")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--check-worker", action="store_true",
                    help="also run llama_batch_worker.py on the same workload (against the tool)")
    ap.add_argument("--isa", choices=["avx512", "avx2", "portable"],
                    help="baton's kernel family (default: the best the CPU runs); with avx2, "
                         "llama.cpp must be the AVX2 build (BATON_LLAMA_ISA=avx2)")
    ap.add_argument("--baton-arg", action="append", default=[],
                    help="an extra relay-file host field, KEY=JSON (e.g. bf16_products=false)")
    ap.add_argument("--llama-arg", action="append", default=[],
                    help="an extra llama-batched-bench argument (e.g. --llama-arg=--no-repack where "
                         "its repacked weights crash, as they did on one AMX virtual machine)")
    a = ap.parse_args()
    llama_isa = os.environ.get("BATON_LLAMA_ISA", "native")
    if a.isa == "avx2" and llama_isa != "avx2":
        ap.error("--isa avx2 caps baton only: run with BATON_LLAMA_ISA=avx2 so that "
                 "llama-batched-bench is the AVX2 build too")
    if a.isa:
        a.baton_arg.append(f"isa={json.dumps(a.isa)}")
    storages = a.storage.split(",")
    levels = [int(x) for x in a.parallel.split(",")]
    a.work.mkdir(parents=True, exist_ok=True)
    m = models.prepare(a.work, models.QWEN2.name, storages)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    rng = np.random.default_rng(11)
    requests = [[int(x) for x in rng.integers(3, models.QWEN2.vocab, PROMPT)]
                for _ in range(max(levels))]
    req_files = {}
    for n in levels:
        f = a.work / f"base-requests-{n}.jsonl"
        f.write_text("".join(json.dumps({"ids": r}) + "\n" for r in requests[:n]))
        req_files[n] = f
    worker_files = {}
    for n in levels:
        f = a.work / f"base-worker-{n}.json"
        f.write_text(json.dumps({"prefixes": [[]], "requests": requests[:n], "max_new": GENERATE,
                                 "inputs": [["request"]]}))
        worker_files[n] = f
    relays = {}
    for st in storages:
        relays[st] = write_relay(a.work, m["hf"], st, a.threads)
        if a.baton_arg:
            spec = json.loads(relays[st].read_text())
            for kv in a.baton_arg:
                k, v = kv.split("=", 1)
                spec["host"][k] = json.loads(v)
            relays[st].write_text(json.dumps(spec))
    bench = str(a.llama_bin / "llama-batched-bench")

    runs = []
    for rnd in range(a.rounds):
        for si, st in enumerate(storages):
            for li, n in enumerate(levels):
                order = ["baton", "llama.cpp"] + (["worker"] if a.check_worker else [])
                if (rnd + si + li) % 2:
                    order.reverse()
                pair = {}
                for eng in order:
                    if eng == "baton":
                        pair[eng] = baton_run(a.baton, relays[st], req_files[n], n, env)
                    elif eng == "worker":
                        pair[eng] = worker_run(worker_files[n], m["gguf"][st], n, a.threads, env)
                    else:
                        pair[eng] = llama_run(bench, m["gguf"][st], n, a.threads, env,
                                              a.llama_arg)
                b, l = pair["baton"], pair["llama.cpp"]
                row = {"round": rnd, "storage": st, "parallel": n, "baton": b, "llama.cpp": l,
                       "ratio": b["tps"] / l["tps"], "decode_ratio": b["decode_tps"] / l["decode_tps"]}
                if "worker" in pair:
                    row["worker"] = pair["worker"]
                    row["worker_ratio"] = pair["worker"]["tps"] / l["tps"]
                runs.append(row)
                log(f"round {rnd} {st:>5} N={n:<3} baton {b['tps']:8.1f} tok/s (decode "
                    f"{b['decode_tps']:8.1f})  llama.cpp {l['tps']:8.1f} (S_TG {l['decode_tps']:8.1f})"
                    f"  x{row['ratio']:.2f} (decode x{row['decode_ratio']:.2f})" +
                    (f"  worker/tool {row['worker_ratio']:.2f}" if "worker" in row else ""))

    summary = []
    for st in storages:
        for n in levels:
            rs = [r for r in runs if r["storage"] == st and r["parallel"] == n]
            summary.append({
                "storage": st, "parallel": n,
                "ratio": statistics.median(r["ratio"] for r in rs),
                "ratio_min": min(r["ratio"] for r in rs), "ratio_max": max(r["ratio"] for r in rs),
                "decode_ratio": statistics.median(r["decode_ratio"] for r in rs),
                "baton_tps": statistics.median(r["baton"]["tps"] for r in rs),
                "llama_tps": statistics.median(r["llama.cpp"]["tps"] for r in rs),
                "baton_decode_tps": statistics.median(r["baton"]["decode_tps"] for r in rs),
                "llama_decode_tps": statistics.median(r["llama.cpp"]["decode_tps"] for r in rs),
                **({"worker_ratio": statistics.median(r["worker_ratio"] for r in rs)}
                   if a.check_worker else {})})
    out = {"workload": {"model": models.QWEN2.name, "prompt": PROMPT, "generate": GENERATE,
                        "threads": a.threads, "rounds": a.rounds, "kv": "f32",
                        "baton_host": a.baton_arg, "baton_isa": a.isa,
                        "peer": "llama-batched-bench", "peer_args": a.llama_arg,
                        "peer_isa": llama_isa, "peer_bin": str(a.llama_bin)},
           "cpu": {"model": cpu_model(), "flags": cpu_flags()},
           "summary": summary, "runs": runs}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
    print(f"{'storage':>7} {'N':>3} {'baton tok/s':>12} {'llama tok/s':>12} {'x llama':>8} "
          f"{'range':>11} {'decode':>9} {'S_TG':>9} {'x S_TG':>7}" +
          (f" {'worker/tool':>11}" if a.check_worker else ""))
    for r in summary:
        print(f"{r['storage']:>7} {r['parallel']:>3} {r['baton_tps']:>12.1f} {r['llama_tps']:>12.1f} "
              f"{r['ratio']:>8.2f} {r['ratio_min']:>5.2f}-{r['ratio_max']:<5.2f} "
              f"{r['baton_decode_tps']:>9.1f} {r['llama_decode_tps']:>9.1f} {r['decode_ratio']:>7.2f}" +
              (f" {r['worker_ratio']:>11.2f}" if a.check_worker else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
