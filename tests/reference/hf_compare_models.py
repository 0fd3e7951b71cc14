# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""hf_compare.py's part on the models the reference made itself (hf_models.py's folder).

generate: every case of reference.json through `baton generate --step-logits` on the host
backend, against the logits transformers wrote (reference.safetensors; transformers is not run
again):
  - the greedy ids over all STEPS steps are identical, up to the first near-tie of the
    reference (top-1 - top-2 < NEAR_TIE: either of the tied ids is accepted there, and the
    steps after it are not compared);
  - every compared step's logits row (the near-tie step's included: its context is still the
    same on both sides) is within LOGIT_RTOL * max(1, |hf|), entry by entry.

relay: per family, a two-stage `baton relay --json` on the host backend (ChatML system
prefixes, a text request, the second stage reading the first's output; two different
adapters; an unreachable stop, so each stage runs its whole max_new) against transformers +
peft greedy on the same ids. The ids each stage reads are rendered with
training/relay_format.py (its prefix() and encode(), which mirror baton's text relay), with
the first stage's ids as baton generated them spliced in for {"out": ...}: baton hands ids on,
never text, and a random model's ids need not survive a decode/encode round trip. The relay's
--json reports only how many ids a stage read ("input_tokens"); that count is checked against
the rendering.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "training"))

# Relays known not to match yet, with the reason. A listed relay that matches fails the test
# (so the entry is removed when the cause is fixed); one that differs is reported, not failed.
RELAY_EXPECTED_FAILURES = {}
RELAY_STEPS = 24
RELAY_QUESTION = "Tom has 12 marbles and gives 5 away. How many are left?"


def baton_env():
    # Threads that spin at OpenMP barriers stall badly on a busy machine (ctest runs tests in
    # parallel); sleeping at barriers changes only the speed, never the numbers.
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "passive")
    return env


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=baton_env())
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def compare_ids(b_ids, h_ids, gaps, tied, steps, near_tie):
    """The near-tie rule. Returns (steps compared, problems, note): ids equal step by step; at
    the first step whose reference gap is below near_tie, any id in tied[s] is accepted and
    the comparison ends there."""
    problems, note, compared = [], "", 0
    if len(b_ids) != steps:
        problems.append(f"baton returned {len(b_ids)} ids, expected {steps}")
    for s in range(min(len(b_ids), len(h_ids))):
        compared = s + 1
        if gaps[s] < near_tie:
            if b_ids[s] not in tied[s]:
                problems.append(f"step {s} is a near-tie in HF between {sorted(tied[s])}, but baton chose {b_ids[s]}")
            note = (
                f"; step {s} is a near-tie in HF (top-2 gap {gaps[s]:.2g} < {near_tie}): either token "
                f"accepted (baton {b_ids[s]}, HF {h_ids[s]}), later steps not compared"
            )
            break
        if b_ids[s] != h_ids[s]:
            problems.append(
                f"greedy ids differ at step {s} (HF top-2 gap {gaps[s]:.3g}): baton {b_ids[: s + 1]} HF {h_ids[: s + 1]}"
            )
            break
    return compared, problems, note


class Worst:
    """The largest logit difference per (family, storage), absolute and relative to the
    tolerance's scale max(1, |hf|)."""

    def __init__(self):
        self.rows = {}

    def add(self, key, abs_diff, rel_diff):
        a, r = self.rows.get(key, (0.0, 0.0))
        self.rows[key] = (max(a, abs_diff), max(r, rel_diff))

    def print(self, rtol):
        print(f"worst logit difference per family and storage (bound {rtol} * max(1, |hf|)):")
        for (fam, storage), (a, r) in sorted(self.rows.items()):
            print(f"  {fam:12} {storage:5} max abs {a:.3g}  max abs / max(1,|hf|) {r:.3g}")


