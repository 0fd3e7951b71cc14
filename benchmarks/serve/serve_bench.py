# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`baton serve` under load, side by side with llama-server (run through
benchmarks/serve/run_serve_bench.sh; docs/performance.md, "Serving").

Three servers, each on loopback with the same threads, each driven by load_test.py at every
concurrency (closed loop, bounded in requests and seconds):
  - baton serve on the bundled word-problems relay (the held-out questions as prompts);
  - baton serve on the batching benchmark's relay: the 155M Qwen2 model in bf16, three stages
    with their own rank-16 adapters and 32-token prefixes, 32 new tokens each, requests of 64
    ids (benchmarks/batching/batch_bench.py's workload);
  - llama-server (built from the pinned llama.cpp sources: benchmarks/llama_cpp/build_llama_tools.sh)
    on the same model's bf16 GGUF with C parallel slots and the same three adapters as GGUF LoRA
    adapters, driven through the same relay by its client (llama_relay.py: one /completion per
    stage, the stage's adapter chosen with the per-request `lora` field, prompt cache on, the
    last stage streamed for its time to first output token).
At each concurrency C a run sends max(min-requests, per-client x C) requests (the
word-problems relay four times as many: its requests take milliseconds), or stops at the time
cap. Writes one JSON file with every run's figures.
"""
import argparse
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "batching"))
import batch_bench  # noqa: E402
import llama_relay  # noqa: E402
import load_test  # noqa: E402


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def wait_ready(url, proc, seconds=300):
    t0 = time.time()
    while time.time() - t0 < seconds:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as r:
                if r.status == 200:
                    return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.2)
    raise RuntimeError("the server did not become ready")


def baton_server(baton, config, threads, concurrency):
    p = subprocess.Popen([baton, "serve", "--config", str(config), "--port", "0", "--threads",
                          str(threads), "--concurrency", str(concurrency), "--queue",
                          str(4 * concurrency)], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    url = "http://127.0.0.1:" + line.split("http://")[1].split(":")[1].split(" ")[0]
    wait_ready(url, p)
    return p, url


def stop(p):
    p.terminate()
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baton", required=True)
    ap.add_argument("--llama-server")
    ap.add_argument("--repo", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--concurrency", default="1,8,32,64")
    ap.add_argument("--per-client", type=int, default=2, help="requests per client at a level")
    ap.add_argument("--min-requests", type=int, default=16, help="requests per level at least")
    ap.add_argument("--seconds", type=float, default=180, help="time cap per level")
    products = ap.add_mutually_exclusive_group()  # neither: baton's default for the CPU
    products.add_argument("--bf16-products", dest="bf16_products", action="store_const",
                          const=True, help="baton's bf16 products required (AVX512-BF16 / AMX)")
    products.add_argument("--f32-products", dest="bf16_products", action="store_const",
                          const=False, help="baton's bf16 weights times f32 activations")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-word-problems", action="store_true",
                    help="only the 155M relay, baton against llama-server")
    a = ap.parse_args()
    levels = [int(x) for x in a.concurrency.split(",")]
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    top = max(levels)
    out = {"threads": a.threads, "per_client": a.per_client, "min_requests": a.min_requests,
           "seconds_cap": a.seconds, "bf16_products": a.bf16_products, "runs": []}

    def count(c):
        return max(a.min_requests, a.per_client * c)

    def record(engine, workload, fig):
        fig = {"engine": engine, "workload": workload, **fig}
        out["runs"].append(fig)
        log(json.dumps(fig))
        Path(a.out).write_text(json.dumps(out, indent=1))

    # 1. The bundled relay.
    questions = [json.loads(l)["question"] for l in
                 open(Path(a.repo) / "models/word-problems/heldout.jsonl")][:256]
    if not a.skip_word_problems:
        p, url = baton_server(a.baton, Path(a.repo) / "models/word-problems/relay.json",
                              a.threads, top)
        for c in levels:
            record("baton", "word-problems", load_test.run(url, "word-problems", questions, c,
                                                           4 * count(c), a.seconds))
        stop(p)

    # 2. The 155M model, three adapters: baton's relay, then llama-server.
    hf, gguf = batch_bench.make_model(work)
    relay, wl = batch_bench.workload(work, hf, 256, a.threads, a.bf16_products)
    spec = json.loads(relay.read_text())
    spec["name"] = "bench-relay"
    relay.write_text(json.dumps(spec))
    prompts = wl["requests"]
    p, url = baton_server(a.baton, relay, a.threads, top)
    for c in levels:
        record("baton", "155m-relay", load_test.run(url, "bench-relay", prompts, c, count(c),
                                                    a.seconds))
    stop(p)
    if a.llama_server:
        # llama-server turns every id into text: a GGUF of the same tensors with a token list.
        models = batch_bench.models
        gguf = work / "qwen2-155m-bf16-tokens.gguf"
        if not gguf.exists():
            models.write_gguf(models.QWEN2, models.random_tensors(models.QWEN2), "bf16", gguf,
                              token_list=True)
        loras = [llama_relay.peft_to_gguf(Path(st["adapter"]), models.QWEN2.arch,
                                          work / f"lora-{st['name']}.gguf")
                 for st in spec["stages"]]
        prefixes = [st["prefix"] for st in spec["stages"]]
        for c in levels:
            ctx = c * (len(max(prefixes, key=len)) + 64 + 2 * wl["max_new"] + 64)
            cmd = [a.llama_server, "-m", str(gguf), "--host", "127.0.0.1", "--port",
                   str(18000 + c), "-np", str(c), "-c", str(ctx), "-t", str(a.threads), "-tb",
                   str(a.threads), "--no-warmup", "--lora-init-without-apply"]
            for lora in loras:
                cmd += ["--lora", str(lora)]
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            url = f"http://127.0.0.1:{18000 + c}"
            wait_ready(url, p)

            def one(k):
                return llama_relay.relay_request("127.0.0.1", 18000 + c, prefixes,
                                                 prompts[k % len(prompts)], wl["max_new"])

            record("llama-server", "155m-relay", load_test.run_clients(one, c, count(c), a.seconds))
            stop(p)
        side = []
        for c in levels:
            b = next(r for r in out["runs"] if r["engine"] == "baton" and
                     r["workload"] == "155m-relay" and r["concurrency"] == c)
            l = next(r for r in out["runs"] if r["engine"] == "llama-server" and
                     r["concurrency"] == c)
            side.append({"concurrency": c, "relays_per_s_ratio": b["requests_per_s"] /
                         l["requests_per_s"], "baton_ttft_ms_p50": b["ttft_ms_p50"],
                         "llama_ttft_ms_p50": l["ttft_ms_p50"]})
            log(f"{c:>3} clients: relays/s x{side[-1]['relays_per_s_ratio']:.2f}, time to first "
                f"output token p50 {b['ttft_ms_p50']:.0f} ms (baton) / {l['ttft_ms_p50']:.0f} ms")
        out["side_by_side"] = side
        Path(a.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
