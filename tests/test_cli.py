#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`baton generate` end to end: usage: test_cli.py BATON GOLDEN_DIR GOLDEN_JSON.

Checks one golden run (a GQA model with an adapter, --ignore-eos because the golden runs do not
stop at EOS) token for token and its first logits within the golden tolerance, the plain output
form, the EOS stop, and error paths (exit status and message)."""
import json
import os
import subprocess
import sys

baton, golden_dir, golden_json = sys.argv[1:4]
golden = json.load(open(golden_json))
failures = []


def run(*args):
    p = subprocess.run([baton, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


# A golden run with an adapter on the GQA model, long prompt (positions matter).
run_ = next(r for r in golden["runs"]
            if r["model"] == "qwen-c" and r["adapter"] == "qwen-c-lora-qv" and len(r["prompt"]) == 17)
ids = ",".join(map(str, run_["prompt"]))
n = golden["n_generate"]
base = ["generate", "--model", f"{golden_dir}/qwen-c", "--adapter", f"{golden_dir}/qwen-c-lora-qv",
        "--ids", ids, "--max-new", str(n)]
rc, out, err = run(*base, "--ignore-eos", "--json", "--logits")
check(rc == 0, f"golden run exits 0 (stderr: {err.strip()})")
if rc == 0:
    lines = out.strip().splitlines()
    check(len(lines) == 1, "--json prints exactly one line")
    obj = json.loads(out)
    check(sorted(obj) == ["backend", "ids", "logits"], "JSON has exactly ids, logits and backend")
    check(obj["ids"] == run_["tokens"], f"ids {obj['ids']} == golden {run_['tokens']}")
    diff = max(abs(a - b) for a, b in zip(obj["logits"], run_["first_logits"]))
    check(len(obj["logits"]) == len(run_["first_logits"]) and
          diff <= golden["tolerances"]["first_logits_max_abs"],
          f"first logits within tolerance (max diff {diff:.3g})")

# The host options: the forward runs on the command's thread pool, with results that do not
# depend on its size; --bf16-products keeps the greedy tokens and the golden tolerance where the
# CPU has AVX512-BF16 (the activations split into two bf16 terms move the logits a little) and
# is refused by name where it has not.
for threads in ("1", "3"):
    rc, out, err = run(*base, "--ignore-eos", "--json", "--logits", "--threads", threads)
    ok = rc == 0 and json.loads(out)["ids"] == run_["tokens"]
    if ok:
        d = max(abs(a - b) for a, b in zip(json.loads(out)["logits"], run_["first_logits"]))
        ok = d <= golden["tolerances"]["first_logits_max_abs"]
    check(ok, f"--threads {threads}: golden ids and logits (status {rc}, {err.strip()})")
rc, out, err = run(*base, "--threads", "-1")
check(rc == 2 and "--threads -1 is outside [0, " in err, f"--threads -1: status {rc}, {err.strip()}")
rc, out, err = run(*base, "--threads", "two")
check(rc == 2 and "--threads: 'two' is not an integer" in err, f"--threads two: status {rc}")
cpu_flags = open("/proc/cpuinfo").read().split() if sys.platform.startswith("linux") else []
bf16_cpu = "avx512_bf16" in cpu_flags and "avx512bw" in cpu_flags
# On the bf16 model the bf16 products (the default where the CPU has AVX512-BF16) keep the
# tokens and the golden tolerance; their logits differ from the f32 products' (a few ulps of the
# split activations), which shows they ran.
bf = next(r for r in golden["runs"] if r["model"] == "qwen-c-bf16" and r["adapter"] == "qwen-c-lora-qv"
          and len(r["prompt"]) == 17)
bf_args = ["generate", "--model", f"{golden_dir}/qwen-c-bf16", "--adapter", f"{golden_dir}/qwen-c-lora-qv",
           "--ids", ",".join(map(str, bf["prompt"])), "--max-new", str(n), "--ignore-eos", "--json",
           "--logits"]


def logit_diff(out):
    return max(abs(a - b) for a, b in zip(json.loads(out)["logits"], bf["first_logits"]))


rc, out, err = run(*bf_args, "--f32-products")
check(rc == 0 and json.loads(out)["ids"] == bf["tokens"] and
      logit_diff(out) <= golden["tolerances"]["first_logits_max_abs"],
      f"bf16 model, --f32-products: golden ids and logits (status {rc}, {err.strip()})")
f32_logits = json.loads(out)["logits"] if rc == 0 else []
for flags in (["--bf16-products"], []):
    rc, out, err = run(*bf_args, *flags)
    what = " ".join(flags) or "the default"
    if bf16_cpu:
        d = logit_diff(out) if rc == 0 else float("nan")
        moved = rc == 0 and json.loads(out)["logits"] != f32_logits
        check(rc == 0 and json.loads(out)["ids"] == bf["tokens"] and moved and
              d <= golden["tolerances"]["first_logits_max_abs"],
              f"{what}: golden ids and logits, not the f32 products' (max diff {d:.3g}, "
              f"status {rc}, {err.strip()})")
    elif flags:
        check(rc == 1 and "bf16_products" in err, f"--bf16-products refused on this CPU: {err.strip()}")
    else:
        check(rc == 0 and logit_diff(out) <= golden["tolerances"]["first_logits_max_abs"],
              f"the default without AVX512-BF16: f32 products (status {rc}, {err.strip()})")
rc, out, err = run(*bf_args, "--bf16-products", "--f32-products")
check(rc == 2 and "contradict" in err, f"--bf16-products with --f32-products refused: {err.strip()}")

# Plain output: the same ids space-separated on one line.
rc, out, err = run(*base, "--ignore-eos")
check(rc == 0 and out == " ".join(map(str, run_["tokens"])) + "\n", "plain output form")

# Without --ignore-eos a run stops at the config's eos id (not printed): a golden run whose
# tokens reach eos after a few steps.
def eos_of(r):
    return golden["models"][r["model"]]["config"]["eos_token_id"]


stop_run = next(r for r in golden["runs"] if eos_of(r) in r["tokens"][1:])
eos = eos_of(stop_run)
cut = stop_run["tokens"].index(eos)
args = ["generate", "--model", f"{golden_dir}/{stop_run['model']}", "--ids",
        ",".join(map(str, stop_run["prompt"])), "--max-new", str(n), "--json"]
if stop_run["adapter"]:
    args[3:3] = ["--adapter", f"{golden_dir}/{stop_run['adapter']}"]
rc, out, err = run(*args)
check(rc == 0 and sorted(json.loads(out)) == ["backend", "ids"] and
      json.loads(out)["ids"] == stop_run["tokens"][:cut],
      f"stops at eos {eos} after {cut} tokens: {out.strip()}")

# --step-logits: one row per generated id, the row that chose it (row 0 is --logits' row); a
# chosen EOS, not among the ids, has no row; without --json it is a command-line error.
def argmax(row):
    return max(range(len(row)), key=lambda i: (row[i] if row[i] is not None else float("-inf"), -i))


rc, out, err = run(*base, "--ignore-eos", "--json", "--logits", "--step-logits")
ok = rc == 0
if ok:
    obj = json.loads(out)
    rows = obj["step_logits"]
    ok = (obj["ids"] == run_["tokens"] and len(rows) == n and rows[0] == obj["logits"] and
          all(argmax(r) == t for r, t in zip(rows, obj["ids"])))
check(ok, f"--step-logits: {n} rows, row 0 == --logits, each row's argmax is its id (status {rc}, {err.strip()})")
rc, out, err = run(*args, "--step-logits")
check(rc == 0 and len(json.loads(out)["step_logits"]) == cut,
      f"--step-logits stopping at eos: {cut} rows, none for the eos (status {rc}, {err.strip()})")
rc, out, err = run(*base, "--step-logits")
check(rc == 2 and "--step-logits needs --json" in err, f"--step-logits without --json: status {rc}, {err.strip()}")
# With a grammar: the rows are masked (disallowed ids null), and a token the grammar forces is
# taken without a forward (step-skip), its row null.
demo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "word-problems")
if os.path.isfile(os.path.join(demo, "config.json")):
    rc, out, err = run("generate", "--model", demo, "--tokenizer", os.path.join(demo, "tokenizer.json"),
                       "--prompt", "<|im_start|>user\n2 + 3<|im_end|>\n<|im_start|>assistant\n",
                       "--regex", "[0-9] = 12", "--max-new", "8", "--json", "--step-logits")
    ok = rc == 0
    if ok:
        obj = json.loads(out)
        rows = obj["step_logits"]
        chosen = [r for r in rows if r is not None]
        ok = (len(rows) == len(obj["ids"]) and obj["text"].endswith(" = 12") and rows[0] is not None and
              None in rows and all(None in r for r in chosen) and
              all(argmax(r) == t for r, t in zip(rows, obj["ids"]) if r is not None))
    check(ok, f"--step-logits with a grammar: masked rows, null rows for forced tokens ({out.strip()[:120]}, "
              f"status {rc}, {err.strip()})")

# Sampling (docs/sampling.md): a seed replays; seeds differ; the seed is printed; without one a
# drawn seed is printed and replays; --logprobs leaves greedy ids alone and its values are the
# log-softmax of the row that chose each token; bad values name their option.
import math  # noqa: E402


def sampled(*extra):
    rc, out, err = run(*base, "--ignore-eos", "--json", *extra)
    return (json.loads(out) if rc == 0 else None), rc, err


sample_args = ["--temperature", "1.3", "--top-p", "0.95", "--top-k", "50"]
a1, rc, err = sampled(*sample_args, "--seed", "7")
a2, _, _ = sampled(*sample_args, "--seed", "7")
check(a1 is not None and a2 is not None and a1["ids"] == a2["ids"] and a1["seed"] == 7,
      f"--seed 7 twice: the same ids, seed printed (status {rc}, {err.strip()})")
outs = [sampled(*sample_args, "--seed", str(k))[0]["ids"] for k in range(4)]
check(len({tuple(o) for o in outs}) >= 3 and any(o != run_["tokens"] for o in outs),
      f"four seeds give different ids, not the greedy ones: {outs}")
d1, rc, err = sampled(*sample_args)
check(d1 is not None and isinstance(d1.get("seed"), int), f"no --seed: a drawn seed is printed ({err.strip()})")
if d1 is not None:
    again, _, _ = sampled(*sample_args, "--seed", str(d1["seed"]))
    check(again is not None and again["ids"] == d1["ids"], "the printed seed replays the run")
lp, rc, err = sampled("--logprobs", "3", "--step-logits")
ok = lp is not None and lp["ids"] == run_["tokens"] and len(lp["logprobs"]) == n
if ok:
    for row, e, t in zip(lp["step_logits"], lp["logprobs"], lp["ids"]):
        m = max(row)
        lse = m + math.log(sum(math.exp(x - m) for x in row))
        tops = [x["logprob"] for x in e["top"]]
        ok = ok and e["id"] == t and abs(e["logprob"] - (row[t] - lse)) < 1e-4
        ok = ok and len(tops) == 3 and tops == sorted(tops, reverse=True)
        ok = ok and e["top"][0]["id"] == t
check(ok, f"--logprobs 3: greedy ids kept; each logprob is the log-softmax of its row (status {rc}, {err.strip()})")
for flag, value in [("--top-p", "1.5"), ("--temperature", "-1"), ("--top-k", "-2"),
                    ("--min-p", "nan"), ("--presence-penalty", "3"), ("--repeat-penalty", "0"),
                    ("--logprobs", "30"), ("--seed", "-1")]:
    rc, out, err = run(*base, "--json", flag, value)
    check(rc == 2 and flag in err and out == "", f"{flag} {value}: status {rc}, {err.strip()}")
rc, out, err = run(*base, "--logprobs", "2")
check(rc == 2 and "--logprobs needs --json" in err, f"--logprobs without --json: {err.strip()}")

# Errors: a malformed command line is status 2 with a message; bad inputs status 1.
rc, out, err = run("generate", "--ids", "1,2", "--max-new", "4")
check(rc == 2 and "--model" in err and out == "", f"missing --model: status {rc}, stderr names --model")
rc, out, err = run("generate", "--model", f"{golden_dir}/qwen-c", "--ids", "1,384", "--max-new", "2")
check(rc == 1 and "token id 384" in err and out == "", f"id >= vocab: status {rc}, {err.strip()}")
rc, out, err = run("generate", "--model", f"{golden_dir}/does-not-exist", "--ids", "1", "--max-new", "2")
check(rc == 1 and "does-not-exist" in err, f"missing model folder: status {rc}, {err.strip()}")
rc, out, err = run("frobnicate")
check(rc == 2 and "unknown subcommand 'frobnicate'" in err and "generate" in err,
      "unknown subcommand: status 2 and usage")
rc, out, err = run("--help")
check(rc == 0 and "generate" in out, "baton --help lists the subcommands")

sys.exit(1 if failures else 0)
