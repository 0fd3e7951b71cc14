# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The serving benchmark's plot (serve_bench.py's JSON): the 155M model's generated tokens/s
and its p50 latency and time to first token, baton serve beside llama-server; and the bundled
word-problems relay's requests/s, each against concurrent clients."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

data = json.load(open(sys.argv[1]))
lines = {}
for r in data["runs"]:
    lines.setdefault((r["engine"], r["workload"]), []).append(r)
for runs in lines.values():
    runs.sort(key=lambda r: r["concurrency"])
fig, (a, b, c) = plt.subplots(1, 3, figsize=(14, 4))
for (engine, workload), runs in lines.items():
    x = [r["concurrency"] for r in runs]
    name = f"{engine} · {workload}"
    if workload == "word-problems":
        c.plot(x, [r["requests_per_s"] for r in runs], marker="o", label=name)
        continue
    a.plot(x, [r["generated_tokens_per_s"] for r in runs], marker="o", label=name)
    b.plot(x, [r["latency_ms_p50"] / 1e3 for r in runs], marker="o", label=f"{name}: latency")
    b.plot(x, [r["ttft_ms_p50"] / 1e3 for r in runs], marker="x", linestyle="--",
           label=f"{name}: first token")
for ax, title in ((a, "155M: generated tokens/s"), (b, "155M: p50 seconds"),
                  (c, "word-problems relay: requests/s")):
    ax.set_xscale("log", base=2)
    ax.set_xlabel("concurrent clients")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
fig.suptitle(f"baton serve and llama-server on loopback, {data['threads']} threads each")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
