# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Quick held-out evaluation of the demo relay, measured through baton's CLI.

  python3 training/eval_relay.py --baton build/dev/tools/baton --model models/word-problems --n 200

Runs `baton relay --json --config <model>/relay.json QUESTION` per held-out question and reports:
  extract parse rate (cycle 1 output is `a op b`) and exact rate (equals the facts),
  reason cycle-1 accuracy (worked result exactly right),
  verify agreement on cycle 1 (PASS iff reason was right),
  final accuracy (the last reason output, after the gate and cycles) and cycles used;
and, with --verify N, the verify stage alone on N held-out right and N wrong candidates.
Lists the correction cases: cycle 1 wrong, verify FAIL, a later cycle right and PASS.
Standard library only (the CI-free iteration loop; the full evaluation is C++).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

FACTS = re.compile(r"^(\d+) ([-+*]) (\d+)$")


# One OpenMP thread unless told otherwise: on two busy cores, baton's default team of threads
# spun against the other processes and a 0.2 s run took 4-9 s.
ENV = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))


def run_relay(baton, config, question):
    p = subprocess.run([baton, "relay", "--json", "--config", config, question], capture_output=True,
                       check=False, env=ENV)
    if p.returncode != 0:
        raise RuntimeError(f"baton relay failed ({p.returncode}): {p.stderr.decode()}")
    return json.loads(p.stdout)


def verify_only_config(model_dir, candidate, tmpdir):
    """A one-stage relay: the verify stage with `candidate` in place of reason's output."""
    with open(os.path.join(model_dir, "relay.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    st = next(s for s in cfg["stages"] if s["name"] == "verify")
    st["input"] = [{"text": candidate} if "out" in seg else seg for seg in st["input"]]
    st["adapter"] = os.path.join(os.path.abspath(model_dir), st["adapter"])
    cfg["stages"] = [st]
    cfg["model"] = os.path.abspath(model_dir)
    cfg["tokenizer"] = os.path.join(os.path.abspath(model_dir), cfg["tokenizer"])
    for k in ("gate", "loop_from"):
        cfg.pop(k, None)
    cfg["max_cycles"] = 1
    path = os.path.join(tmpdir, "verify_only.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baton", default="build/dev/tools/baton")
    ap.add_argument("--model", default="models/word-problems")
    ap.add_argument("--config", help="relay JSON (default <model>/relay.json)")
    ap.add_argument("--heldout", help="default <model>/heldout.jsonl")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--verify", type=int, default=0, help="verify-only check on N right + N wrong")
    ap.add_argument("--show", type=int, default=0, help="print the first N transcripts")
    args = ap.parse_args()
    config = args.config or os.path.join(args.model, "relay.json")
    with open(args.heldout or os.path.join(args.model, "heldout.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][args.offset: args.offset + args.n]

    n = len(rows)
    parsed = exact_facts = reason1 = verify_agree = final = passed = 0
    cycles_hist, corrections, failures = {}, [], []
    for i, r in enumerate(rows):
        res = run_relay(args.baton, config, r["question"])
        runs = res["stages"]
        ext = next(s["text"] for s in runs if s["name"] == "extract")
        reasons = [s["text"].strip() for s in runs if s["name"] == "reason"]
        verdicts = [s["text"].strip() for s in runs if s["name"] == "verify"]
        parsed += bool(FACTS.match(ext.strip()))
        exact_facts += ext.strip() == r["facts"]
        ok1 = reasons[0] == r["worked"]
        reason1 += ok1
        verify_agree += ("PASS" in verdicts[0]) == ok1  # the gate: output contains PASS
        okf = reasons[-1] == r["worked"]
        final += okf
        passed += res["verdict"] == "pass"
        cycles_hist[res["cycles"]] = cycles_hist.get(res["cycles"], 0) + 1
        if not ok1 and okf and res["verdict"] == "pass" and "PASS" not in verdicts[0]:
            corrections.append((r["question"], reasons))
        if not okf:
            failures.append((r["question"], ext, reasons, verdicts))
        if i < args.show:
            print(json.dumps({"q": r["question"], "extract": ext, "reason": reasons, "verify": verdicts,
                              "verdict": res["verdict"], "cycles": res["cycles"]}))
    pct = lambda k: f"{100.0 * k / max(n, 1):.1f}%"  # noqa: E731
    print(f"held-out questions: {n}")
    print(f"extract parses as 'a op b': {pct(parsed)}   equals the facts: {pct(exact_facts)}")
    print(f"reason cycle 1 correct:     {pct(reason1)}")
    print(f"verify agrees on cycle 1:   {pct(verify_agree)}")
    print(f"final correct:              {pct(final)}   gate passed: {pct(passed)}   cycles: {dict(sorted(cycles_hist.items()))}")
    print(f"correction cases (cycle 1 wrong, FAIL, later right + PASS): {len(corrections)}")
    for q, rs in corrections[:10]:
        print(f"  {q}  ->  {' | '.join(rs)}")
    for q, e, rs, vs in failures[:5]:
        print(f"  still wrong: {q}  extract={e!r} reason={rs} verify={vs}")

    if args.verify:
        allv = [json.loads(line) for line in open(args.heldout or os.path.join(args.model, "heldout.jsonl"),
                                                  encoding="utf-8")][: args.verify]
        right_pass = wrong_fail = 0
        with tempfile.TemporaryDirectory() as tmp:
            for r in allv:
                for cand, want in ((r["worked"], "PASS"), (r["wrong"], "FAIL")):
                    res = run_relay(args.baton, verify_only_config(args.model, cand, tmp), r["question"])
                    got = res["stages"][-1]["text"].strip()
                    if want == "PASS":
                        right_pass += "PASS" in got
                    else:
                        wrong_fail += "PASS" not in got
        m = len(allv)
        print(f"verify alone: right->PASS {100.0 * right_pass / m:.1f}%   wrong->FAIL {100.0 * wrong_fail / m:.1f}%"
              f"   balanced accuracy {50.0 * (right_pass + wrong_fail) / m:.1f}% ({m} + {m})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
