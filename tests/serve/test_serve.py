# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`baton serve` through a real client: the `openai` package (tests/serve/requirements.txt,
pinned, in its own environment: $BATON_SERVE_PYTHON, which scripts/test.sh sets).

  test_serve.py BATON REPO WORK [--soak N]

Starts servers on free loopback ports and checks, on the bundled word-problems relay:
  - chat and completions, plain and streamed: every answer equals `baton relay`'s (run
    sequentially, one request at a time, by the same program), usage counts, the extension;
  - 64 concurrent clients: every answer equal, and the steps really were batched;
  - max_tokens: equal to the relay with that max_new on its output stage;
  - per-request stop strings: ids equal `baton relay` with the same strings as the output
    stage's stop_sequences interceptor; the text ends before the first stop string, plain and
    streamed (no stop string's first bytes ever sent), finish_reason "stop";
  - sampling (docs/sampling.md): temperature/top_p/seed on the output stage equal `baton relay`
    with that stage's "sampling" in the file; a seed replays; without one the server draws and
    reports it (baton.seed), and sending it back replays; logprobs in both endpoints' shapes,
    and streamed (the chunks' entries equal the whole answer's, each with its text);
  - n choices (docs/sampling.md): choice i equals `baton relay` with the output stage's
    "sampling" on stream 1 + 3i (the request's stream shifted by i x 3 stages), plain and
    streamed (chunks told apart by index), usage counting the prompt once;
  - every error path: invalid JSON, unknown model, wrong types, sampling fields out of range
    (400 naming the field), n out of range or over the concurrency, stop strings out of bounds, unknown fields, a body over the cap (413), a prompt over the cap, ids outside the vocabulary,
    an unknown URL, the API key (401), a full queue (429);
  - a client that disconnects mid-stream: its rows are freed at once, the requests beside it
    are unaffected; clients that hang up right after [DONE] cost the server nothing;
  - SIGTERM: requests in flight finish whole, new ones are refused, the program exits 0;
  - a soak of N requests (1,000 by default; --soak 10000 outside CI): none lost or duplicated,
    all equal, resident memory at the end within 5% of what it was after the first 1,000
    (the first fifth of a shorter soak).

Without $BATON_SERVE_PYTHON it prints "skipped" and exits 77 (ctest: Skipped), except under
CI=true, where it fails.
"""
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
# the skip rule: 77, or a failure under CI=true
from reference_python import reexec_under_serve_python, skip  # noqa: E402

reexec_under_serve_python(__file__)

from serve_process import start_serve  # noqa: E402

try:
    import openai
    from openai import OpenAI
except Exception as e:  # noqa: BLE001 - any import failure means no client
    skip(f"no openai client ({type(e).__name__}: {e})")

BATON, REPO, WORK = sys.argv[1:4]
SOAK = int(sys.argv[sys.argv.index("--soak") + 1]) if "--soak" in sys.argv else 1000
MODEL_DIR = os.path.join(REPO, "models", "word-problems")
RELAY = os.path.join(MODEL_DIR, "relay.json")
os.makedirs(WORK, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)
    return cond


class Server:
    """`baton serve` on a free loopback port (the program prints the port it bound)."""

    def __init__(self, configs, *extra):
        args = [BATON, "serve", "--port", "0", "--threads", "1", *extra]
        for c in configs:
            args += ["--config", c]
        self.proc, self.base = start_serve(args)
        self.client = OpenAI(base_url=self.base + "/v1", api_key="none", max_retries=0,
                             timeout=120)

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def stop(self, timeout=60):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=timeout)
        return rc, self.proc.stdout.read()


def call(method, url, body=None, headers=None):
    """(status, parsed JSON or text) of one request, whatever its status."""
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def metric(server, name, model):
    """One sample of /metrics, by name and model label (0 when absent)."""
    _, text = call("GET", server.base + "/metrics")
    m = re.search(rf'^{name}\{{model="{re.escape(model)}"[^}}]*\}} (\S+)$', text, re.M)
    return float(m.group(1)) if m else 0.0


def reference(relay_file, requests):
    """What `baton relay` answers, one request after another: per request the output stage's
    final text, its token count and whether it stopped, the verdict and cycles."""
    with open(relay_file) as f:
        spec = json.load(f)
    out_name = spec.get("output", spec["stages"][-1]["name"])
    path = os.path.join(WORK, "requests.jsonl")
    with open(path, "w") as f:
        for r in requests:
            f.write(json.dumps({"text": r}) + "\n")
    run = subprocess.run([BATON, "relay", "--config", relay_file, "--requests", path,
                          "--sequential", "--json", "--threads", "1"],
                         capture_output=True, text=True, check=True)
    refs = []
    for line in run.stdout.splitlines():
        j = json.loads(line)
        if "summary" in j:
            continue
        last = [s for s in j["stages"] if s["name"] == out_name][-1]
        refs.append({"text": last["text"], "tokens": len(last["ids"]), "verdict": j["verdict"],
                     "cycles": j["cycles"]})
    assert len(refs) == len(requests)
    return refs


def write_relay(name, body):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        json.dump(body, f)
    return path


with open(os.path.join(MODEL_DIR, "heldout.jsonl")) as f:
    QUESTIONS = [json.loads(line)["question"] for line in f][:64]
REFS = reference(RELAY, QUESTIONS)
print(f"reference: {len(REFS)} answers from baton relay --sequential "
      f"({sum(r['cycles'] > 1 for r in REFS)} took more than one cycle)", flush=True)

with open(RELAY) as f:
    BUNDLED = json.load(f)


def absolute(spec):
    """The bundled relay's paths made absolute, for a copy written elsewhere."""
    spec = json.loads(json.dumps(spec))
    spec["model"] = MODEL_DIR
    spec["tokenizer"] = os.path.join(MODEL_DIR, "tokenizer.json")
    for st in spec["stages"]:
        if "adapter" in st:
            st["adapter"] = os.path.join(MODEL_DIR, st["adapter"])
    return spec


# The cap's reference: the same relay with reason's max_new = 3.
capped = absolute(BUNDLED)
capped["name"] = "capped"
capped["stages"][1]["max_new"] = 3
CAPPED = write_relay("capped.json", capped)
CAPPED_REFS = reference(CAPPED, QUESTIONS[:8])
# A long generation (one stage, no stop, 400 tokens): for disconnects and the shutdown.
LONG = write_relay("long.json", {
    "model": MODEL_DIR, "tokenizer": os.path.join(MODEL_DIR, "tokenizer.json"), "name": "long",
    "stages": [{"name": "ramble", "adapter": os.path.join(MODEL_DIR, "adapters", "reason"),
                "input": [{"request": True}], "max_new": 400}],
    "max_request_tokens": 32})
LONG_REF = reference(LONG, ["Tell a long story."])[0]
check(LONG_REF["tokens"] == 400, f"the long relay makes 400 tokens ({LONG_REF['tokens']})")


def chat(client, q, **kw):
    return client.chat.completions.create(model="word-problems",
                                          messages=[{"role": "user", "content": q}], **kw)


def streamed_chat(client, q, model="word-problems", **kw):
    text, finish, usage, ext = "", None, None, None
    for ch in client.chat.completions.create(model=model, stream=True,
                                             messages=[{"role": "user", "content": q}], **kw):
        if ch.usage:
            usage = ch.usage
        if ch.choices:
            text += ch.choices[0].delta.content or ""
            finish = ch.choices[0].finish_reason or finish
            ext = (ch.model_extra or {}).get("baton", ext)
    return text, finish, usage, ext


# ---- the main server: plain and streamed, both endpoints -----------------------------------
main = Server([RELAY, CAPPED, LONG], "--concurrency", "16", "--queue", "64")
c = main.client
models = [m.id for m in c.models.list().data]
check(models == ["word-problems", "capped", "long"], f"GET /v1/models lists the relays: {models}")
status, health = call("GET", main.base + "/health")
check(status == 200 and health.get("status") == "ok", f"/health: {status} {health}")

for k in range(6):
    q, ref = QUESTIONS[k], REFS[k]
    r = chat(c, q)
    check(r.choices[0].message.content == ref["text"],
          f"chat {k}: {r.choices[0].message.content!r} != {ref['text']!r}")
    check(r.choices[0].finish_reason == "stop", f"chat {k}: finish {r.choices[0].finish_reason}")
    check(r.usage.completion_tokens == ref["tokens"], f"chat {k}: completion_tokens")
    check(r.usage.prompt_tokens > 0 and
          r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens,
          f"chat {k}: usage {r.usage}")
    ext = r.to_dict()["baton"]
    check(ext["verdict"] == ref["verdict"] and ext["cycles"] == ref["cycles"],
          f"chat {k}: baton extension {ext['verdict']}/{ext['cycles']} vs {ref}")
    check([s["name"] for s in ext["stages"]][:3] == ["extract", "reason", "verify"],
          f"chat {k}: the extension lists the stage runs")
    t = c.completions.create(model="word-problems", prompt=q)
    check(t.choices[0].text == ref["text"], f"completion {k}: {t.choices[0].text!r}")
    text, finish, usage, ext = streamed_chat(c, q, stream_options={"include_usage": True})
    check(text == ref["text"], f"streamed chat {k}: {text!r} != {ref['text']!r}")
    check(finish == "stop" and usage and usage.completion_tokens == ref["tokens"],
          f"streamed chat {k}: finish {finish}, usage {usage}")
    check(ext and ext["verdict"] == ref["verdict"], f"streamed chat {k}: extension {ext}")
    pieces = [ch.choices[0].text for ch in
              c.completions.create(model="word-problems", prompt=q, stream=True) if ch.choices]
    check("".join(pieces) == ref["text"], f"streamed completion {k}: {pieces}")
print("plain and streamed: checked 6 questions x 4 ways", flush=True)

# A relay whose output runs once and cannot be rejected streams as it generates: many chunks.
chunks = [ch for ch in c.completions.create(model="long", prompt="Tell a long story.",
                                            stream=True) if ch.choices]
long_text = "".join(ch.choices[0].text for ch in chunks)
check(long_text == LONG_REF["text"], "streamed long relay equals baton relay")
check(len(chunks) > 5, f"the long relay streamed in {len(chunks)} chunks (> 5: as it generates)")

# max_tokens caps the output stage: equal to the relay whose reason has max_new = 3.
for k in range(8):
    r = chat(c, QUESTIONS[k], max_tokens=3)
    cr = CAPPED_REFS[k]
    check(r.choices[0].message.content == cr["text"] and r.usage.completion_tokens == cr["tokens"],
          f"max_tokens 3, question {k}: {r.choices[0].message.content!r} vs {cr['text']!r}")
    check(r.choices[0].finish_reason == "length", f"max_tokens 3: finish {r.choices[0].finish_reason}")
    check(r.to_dict()["baton"]["cycles"] == cr["cycles"], f"max_tokens 3, question {k}: cycles")

# ---- 64 concurrent clients ------------------------------------------------------------------
steps0 = metric(main, "baton_steps_total", "word-problems")
rows0 = metric(main, "baton_rows_total", "word-problems")
barrier = threading.Barrier(64)


def one_client(k):
    barrier.wait()
    if k % 2:
        return streamed_chat(c, QUESTIONS[k])[0]
    return chat(c, QUESTIONS[k]).choices[0].message.content


with ThreadPoolExecutor(64) as pool:
    answers = list(pool.map(one_client, range(64)))
wrong = [k for k in range(64) if answers[k] != REFS[k]["text"]]
check(not wrong, f"64 concurrent clients: answers differ from baton relay's for {wrong}")
steps = metric(main, "baton_steps_total", "word-problems") - steps0
rows = metric(main, "baton_rows_total", "word-problems") - rows0
check(rows / max(steps, 1) > 2, f"64 concurrent clients: {rows / max(steps, 1):.1f} rows per step")
print(f"64 concurrent clients: all equal; {rows:.0f} rows in {steps:.0f} steps", flush=True)

# ---- errors ---------------------------------------------------------------------------------
url = main.base + "/v1/chat/completions"
msgs = [{"role": "user", "content": QUESTIONS[0]}]


def expect_error(body, status, param=None, code=None, endpoint=url, raw=None, what=""):
    got, j = call("POST", endpoint, raw if raw is not None else body,
                  {"Content-Type": "application/json"})
    err = j.get("error", {}) if isinstance(j, dict) else {}
    ok = got == status and isinstance(err.get("message"), str) and err["message"]
    ok = ok and (param is None or err.get("param") == param) and (code is None or err.get("code") == code)
    check(ok, f"error {what or body}: got {got} {j}, want {status} param={param} code={code}")


expect_error(None, 400, code="invalid_json", raw=b'{"model": "word-problems", "messages": [',
             what="invalid JSON")
expect_error({"model": "nope", "messages": msgs}, 404, "model", "model_not_found")
expect_error({"messages": msgs}, 400, "model")
expect_error({"model": 7, "messages": msgs}, 400, "model")
expect_error({"model": "word-problems", "messages": "hi"}, 400, "messages")
expect_error({"model": "word-problems", "messages": [{"role": "system", "content": "x"}]}, 400,
             "messages")
expect_error({"model": "word-problems", "messages": msgs, "max_tokens": "5"}, 400, "max_tokens")
expect_error({"model": "word-problems", "messages": msgs, "max_tokens": 0}, 400, "max_tokens")
for field, value in [("temperature", 2.5), ("temperature", -0.1), ("temperature", "hot"),
                     ("top_p", 1.5), ("top_k", -1), ("top_k", 2.5), ("min_p", 2),
                     ("presence_penalty", 3), ("frequency_penalty", -2.5), ("repeat_penalty", 0),
                     ("repeat_last_n", -2), ("repeat_last_n", 1.5),
                     ("seed", "x"), ("seed", 1.5), ("logit_bias", {"5": 200}),
                     ("logit_bias", {"x": 1}), ("logit_bias", {"999999": 1}), ("logit_bias", [1]),
                     ("logprobs", 3), ("top_logprobs", 25), ("stop", 5), ("stop", [""]),
                     ("stop", ["a", "b", "c", "d", "e"]), ("stop", ["x" * 65]), ("stop", [1])]:
    expect_error({"model": "word-problems", "messages": msgs, field: value}, 400, field,
                 what=f"{field} = {value!r}")
expect_error({"model": "word-problems", "messages": msgs, "top_logprobs": 2}, 400,
             "top_logprobs", what="top_logprobs without logprobs")
expect_error({"model": "word-problems", "prompt": "x", "logprobs": 21}, 400, "logprobs",
             endpoint=main.base + "/v1/completions")
for bad_n in (0, 1.5, "2", 129):
    expect_error({"model": "word-problems", "messages": msgs, "n": bad_n}, 400, "n",
                 what=f"n = {bad_n!r}")
expect_error({"model": "word-problems", "messages": msgs, "n": 65}, 400, "n",
             what="n over the relay's concurrency")
for bad_best in ({"best_of": 2, "n": 3}, {"best_of": 129}, {"best_of": 1.5}, {"best_of": 65},
                 {"best_of": 2, "stream": True}):
    expect_error({"model": "word-problems", "prompt": "x", **bad_best}, 400, "best_of",
                 endpoint=main.base + "/v1/completions", what=f"{bad_best}")
expect_error({"model": "word-problems", "messages": msgs, "best_of": 2}, 400, "best_of",
             "unknown_parameter", what="best_of on chat (OpenAI's chat has none)")
expect_error({"model": "word-problems", "messages": msgs, "stream": "yes"}, 400, "stream")
expect_error({"model": "word-problems", "messages": msgs, "frobnicate": 1}, 400, "frobnicate",
             "unknown_parameter")
expect_error({"model": "word-problems", "messages": [{"role": "user", "content": "7 " * 200}]},
             400, "messages", "context_length_exceeded")
expect_error({"model": "word-problems", "prompt": [5, 9999]}, 400, "prompt",
             endpoint=main.base + "/v1/completions")
expect_error({"model": "word-problems", "prompt": "x" * (2 << 20)}, 413, code="body_too_large",
             endpoint=main.base + "/v1/completions", what="a 2 MiB body")
expect_error({}, 404, code="unknown_url", endpoint=main.base + "/v2/nothing", what="unknown URL")
try:
    c.chat.completions.create(model="word-problems", messages=msgs, temperature=3.0)
    check(False, "the openai client: temperature 3 accepted")
except openai.BadRequestError as e:
    check(e.status_code == 400 and "temperature" in str(e), f"openai client 400: {e}")
try:
    c.chat.completions.create(model="missing", messages=msgs)
    check(False, "the openai client: an unknown model accepted")
except openai.NotFoundError as e:
    check(e.status_code == 404, f"openai client 404: {e}")

# ---- sampling ---------------------------------------------------------------------------------
# The reference: `baton relay` on the bundled relay with the output stage's "sampling" in the
# file (its stream is the stage's index, as a server request's on that stage).
SAMPLING = {"temperature": 0.9, "top_p": 0.95, "seed": 42}
sampled = absolute(BUNDLED)
sampled["name"] = "sampled"
sampled["stages"][1]["sampling"] = SAMPLING
SAMPLED_REFS = reference(write_relay("sampled.json", sampled), QUESTIONS[:8])
differ = 0
for k in range(8):
    r = chat(c, QUESTIONS[k], **SAMPLING)
    got = r.choices[0].message.content
    check(got == SAMPLED_REFS[k]["text"],
          f"sampled chat {k}: {got!r} != baton relay's {SAMPLED_REFS[k]['text']!r}")
    check(r.to_dict()["baton"].get("seed") == 42, f"sampled chat {k}: baton.seed")
    differ += got != REFS[k]["text"]
    if k < 2:  # the same seed again, and through the completions endpoint
        check(chat(c, QUESTIONS[k], **SAMPLING).choices[0].message.content == got,
              f"sampled chat {k}: the same seed replays")
        t = c.completions.create(model="word-problems", prompt=QUESTIONS[k], **SAMPLING)
        check(t.choices[0].text == got, f"sampled completion {k}: {t.choices[0].text!r}")
check(differ >= 2, f"sampling changed {differ} of 8 answers from the greedy ones")
# Without a seed the server draws one and reports it; sending it back replays the answer.
drawn = []
for k in range(3):
    r = chat(c, QUESTIONS[0], temperature=1.5)
    seed = r.to_dict()["baton"].get("seed")
    check(isinstance(seed, int), f"unseeded request {k}: baton.seed {seed!r}")
    drawn.append(seed)
    again = chat(c, QUESTIONS[0], temperature=1.5, seed=seed)
    check(again.choices[0].message.content == r.choices[0].message.content,
          f"unseeded request {k}: its reported seed replays it")
check(len(set(drawn)) == 3, f"drawn seeds differ: {drawn}")
# Log-probabilities: greedy ids unchanged, one entry per output token, alternatives in order.
r = chat(c, QUESTIONS[2], logprobs=True, top_logprobs=3)
check(r.choices[0].message.content == REFS[2]["text"], "logprobs do not change a greedy answer")
content = r.choices[0].logprobs.content
check(len(content) == r.usage.completion_tokens, f"logprobs: {len(content)} entries")
for e in content:
    tops = [t.logprob for t in e.top_logprobs]
    check(len(tops) == 3 and tops == sorted(tops, reverse=True) and e.logprob <= 0,
          f"logprobs entry {e}")
    check(abs(e.logprob - tops[0]) < 1e-6, f"a greedy token is its own top alternative: {e}")
check("".join(e.token for e in content) == r.choices[0].message.content,
      "logprobs tokens spell the answer")
# Streamed: the chunks' entries, in order, are the whole answer's (the same tokens and values),
# each sent with the text it spells.
whole = [(e.token, e.logprob, [(t.token, t.logprob) for t in e.top_logprobs]) for e in content]
for q in (QUESTIONS[2], QUESTIONS[5]):
    ref = chat(c, q, logprobs=True, top_logprobs=2, temperature=0.8, seed=7)
    want = [(e.token, e.logprob) for e in ref.choices[0].logprobs.content]
    got, text = [], ""
    for ch in c.chat.completions.create(model="word-problems", stream=True, logprobs=True,
                                        top_logprobs=2, temperature=0.8, seed=7,
                                        messages=[{"role": "user", "content": q}]):
        if not ch.choices:
            continue
        text += ch.choices[0].delta.content or ""
        if ch.choices[0].logprobs and ch.choices[0].logprobs.content:
            entries = ch.choices[0].logprobs.content
            got += [(e.token, e.logprob) for e in entries]
            check(len(entries[0].top_logprobs) == 2, f"streamed logprobs: {entries[0]}")
            check(text.endswith("".join(e.token for e in entries)),
                  f"streamed logprobs come with their text: {text!r}")
    check(text == ref.choices[0].message.content and got == want,
          f"streamed logprobs {q!r}: {got} != {want}")
check(len(whole) > 0, "greedy logprobs entries")
t = c.completions.create(model="word-problems", prompt=QUESTIONS[2], logprobs=2)
lp = t.choices[0].logprobs
check(len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.text_offset)
      and all(len(x) <= 2 for x in lp.top_logprobs), f"completions logprobs: {lp}")
check("".join(lp.tokens) == t.choices[0].text, "completions logprobs tokens spell the text")
print("sampling: equal to baton relay with the stage's sampling; seeds replay; logprobs",
      flush=True)

# ---- n choices --------------------------------------------------------------------------------
# Choice i draws from the request's streams shifted by i x S, S = 3 (the relay's stages): on
# the output stage (index 1), stream 1 + 3i, which `baton relay` takes as the stage's "stream".
N_CHOICES = 3
CHOICE_REFS = []
for i in range(N_CHOICES):
    spec = absolute(BUNDLED)
    spec["name"] = f"choice{i}"
    spec["stages"][1]["sampling"] = dict(SAMPLING, stream=1 + 3 * i)
    CHOICE_REFS.append(reference(write_relay(f"choice{i}.json", spec), QUESTIONS[:3]))
for k in range(3):
    want = [CHOICE_REFS[i][k]["text"] for i in range(N_CHOICES)]
    r = chat(c, QUESTIONS[k], n=N_CHOICES, **SAMPLING)
    got = sorted((ch.index, ch.message.content) for ch in r.choices)
    check(got == list(enumerate(want)), f"n={N_CHOICES} chat {k}: {got} != {want}")
    one = chat(c, QUESTIONS[k], **SAMPLING)
    check(r.usage.prompt_tokens == one.usage.prompt_tokens and
          r.usage.completion_tokens == sum(CHOICE_REFS[i][k]["tokens"] for i in range(N_CHOICES)),
          f"n={N_CHOICES} chat {k}: usage {r.usage}")
    ext = r.to_dict()["baton"]
    check(len(ext.get("choices", [])) == N_CHOICES and
          all(e.get("seed") == 42 for e in ext["choices"]), f"n={N_CHOICES}: baton {ext}")
    texts, finishes, usage = {}, {}, None
    for ch in c.chat.completions.create(model="word-problems", stream=True, n=N_CHOICES,
                                        stream_options={"include_usage": True},
                                        messages=[{"role": "user", "content": QUESTIONS[k]}],
                                        **SAMPLING):
        if ch.usage:
            usage = ch.usage
        for choice in ch.choices:
            texts[choice.index] = texts.get(choice.index, "") + (choice.delta.content or "")
            if choice.finish_reason:
                finishes[choice.index] = choice.finish_reason
    check([texts.get(i) for i in range(N_CHOICES)] == want and len(finishes) == N_CHOICES,
          f"n={N_CHOICES} streamed {k}: {texts} {finishes} != {want}")
    check(usage is not None and usage.completion_tokens == r.usage.completion_tokens,
          f"n={N_CHOICES} streamed {k}: usage {usage}")
    t = c.completions.create(model="word-problems", prompt=QUESTIONS[k], n=N_CHOICES, **SAMPLING)
    check(sorted((ch.index, ch.text) for ch in t.choices) == list(enumerate(want)),
          f"n={N_CHOICES} completion {k}: {t.choices}")
check(len({CHOICE_REFS[i][k]["text"] for i in range(N_CHOICES) for k in range(3)}) > 3,
      "the choices differ from one another")
print(f"n: {N_CHOICES} choices equal baton relay on streams 1, 4, 7, plain, streamed and "
      "completions", flush=True)

# ---- best_of ----------------------------------------------------------------------------------
# best_of runs its candidates as n choices (the same streams), and returns the n whose output
# tokens have the highest mean log-probability (the earlier on a tie): the reference is the
# n=N_CHOICES request's own logprobs, ranked here.
for k in range(3):
    full = c.completions.create(model="word-problems", prompt=QUESTIONS[k], n=N_CHOICES,
                                logprobs=0, **SAMPLING)
    texts = {ch.index: ch.text for ch in full.choices}
    means = {ch.index: (sum(ch.logprobs.token_logprobs) / len(ch.logprobs.token_logprobs)
                        if ch.logprobs.token_logprobs else 0.0) for ch in full.choices}
    order = sorted(range(N_CHOICES), key=lambda i: (-means[i], i))
    for n in (1, 2):
        b = c.completions.create(model="word-problems", prompt=QUESTIONS[k], n=n,
                                 best_of=N_CHOICES, **SAMPLING)
        got = [ch.text for ch in sorted(b.choices, key=lambda ch: ch.index)]
        check(got == [texts[i] for i in order[:n]],
              f"best_of {N_CHOICES}, n {n}, question {k}: {got} vs ranked {order} of {texts}")
        check(all(ch.logprobs is None for ch in b.choices),
              f"best_of {k}: logprobs returned though not asked for")
        ext = b.to_dict()["baton"]
        picked = [ext["candidate"]] if n == 1 else [e["candidate"] for e in ext["choices"]]
        check(picked == order[:n], f"best_of {k}, n {n}: candidates {picked} != {order[:n]}")
print(f"best_of: {N_CHOICES} candidates ranked by mean logprob, n 1 and 2", flush=True)

# ---- per-request stop strings --------------------------------------------------------------
# The reference: `baton relay` with the same strings as the output stage's stop_sequences
# interceptor (the generation ends after the token completing one, in every cycle); the server's
# answer is that text cut before the first stop string, as OpenAI's API returns it.
STOPS = [" =", "9"]
stopped_spec = absolute(BUNDLED)
stopped_spec["name"] = "stopped"
stopped_spec["stages"][1]["interceptors"] = [{"stop_sequences": STOPS}]
STOP_REFS = reference(write_relay("stopped.json", stopped_spec), QUESTIONS[:8])


def cut(text):
    at = min([text.find(s) for s in STOPS if s in text] or [len(text)])
    return text[:at]


cut_some = 0
for k in range(8):
    want = cut(STOP_REFS[k]["text"])
    cut_some += want != STOP_REFS[k]["text"]
    r = chat(c, QUESTIONS[k], stop=STOPS)
    check(r.choices[0].message.content == want,
          f"stop chat {k}: {r.choices[0].message.content!r} != {want!r}")
    check(r.usage.completion_tokens == STOP_REFS[k]["tokens"],
          f"stop chat {k}: {r.usage.completion_tokens} tokens, baton relay "
          f"{STOP_REFS[k]['tokens']}")
    if want != STOP_REFS[k]["text"]:
        check(r.choices[0].finish_reason == "stop", f"stop chat {k}: {r.choices[0].finish_reason}")
    text, finish, _, _ = streamed_chat(c, QUESTIONS[k], stop=STOPS)
    check(text == want and finish == r.choices[0].finish_reason,
          f"stop streamed {k}: {text!r} ({finish})")
    t = c.completions.create(model="word-problems", prompt=QUESTIONS[k], stop=STOPS)
    check(t.choices[0].text == want, f"stop completion {k}: {t.choices[0].text!r}")
check(cut_some >= 4, f"the stop strings cut {cut_some} of 8 answers")
# In one batch: requests with stop strings beside requests without; each equals its reference
# (a request's stop strings live on its own branch).
with ThreadPoolExecutor(16) as pool:
    mixed = list(pool.map(lambda k: chat(c, QUESTIONS[k % 8], **({"stop": STOPS} if k % 2 else {}))
                          .choices[0].message.content, range(16)))
for k, got in enumerate(mixed):
    want = cut(STOP_REFS[k % 8]["text"]) if k % 2 else REFS[k % 8]["text"]
    check(got == want, f"mixed batch {k}: {got!r} != {want!r}")
# One string (not a list) on the long relay, streamed: the text ends before it, nothing of it sent.
long_text = LONG_REF["text"]
word = next(w for w in long_text.split(" ")[3:] if len(w) >= 3)
body = {"model": "long", "prompt": "Tell a long story.", "stop": word, "stream": True}
req = urllib.request.Request(main.base + "/v1/completions", json.dumps(body).encode(),
                             {"Content-Type": "application/json"})
streamed = ""
with urllib.request.urlopen(req, timeout=120) as resp:
    for line in resp:
        line = line.decode().strip()
        if line.startswith("data: {"):
            ch = json.loads(line[6:])
            for choice in ch.get("choices", []):
                streamed += choice.get("text") or ""
check(streamed == long_text[:long_text.find(word)],
      f"stop on the long relay, streamed: {streamed[-40:]!r}")
print(f"stop strings: equal to baton relay's stop_sequences; {cut_some} of 8 answers cut",
      flush=True)

# The server still answers correctly after every error.
check(chat(c, QUESTIONS[1]).choices[0].message.content == REFS[1]["text"], "after the errors")
print("error paths: checked", flush=True)

# ---- a client that disconnects mid-stream ---------------------------------------------------
rows_before = metric(main, "baton_rows_total", "long")
conn = http.client.HTTPConnection("127.0.0.1", int(main.base.rsplit(":", 1)[1]), timeout=60)
conn.request("POST", "/v1/completions",
             json.dumps({"model": "long", "prompt": "Tell a long story.", "stream": True}),
             {"Content-Type": "application/json"})
resp = conn.getresponse()
while b'"text"' not in resp.fp.readline():  # the first chunk with text
    pass
beside = ThreadPoolExecutor(8)
futures = [beside.submit(chat, c, QUESTIONS[k]) for k in range(8)]
conn.sock.shutdown(2)
conn.close()
t0 = time.time()
while time.time() - t0 < 10 and (metric(main, "baton_disconnects_total", "long") < 1 or
                                 metric(main, "baton_queue_depth", "long") > 0):
    time.sleep(0.01)
freed_after = time.time() - t0
used = metric(main, "baton_rows_total", "long") - rows_before
check(metric(main, "baton_disconnects_total", "long") == 1, "the disconnect is counted")
check(metric(main, "baton_queue_depth", "long") == 0, "the disconnected request left the queue")
check(used < 300, f"the disconnected request stopped early: {used:.0f} of 400 rows ran")
beside_answers = [f.result().choices[0].message.content for f in futures]
check(beside_answers == [r["text"] for r in REFS[:8]], "the requests beside the disconnect")
print(f"disconnect: freed {freed_after * 1000:.0f} ms after the close, {used:.0f} of 400 rows "
      f"ran", flush=True)

# Clients that hang up right after [DONE], before the stream's last bytes: each costs the server
# a failed write, never the process (a write to a closed socket raises SIGPIPE).
hangups = []


def hang_up(k):
    conn = http.client.HTTPConnection("127.0.0.1", int(main.base.rsplit(":", 1)[1]), timeout=60)
    conn.request("POST", "/v1/completions",
                 json.dumps({"model": "word-problems", "prompt": QUESTIONS[k % 64], "stream": True}),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    while True:
        line = resp.fp.readline()
        if not line:
            hangups.append(f"request {k}: closed before [DONE]")
            break
        if b"[DONE]" in line:
            break
    conn.sock.close()


with ThreadPoolExecutor(16) as pool:
    list(pool.map(hang_up, range(320)))
check(not hangups and main.proc.poll() is None,
      f"320 clients hanging up after [DONE]: server alive {main.proc.poll() is None}, {hangups[:2]}")
print("clients hanging up after [DONE]: the server lives", flush=True)

# ---- the soak -------------------------------------------------------------------------------
soak_rss = []
CHECKPOINT = min(1000, SOAK // 5)  # resident memory is compared from here to the end
seen_ids, lost = set(), []
done_count = [0]
lock = threading.Lock()


def soak_one(i):
    q = i % len(QUESTIONS)
    r = chat(c, QUESTIONS[q], user=f"soak-{i}")
    with lock:
        seen_ids.add(r.id)
        done_count[0] += 1
        if done_count[0] == CHECKPOINT:
            soak_rss.append(main.rss_kb())
    if r.choices[0].message.content != REFS[q]["text"]:
        lost.append(i)
    return r.id


# The soak's own client: its connections are busy from the first request to the last.
c = OpenAI(base_url=main.base + "/v1", api_key="none", max_retries=0, timeout=120)
t0 = time.time()
with ThreadPoolExecutor(16) as pool:
    ids = list(pool.map(soak_one, range(SOAK)))
soak_s = time.time() - t0
soak_rss.append(main.rss_kb())
check(len(ids) == SOAK and len(seen_ids) == SOAK, f"soak: {len(seen_ids)} distinct answers of {SOAK}")
check(not lost, f"soak: {len(lost)} answers differ")
growth = soak_rss[-1] / soak_rss[0] - 1
check(abs(growth) <= 0.05, f"soak: resident memory {soak_rss[0]} kB -> {soak_rss[-1]} kB "
      f"({growth * 100:+.1f}%)")
ok200 = metric(main, "baton_requests_total", "word-problems")
print(f"soak: {SOAK} requests in {soak_s:.1f} s ({SOAK / soak_s:.0f}/s, 16 clients); "
      f"resident {soak_rss[0]} kB after {CHECKPOINT}, {soak_rss[-1]} kB at the end "
      f"({growth * 100:+.1f}%)", flush=True)
t0 = time.time()
rc, out = main.stop()
check(rc == 0, f"the main server exits 0 on SIGTERM (got {rc})")
print(f"the main server stopped in {time.time() - t0:.1f} s", flush=True)

# ---- the API key, and a full queue -----------------------------------------------------------
keyed = Server([RELAY], "--api-key", "s3cret", "--concurrency", "1", "--queue", "1")
status, j = call("POST", keyed.base + "/v1/chat/completions",
                 {"model": "word-problems", "messages": msgs}, {"Content-Type": "application/json"})
check(status == 401 and j["error"]["code"] == "invalid_api_key", f"no key: {status} {j}")
try:
    keyed.client.chat.completions.create(model="word-problems", messages=msgs)
    check(False, "a wrong key accepted")
except openai.AuthenticationError as e:
    check(e.status_code == 401, f"a wrong key: {e}")
good = OpenAI(base_url=keyed.base + "/v1", api_key="s3cret", max_retries=0, timeout=60)
check(chat(good, QUESTIONS[2]).choices[0].message.content == REFS[2]["text"], "the right key")
check(call("GET", keyed.base + "/health")[0] == 200, "/health needs no key")
check(call("GET", keyed.base + "/metrics")[0] == 401, "/metrics needs the key")
barrier = threading.Barrier(24)


def crowd(k):
    barrier.wait()
    try:
        return chat(good, QUESTIONS[k]).choices[0].message.content == REFS[k]["text"]
    except openai.RateLimitError as e:
        return "429" if e.body and e.body.get("code") == "queue_full" else f"429? {e.body}"


with ThreadPoolExecutor(24) as pool:
    outcomes = list(pool.map(crowd, range(24)))
check(all(o is True or o == "429" for o in outcomes), f"a full queue: {outcomes}")
check(outcomes.count("429") > 0 and outcomes.count(True) > 0,
      f"a queue of 1: {outcomes.count(True)} answered, {outcomes.count('429')} refused with 429")
rc, _ = keyed.stop()
check(rc == 0, "the keyed server exits 0")
print(f"API key and a full queue: checked ({outcomes.count('429')} of 24 refused)", flush=True)

# ---- SIGTERM: in-flight requests finish, new ones are refused, exit 0 ------------------------
srv = Server([LONG], "--drain-seconds", "30")
started = threading.Barrier(4)
results = []


def long_stream():
    text, first = "", True
    for ch in srv.client.completions.create(model="long", prompt="Tell a long story.", stream=True):
        if ch.choices:
            text += ch.choices[0].text
            if first and text:
                first = False
                started.wait()
    results.append(text)


threads = [threading.Thread(target=long_stream) for _ in range(3)]
for t in threads:
    t.start()
started.wait()
srv.proc.send_signal(signal.SIGTERM)
time.sleep(0.05)
refused = None
try:
    status, j = call("POST", srv.base + "/v1/completions",
                     {"model": "long", "prompt": "late"}, {"Content-Type": "application/json"})
    refused = status == 503
except (urllib.error.URLError, ConnectionError):
    refused = True  # the listening socket is closed already
for t in threads:
    t.join()
rc = srv.proc.wait(timeout=60)
check(refused, "a request after SIGTERM is refused")
check(len(results) == 3 and all(r == LONG_REF["text"] for r in results),
      "requests in flight at SIGTERM finish whole")
check(rc == 0, f"exit status after SIGTERM: {rc}")
print("graceful shutdown: checked", flush=True)

if failures:
    print(f"FAILED: {len(failures)} checks")
    sys.exit(1)
print("all serve checks passed")
