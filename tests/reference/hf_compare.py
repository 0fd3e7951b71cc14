# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""baton against Hugging Face transformers + peft, run at test time.

usage: hf_compare.py --baton BATON [--golden DIR] [--bundled DIR] [--hf-models DIR]
                     [--only TEXT] [--list]

For every case (model folder, optional PEFT adapter, prompt ids, number of steps) of the golden
models (--golden) and the bundled demo model (--bundled) it runs
`baton generate ... --ignore-eos --json --logits` and the same greedy decode in transformers
(float32 math; bfloat16 weights are widened to float32 exactly, as baton does; adapters through
peft.PeftModel, unmerged), and asserts

  (a) the greedy token ids are identical. A step where Hugging Face's top-1 and top-2 logits
      are closer than NEAR_TIE is a near-tie: either token is accepted there, and the ids
      after it are not compared (the output says so);
  (b) the first logits row (the last prompt position, which chooses the first token) agrees:
      |baton - hf| <= LOGIT_RTOL * max(1, |hf|) for every vocabulary entry.

Tolerance: both sides compute in float32 but sum in different orders (baton's blocked GEMV/
GEMM and its own softmax/RoPE vs PyTorch's kernels). On the golden models two independent
float32 implementations differ by <= 6.4e-5 (tests/golden/README.md); measured here, baton vs
transformers: <= 4.2e-5 on the golden models (|logits| up to ~33) and ~2e-6 on the bundled
model (|logits| < 5). Rounding error grows with width, depth and logit size, so the bound is
relative: 1e-3 * max(1, |logit|) keeps >= 20x headroom over what was measured, while the bugs
this test exists to catch (RoPE theta or layout, LoRA scale, rsLoRA, biases, GQA mapping) move
first logits by 0.1 to 20 (that README's injected-bug table), far beyond it; RoPE bugs leave a
1-token prompt's first logits alone (position 0), and the greedy ids catch them.
NEAR_TIE is 1e-4: a gap that small is within the float32 disagreement itself, so either order
is correct; a larger gap must give the same token.

--hf-models DIR names the models transformers made itself (hf_models.py, the `hf_models` ctest
fixture): Qwen2, Llama 3.2-style and Qwen3 models in f32, bf16 and f16, with LoRA and rsLoRA
adapters of rank 1 and 64. Their cases come with the reference's own logits for every step, so
the comparison there is stricter: the same token rule over 32 steps, and EVERY step's logits
(up to and including the first near-tie) within the same bound; then a two-stage `baton relay`
per family against transformers + peft (hf_compare_models.py says how). The worst difference
per family and storage is printed at the end.

The reference python is $BATON_REFERENCE_PYTHON (scripts/test.sh sets it). When it is unset or
cannot import torch/transformers/peft/tokenizers the test prints "skipped: no torch" and exits
77, except under CI=true, where it exits 1 (reference_python.py).

To add a model: append a Family in golden_families(), or build one from a folder the way
bundled_family() does and add it in main(); or a family in hf_models.py.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_python  # noqa: E402

LOGIT_RTOL = 1e-3
NEAR_TIE = 1e-4


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------
class Family:
    """One model folder, the adapters that fit it, and the prompts to run on each pairing."""

    def __init__(self, name, model_dir, adapters, prompts, steps):
        self.name = name
        self.model_dir = model_dir
        self.adapters = adapters  # [(name, dir)]; "no adapter" is always run as well
        self.prompts = prompts  # [[ids]], or {adapter name or None: [[ids]]}
        self.steps = steps

    def prompts_for(self, adapter_name):
        if isinstance(self.prompts, dict):
            return self.prompts[adapter_name]
        return self.prompts


def random_prompts(seed, vocab, lengths):
    import random

    rng = random.Random(seed)
    return [[rng.randrange(vocab) for _ in range(n)] for n in lengths]


def golden_families(golden):
    """The golden fixtures: every model x {no adapter, each adapter made for it}. Prompts are
    fresh (not golden.json's), drawn from a seeded generator, and include the vocabulary's
    ends; 10 steps each keeps prompt + steps inside max_position_embeddings (128)."""
    qwen_c_adapters = [(a, os.path.join(golden, a)) for a in ("qwen-c-lora-qv", "qwen-c-lora-all")]
    c_prompts = random_prompts(5101, 384, (1, 4, 29))
    c_prompts[1] = [0, 383] + c_prompts[1] + [383]  # the vocabulary's first and last ids
    e_prompts = random_prompts(5102, 520, (1, 4, 40))
    e_prompts[1] = [519] + e_prompts[1] + [0, 519]
    return [
        Family("qwen-c", os.path.join(golden, "qwen-c"), qwen_c_adapters, c_prompts, 10),
        Family("qwen-c-bf16", os.path.join(golden, "qwen-c-bf16"), qwen_c_adapters, c_prompts, 10),
        Family(
            "qwen-e",
            os.path.join(golden, "qwen-e"),
            [("qwen-e-lora-1", os.path.join(golden, "qwen-e-lora-1"))],
            e_prompts,
            10,
        ),
    ]


BUNDLED_QUESTIONS = [
    "Sam has 9 apples and eats 4 of them. How many apples are left?",
    "A shelf holds 6 rows of 8 books, and 13 books are taken away. How many books are on the shelf now?",
]


def bundled_family(folder):
    """The bundled demo model (models/word-problems) with no adapter and each of its adapters;
    prompts are ChatML-wrapped questions (with the system line of the relay stage that uses the
    adapter, from relay.json), tokenized by its own tokenizer.json with Hugging Face's
    tokenizers."""
    import tokenizers

    if not os.path.isfile(os.path.join(folder, "config.json")):
        print(f"note: no bundled model at {folder} (no config.json): its cases are not run")
        return None
    adapters_dir = os.path.join(folder, "adapters")
    adapters = []
    if os.path.isdir(adapters_dir):
        for a in sorted(os.listdir(adapters_dir)):
            if os.path.isfile(os.path.join(adapters_dir, a, "adapter_config.json")):
                adapters.append((a, os.path.join(adapters_dir, a)))
    systems = {}
    try:
        with open(os.path.join(folder, "relay.json")) as f:
            for st in json.load(f).get("stages", []):
                if st.get("adapter") and st.get("system"):
                    systems[os.path.basename(os.path.normpath(st["adapter"]))] = st["system"]
    except (OSError, ValueError):
        pass
    tok = tokenizers.Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))

    def chatml(system):
        return [
            tok.encode(
                f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{q}<|im_end|>\n"
                "<|im_start|>assistant\n",
                add_special_tokens=False,
            ).ids
            for q in BUNDLED_QUESTIONS
        ]

    prompts = {None: chatml("You are a helpful assistant.")}
    for a, _ in adapters:
        prompts[a] = chatml(systems.get(a, "You are a helpful assistant."))
    return Family("word-problems", folder, adapters, prompts, 8)


