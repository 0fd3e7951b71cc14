#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The bundled demo model through baton: the demo runs and the held-out figures hold their floors.

usage: test_word_problems.py DEMO_EXE EVAL_EXE MODEL_DIR WORK_DIR [LIMIT]

- The demo (the README's first command runs it) prints every question with its stages and a
  verdict, the gate passes most of them, and the question marked as a correction in
  demo_questions.txt really takes a second cycle and then passes.
- word_problems_eval on the first LIMIT held-out problems (a seed the training never saw):
  extraction parses >= 95%, reason alone >= 80%, gated >= ungated, and each stage does better
  with its adapter than the base model alone does.
"""
import json
import pathlib
import re
import subprocess
import sys

demo, evaluate, model_dir, work = sys.argv[1:5]
limit = sys.argv[5] if len(sys.argv) > 5 else "200"
model_dir, work = pathlib.Path(model_dir), pathlib.Path(work)
work.mkdir(parents=True, exist_ok=True)
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


# --- the demo -------------------------------------------------------------------------------
out = subprocess.run([demo], capture_output=True, text=True, timeout=300)
check(out.returncode == 0, f"demo exits 0 (stderr: {out.stderr.strip()[:300]})")
print(out.stdout)
lines = (model_dir / "demo_questions.txt").read_text().splitlines()
questions = [q for q in lines if q and not q.startswith("#")]
blocks = re.findall(r"^Q: (.*)\n((?:  .*\n)+)", out.stdout, re.M)
check([q for q, _ in blocks] == questions, f"the demo answers all {len(questions)} questions in order")
verdicts = {q: re.search(r"=> (PASS|no pass) after (\d+) cycle", body) for q, body in blocks}
passed = sum(1 for m in verdicts.values() if m and m.group(1) == "PASS")
check(passed >= len(questions) - 1, f"the gate passes {passed} of {len(questions)} demo questions")
# The question after a '#' line that mentions a correction is the one the second cycle fixes.
marked = [lines[i + 1] for i, l in enumerate(lines[:-1]) if l.startswith("#") and "correct" in l.lower()]
check(len(marked) >= 1, "demo_questions.txt marks a correction case")
for q in marked:
    m = verdicts.get(q)
    check(m is not None and m.group(1) == "PASS" and int(m.group(2)) >= 2,
          f"correction case takes a second cycle and passes: {q!r}")

# --- held-out figures -----------------------------------------------------------------------
fig_json = work / "figures.json"
out = subprocess.run([evaluate, "--limit", limit, "--json", str(fig_json), str(model_dir / "heldout.jsonl")],
                     capture_output=True, text=True, timeout=900)
print(out.stdout)
check(out.returncode == 0, f"evaluation exits 0 (stderr: {out.stderr.strip()[:300]})")
if out.returncode == 0:
    f = json.loads(fig_json.read_text())
    a, b = f["adapters"], f["base_alone"]
    rate = lambda d, k: d[k]["rate"]
    check(rate(a, "extract_parse") >= 0.95, f"extract parse rate {rate(a, 'extract_parse'):.3f} >= 0.95")
    check(rate(a, "reason_alone") >= 0.80, f"reason alone {rate(a, 'reason_alone'):.3f} >= 0.80")
    check(rate(a, "relay_gated") >= rate(a, "relay_ungated"),
          f"gated {rate(a, 'relay_gated'):.3f} >= ungated {rate(a, 'relay_ungated'):.3f}")
    for k in ("extract_exact", "reason_alone", "relay_gated"):
        check(rate(a, k) > rate(b, k), f"{k}: adapters {rate(a, k):.3f} > base alone {rate(b, k):.3f}")
    verify_a = (rate(a, "verify_on_correct") + rate(a, "verify_on_wrong")) / 2
    verify_b = (rate(b, "verify_on_correct") + rate(b, "verify_on_wrong")) / 2
    check(verify_a > verify_b and verify_a >= 0.8,
          f"verify balanced accuracy: adapters {verify_a:.3f} (>= 0.8) > base alone {verify_b:.3f}")

print(f"\n{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
