# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Check that baton's tokenizer gives the same ids as Hugging Face `tokenizers` on the demo
model's tokenizer.json, over held-out questions, stage outputs and the relay's literal texts.

  $PY training/check_tokenizer.py --baton build/dev/tools/baton --model models/word-problems [--n 300]
"""
import argparse
import json
import os
import subprocess
import sys

from tokenizers import Tokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baton", default="build/dev/tools/baton")
    ap.add_argument("--model", default="models/word-problems")
    ap.add_argument("--n", type=int, default=300)
    args = ap.parse_args()
    path = os.path.join(args.model, "tokenizer.json")
    tok = Tokenizer.from_file(path)
    strings = []
    with open(os.path.join(args.model, "relay.json"), encoding="utf-8") as f:
        relay = json.load(f)
    for s in relay["stages"]:
        strings.append("<|im_start|>system\n" + s["system"] + "<|im_end|>\n")
        strings += [seg["text"] for seg in s["input"] if "text" in seg]
    with open(os.path.join(args.model, "heldout.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    for r in rows:
        strings += [r["question"], r["facts"], r["worked"], r["wrong"],
                    r["question"] + "\nAnswer: " + r["worked"] + "  PASS\n\n  x"]
    strings += ["PASS", "FAIL", "It's 12 o'clock, isn't it?  Mia's  café: 3–4 ÿ€ 🙂 \t\n\r\n end",
                "<|im_end|><|im_start|>user\n<|endoftext|>", "<|im_start", "  leading and trailing  "]
    strings = strings[: args.n] + strings[-6:]
    bad = 0
    for s in strings:
        want = tok.encode(s, add_special_tokens=False).ids
        p = subprocess.run([args.baton, "tokenize", "--tokenizer", path, "--json"], input=s.encode("utf-8"),
                           capture_output=True, check=False)
        got = json.loads(p.stdout) if p.returncode == 0 else p.stderr.decode()
        if got != want:
            bad += 1
            if bad <= 5:
                print(f"MISMATCH {s!r}\n  hf    {want}\n  baton {got}")
    print(f"{len(strings) - bad}/{len(strings)} strings tokenize identically")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
