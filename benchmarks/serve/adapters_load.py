# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Adapters under load and churn, on loopback, bounded: `baton serve` with the demo model and 8
random PEFT adapters (tests/serve/lora_fixture.py: ranks 1..32, different targets), 4 of them
served from the start and 4 loaded and unloaded in turn every second, while C clients send
completions mixing the base and all 8 for S seconds (default 64 clients, 60 s).

  adapters_load.py BATON REPO WORK [--seconds 60] [--clients 64] [--period 1] [--json OUT]

--period P: one load or unload every P seconds (the churn takes its 4 adapters in turn, each
loaded at one turn and unloaded at the next). An unload drains first, as an operator (or the
gateway, once the adapter leaves a pod's /v1/models) does: clients stop picking the adapter,
and the unload is retried while it answers 409 (its requests still in flight), within the
period. Clients keep naming unloaded adapters: those get 404.

Checks, each a failure (exit 1) when it does not hold:
  - every answer equals the same request sent alone to a server started with that one adapter
    (text and finish reason; references made first, adapter by adapter);
  - none lost: every request is answered 200, or 404 model_not_found only when its adapter was
    unloaded at some moment while it was in flight (by the churn's own log); nothing else;
  - memory flat: the server's RSS at the end is within 8 MiB of its RSS after the warm-up (the
    first quarter of the run);
  - the metrics at each scrape (after every load/unload, parsed by prometheus_client) agree with
    the state the churn knows: the running and waiting adapters are registered ones, at most
    max_lora run, baton_adapters{state="registered"} counts the registered set, running requests
    fit the slots and the clients.
Prints (and with --json writes) the figures: requests, answers/s, latency p50/p99, loads,
unloads, 409s, 404s, evictions, reads from disk, RSS, and the CPU's flags.
"""
import json
import os
import random
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "..", "tests")
sys.path[:0] = [os.path.join(TESTS, "serve"), os.path.join(TESTS, "reference"),
                os.path.join(TESTS, "chat_template")]
from reference_python import reexec_under_serve_python  # noqa: E402

reexec_under_serve_python(__file__)

import openai  # noqa: E402

from adapter_harness import Server, complete, names, references, tokenize, value  # noqa: E402
from chatml_folder import chatml_folder  # noqa: E402
from lora_fixture import adapters  # noqa: E402


def arg(flag, default):
    return type(default)(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else default


BATON, REPO, WORK = sys.argv[1:4]
SECONDS = arg("--seconds", 60.0)
CLIENTS = arg("--clients", 64)
PERIOD = arg("--period", 1.0)
OUT = arg("--json", "")
MAX_TOKENS = 12
MAX_LORAS, MAX_CPU_LORAS, CONCURRENCY = 4, 6, 8
DEMO = os.path.join(REPO, "models", "word-problems")
problems = []


def fail(what):
    print("FAIL  " + what, flush=True)
    problems.append(what)


os.makedirs(WORK, exist_ok=True)
FOLDER = chatml_folder(DEMO, os.path.join(WORK, "chatml-demo"))
ADS = adapters(os.path.join(WORK, "adapters"), 8)
STABLE, CHURN = ADS[:4], ADS[4:]
questions = [line.strip() for line in open(os.path.join(DEMO, "demo_questions.txt"))
             if line.strip() and not line.startswith("#")][:3]
REQUESTS = [tokenize(BATON, os.path.join(FOLDER, "tokenizer.json"), q) for q in questions]
t_ref = time.time()
ref = references(BATON, FOLDER, ADS, REQUESTS, MAX_TOKENS)
solo = Server(BATON, "--model", FOLDER, "--model-name", "base")
try:
    for k, ids in enumerate(REQUESTS):
        ref[("base", k)] = complete(solo, "base", ids, MAX_TOKENS)
finally:
    solo.stop()
print(f"references: {len(ref)} in {time.time() - t_ref:.1f} s", flush=True)

srv = Server(BATON, "--model", FOLDER, "--model-name", "base",
             *[a for n, p in STABLE for a in ("--lora", f"{n}={p}")],
             "--max-loras", str(MAX_LORAS), "--max-cpu-loras", str(MAX_CPU_LORAS),
             "--concurrency", str(CONCURRENCY), "--queue", "512")
slots = CONCURRENCY * (1 + MAX_LORAS)
log = {n: [] for n, _ in CHURN}  # churn adapter -> [(sent, answered, loaded after)]
lock = threading.Lock()
stats = {"ok": 0, "not_found": 0, "lost": 0, "wrong": 0, "latency": [], "loads": 0,
         "unloads": 0, "busy": 0, "scrapes": 0}
deadline = time.time() + SECONDS
warm_until = time.time() + max(1.0, SECONDS / 4)
rss = []
draining = set()  # churn adapters the clients leave alone while their unload waits
not_found = []  # (model, sent, answered) of each 404


def loaded_throughout(name, t0, t1):
    """Whether churn adapter `name` was loaded at every moment of [t0, t1] (by the log: an
    event took effect somewhere between its sending and its answer)."""
    state = False
    for sent, answered, now in log[name]:
        if answered <= t0:
            state = now
        elif sent <= t1 and (not now or not state):
            return False  # an unload, or a load (so it was unloaded), overlapping the request
    return state


def client(seed):
    rng = random.Random(seed)
    pool = ["base"] + [n for n, _ in ADS]
    while time.time() < deadline:
        with lock:
            choices = [m for m in pool if m not in draining]
        model, k = rng.choice(choices), rng.randrange(len(REQUESTS))
        t0 = time.time()
        try:
            got = complete(srv, model, REQUESTS[k], MAX_TOKENS)
            t1 = time.time()
            with lock:
                stats["ok"] += 1
                stats["latency"].append(t1 - t0)
                if got != ref[(model, k)]:
                    stats["wrong"] += 1
                    fail(f"{model} request {k}: {got!r}, alone {ref[(model, k)]!r}")
        except openai.NotFoundError:
            # Judged after the run, against the whole log: the churn logs an unload only once
            # its answer is back, which may be after this request's 404.
            with lock:
                not_found.append((model, t0, time.time()))
        except Exception as e:  # noqa: BLE001 - anything else is a lost request
            with lock:
                stats["lost"] += 1
                fail(f"{model}: {type(e).__name__}: {e}")


def scrape_check(registered):
    samples, types = srv.metrics()
    stats["scrapes"] += 1
    info = samples["vllm:lora_requests_info"][0][0]
    running, waiting = names(info["running_lora_adapters"]), names(info["waiting_lora_adapters"])
    run_n = value(samples, "vllm:num_requests_running")
    wait_n = value(samples, "vllm:num_requests_waiting")
    usage = value(samples, "vllm:kv_cache_usage_perc")
    ok = (all(types.get(m) == "gauge" for m in ("vllm:num_requests_running",
                                                 "vllm:num_requests_waiting",
                                                 "vllm:kv_cache_usage_perc",
                                                 "vllm:lora_requests_info")) and
          info["max_lora"] == str(MAX_LORAS) and (running | waiting) <= registered and
          not (running & waiting) and len(running) <= MAX_LORAS and
          0 <= run_n <= min(slots, CLIENTS) and 0 <= wait_n and run_n + wait_n <= CLIENTS and
          abs(usage - run_n / slots) < 1e-9 and
          value(samples, "baton_adapters", state="registered") == len(registered) and
          value(samples, "baton_adapters", state="in_slot") <= MAX_LORAS and
          value(samples, "baton_adapters", state="in_memory") <= MAX_CPU_LORAS)
    if not ok:
        fail(f"metrics disagree with the state: registered {sorted(registered)}, running "
             f"{sorted(running)}, waiting {sorted(waiting)}, {run_n} running, {wait_n} waiting, "
             f"usage {usage}, adapters {samples.get('baton_adapters')}")


def churn():
    loaded = set()
    turn = 0
    while time.time() < deadline:
        tick = time.time()
        name, path = CHURN[(turn // 2) % len(CHURN)]  # loaded at one turn, unloaded at the next
        turn += 1
        sent = time.time()
        if name in loaded:
            with lock:
                draining.add(name)
            while True:
                status, body = srv.unload(name)
                if status != 409 or time.time() - tick > 0.9 * PERIOD:
                    break
                stats["busy"] += 1
                time.sleep(0.01)
            with lock:
                draining.discard(name)
            now_loaded = status != 200
            if status == 200:
                stats["unloads"] += 1
                loaded.discard(name)
            elif status == 409:
                stats["busy"] += 1
            else:
                fail(f"unload {name}: {status} {body}")
        else:
            status, body = srv.load(name, path)
            now_loaded = status == 200
            if status == 200:
                stats["loads"] += 1
                loaded.add(name)
            else:
                fail(f"load {name}: {status} {body}")
        with lock:
            log[name].append((sent, time.time(), now_loaded))
        scrape_check({n for n, _ in STABLE} | loaded)
        rss.append((time.time(), srv.rss_kib()))
        time.sleep(max(0.0, PERIOD - (time.time() - tick)))


try:
    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    threads.append(threading.Thread(target=churn))
    t_start = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - t_start
    for model, t0, t1 in not_found:
        if model in log and not loaded_throughout(model, t0, t1):
            stats["not_found"] += 1
        else:
            stats["lost"] += 1
            fail(f"{model}: 404 while it was loaded throughout")
    samples, _ = srv.metrics()
    rss_end = srv.rss_kib()
finally:
    srv.stop()

warm = [k for t, k in rss if t >= warm_until]
rss_warm = warm[0] if warm else rss_end
if rss_end - rss_warm > 8 * 1024:
    fail(f"memory grew after the warm-up: {rss_warm} KiB -> {rss_end} KiB")
lat = sorted(stats["latency"]) or [0.0]
flags = ""
with open("/proc/cpuinfo") as f:
    for line in f:
        if line.startswith("flags"):
            flags = line.split(":", 1)[1].strip()
            break
result = {
    "seconds": round(elapsed, 1), "clients": CLIENTS, "adapters": len(ADS),
    "max_loras": MAX_LORAS, "max_cpu_loras": MAX_CPU_LORAS, "concurrency": CONCURRENCY,
    "max_tokens": MAX_TOKENS, "answered": stats["ok"], "not_found_while_unloaded":
    stats["not_found"], "lost": stats["lost"], "wrong": stats["wrong"],
    "answers_per_s": round(stats["ok"] / elapsed, 1),
    "latency_p50_ms": round(1000 * lat[len(lat) // 2], 1),
    "latency_p99_ms": round(1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))], 1),
    "loads": stats["loads"], "unloads": stats["unloads"], "unload_409": stats["busy"],
    "scrapes": stats["scrapes"],
    "placements": value(samples, "baton_adapter_placements_total"),
    "evictions": value(samples, "baton_adapter_evictions_total"),
    "reads": value(samples, "baton_adapter_reads_total"),
    "steps": value(samples, "baton_steps_total", model="base"),
    "rows": value(samples, "baton_rows_total", model="base"),
    "rss_after_warmup_kib": rss_warm, "rss_end_kib": rss_end,
    "rss_kib_every_10_s": [k for t, k in rss[::max(1, int(10 / PERIOD))]],
    "cpu_flags": [f for f in flags.split() if f.startswith(("avx", "fma", "amx", "sse4"))],
    "problems": problems[:20],
}
print(json.dumps(result, indent=1))
if OUT:
    with open(OUT, "w") as f:
        json.dump(result, f, indent=1)
if stats["ok"] == 0:
    fail("no request was answered")
sys.exit(1 if problems else 0)