# ---------------------------------------------------------------------------------------
# The two sides
# ---------------------------------------------------------------------------------------
def run_baton(baton, model_dir, adapter_dir, ids, steps):
    cmd = [baton, "generate", "--model", model_dir]
    if adapter_dir:
        cmd += ["--adapter", adapter_dir]
    cmd += ["--ids", ",".join(map(str, ids)), "--max-new", str(steps), "--ignore-eos", "--json", "--logits"]
    # Threads that spin at OpenMP barriers stall badly on a busy machine (ctest runs tests in
    # parallel); sleeping at barriers changes only the speed, never the numbers.
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "passive")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    out = json.loads(r.stdout)
    return out["ids"], out["logits"]


def load_hf(model_dir, adapter_dir):
    import torch
    from transformers import AutoModelForCausalLM

    # float32 math; a bfloat16 file is widened to float32 exactly on load.
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager")
    if adapter_dir:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter_dir)
    model.eval()
    return model


def run_hf(model, ids, steps):
    """Greedy decode with the KV cache: the prompt at positions 0..n-1 in one batch, then one
    token per step; argmax with the lowest id on an exact tie (torch.argmax's rule), no stop
    at EOS. Returns the ids, the first logits row, each step's top-1 - top-2 gap and the ids
    within NEAR_TIE of each step's top."""
    import torch

    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), use_cache=True)
        past = out.past_key_values
        row = out.logits[0, -1].float()
        first = row.clone()
        tokens, gaps, tied = [], [], []
        for s in range(steps):
            top2 = torch.topk(row, 2).values
            gaps.append(float(top2[0] - top2[1]))
            # the ids within NEAR_TIE of the top: any of them is a correct choice at a near-tie
            tied.append(set(torch.nonzero(row >= top2[0] - NEAR_TIE).flatten().tolist()))
            t = int(torch.argmax(row))
            tokens.append(t)
            if s + 1 == steps:
                break
            out = model(input_ids=torch.tensor([[t]]), past_key_values=past, use_cache=True)
            past = out.past_key_values
            row = out.logits[0, -1].float()
    return tokens, first, gaps, tied


