# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The demo relay's variants side by side on the held-out problems, through baton.

  python3 training/eval_variants.py --baton build/dev/tools/baton [--model models/word-problems]
      [--configs relay.json,relay-activated.json] [--n 500] [--threads 2]

Each relay file (in --model) runs every held-out question in one `baton relay --requests FILE
--sequential --json` process (one request after another on the pre-warmed relay). Reported per
split (seen, unseen_template, unseen_fact, all): extract equals the facts, reason's first answer
is right, the gated relay's final answer is right, mean cycles; and over all questions the median
time per relay and the mean prefill tokens per relay (every stage input plus what the base
appended to a shared sequence). Standard library only. A Markdown table on stdout.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

SPLITS = ("seen", "unseen_template", "unseen_fact")


def run(baton, config, questions, threads):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for q in questions:
            f.write(json.dumps({"text": q}) + "\n")
        path = f.name
    try:
        out = subprocess.run([baton, "relay", "--config", config, "--requests", path, "--sequential", "--json",
                              "--threads", str(threads)], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{\"")]
    return [r for r in rows if "request" in r]


def score(rows, results):
    by = {s: [] for s in (*SPLITS, "all")}
    for row, res in zip(rows, results):
        texts = lambda name: [s["text"].strip() for s in res["stages"] if s["name"] == name]  # noqa: E731
        ext, reasons = texts("extract"), texts("reason")
        facts = bool(ext) and ext[0] == row["facts"]
        first = bool(reasons) and reasons[0] == row["worked"]
        final = bool(reasons) and reasons[-1] == row["worked"]
        for s in (row["split"], "all"):
            by[s].append((facts, first, final, res["cycles"]))
    return by


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baton", default="build/dev/tools/baton")
    ap.add_argument("--model", default="models/word-problems")
    ap.add_argument("--configs", default="relay.json,relay-activated.json")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    with open(os.path.join(a.model, "heldout.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][: a.n]
    pct = lambda xs, k: f"{100.0 * sum(x[k] for x in xs) / max(len(xs), 1):.1f}%"  # noqa: E731
    print("| relay | metric | " + " | ".join(f"{s} ({sum(r['split'] == s for r in rows)})" for s in SPLITS)
          + f" | all ({len(rows)}) |")
    print("| --- | --- |" + " --- |" * (len(SPLITS) + 1))
    for name in a.configs.split(","):
        results = run(a.baton, os.path.join(a.model, name), [r["question"] for r in rows], a.threads)
        if len(results) != len(rows):
            sys.exit(f"{name}: {len(results)} results for {len(rows)} questions")
        errors = [r for r in results if r["verdict"] == "error"]
        if errors:
            sys.exit(f"{name}: {len(errors)} relays failed, e.g. {errors[0].get('error')}")
        by = score(rows, results)
        cols = (*SPLITS, "all")
        for label, k in (("extract equals the facts", 0), ("reason's first answer", 1),
                         ("gated relay, final answer", 2)):
            print(f"| {name} | {label} | " + " | ".join(pct(by[s], k) for s in cols) + " |")
        print(f"| {name} | mean cycles | " + " | ".join(
            f"{statistics.mean(x[3] for x in by[s]):.2f}" for s in cols) + " |")
        ms = statistics.median(r["total_ms"] for r in results)
        tok = statistics.mean(r.get("prefill_tokens", float("nan")) for r in results)
        print(f"| {name} | per relay: median ms, mean prefill tokens | | | | {ms:.2f} ms, {tok:.0f} tokens |")


if __name__ == "__main__":
    main()
