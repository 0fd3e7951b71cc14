# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""vs_llama_cpp.json -> a PNG: decode and prefill tokens/s of baton and llama.cpp at each
precision (medians over rounds, bars; whiskers min..max), and decode's fraction of the read
bandwidth measured in the same rounds. Usage: plot.py IN.json OUT.png"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> int:
    data = json.load(open(sys.argv[1]))
    summary = data["summary"]
    keys = [k for k in summary if k.startswith("idle/") and "prefill128_ratio" in summary[k]]
    panels = [("decode tokens/s (64 after 128)", "decode_tokens_per_s"),
              ("prefill tokens/s (128)", "prefill128_tokens_per_s"),
              ("prefill tokens/s (512)", "prefill512_tokens_per_s"),
              ("decode / read bandwidth", "bandwidth_fraction")]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.5))
    labels = [k.removeprefix("idle/") for k in keys]
    x = range(len(keys))
    for ax, (title, field) in zip(axes, panels):
        for j, (eng, name) in enumerate((("baton", "baton"), ("llama", "llama.cpp"))):
            st = [summary[k][f"{eng}_{field}"] for k in keys]
            med = [s["median"] if s else 0 for s in st]
            err = [[m - (s["min"] if s else 0) for m, s in zip(med, st)],
                   [(s["max"] if s else 0) - m for m, s in zip(med, st)]]
            ax.bar([i + 0.4 * j - 0.2 for i in x], med, 0.4, yerr=err, capsize=2, label=name)
        ax.set_title(title)
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
        if field == "bandwidth_fraction":
            ax.axhline(0.9, color="gray", linestyle="--", linewidth=1)
        ax.legend(fontsize=8)
    isa = f", baton capped at {data['baton_isa']}" if data.get("baton_isa") else ""
    info = data.get("llama_system_info") or ""
    if info and "AVX512 = 1" not in info and "AVX2 = 1" in info:
        isa += ", llama.cpp built for AVX2"
    fig.suptitle(f"baton vs llama.cpp, {data['threads']} threads, {data['rounds']} interleaved rounds{isa} "
                 "(medians; whiskers: min-max over rounds)")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print(f"plot.py: wrote {sys.argv[2]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