def compare_hf_models(args):
    """--hf-models: generate (every step's logits) and relays. Returns (cases, steps compared,
    failures); a relay stage counts as a case."""
    import hf_compare_models as m

    args.hf_models = os.path.abspath(args.hf_models)  # the relay files name folders from elsewhere
    with open(os.path.join(args.hf_models, "reference.json")) as f:
        ref = json.load(f)
    if args.list:
        for c in ref["cases"]:
            print(f"{c['model']} + {c['adapter'] or 'no adapter'}: prompt of {len(c['prompt'])} x {ref['steps']} steps")
        print("relays: one two-stage relay per family:", ", ".join(sorted({c["family"] for c in ref["cases"]})))
        return 0, 0, []
    t0 = time.monotonic()
    worst = m.Worst()
    cases, steps, failures = m.compare_generate(args.baton, args.hf_models, args.only, LOGIT_RTOL, NEAR_TIE, worst)
    print(f"hf-models generate: {cases} cases, {steps} steps compared, {time.monotonic() - t0:.1f} s")
    t1 = time.monotonic()
    relays, stages, relay_steps, relay_failures, expected = m.compare_relays(
        args.baton, args.hf_models, args.only, NEAR_TIE, load_hf
    )
    print(
        f"hf-models relay: {relays} relays, {stages} stages, {relay_steps} steps compared"
        f"{f', expected failures: {expected}' if expected else ''}, {time.monotonic() - t1:.1f} s"
    )
    worst.print(LOGIT_RTOL)
    return cases + stages, steps + relay_steps, failures + relay_failures