def compare_generate(baton, folder, only, rtol, near_tie, worst):
    """Every case of folder/reference.json. Returns (cases, steps compared, failures)."""
    import safetensors.torch
    import torch

    with open(os.path.join(folder, "reference.json")) as f:
        ref = json.load(f)
    logits = safetensors.torch.load_file(os.path.join(folder, "reference.safetensors"))
    steps = ref["steps"]
    cases, steps_compared, failures = 0, 0, []
    for c in ref["cases"]:
        adapter = c["adapter"]
        label = f"{c['model']}{' + ' + os.path.basename(adapter) if adapter else ''}, prompt of {len(c['prompt'])}"
        if "alora" in c:  # peft's generate() on an activated LoRA (hf_models.py)
            label += f", aLoRA prompt '{c['alora']['prompt']}'"
        if only and only not in label:
            continue
        cases += 1
        cmd = [baton, "generate", "--model", os.path.join(folder, c["model"])]
        if adapter:
            cmd += ["--adapter", os.path.join(folder, adapter)]
        cmd += ["--ids", ",".join(map(str, c["prompt"])), "--max-new", str(steps)]
        cmd += ["--ignore-eos", "--json", "--step-logits", "--backend", "host"]
        try:
            out = run_json(cmd)
        except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
            failures.append(f"{label}: baton failed: {e}")
            print(f"FAIL {label}: baton failed: {e}")
            continue
        h = logits[c["logits"]].double()
        tied = [set(torch.nonzero(row >= row.max() - near_tie).flatten().tolist()) for row in h]
        compared, problems, note = compare_ids(out["ids"], c["tokens"], c["gaps"], tied, steps, near_tie)
        rows = out.get("step_logits") or []
        max_abs, max_rel = 0.0, 0.0
        for s in range(compared):
            row = rows[s] if s < len(rows) else None
            if row is None or len(row) != h.shape[1] or any(v is None for v in row):
                problems.append(f"step {s}: baton's logits row is missing, short or not finite")
                max_abs = max_rel = float("inf")
                break
            b = torch.tensor(row, dtype=torch.float64)
            diff = (b - h[s]).abs()
            scale = torch.clamp(h[s].abs(), min=1.0)
            max_abs = max(max_abs, float(diff.max()))
            max_rel = max(max_rel, float((diff / scale).max()))
            excess = diff - rtol * scale
            if float(excess.max()) > 0:
                j = int(torch.argmax(excess))
                problems.append(
                    f"step {s} logits differ beyond {rtol}*max(1,|logit|): id {j} baton {float(b[j]):.6g} "
                    f"HF {float(h[s][j]):.6g} (max abs diff {float(diff.max()):.3g})"
                )
                break
        worst.add((c["family"], c["storage"]), max_abs, max_rel)
        steps_compared += compared
        status = "FAIL" if problems else "ok"
        print(
            f"{status:4} {label}: logits max abs diff {max_abs:.3g} over {compared} steps "
            f"(largest |logit| {float(h.abs().max()):.3g}); tokens compared {compared}/{steps}{note}"
        )
        for p in problems:
            print(f"       {p}")
            failures.append(f"{label}: {p}")
    return cases, steps_compared, failures


# ---------------------------------------------------------------------------------------
# Relays
# ---------------------------------------------------------------------------------------
def relay_file(folder, family, path):
    """Two stages with different adapters; the second reads the request and the first's ids.
    Paths are absolute (the file lives in a temporary folder). The stop is <|im_end|>, which
    relay_format.py needs (one stop text per stage) and which these random models do not choose
    within RELAY_STEPS (were one to, both sides stop there, and the output says so)."""
    chat_user = {"text": "<|im_start|>user\n"}
    chat_end = {"text": "<|im_end|>\n<|im_start|>assistant\n"}
    cfg = {
        "model": os.path.join(folder, family),
        "tokenizer": os.path.join(folder, family, "tokenizer.json"),
        "backend": "host",
        "stages": [
            {
                "name": "draft",
                "adapter": os.path.join(folder, "adapters", family, "lora-attn-r64"),
                "system": "Write the arithmetic in the problem.",
                "input": [chat_user, {"request": True}, chat_end],
                "max_new": RELAY_STEPS,
                "stop_text": ["<|im_end|>"],
            },
            {
                "name": "check",
                "adapter": os.path.join(folder, "adapters", family, "rslora-all-r1"),
                "system": "Check the draft.",
                "input": [chat_user, {"request": True}, {"text": "\nDraft: "}, {"out": "draft"}, chat_end],
                "max_new": RELAY_STEPS,
                "stop_text": ["<|im_end|>"],
            },
        ],
        "max_request_tokens": 160,
    }
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    return cfg


