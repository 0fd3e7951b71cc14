# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`baton serve --model DIR --lora NAME=DIR ...`: adapters served as model ids, batched together,
loaded and unloaded at run time, evicted and read again, and the gateway's metrics, through the
real `openai` client ($BATON_SERVE_PYTHON) and prometheus_client's text parser.

  test_serve_adapters.py BATON REPO WORK [--load-seconds S]

The adapters are random PEFT folders for the demo model (lora_fixture.py: ranks 1..32, different
target sets). The reference for every answer is the same request sent alone to a server started
with that one adapter (adapter_harness.references); `baton generate --adapter` (no server, no
scheduler) checks those references once. Equality is of the answer's text and finish reason,
decoded from ids: the same ids give the same text, and a differing id shows in the text.
  - /v1/models lists the base and every adapter (parent, root, sha256);
  - the base and 3 adapters, 2 slots (--max-loras 2, --max-cpu-loras 2), 24 requests at once:
    every answer equals its reference; steps held rows of more than one model id; adapters were
    evicted and read again from their folders (the metrics' counters);
  - a chat to an adapter equals the same chat on its reference server;
  - POST /v1/load_lora_adapter: a new adapter answers as its reference; a missing folder, a
    config without 'r', a rank over the bound, a tensor of the wrong shape, an unknown target,
    a taken name, a name with a comma, an unknown field, no API key: each a 400 (401) naming it,
    and /v1/models and the metrics unchanged after;
  - POST /v1/unload_lora_adapter while the adapter has requests in flight: 409 adapter_in_use;
    the requests finish with their reference answers; once idle the unload succeeds, the id then
    answers 404, and loading it again under the same name works;
  - one slot busy with a long request: a request for another adapter waits (listed in
    waiting_lora_adapters, its adapter in use: 409); its client going away ends it while it
    waits, and the adapter then unloads while the slot is still busy;
  - an evicted adapter whose files changed on disk is refused (never run as the old one);
  - a relay file's stage naming a served adapter ("lora") answers as that adapter does;
  - --public-metrics: /metrics answers without the key, /v1 still needs it;
  - /metrics: vllm:num_requests_waiting/running, vllm:kv_cache_usage_perc and
    vllm:lora_requests_info are gauges; while a burst runs on an adapter, it is in
    running_lora_adapters and max_lora is --max-loras; idle, everything is zero and empty;
  - a short load run (benchmarks/serve/adapters_load.py, --load-seconds, default 4).
Skips (77) without the openai client; fails under CI=true.
"""
import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "reference"), os.path.join(HERE, "..", "chat_template")]
from reference_python import reexec_under_serve_python, skip  # noqa: E402

reexec_under_serve_python(__file__)

try:
    import openai  # noqa: F401
    import prometheus_client  # noqa: F401
except Exception as e:  # noqa: BLE001 - any import failure means no client
    skip(f"no openai client or prometheus_client ({type(e).__name__}: {e})")

from adapter_harness import (Server, complete, names, references, tokenize,  # noqa: E402
                             value)
from chatml_folder import chatml_folder  # noqa: E402
from checks import check, finish  # noqa: E402
from lora_fixture import adapters, random_adapter  # noqa: E402

BATON, REPO, WORK = sys.argv[1:4]
LOAD_SECONDS = float(sys.argv[sys.argv.index("--load-seconds") + 1]) \
    if "--load-seconds" in sys.argv else 4.0
DEMO = os.path.join(REPO, "models", "word-problems")
MAX_TOKENS = 20


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
FOLDER = chatml_folder(DEMO, os.path.join(WORK, "chatml-demo"))
TOK = os.path.join(FOLDER, "tokenizer.json")
ADS = adapters(os.path.join(WORK, "adapters"), 5)
START = ADS[:3]  # served from the start; ADS[3] is loaded at run time, ADS[4] churns
questions = [line.strip() for line in open(os.path.join(DEMO, "demo_questions.txt"))
             if line.strip() and not line.startswith("#")][:3]
REQUESTS = [tokenize(BATON, TOK, q) for q in questions]

# The references: each adapter alone on a server of its own, each request alone; the base too.
ref = references(BATON, FOLDER, ADS[:4], REQUESTS, MAX_TOKENS)
base_ref = {}
srv = Server(BATON, "--model", FOLDER, "--model-name", "ref-base")
try:
    for k, ids in enumerate(REQUESTS):
        base_ref[k] = complete(srv, "ref-base", ids, MAX_TOKENS)
    info = srv.metrics()[0].get("vllm:lora_requests_info", [({}, 0)])[0][0]
    check(info == {"max_lora": "0", "running_lora_adapters": "", "waiting_lora_adapters": ""},
          f"a server without adapters still has the LoRA gauge, max_lora 0 ({info})")
finally:
    srv.stop()
# The adapters change the answers (else equality would prove nothing), and the server-alone
# reference agrees with the plain greedy path (`baton generate --adapter`, no scheduler).
check(all(ref[(n, k)] != base_ref[k] for n, _ in ADS[:4] for k in range(len(REQUESTS))),
      "every adapter changes every reference answer")
check(len({ref[(n, 0)][0] for n, _ in ADS[:4]}) == 4, "the adapters' answers differ")
g = subprocess.run([BATON, "generate", "--model", FOLDER, "--adapter", ADS[1][1],
                    "--tokenizer", TOK, "--ids",
                    ",".join(map(str, REQUESTS[0])), "--max-new", str(MAX_TOKENS), "--json",
                    "--threads", "1"], capture_output=True, text=True, check=True)
check(json.loads(g.stdout)["text"].startswith(ref[(ADS[1][0], 0)][0]),
      "the reference server's answer is `baton generate --adapter`'s")

loras = [a for n, p in START for a in ("--lora", f"{n}={p}")]
srv = Server(BATON, "--model", FOLDER, "--model-name", "base", *loras, "--max-loras", "2",
             "--max-cpu-loras", "2", "--concurrency", "4")
try:
    models = srv.models()
    check(list(models) == ["base"] + sorted(n for n, _ in START),
          f"/v1/models lists the base and the adapters ({list(models)})")
    e = models[START[0][0]]
    check(e.get("parent") == "base" and e.get("root") == START[0][1] and
          len(e["baton"]["sha256"]) == 64, f"an adapter's entry: parent, root, sha256 ({e})")

    # Many requests at once over the base and 3 adapters in 2 slots.
    samples, _ = srv.metrics()
    steps0 = value(samples, "baton_steps_total", model="base") or 0
    rows0 = value(samples, "baton_rows_total", model="base") or 0
    jobs = [(m, k) for _ in range(2) for m in ["base"] + [n for n, _ in START]
            for k in range(len(REQUESTS))]
    with ThreadPoolExecutor(len(jobs)) as pool:
        got = list(pool.map(lambda j: complete(srv, j[0], REQUESTS[j[1]], MAX_TOKENS), jobs))
    bad = [(j, a) for j, a in zip(jobs, got)
           if a != (base_ref[j[1]] if j[0] == "base" else ref[j])]
    check(not bad, f"{len(jobs)} concurrent requests over 4 model ids equal their references "
          f"alone ({bad[:2]})")
    samples, _ = srv.metrics()
    steps = (value(samples, "baton_steps_total", model="base") or 0) - steps0
    rows = (value(samples, "baton_rows_total", model="base") or 0) - rows0
    check(steps > 0 and rows / steps > 1.5,
          f"they ran as rows of shared steps ({rows:.0f} rows in {steps:.0f} steps)")
    check((value(samples, "baton_adapter_evictions_total") or 0) >= 1 and
          (value(samples, "baton_adapter_reads_total") or 0) > len(START),
          "3 adapters in 2 slots and 2 in memory: evicted, and read again from their folders "
          f"(evictions {value(samples, 'baton_adapter_evictions_total')}, reads "
          f"{value(samples, 'baton_adapter_reads_total')})")

    # A chat through the model's template, on an adapter: the same as on its reference server.
    chat = [{"role": "user", "content": questions[0]}]
    a = srv.client.chat.completions.create(model=START[1][0], messages=chat,
                                           max_tokens=MAX_TOKENS)
    solo = Server(BATON, "--model", FOLDER, "--lora", f"{START[1][0]}={START[1][1]}")
    try:
        b = solo.client.chat.completions.create(model=START[1][0], messages=chat,
                                                max_tokens=MAX_TOKENS)
    finally:
        solo.stop()
    check(a.choices[0].message.content == b.choices[0].message.content and
          a.usage.prompt_tokens == b.usage.prompt_tokens,
          f"a chat on an adapter equals its reference server's ({a.choices[0].message.content!r})")

    # Loading at run time.
    name3, path3 = ADS[3]
    status, body = srv.load(name3, path3)
    check(status == 200 and body.get("id") == name3, f"load_lora_adapter: 200 ({status} {body})")
    check(name3 in srv.models(), "/v1/models lists the loaded adapter")
    got = [complete(srv, name3, ids, MAX_TOKENS) for ids in REQUESTS]
    check(got == [ref[(name3, k)] for k in range(len(REQUESTS))],
          "the loaded adapter answers as its reference server")

    # Bad loads: a 400 naming the fault, and nothing changed.
    def broken(tag, **kw):
        return random_adapter(os.path.join(WORK, "broken", tag), 4, ["q_proj"], seed=99, **kw)

    no_r = broken("no-r")
    cfg = json.load(open(os.path.join(no_r, "adapter_config.json")))
    del cfg["r"]
    json.dump(cfg, open(os.path.join(no_r, "adapter_config.json"), "w"))
    big_r = broken("big-r", extra_config={"r": 300})
    shape = random_adapter(os.path.join(WORK, "broken", "shape"), 4, ["q_proj"], seed=5)
    random_adapter(os.path.join(WORK, "broken", "shape-src"), 8, ["q_proj"], seed=5)
    shutil.copy(os.path.join(WORK, "broken", "shape-src", "adapter_model.safetensors"), shape)
    target = broken("target", extra_config={"target_modules": ["qkv_proj"]})
    before_models = srv.models()
    before_reg = value(srv.metrics()[0], "baton_adapters", state="registered")
    cases = [
        ("missing folder", {"lora_name": "x1", "lora_path": os.path.join(WORK, "nowhere")},
         400, "lora_path", "nowhere"),
        ("config without r", {"lora_name": "x2", "lora_path": no_r}, 400, "lora_path", "'r'"),
        ("rank over the bound", {"lora_name": "x3", "lora_path": big_r}, 400, "lora_path", "300"),
        ("a tensor of the wrong shape", {"lora_name": "x4", "lora_path": shape}, 400,
         "lora_path", "q_proj"),
        ("an unknown target", {"lora_name": "x5", "lora_path": target}, 400, "lora_path",
         "qkv_proj"),
        ("a taken name", {"lora_name": name3, "lora_path": path3}, 400, "lora_name", name3),
        ("the base's name", {"lora_name": "base", "lora_path": path3}, 400, "lora_name", "base"),
        ("a name with a comma", {"lora_name": "a,b", "lora_path": path3}, 400, "lora_name",
         "comma"),
        ("an unknown field", {"lora_name": "x6", "lora_path": path3, "lora_int_id": 3}, 400,
         "lora_int_id", "lora_int_id"),
        ("no lora_path", {"lora_name": "x7"}, 400, "lora_path", "lora_path"),
    ]
    for what, req, want, param, needle in cases:
        status, body = srv.call("POST", "/v1/load_lora_adapter", req)
        err = body.get("error", {})
        check(status == want and err.get("param") == param and needle in err.get("message", ""),
              f"load with {what}: {want} naming {param!r} and {needle!r} "
              f"({status} {err.get('param')} {err.get('message', '')[:160]!r})")
    status, body = srv.call("POST", "/v1/load_lora_adapter",
                            {"lora_name": "x8", "lora_path": path3}, key="")
    check(status == 401, f"load without the API key: 401 ({status})")
    status, body = srv.call("POST", "/v1/unload_lora_adapter", {"lora_name": name3}, key="wrong")
    check(status == 401, f"unload with a wrong API key: 401 ({status})")
    check(srv.models() == before_models and
          value(srv.metrics()[0], "baton_adapters", state="registered") == before_reg,
          "after the refused loads /v1/models and the adapter count are unchanged")
    check(complete(srv, name3, REQUESTS[0], MAX_TOKENS) == ref[(name3, 0)],
          "and the loaded adapter still answers as its reference")

    # Unloading an adapter in use: 409 while its requests run; they finish on their weights.
    status, body = srv.unload("no-such")
    check(status == 404 and body["error"].get("code") == "model_not_found",
          f"unload of an unknown adapter: 404 ({status})")
    long_kw = dict(extra_body={"logit_bias": {"2": -100, "0": -100}})
    LONG = 300
    solo = Server(BATON, "--model", FOLDER, "--lora", f"{name3}={path3}", "--max-tokens", "400")
    try:
        long_ref = complete(solo, name3, REQUESTS[0], LONG, **long_kw)
    finally:
        solo.stop()
    srv2 = Server(BATON, "--model", FOLDER, "--model-name", "base", "--lora", f"{name3}={path3}",
                  "--max-loras", "2", "--concurrency", "1", "--max-tokens", "400",
                  "--public-metrics")
    try:
        status, _ = srv2.call("GET", "/v1/models", key="")
        try:
            with urllib.request.urlopen(srv2.base + "/metrics", timeout=60) as r:
                open_metrics = r.status
        except urllib.error.HTTPError as e:
            open_metrics = e.code
        check(open_metrics == 200 and status == 401,
              f"--public-metrics: /metrics without the key 200, /v1/models still 401 "
              f"({open_metrics}, {status})")
        with ThreadPoolExecutor(6) as pool:
            futs = [pool.submit(complete, srv2, name3, REQUESTS[0], LONG, **long_kw)
                    for _ in range(6)]
            deadline = time.time() + 60
            while time.time() < deadline:  # until the server has them
                if value(srv2.metrics()[0], "vllm:num_requests_running") == 1:
                    break
                time.sleep(0.01)
            samples, types = srv2.metrics()
            info = samples.get("vllm:lora_requests_info", [({}, 0)])[0][0]
            check(types.get("vllm:num_requests_waiting") == "gauge" and
                  types.get("vllm:num_requests_running") == "gauge" and
                  types.get("vllm:kv_cache_usage_perc") == "gauge" and
                  types.get("vllm:lora_requests_info") == "gauge",
                  f"the gateway's four metrics are gauges ({types.get('vllm:lora_requests_info')})")
            check(value(samples, "vllm:num_requests_running") == 1 and
                  value(samples, "vllm:num_requests_waiting") >= 1 and
                  value(samples, "vllm:kv_cache_usage_perc") > 0 and
                  info.get("max_lora") == "2" and names(info.get("running_lora_adapters", "")) ==
                  {name3} and info.get("waiting_lora_adapters") == "",
                  f"during the burst: 1 running (concurrency 1), others waiting, the adapter "
                  f"running, max_lora 2 ({info})")
            status, body = srv2.unload(name3)
            check(status == 409 and body["error"].get("code") == "adapter_in_use",
                  f"unload while its requests run: 409 adapter_in_use ({status} {body})")
            done = [f.result() for f in futs]
        check(all(d == long_ref for d in done) and long_ref[1] == "length",
              f"its requests in flight finished with the reference answer ({done[0][1]})")
        # The last answer reaches the client before the server's step that finished it has
        # released its row (a busy machine widens that gap to many milliseconds), so idle is
        # something the gauges reach soon after, not at the instant the answers arrive.
        def idle(samples):
            info = samples["vllm:lora_requests_info"][0][0]
            return (value(samples, "vllm:num_requests_running") == 0 and
                    value(samples, "vllm:num_requests_waiting") == 0 and
                    value(samples, "vllm:kv_cache_usage_perc") == 0 and
                    info["running_lora_adapters"] == "" and info["waiting_lora_adapters"] == "")

        deadline = time.time() + 10
        samples, _ = srv2.metrics()
        while not idle(samples) and time.time() < deadline:
            time.sleep(0.01)
            samples, _ = srv2.metrics()
        check(idle(samples), f"idle soon after: nothing running or waiting, no cache in use "
              f"({samples['vllm:lora_requests_info'][0][0]}, running "
              f"{value(samples, 'vllm:num_requests_running')}, waiting "
              f"{value(samples, 'vllm:num_requests_waiting')}, cache "
              f"{value(samples, 'vllm:kv_cache_usage_perc')})")
        status, body = srv2.unload(name3)
        check(status == 200, f"unload once idle: 200 ({status} {body})")
        check(name3 not in srv2.models(), "/v1/models no longer lists it")
        try:
            complete(srv2, name3, REQUESTS[0], MAX_TOKENS)
            check(False, "a request for the unloaded adapter is refused")
        except openai.NotFoundError as e:
            check(e.body.get("code") == "model_not_found",
                  "a request for the unloaded adapter: 404 model_not_found")
        status, _ = srv2.load(name3, ADS[2][1])  # the name again, other weights
        check(status == 200 and complete(srv2, name3, REQUESTS[1], MAX_TOKENS) ==
              ref[(ADS[2][0], 1)], "the name loaded again with other weights answers as those")
    finally:
        srv2.stop()

    # One slot, busy with a long request on one adapter: a request for another waits (its
    # adapter listed as waiting); its client going away ends it there, and frees the adapter.
    (na, pa), (nb, pb) = START[0], START[1]
    srv3 = Server(BATON, "--model", FOLDER, "--model-name", "base", "--lora", f"{na}={pa}",
                  "--lora", f"{nb}={pb}", "--max-loras", "1", "--concurrency", "1",
                  "--max-tokens", "400", "--queue", "64")
    try:
        stop = threading.Event()
        results = []

        def keeper():  # 8 of them keep the slot's adapter busy (300 tokens take ~50 ms)
            while not stop.is_set():
                results.append(complete(srv3, na, REQUESTS[0], LONG, **long_kw))

        keepers = [threading.Thread(target=keeper) for _ in range(8)]
        for k in keepers:
            k.start()
        try:
            deadline = time.time() + 60
            while value(srv3.metrics()[0], "vllm:num_requests_running") != 1 and \
                    time.time() < deadline:
                time.sleep(0.01)
            conn = http.client.HTTPConnection(srv3.base.split("//")[1], timeout=60)
            conn.request("POST", "/v1/completions", json.dumps(
                {"model": nb, "prompt": REQUESTS[1], "max_tokens": 8, "stream": True}),
                {"Authorization": f"Bearer {srv3.key}", "Content-Type": "application/json"})
            resp = conn.getresponse()
            check(resp.status == 200, f"the request for {nb} is accepted ({resp.status})")

            def lora_info():
                return srv3.metrics()[0]["vllm:lora_requests_info"][0][0]

            while not lora_info()["waiting_lora_adapters"] and time.time() < deadline:
                time.sleep(0.01)
            info = lora_info()
            check(info["running_lora_adapters"] == na and info["waiting_lora_adapters"] == nb,
                  f"one slot busy: {na} running, {nb} waiting for the slot ({info})")
            status, _ = srv3.unload(nb)
            check(status == 409, f"the waiting adapter is in use too: 409 ({status})")
            resp.close()
            conn.close()  # the client goes away while its request waits
            while srv3.unload(nb)[0] != 200 and time.time() < deadline:
                time.sleep(0.05)
            info = lora_info()
            check(nb not in srv3.models() and info["running_lora_adapters"] == na,
                  "its request ended where it waited: the adapter unloads while the slot is "
                  f"still busy ({info})")
        finally:
            stop.set()
            for k in keepers:
                k.join()
        check(results and all(r[1] == "length" for r in results),
              f"the {len(results)} long requests on the slot finished")
    finally:
        srv3.stop()

    # Changed files of an adapter out of memory: refused, never run as the old weights.
    victim = START[0]
    for n, _ in START[1:] + [ADS[3]]:  # push it out of the slots and out of memory
        complete(srv, n, REQUESTS[0], 2)
    models = srv.models()
    check(not models[victim[0]]["baton"]["in_memory"],
          f"{victim[0]} is out of memory after the others ran ({models[victim[0]]['baton']})")
    saved = os.path.join(WORK, "saved.safetensors")
    shutil.copy(os.path.join(victim[1], "adapter_model.safetensors"), saved)
    random_adapter(victim[1], 4, ["q_proj", "v_proj"], seed=1234)
    try:
        complete(srv, victim[0], REQUESTS[0], MAX_TOKENS)
        check(False, "an adapter whose files changed on disk is refused")
    except openai.APIStatusError as e:
        check("changed since it was loaded" in str(e.body),
              f"an adapter whose files changed on disk is refused ({str(e.body)[:160]})")
    shutil.copy(saved, os.path.join(victim[1], "adapter_model.safetensors"))
    random_adapter(victim[1], 4, ["q_proj", "v_proj"], seed=1)  # as written first
    check(complete(srv, victim[0], REQUESTS[0], MAX_TOKENS) == ref[(victim[0], 0)],
          "with its files back it answers as its reference again")
finally:
    srv.stop()

# A relay stage naming a served adapter: the same answer as that adapter's completion.
relay = {"name": "via-lora", "model": FOLDER, "max_request_tokens": 200,
         "stages": [{"name": "only", "lora": START[1][0], "input": [{"request": True}],
                     "max_new": MAX_TOKENS, "stop": [2]}]}
relay_file = os.path.join(WORK, "via-lora.json")
json.dump(relay, open(relay_file, "w"))
srv = Server(BATON, "--model", FOLDER, "--model-name", "base", *loras, "--config", relay_file)
try:
    r = srv.client.completions.create(model="via-lora", prompt=REQUESTS[0],
                                      max_tokens=MAX_TOKENS)
    check(r.choices[0].text == ref[(START[1][0], 0)][0],
          f"a relay stage with \"lora\": {START[1][0]} answers as the adapter "
          f"({r.choices[0].text!r})")
finally:
    srv.stop()
p = subprocess.run([BATON, "serve", "--config", relay_file, "--port", "0"], capture_output=True,
                   text=True, timeout=60)
check(p.returncode == 2 and f"no --lora {START[1][0]}=DIR" in p.stderr,
      f"without its --lora the relay is refused at start ({p.stderr.strip()[:160]})")

# The load run, short (its 60 s version is benchmarks/serve/adapters_load.py's default).
p = subprocess.run([sys.executable, os.path.join(REPO, "benchmarks", "serve", "adapters_load.py"),
                    BATON, REPO, os.path.join(WORK, "load"), "--seconds", str(LOAD_SECONDS),
                    "--clients", "16", "--period", "0.4"], capture_output=True, text=True,
                   timeout=600)
print(p.stdout[-3000:], p.stderr[-3000:])
check(p.returncode == 0, f"the load run ({LOAD_SECONDS} s) passed")

finish("test_serve_adapters")
