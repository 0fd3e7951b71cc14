#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`baton ... --backend cuda` against `--backend host`, on the GPU machine (the GPU check's
cli_backends step; copied into the bundle as compare_backends.py).

usage: compare_backends.py BATON GOLDEN_DIR GOLDEN_JSON BUNDLED_MODEL_DIR

- generate: one golden run per (model, adapter) pair (golden.json: every fixture model and
  adapter, f32 and bf16 weights), --ignore-eos for golden.json's n_generate tokens: the ids on
  cuda must equal the host's, and both golden.json's llama.cpp tokens;
- generate on the bundled word-problems model with each adapter, from text;
- relay: the bundled three-stage relay (its grammar, feedback and gate) on two demo
  questions, and an ids-only relay over the golden qwen-c model: every stage run's ids on cuda
  equal the host's, the verdict and cycles too, and each cuda stage run reports at most one
  host wait.
Exit 0 when all are equal, 1 on any difference or failure, 77 when the cuda side finds no
device (the step is then NOT RUN)."""
import json
import os
import subprocess
import sys
import tempfile

baton, golden_dir, golden_json, bundled = sys.argv[1:5]
golden = json.load(open(golden_json))
failures = []


def run(*args):
    p = subprocess.run([baton, *args], capture_output=True, text=True, errors="replace", timeout=120)
    if p.returncode == 1 and "no CUDA device is visible" in p.stderr:
        print(f"NOT RUN: {p.stderr.strip()}")
        sys.exit(77)
    return p


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def both(label, args):
    """Runs args on host and cuda (--json); returns the two parsed outputs or None."""
    outs = {}
    for backend in ("host", "cuda"):
        p = run(*args, "--json", "--backend", backend)
        if p.returncode != 0:
            check(False, f"{label}: --backend {backend} exited {p.returncode}: {p.stderr.strip()[:400]}")
            return None
        outs[backend] = json.loads(p.stdout)
        check(outs[backend].get("backend") == backend, f"{label}: JSON says backend {backend}")
    return outs["host"], outs["cuda"]


# --- generate on the golden fixtures ---------------------------------------------------------
seen = set()
for r in golden["runs"]:
    key = (r["model"], r["adapter"])
    if key in seen:
        continue
    seen.add(key)
    args = ["generate", "--model", f"{golden_dir}/{r['model']}", "--ids", ",".join(map(str, r["prompt"])),
            "--max-new", str(golden["n_generate"]), "--ignore-eos"]
    if r["adapter"]:
        args += ["--adapter", f"{golden_dir}/{r['adapter']}"]
    label = f"generate {r['model']} + {r['adapter'] or 'no adapter'}"
    res = both(label, args)
    if res:
        host, cuda = res
        check(cuda["ids"] == host["ids"], f"{label}: cuda ids {cuda['ids']} == host {host['ids']}")
        check(host["ids"] == r["tokens"], f"{label}: host ids == golden.json's llama.cpp tokens")

# --- generate and relay on the bundled model -------------------------------------------------
tok = f"{bundled}/tokenizer.json"
questions = [q for q in open(f"{bundled}/demo_questions.txt").read().splitlines()
             if q and not q.startswith("#")][:2]
for adapter in ("extract", "reason", "verify"):
    prompt = f"<|im_start|>user\n{questions[0]}<|im_end|>\n<|im_start|>assistant\n"
    label = f"generate word-problems + {adapter}"
    res = both(label, ["generate", "--model", bundled, "--adapter", f"{bundled}/adapters/{adapter}",
                       "--tokenizer", tok, "--prompt", prompt, "--max-new", "16"])
    if res:
        check(res[1]["ids"] == res[0]["ids"], f"{label}: cuda ids == host ids ({res[0].get('text')!r})")


def compare_relays(label, args):
    res = both(label, args)
    if not res:
        return
    host, cuda = res
    check([s["ids"] for s in cuda["stages"]] == [s["ids"] for s in host["stages"]],
          f"{label}: every stage run's ids equal the host's")
    check((cuda["verdict"], cuda["cycles"]) == (host["verdict"], host["cycles"]),
          f"{label}: verdict {cuda['verdict']}/{cuda['cycles']} cycles == host's")
    waits = [s["host_waits"] for s in cuda["stages"]]
    check(max(waits) <= 1, f"{label}: at most one host wait per stage run on cuda ({waits})")


for q in questions:
    compare_relays(f"relay word-problems {q[:30]!r}", ["relay", "--config", f"{bundled}/relay.json", q])

work = tempfile.mkdtemp()
spec = {"model": os.path.abspath(f"{golden_dir}/qwen-c"),
        "stages": [{"name": "extract", "adapter": os.path.abspath(f"{golden_dir}/qwen-c-lora-qv"),
                    "prefix": [5, 6, 7, 8], "input": [{"ids": [10]}, {"request": True}, {"ids": [11]}],
                    "max_new": 8},
                   {"name": "reason", "adapter": os.path.abspath(f"{golden_dir}/qwen-c-lora-all"),
                    "prefix": [9, 9, 12], "input": [{"request": True}, {"out": "extract"},
                                                    {"feedback": "verify"}], "max_new": 10},
                   {"name": "verify", "prefix": [3, 4], "input": [{"out": "reason"}], "max_new": 3}],
        "gate": {"starts_with": [383, 383]}, "max_cycles": 2}
cfg = os.path.join(work, "relay.json")
json.dump(spec, open(cfg, "w"))
compare_relays("relay golden qwen-c (ids, feedback, 2 cycles)", ["relay", "--config", cfg, "--ids", "88,160,301"])

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
