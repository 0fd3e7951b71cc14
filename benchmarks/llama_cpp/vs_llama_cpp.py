# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""baton against llama.cpp, side by side, on the same models, threads and token counts.

Run through benchmarks/run_vs_llama_cpp.sh (it builds decode_bench and this environment).
For every round, model and precision the two engines run alternately (which goes first
flips every round), each in a fresh process that loads the model and then times a warm-up
and one measured pass; the ratios are taken within a round, and the medians over rounds are
reported, because the machine's speed drifts between rounds. Each round also measures the
read bandwidth (decode_bench's STREAM-like test), and every decode sample is followed by a
short read test of its own, which its bytes/s are set against (the bandwidth drifts within a
round as well).
In the "busy" condition the benchmark runs its own bounded busy loop pinned to one core while
both engines measure, to compare how much each loses when a core is taken."""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import models  # noqa: E402

# q8_0 / q4_0: baton's block-quantized storages against llama.cpp's GGUF of the same format
# (models.write_gguf: the same quantizer, the same f16 fallbacks).
PRECISIONS = ("f32", "f16", "bf16", "q8_0", "q4_0")
# "bf16p": the bf16 model with baton's opt-in bf16 products in prefill (decode_bench
# --bf16-products: activations rounded to bf16, AVX512-BF16), against llama.cpp's bf16 GGUF.
BF16_PRODUCTS = "bf16p"


def storage_of(precision: str) -> str:
    return "bf16" if precision == BF16_PRODUCTS else precision


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run_json(cmd: list[str], env=None) -> dict:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout)


class Engines:
    def __init__(self, decode_bench: str, threads: int, isa: str | None = None):
        self.decode_bench = decode_bench
        self.threads = threads
        # baton's kernels capped at this instruction set (decode_bench --isa), to stand for a
        # CPU without the newer ones; llama.cpp keeps its build for this CPU
        self.isa = isa
        # the same thread count for both; OpenMP binds nothing (as llama.cpp binds nothing)
        self.env = dict(os.environ, OMP_NUM_THREADS=str(threads))

    def baton(self, hf_dir: Path, precision: str, prompt: int, decode: int, openmp=False) -> dict:
        extra = ["--bf16-products"] if precision == BF16_PRODUCTS else []
        if self.isa:
            extra += ["--isa", self.isa]
        out = run_json([self.decode_bench, "--model", str(hf_dir), "--storage", storage_of(precision),
                        "--no-bandwidth", "--runs", "1", "--prompt", str(prompt), "--decode",
                        str(decode), "--threads", str(self.threads)] + extra + (["--openmp"] if openmp else []),
                       self.env)
        r = out["results"][0]
        return {"prefill_tokens_per_s": r["prefill_tokens_per_s"],
                "decode_tokens_per_s": r["decode_tokens_per_s"],
                "weight_bytes_per_step": r["weight_bytes_per_step"],
                "greedy_tokens": r["greedy_tokens"], "kernels": out.get("kernels")}

    def llama(self, gguf: Path, prompt: int, decode: int, tokens=None) -> dict:
        cmd = [sys.executable, str(HERE / "llama_worker.py"), "--gguf", str(gguf), "--prompt",
               str(prompt), "--decode", str(decode), "--threads", str(self.threads)]
        if tokens:
            cmd += ["--tokens", ",".join(map(str, tokens))]
        return run_json(cmd, self.env)

    def bandwidth(self, mib: int) -> dict:
        out = run_json([self.decode_bench, "--storage", "", "--stream-mib", str(mib), "--runs",
                        "3", "--threads", str(self.threads)], self.env)
        return out["bandwidth_gb_per_s"]


class BusyCore:
    """A busy loop on the last CPU, bounded in time so it cannot outlive a crashed benchmark."""

    def __init__(self, max_s: int):
        self.max_s = max_s
        self.proc = None

    def __enter__(self):
        cpu = max(os.sched_getaffinity(0))
        code = (f"import os,time\nos.sched_setaffinity(0,{{{cpu}}})\n"
                f"end=time.monotonic()+{self.max_s}\nwhile time.monotonic()<end: pass\n")
        self.proc = subprocess.Popen([sys.executable, "-c", code])
        time.sleep(0.2)
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def prepare_models(work: Path, names: list[str], precisions) -> dict:
    # f32 as well: the greedy-agreement check runs on it whatever is timed
    wanted = {"f32", *precisions}
    out = {}
    for name in names:
        m = models.prepare(work, name, sorted({storage_of(p) for p in wanted}))
        m["gguf"] = {p: m["gguf"][storage_of(p)] for p in wanted}  # bf16p: the bf16 file
        out[name] = m
    return out


def check_golden_conversion(e: Engines, root: Path, work: Path, model: str = "qwen-e") -> dict:
    """The converter against llama.cpp's golden outputs: tests/golden/<model>, converted here
    at f32, must give golden.json's greedy tokens (they came from llama.cpp with the
    project's own conversion), so the GGUF files mean what baton's checkpoints mean."""
    golden = json.loads((root / "tests/golden/golden.json").read_text())
    cfg, t = models.read_hf(root / "tests/golden" / model)
    s = models.shape_of_config(model, cfg)
    path = work / f"{model}-f32.gguf"
    models.write_gguf(s, t, "f32", path, tied=cfg.get("tie_word_embeddings", False))
    runs = [r for r in golden["runs"] if r.get("model") == model and not r.get("adapter")]
    results = []
    for r in runs:
        got = e.llama(path, 0, len(r["tokens"]) - 1, tokens=r["prompt"])["greedy_tokens"]
        results.append({"prompt": r["prompt"], "agree": got == r["tokens"]})
    return {"model": model, "runs": len(results), "agree": all(x["agree"] for x in results) and bool(results),
            "details": results}


def ratio(a, b):
    return a / b if b else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--decode-bench", required=True)
    ap.add_argument("--root", required=True, help="the repository (for tests/golden)")
    ap.add_argument("--work", required=True, help="where the models go (cached between runs)")
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--models", default="qwen2-155m,llama-106m")
    ap.add_argument("--precisions", default="f32,f16,bf16",
                    help=f"of f32, f16, bf16, q8_0, q4_0 (block-quantized: baton's storage and llama.cpp's "
                         f"GGUF type of that name) and {BF16_PRODUCTS} (bf16 with baton's opt-in bf16 products)")
    ap.add_argument("--isa", choices=("avx512", "avx2", "portable"),
                    help="cap baton's kernels at this instruction set (decode_bench --isa; avx2: as on a CPU "
                         "without AVX-512); llama.cpp runs the build of its environment: for this CPU by "
                         "default, AVX2 only with BATON_LLAMA_ISA=avx2 (llama_cpp/pyenv.sh)")
    ap.add_argument("--busy-rounds", type=int, default=7, help="0: no busy-core condition")
    ap.add_argument("--busy-models", default="qwen2-155m")
    ap.add_argument("--stream-mib", type=int, default=512)
    ap.add_argument("--adjacent-read-mib", type=int, default=256,
                    help="the read test right after each decode sample (its bandwidth fraction)")
    ap.add_argument("--workloads", default="p128_d64,p512",
                    help="p128_d64: 128-token prefill then 64 decode steps; p512: 512-token prefill")
    ap.add_argument("--no-openmp", dest="openmp_too", action="store_false",
                    help="skip baton's OpenMP variant (run beside the pool for the decode workload)")
    a = ap.parse_args()

    root, work = Path(a.root), Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    e = Engines(a.decode_bench, a.threads, a.isa)
    precisions = a.precisions.split(",")
    unknown = [p for p in precisions if p not in PRECISIONS + (BF16_PRODUCTS,)]
    if unknown:
        ap.error(f"unknown precision {', '.join(unknown)}")
    names = a.models.split(",")
    ms = prepare_models(work, names, precisions)
    result = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                          "lscpu": subprocess.run(["lscpu"], capture_output=True, text=True).stdout,
                          "loadavg_start": os.getloadavg()},
              "threads": a.threads, "rounds": a.rounds, "busy_rounds": a.busy_rounds,
              "baton_isa": a.isa,  # null: the best this CPU runs
              "models": {n: {**m["shape"].__dict__, "parameters": m["shape"].parameters()}
                         for n, m in ms.items()}}

    log("vs_llama_cpp: checking the GGUF conversion against the golden llama.cpp tokens")
    result["golden_conversion_check"] = check_golden_conversion(e, root, work)
    log(f"  qwen-e: {result['golden_conversion_check']['runs']} runs, agree = {result['golden_conversion_check']['agree']}")

    # Same computation: greedy tokens of both engines at f32 on every benchmark model.
    result["greedy_agreement"] = {}
    for n, m in ms.items():
        run = e.baton(m["hf"], "f32", 128, 32)
        result["baton_kernels"] = run["kernels"]  # what --isa left baton's decode kernels on
        b = run["greedy_tokens"]
        lrun = e.llama(m["gguf"]["f32"], 128, 32)
        result["llama_system_info"] = lrun.get("system_info")  # the instruction sets its build uses
        ll = lrun["greedy_tokens"]
        same = next((i for i, (x, y) in enumerate(zip(b, ll)) if x != y), len(b))
        result["greedy_agreement"][n] = {"baton": b, "llama_cpp": ll, "agree": b == ll, "first_difference": same}
        log(f"  {n} f32 greedy tokens agree: {b == ll} (first difference at {same})")

    # (condition, prompt, decode): decode after a 128-token prompt; prefill alone at 512.
    workloads = [w for w in (("p128_d64", 128, 64), ("p512", 512, 0)) if w[0] in a.workloads.split(",")]
    samples = []
    conditions = [("idle", a.rounds, names)]
    if a.busy_rounds:
        conditions.append(("busy", a.busy_rounds, a.busy_models.split(",")))
    total_rounds = max(r for _, r, _ in conditions)
    for rnd in range(total_rounds):
        bw = e.bandwidth(a.stream_mib)
        log(f"round {rnd + 1}/{total_rounds}: read {bw['read']:.1f} GB/s, load {os.getloadavg()[0]:.1f}")
        for cond, nrounds, cnames in conditions:
            if rnd >= nrounds:
                continue
            ctxm = BusyCore(600) if cond == "busy" else None
            if ctxm:
                ctxm.__enter__()
            try:
                for n in cnames:
                    m = ms[n]
                    for p in precisions:
                        for wl, prompt, decode in workloads:
                            order = ("baton", "llama") if (rnd % 2 == 0) else ("llama", "baton")
                            if decode and a.openmp_too:  # baton on OpenMP as well: the pool's effect
                                order = order + ("baton_omp",)
                            got = {}
                            for eng in order:
                                got[eng] = (e.baton(m["hf"], p, prompt, decode) if eng == "baton"
                                            else e.baton(m["hf"], p, prompt, decode, openmp=True) if eng == "baton_omp"
                                            else e.llama(m["gguf"][p], prompt, decode))
                                if decode:
                                    # The machine's bandwidth drifts within a round (shared host:
                                    # 33-63 GB/s within minutes), so each decode sample gets a read
                                    # test of its own, run right after it, for its fraction.
                                    got[eng]["read_after"] = e.bandwidth(a.adjacent_read_mib)["read"]
                            s = {"round": rnd, "condition": cond, "model": n, "precision": p,
                                 "workload": wl, "bandwidth": bw, "first": order[0],
                                 "loadavg": os.getloadavg()}  # the machine may be shared
                            for eng in got:
                                s[eng] = {k: got[eng][k] for k in ("prefill_tokens_per_s", "decode_tokens_per_s", "read_after")
                                          if k in got[eng]}
                            s["weight_bytes_per_step"] = got["baton"]["weight_bytes_per_step"]
                            samples.append(s)
                            log(f"  {cond} {n} {p} {wl}: baton prefill {s['baton']['prefill_tokens_per_s']:.0f} "
                                f"decode {s['baton']['decode_tokens_per_s']:.1f} | llama.cpp prefill "
                                f"{s['llama']['prefill_tokens_per_s']:.0f} decode {s['llama']['decode_tokens_per_s']:.1f}"
                                + (f" | baton/OpenMP decode {s['baton_omp']['decode_tokens_per_s']:.1f}" if "baton_omp" in s else ""))
            finally:
                if ctxm:
                    ctxm.__exit__(None, None, None)
        # after every round, so an interrupted run still leaves its rounds
        result["samples"] = samples
        result["rounds_done"] = rnd + 1
        result["summary"] = summarize(samples, names, precisions)
        Path(a.out).write_text(json.dumps(result, indent=1))
    result["samples"] = samples
    result["summary"] = summarize(samples, names, precisions)
    result["machine"]["loadavg_end"] = os.getloadavg()
    Path(a.out).write_text(json.dumps(result, indent=1))
    print_table(result["summary"])
    log(f"vs_llama_cpp: wrote {a.out}")
    return 0


def read_of(s, eng) -> float:
    """The read bandwidth a decode sample is set against: the test run right after it, or
    (older JSON) the round's test at its start."""
    return s[eng].get("read_after", s["bandwidth"]["read"])


def fraction(s, eng) -> float:
    return s["weight_bytes_per_step"] * s[eng]["decode_tokens_per_s"] / 1e9 / read_of(s, eng)


def summarize(samples, names, precisions) -> dict:
    """Median over rounds of per-round ratios (baton / llama.cpp), the noise as the
    min..max of those ratios, the busy/idle loss of each engine and decode's bandwidth
    fraction (weight bytes per step x tokens/s over the read bandwidth measured right after
    that sample)."""
    def pick(cond, n, p, wl):
        return [s for s in samples if (s["condition"], s["model"], s["precision"], s["workload"]) == (cond, n, p, wl)]

    def stats(v):
        v = [x for x in v if x == x]
        return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)} if v else None

    out = {}
    for n in names:
        for cond in ("idle", "busy"):
            for p in precisions:
                d = pick(cond, n, p, "p128_d64")
                pf = pick(cond, n, p, "p512")
                if not d:
                    continue
                key = f"{cond}/{n}/{p}"
                out[key] = {
                    "decode_ratio": stats([ratio(s["baton"]["decode_tokens_per_s"], s["llama"]["decode_tokens_per_s"]) for s in d]),
                    "prefill128_ratio": stats([ratio(s["baton"]["prefill_tokens_per_s"], s["llama"]["prefill_tokens_per_s"]) for s in d]),
                    "prefill512_ratio": stats([ratio(s["baton"]["prefill_tokens_per_s"], s["llama"]["prefill_tokens_per_s"]) for s in pf]),
                    "baton_decode_tokens_per_s": stats([s["baton"]["decode_tokens_per_s"] for s in d]),
                    "llama_decode_tokens_per_s": stats([s["llama"]["decode_tokens_per_s"] for s in d]),
                    "baton_prefill128_tokens_per_s": stats([s["baton"]["prefill_tokens_per_s"] for s in d]),
                    "llama_prefill128_tokens_per_s": stats([s["llama"]["prefill_tokens_per_s"] for s in d]),
                    "baton_prefill512_tokens_per_s": stats([s["baton"]["prefill_tokens_per_s"] for s in pf]),
                    "llama_prefill512_tokens_per_s": stats([s["llama"]["prefill_tokens_per_s"] for s in pf]),
                    "baton_bandwidth_fraction": stats([fraction(s, "baton") for s in d]),
                    "llama_bandwidth_fraction": stats([fraction(s, "llama") for s in d]),
                    "baton_read_after_gb_per_s": stats([read_of(s, "baton") for s in d]),
                }
            # 16-bit decode target: baton bf16 against llama.cpp's better of bf16 / f16, per round
            b16, f16 = pick(cond, n, "bf16", "p128_d64"), pick(cond, n, "f16", "p128_d64")
            if b16 and f16:
                best = [ratio(x["baton"]["decode_tokens_per_s"], max(x["llama"]["decode_tokens_per_s"], y["llama"]["decode_tokens_per_s"]))
                        for x, y in zip(b16, f16) if x["round"] == y["round"]]
                out[f"{cond}/{n}/bf16_vs_llama_best16"] = {"decode_ratio": stats(best)}
        # busy/idle: how much of its idle speed each engine keeps with one core taken
        for p in precisions:
            idle, busy = pick("idle", n, p, "p128_d64"), pick("busy", n, p, "p128_d64")
            if busy:
                keep = {}
                for eng in ("baton", "llama", "baton_omp"):
                    for field in ("decode_tokens_per_s", "prefill_tokens_per_s"):
                        iv = [s[eng][field] for s in idle if eng in s]
                        bv = [s[eng][field] for s in busy if eng in s]
                        if iv and bv:
                            keep[f"{eng}_{field}_busy_over_idle"] = statistics.median(bv) / statistics.median(iv)
                out[f"loss/{n}/{p}"] = keep
    return out


def print_table(summary: dict) -> None:
    def f(st):
        return "-" if not st else f"{st['median']:.2f} ({st['min']:.2f}-{st['max']:.2f}, n={st['n']})"
    print("| condition/model/precision | decode | prefill 128 | prefill 512 | baton decode / read BW | llama.cpp decode / read BW |")
    print("| --- | --- | --- | --- | --- | --- |")
    for k, v in summary.items():
        if k.startswith("loss/"):
            continue
        if "prefill128_ratio" in v:
            print(f"| {k} | {f(v['decode_ratio'])} | {f(v['prefill128_ratio'])} | {f(v['prefill512_ratio'])} | "
                  f"{f(v['baton_bandwidth_fraction'])} | {f(v['llama_bandwidth_fraction'])} |")
        else:
            print(f"| {k} | {f(v['decode_ratio'])} | | | | |")
    for k, v in summary.items():
        if k.startswith("loss/"):
            print(k, {x: round(y, 3) for x, y in v.items()})


if __name__ == "__main__":
    sys.exit(main())