def stage_ids(fmt, stage, question, outs):
    """prefix + input ids of `stage` as baton renders them, `outs` = {stage: generated ids}."""
    ids = []
    for seg in fmt.stages[stage]["input"]:
        if "text" in seg:
            ids += fmt.encode(seg["text"])
        elif seg.get("request"):
            ids += fmt.encode(question)
        elif "out" in seg:
            ids += outs[seg["out"]]
        else:
            raise ValueError(f"segment {seg} is not used here")
    return fmt.prefix(stage), ids


def hf_greedy(torch, model, ids, steps, stop):
    """Greedy with the KV cache until `steps` ids or `stop` is chosen (not kept). Returns the
    ids, each step's top-2 gap and the ids tied with the top within NEAR_TIE of each step."""
    tokens, gaps, rows = [], [], []
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), use_cache=True)
        for s in range(steps):
            row = out.logits[0, -1].double()
            top2 = torch.topk(row, 2).values
            gaps.append(float(top2[0] - top2[1]))
            rows.append(row)
            t = int(torch.argmax(row))
            if t == stop:
                break
            tokens.append(t)
            if s + 1 < steps:
                out = model(input_ids=torch.tensor([[t]]), past_key_values=out.past_key_values, use_cache=True)
    return tokens, gaps, rows


def compare_relays(baton, folder, only, near_tie, load_hf):
    """One two-stage relay per family (the float32 models). Returns (relays, stages compared,
    steps compared, failures, expected failures seen)."""
    import torch
    from relay_format import RelayFormat

    with open(os.path.join(folder, "reference.json")) as f:
        fams = sorted({c["family"] for c in json.load(f)["cases"]})
    relays = stages_compared = steps_compared = 0
    failures, expected = [], []
    with tempfile.TemporaryDirectory(prefix="baton-hf-relay-") as tmp:
        for fam in fams:
            label = f"relay {fam}"
            if only and only not in label:
                continue
            relays += 1
            path = os.path.join(tmp, f"relay-{fam}.json")
            cfg = relay_file(folder, fam, path)
            problems, notes = [], []
            try:
                out = run_json([baton, "relay", "--config", path, "--json", "--backend", "host", RELAY_QUESTION])
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                out, problems = None, [f"baton failed: {e}"]
            if out is not None:
                fmt = RelayFormat(path)
                runs = {r["name"]: r for r in out["stages"]}
                outs = {}
                for st in cfg["stages"]:
                    name = st["name"]
                    if name not in runs:
                        problems.append(f"stage {name} did not run")
                        break
                    prefix, ids = stage_ids(fmt, name, RELAY_QUESTION, outs)
                    b_ids = runs[name]["ids"]
                    outs[name] = b_ids  # what the next stage reads, as baton handed it on
                    if runs[name]["input_tokens"] != len(ids):
                        problems.append(
                            f"stage {name}: baton read {runs[name]['input_tokens']} ids, the rendering has {len(ids)}"
                        )
                    model = load_hf(os.path.join(folder, fam), st["adapter"])
                    h_ids, gaps, rows = hf_greedy(torch, model, prefix + ids, st["max_new"], fmt.stop[name])
                    del model
                    if len(h_ids) != st["max_new"]:
                        notes.append(f"{name}: HF stopped at <|im_end|> after {len(h_ids)} ids")
                    tied = [set(torch.nonzero(r >= r.max() - near_tie).flatten().tolist()) for r in rows]
                    compared, p, note = compare_ids(b_ids, h_ids, gaps, tied, len(h_ids), near_tie)
                    stages_compared += 1
                    steps_compared += compared
                    notes.append(f"{name}: {len(prefix)}+{len(ids)} ids in, tokens compared {compared}/{len(h_ids)}{note}")
                    problems += [f"stage {name}: {x}" for x in p]
            xfail = RELAY_EXPECTED_FAILURES.get(fam)
            detail = "; ".join(notes)
            if problems and xfail:
                expected.append(label)
                print(f"XFAIL {label}: {xfail} ({problems[0]})")
            elif problems:
                print(f"FAIL {label}: {detail}")
                for p in problems:
                    print(f"       {p}")
                    failures.append(f"{label}: {p}")
            elif xfail:
                msg = f"matches transformers although listed as expected to fail ('{xfail}'): remove it from RELAY_EXPECTED_FAILURES"
                print(f"FAIL {label}: {msg}")
                failures.append(f"{label}: {msg}")
            else:
                print(f"ok   {label}: {detail}")
    return relays, stages_compared, steps_compared, failures, expected
