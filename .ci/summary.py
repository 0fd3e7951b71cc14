#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The end of .ci/run: the phase table against the budgets, what this machine could not run,
and the test counts; writes the same as JSON. Exits 1 when a test was skipped that this machine
could have run (under CI=true only the GPU tests may skip), or when EXPECT_TESTS is 1 (a phase
that runs ctest ran) and no test result was found.

    summary.py CI_DIR TOTAL_BUDGET_S WALL_S OUT_JSON EXPECT_TESTS

The total is the run's wall-clock time WALL_S (a phase may run beside others), against
TOTAL_BUDGET_S (the cold goal when any phase ran with a cold compiler cache, else the warm one).
CI_DIR holds phases.tsv (name, seconds, budget, cache state, status per line), caches.txt (each
compiling phase's compiler-cache hits and misses), junit-*.xml (ctest
--output-junit), not-run.txt (what passing tests could not run: "WHAT: WHY" per line) and
gpu-tests.txt (the names of the tests labelled cuda).
"""
import glob
import json
import os
import sys
import xml.etree.ElementTree as ET


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def main():
    ci_dir, total_budget, wall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    out_json, expect_tests = sys.argv[4], sys.argv[5] == "1"
    phases = []
    for line in read_lines(os.path.join(ci_dir, "phases.tsv")):
        name, seconds, budget, caches, status = line.split("\t")
        phases.append({"name": name, "seconds": int(seconds), "budget_s": int(budget),
                       "caches": caches, "status": status})
    caches = "cold" if any(p["caches"] == "cold" for p in phases) else "warm"
    total = wall
    gpu_tests = set(read_lines(os.path.join(ci_dir, "gpu-tests.txt")))

    passed = failed = skipped = 0
    not_run, unexpected = [], []
    for junit in sorted(glob.glob(os.path.join(ci_dir, "junit-*.xml"))):
        run = os.path.basename(junit)[len("junit-"):-len(".xml")]
        for case in ET.parse(junit).getroot().iter("testcase"):
            name, status = case.get("name"), case.get("status")
            if case.find("failure") is not None or status == "fail":
                failed += 1
            elif case.find("skipped") is not None or status in ("notrun", "disabled"):
                skipped += 1
                if name in gpu_tests:
                    not_run.append(f"{name} ({run}): no GPU on this machine (exit 77 without a "
                                   "visible CUDA device)")
                else:
                    unexpected.append(f"{name} ({run})")
            else:
                passed += 1
    # Inside passing tests: kernels for instruction sets this CPU lacks, GPU comparisons.
    seen = set()
    for line in read_lines(os.path.join(ci_dir, "not-run.txt")):
        if line not in seen:
            seen.add(line)
            not_run.append(line)

    print("\n== .ci/run phases")
    print(f"  {'phase':<58} {'time':>7} {'budget':>8}  {'caches':<6} status")
    for p in phases:
        flag = "" if p["seconds"] <= p["budget_s"] else "  OVER BUDGET"
        print(f"  {p['name'][:58]:<58} {p['seconds']:>5} s {p['budget_s']:>6} s  {p['caches']:<6} "
              f"{p['status']}{flag}")
    print(f"  {'total (wall clock)':<58} {total:>5} s {total_budget:>6} s"
          f"  ({caches} caches: {100.0 * total / total_budget:.0f}% of {total_budget // 60} minutes;"
          f" {100.0 * total / 1800:.0f}% of 30)")
    for line in read_lines(os.path.join(ci_dir, "caches.txt")):
        print(f"  ({line})")
    if not_run:
        print("\n== NOT RUN (this machine cannot run them)")
        for line in not_run:
            print(f"  NOT RUN  {line}")
    if unexpected:
        print("\n== SKIPPED, which CI=true does not allow (this machine could run them)")
        for name in unexpected:
            print(f"  {name}")
    ok = not unexpected and (passed + failed > 0 or not expect_tests)
    if expect_tests and passed + failed == 0:
        print("\n== no test result found (no junit-*.xml in build/ci)")
    with open(out_json, "w") as f:
        json.dump({"phases": phases, "total_s": total, "total_budget_s": total_budget,
                   "caches": caches,
                   "tests": {"passed": passed, "failed": failed, "skipped": skipped},
                   "not_run": not_run, "unexpected_skips": unexpected}, f, indent=2)
    print(f"\n{passed} passed, {failed} failed, {skipped} skipped")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
