#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The bundled demo model through baton: the demo runs and the held-out figures hold their floors.

usage: test_word_problems.py DEMO_EXE EVAL_EXE MODEL_DIR WORK_DIR [LIMIT]

- The demo (the README's first command runs it) prints every question with its stages and a
  verdict, the gate passes most of them, and the question marked as a correction in
  demo_questions.txt really takes a second cycle and then passes.
- word_problems_eval on all held-out problems (or the first LIMIT): each main figure of each
  part of the split (training/problems.py: seen, unseen_template, unseen_fact) and of all
  problems holds its floor, the committed model's measured figure less 3 points (FLOORS); a
  figure measured below 3% has floor 0, and the check is that it is reported. Gated >= ungated.
"""
import json
import pathlib
import re
import subprocess
import sys

demo, evaluate, model_dir, work = sys.argv[1:5]
limit = sys.argv[5] if len(sys.argv) > 5 else None
model_dir, work = pathlib.Path(model_dir), pathlib.Path(work)
work.mkdir(parents=True, exist_ok=True)
failures = []

# The committed model's figures on all 500 held-out problems (models/word-problems/README.md),
# less 3 points; 0 where the figure is below 3%. Retraining the model means measuring again.
MAIN = ("extract_parse_unconstrained", "extract_parse_constrained", "reason_alone_unconstrained",
        "verify_on_correct_unconstrained", "verify_on_wrong_unconstrained", "relay_gated")
MEASURED = {
    "seen": dict(zip(MAIN, (1.000, 1.000, 0.988, 0.984, 0.988, 0.976))),
    "unseen_template": dict(zip(MAIN, (1.000, 1.000, 0.408, 0.432, 0.912, 0.456))),
    "unseen_fact": dict(zip(MAIN, (1.000, 1.000, 0.776, 0.728, 0.952, 0.792))),
    "all": dict(zip(MAIN, (1.000, 1.000, 0.790, 0.782, 0.960, 0.800))),
}
FLOORS = {split: {k: (round(v - 0.03, 3) if v >= 0.03 else 0) for k, v in m.items()}
          for split, m in MEASURED.items()}


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
# The adapters only (--no-base): the floors are theirs, and the base model alone, which gets
# nothing right in any split (models/word-problems/README.md), is 60% of the evaluation's time.
args = [evaluate, "--no-base", "--json", str(fig_json), str(model_dir / "heldout.jsonl")]
if limit:
    args[1:1] = ["--limit", limit]
out = subprocess.run(args, capture_output=True, text=True, timeout=900)
print(out.stdout)
check(out.returncode == 0, f"evaluation exits 0 (stderr: {out.stderr.strip()[:300]})")
if out.returncode == 0:
    f = json.loads(fig_json.read_text())
    if not limit:
        n = sum(1 for line in (model_dir / "heldout.jsonl").read_text().splitlines() if line)
        check(f["problems"] == n, f"all {n} held-out problems evaluated ({f['problems']})")
    for split, floors in FLOORS.items():
        a = f["adapters"].get(split)
        check(a is not None, f"[{split}] reported")
        if a is None:
            continue
        for key, floor in floors.items():
            value = a[key]["rate"] if key in a else None
            if floor == 0:
                check(value is not None, f"[{split}] {key} reported ({value})")
            else:
                check(value is not None and value >= floor, f"[{split}] {key} {value} >= {floor:.3f}")
    a = f["adapters"]["all"]
    check(a["relay_gated"]["rate"] >= a["relay_ungated"]["rate"],
          f"gated {a['relay_gated']['rate']:.3f} >= ungated {a['relay_ungated']['rate']:.3f}")

print(f"\n{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
