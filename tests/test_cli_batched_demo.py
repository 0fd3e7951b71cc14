#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Batching changes no request's answer, with everything a relay can hold: usage:
test_cli_batched_demo.py BATON SOURCE_DIR WORK_DIR [SANITIZED].

The bundled word-problems relay (a grammar on extract, stop texts on every stage, a gate on
verify's output, feedback of two stages, loop_from, up to three cycles), and the same relay
with host interceptors added (stop sequences and a trace recorder on reason, a token set on
verify), each run on held-out questions three ways: one request after another through the
relay itself (`--requests --sequential`: no scheduler), and through the batch scheduler with 4
and 12 requests in flight (rows of every stage and request in one forward). Every request's
verdict, cycles and every stage run's ids must be the same in all three. The relay alone is
the reference; the scheduler, RelayCursor and the batched forward are what is under test.

Mutation checks (2026-12-03, baton_cli rebuilt each time):
  each request given the logits of the row of index k/2 (scheduler.hpp run_batch) -> 44 fail
  a step supplied by step skip forwarded anyway                   -> passes: that forward
    only recomputes the supplied token's cache row, which is the same (a wasted forward)
  begin_step skipped for the first token after a prefill          -> passes: no first token
    here is forced (step skip supplies only where exactly one token is allowed)"""
import json
import os
import subprocess
import sys

baton, source, work = sys.argv[1:4]
# Under the sanitizers (-O0, ASan) a third of the questions, one concurrency and the variant
# with interceptors only (it goes through every path the other two take, and more): 52 s there
# with all three variants, which the sanitizer phase's budget could not hold.
sanitized = len(sys.argv) > 4 and sys.argv[4] == "1"
os.makedirs(work, exist_ok=True)
demo = os.path.join(source, "models", "word-problems")
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


questions = [json.loads(line)["question"]
             for line in open(os.path.join(demo, "heldout.jsonl")) if line.strip()][
                 :4 if sanitized else 12]
requests = os.path.join(work, "requests.jsonl")
with open(requests, "w") as f:
    for q in questions:
        f.write(json.dumps({"text": q}) + "\n")

relay = json.load(open(os.path.join(demo, "relay.json")))
relay["model"] = demo
relay["tokenizer"] = os.path.join(demo, "tokenizer.json")
for s in relay["stages"]:
    if "adapter" in s:
        s["adapter"] = os.path.join(demo, s["adapter"])
plain = os.path.join(work, "plain.json")
json.dump(relay, open(plain, "w"))
# Host interceptors: reason stops at a line break and records a trace; verify answers in a
# grammar whose fixed stretches step skip supplies without a forward (so a batch's rows mix
# forwarded and skipped steps), and may not emit the digit 9 while unconstrained.
relay["stages"][1]["interceptors"] = [{"stop_sequences": ["\n"]}, {"trace": True}]
relay["stages"][2]["grammar"] = {"regex": "(The answer [0-9]+ is right\\. PASS|Wrong\\. FAIL)"}
relay["stages"][2]["interceptors"] = [{"step_skip": True}, {"deny_tokens": ["9"]}]
hooked = os.path.join(work, "interceptors.json")
json.dump(relay, open(hooked, "w"))
# Every reason step supplied by step skip (one allowed token): no forward after its prefill,
# while the other stages' rows run beside it.
relay["stages"][1]["interceptors"] = [{"allow_tokens": ["1"]}, {"step_skip": True}]
forced = os.path.join(work, "forced.json")
json.dump(relay, open(forced, "w"))


def run(cfg, *mode):
    p = subprocess.run([baton, "relay", "--config", cfg, "--requests", requests, "--json",
                        "--threads", "2", *mode], capture_output=True, text=True, timeout=600)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    return p.returncode, lines, p.stderr


def answers(lines):
    return [(r["verdict"], r["cycles"], [(s["name"], s["cycle"], s["ids"]) for s in r["stages"]])
            for r in lines if "request" in r]


variants = [("the demo relay", plain), ("the demo relay with interceptors", hooked),
            ("the demo relay with reason's steps supplied", forced)]
for name, cfg in variants[1:2] if sanitized else variants:
    rc, alone, err = run(cfg, "--sequential")
    check(rc == 0 and len(alone) == len(questions) + 1,
          f"{name}, one request at a time: a line each and a summary (status {rc}, {err[-300:]})")
    want = answers(alone)
    cycles = {v[1] for v in want}
    verdicts = {v[0] for v in want}
    print(f"      {name}: verdicts {sorted(verdicts)}, cycles {sorted(cycles)}")
    for conc in ("4",) if sanitized else ("4", "12"):
        rc, got, err = run(cfg, "--concurrency", conc)
        check(rc == 0 and len(got) == len(questions) + 1,
              f"{name}, {conc} in flight: a line each and a summary (status {rc}, {err[-300:]})")
        summ = got[-1]["summary"] if got and "summary" in got[-1] else {}
        check(summ.get("mean_rows_per_step", 0) > 1.0,
              f"{name}, {conc} in flight: rows really were batched ({summ.get('mean_rows_per_step')})")
        have = answers(got)
        for k, (a, b) in enumerate(zip(want, have)):
            check(a == b, f"{name}, {conc} in flight, request {k}: equals its run alone"
                  + ("" if a == b else f"\n        alone   {a}\n        batched {b}"))

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
