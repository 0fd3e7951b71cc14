# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The serving benchmark's plot: generated tokens/s and p50 latency against concurrency, one
line per engine and workload (serve_bench.py's JSON)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

data = json.load(open(sys.argv[1]))
lines = {}
for r in data["runs"]:
    lines.setdefault(f"{r['engine']} · {r['workload']}", []).append(r)
fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
for name, runs in lines.items():
    runs.sort(key=lambda r: r["concurrency"])
    c = [r["concurrency"] for r in runs]
    a.plot(c, [r["generated_tokens_per_s"] for r in runs], marker="o", label=name)
    b.plot(c, [r["latency_ms_p50"] for r in runs], marker="o", label=name)
for ax, title in ((a, "generated tokens/s"), (b, "latency p50 (ms)")):
    ax.set_xscale("log", base=2)
    ax.set_xlabel("concurrent clients")
    ax.set_title(title)
    ax.grid(alpha=0.3)
a.legend(fontsize=8)
fig.suptitle(f"baton serve vs llama-server, loopback, {data['threads']} threads")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