# ---------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baton", required=True, help="the baton program")
    ap.add_argument("--golden", help="the generated golden fixtures folder")
    ap.add_argument("--bundled", help="the bundled demo model folder (models/word-problems)")
    ap.add_argument("--hf-models", help="the models transformers made (hf_models.py --out)")
    ap.add_argument("--only", help="run only cases whose label contains this text")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    args = ap.parse_args()
    if not (args.golden or args.hf_models):
        ap.error("give --golden DIR, --hf-models DIR or both")

    reference_python.reexec_under_reference_python(__file__)
    torch = reference_python.require_reference()
    if not os.access(args.baton, os.X_OK):
        print(f"FAILED: baton program {args.baton} is missing")
        return 1
    for m in ("qwen-c", "qwen-c-bf16", "qwen-e") if args.golden else ():
        if not os.path.isfile(os.path.join(args.golden, m, "config.json")):
            print(f"FAILED: golden fixture {m} missing under {args.golden} (the `golden` ctest fixture writes it)")
            return 1
    if args.hf_models and not os.path.isfile(os.path.join(args.hf_models, "reference.json")):
        print(f"FAILED: no reference.json under {args.hf_models} (the `hf_models` ctest fixture writes it)")
        return 1

    families = golden_families(args.golden) if args.golden else []
    if args.bundled:
        fam = bundled_family(args.bundled)
        if fam:
            families.append(fam)

    t0 = time.monotonic()
    failures, cases, steps_compared, worst = [], 0, 0, 0.0
    for fam in families:
        for adapter_name, adapter_dir in [(None, None), *fam.adapters]:
            label = fam.name + (f" + {adapter_name}" if adapter_name else "")
            if args.only and args.only not in label:
                continue
            if args.list:
                print(f"{label}: {len(fam.prompts_for(adapter_name))} prompts x {fam.steps} steps")
                continue
            model = load_hf(fam.model_dir, adapter_dir)
            for pi, ids in enumerate(fam.prompts_for(adapter_name)):
                cases += 1
                case = f"{label}, prompt {pi} ({len(ids)} ids)"
                try:
                    b_ids, b_logits = run_baton(args.baton, fam.model_dir, adapter_dir, ids, fam.steps)
                except (RuntimeError, ValueError, KeyError, subprocess.TimeoutExpired) as e:
                    failures.append(f"{case}: baton failed: {e}")
                    print(f"FAIL {case}: baton failed: {e}")
                    continue
                h_ids, h_first, gaps, tied = run_hf(model, ids, fam.steps)
                problems = []
                # (b) the first logits row
                if len(b_logits) != h_first.numel() or any(v is None for v in b_logits):
                    problems.append(
                        f"logits row: baton has {len(b_logits)} entries "
                        f"({sum(v is None for v in b_logits)} non-finite), HF {h_first.numel()}"
                    )
                    max_diff, largest = float("inf"), float("nan")
                else:
                    b = torch.tensor(b_logits, dtype=torch.float64)
                    h = h_first.double()
                    diff = (b - h).abs()
                    max_diff = float(diff.max())
                    largest = float(h.abs().max())
                    excess = diff - LOGIT_RTOL * torch.clamp(h.abs(), min=1.0)
                    if float(excess.max()) > 0:
                        j = int(torch.argmax(excess))
                        problems.append(
                            f"first logits differ beyond {LOGIT_RTOL}*max(1,|logit|): id {j} baton "
                            f"{float(b[j]):.6g} HF {float(h[j]):.6g} (max abs diff {max_diff:.3g})"
                        )
                worst = max(worst, max_diff)
                # (a) the greedy ids, up to and including a near-tie step
                compared, note = 0, ""
                if len(b_ids) != fam.steps:
                    problems.append(f"baton returned {len(b_ids)} ids, expected {fam.steps}")
                for s in range(min(len(b_ids), len(h_ids))):
                    if gaps[s] < NEAR_TIE:
                        compared = s + 1
                        if b_ids[s] not in tied[s]:
                            problems.append(
                                f"step {s} is a near-tie in HF between {sorted(tied[s])}, "
                                f"but baton chose {b_ids[s]}"
                            )
                        note = (
                            f"; step {s} is a near-tie in HF (top-2 gap {gaps[s]:.2g} < {NEAR_TIE}): "
                            f"either token accepted (baton {b_ids[s]}, HF {h_ids[s]}), later steps not compared"
                        )
                        break
                    if b_ids[s] != h_ids[s]:
                        problems.append(
                            f"greedy ids differ at step {s} (HF top-2 gap {gaps[s]:.3g}): "
                            f"baton {b_ids[: s + 1]} HF {h_ids[: s + 1]}"
                        )
                        compared = s + 1
                        break
                    compared = s + 1
                steps_compared += compared
                status = "FAIL" if problems else "ok"
                print(
                    f"{status:4} {case}: first logits max abs diff {max_diff:.3g} (largest |logit| {largest:.3g}); "
                    f"tokens compared {compared}/{fam.steps}{note}"
                )
                for p in problems:
                    print(f"       {p}")
                    failures.append(f"{case}: {p}")
            del model
    if args.hf_models:
        n, steps, problems = compare_hf_models(args)
        cases, steps_compared, failures = cases + n, steps_compared + steps, failures + problems
    if args.list:
        return 0
    golden_worst = f", largest first-logits abs diff (golden, bundled) {worst:.3g}" if families else ""
    print(f"{cases} cases, {steps_compared} greedy steps compared{golden_worst}, {time.monotonic() - t0:.1f} s")
    if cases == 0 or steps_compared == 0:
        print("FAILED: nothing was compared (no case ran, or no greedy step matched)")
        return 1
    if failures:
        print(f"FAILED: {len(failures)} problem(s); first: {failures[0]}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
