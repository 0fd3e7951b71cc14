# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""batch_bench.json -> a PNG: generated tokens/s against requests in flight (baton's batched
relay, llama.cpp's batched decoding, and the sequential relay run beside each), and per-request latency
p50/p99 (medians over rounds). Usage: plot.py IN.json OUT.png"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> int:
    data = json.load(open(sys.argv[1]))
    s = data["summary"]
    n = [r["parallel"] for r in s]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.5))
    a.plot(n, [r["tps"] for r in s], "o-", label="baton, batched relay")
    a.plot(n, [r["llama"] for r in s], "s-", label="llama.cpp, batched decoding")
    a.plot(n, [r["seq"] for r in s], "x--", color="gray",
           label="baton, one request at a time (run beside)")
    a.set_xscale("log", base=2)
    a.set_xlabel("requests in flight")
    a.set_ylabel("generated tokens/s")
    a.set_title("throughput (3-stage relay, 155M bf16, 2 threads)")
    a.legend()
    b.plot(n, [r["p50"] / 1e3 for r in s], "o-", label="baton p50")
    b.plot(n, [r["p99"] / 1e3 for r in s], "o--", label="baton p99")
    b.plot(n, [r["llama_p50"] / 1e3 for r in s], "s-", label="llama.cpp p50")
    b.set_xscale("log", base=2)
    b.set_xlabel("requests in flight")
    b.set_ylabel("request latency (s)")
    b.set_title("latency per request")
    b.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
