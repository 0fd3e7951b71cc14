# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Models and adapters made by the reference itself, and the reference's own greedy runs on them.

usage: hf_models.py --out DIR [--tokenizer FILE] [--force]

transformers builds three small random models from configs, seeded, one per family baton
implements, each with a feature the golden models lack:

  qwen2-d64   Qwen2ForCausalLM: GQA (4 query / 2 KV heads), head_dim 64 (implicit:
              hidden / heads), q/k/v biases, untied output head
  llama-d64   LlamaForCausalLM as Llama 3.2 is: head_dim 64 (explicit), GQA, rope_theta 500000,
              llama3 rope scaling (factor 32, low/high frequency factors 1/4, original context
              32, so every frequency with a wavelength above 8 positions is rescaled), tied
              embeddings
  qwen3-d128  Qwen3ForCausalLM: head_dim 128 (explicit, > hidden / heads), q/k RMSNorm, GQA

each saved (`save_pretrained`, safetensors) in float32 and, rounded, as `<name>-bf16` and
`<name>-f16`. peft builds four adapters per family on the float32 model (init_lora_weights=False,
so B != 0; lora_alpha != r, so the scale matters) and saves them under adapters/<name>/:

  lora-attn-r1, lora-attn-r64      LoRA on q,k,v,o; rank 1 and 64
  rslora-all-r1, rslora-all-r64    rsLoRA (alpha / sqrt(r)) on q,k,v,o,gate,up,down

Activated LoRA (aLoRA, peft's `alora_invocation_tokens`): per Qwen2 and Llama family one more
adapter, alora-all-r8 (all seven projections, rank 8, scale 2), whose invocation is two ids the
base model itself generates after the 7-id prompt (its first pair of distinct ids from step 3
on that the prompt lacks). It runs in float32 on five prompts, through peft's generate() (which
finds the invocation's last occurrence in the prompt once and keeps that start for every
generated token, the rule baton implements): the 7-id prompt (absent, then generated: peft
adapts nothing, the base model's own ids), the 40-id prompt (absent), random ids with the
invocation once inside, twice (a lone first id just before the second: a partial match), and at
the very end. The set-up fails unless the absent prompts give the base model's ids and the
others do not.

The vocabulary is the bundled model's tokenizer.json (byte-level BPE, ChatML ids), copied into
every model folder, so relays (which take text) run on these models too; vocab_size is read
from it.

Then transformers runs every case (float32 math; a bf16/f16 file widened to float32 exactly on
load; eager attention; adapters through peft, unmerged; KV cache; greedy argmax, lowest id on a
tie; no stop at EOS) for STEPS steps and writes

  reference.json         {"steps", "near_tie", "vocab_size", "versions", "cases": [{"index",
                         "logits", "family", "model", "adapter", "storage", "prompt",
                         "tokens", "gaps"}]}: folders relative to DIR, adapter null for none;
                         "gaps" is each step's top-1 minus top-2 logit
  reference.safetensors  "case.<index>": float32 [STEPS, vocab_size], row s the logits that
                         chose tokens[s]

Cases: every family x {no adapter, each adapter} in float32, and in bf16 and f16 with no adapter
and two adapters each, every one on three prompts (lengths 1, 7 and 40; seeded random ids, the
7-id one holding the vocabulary's first and last ids); then the aLoRA cases above (their
"alora" field names the prompt's kind).

Relays ("relays" in reference.json): per aLoRA family one random relay of three activated
adapters (alora-all-r8, then alora-attn-r4 and alora-mlp-r2 with their own random invocations)
over one shared sequence, as baton's relay of activated adapters runs it: the common prefix, the
opening (ids, the request, ids), then for every earlier run its turn (invocation, output, the
turn-end id); two cycles (stages 0 1 2, then 1 2). Each run is peft's generate() on its whole
input (the sequence so far + its invocation), whose output the next run reads. The set-up fails
unless at least four of the five runs differ from the base model's ids on the same input.

initializer_range is 0.15. transformers' default, 0.02, gives logits within ~0.1 of each other:
greedy then sits on near-ties, repeats one id, and the near-tie rule stops the comparison after
a step or two. Measured on these models: at 0.1 one case's 32 greedy ids hold only 10 distinct
ids; at 0.15 the logits spread over +-12, the median top-1 - top-2 gap is 0.5, 2 of 3168 steps
are near-ties and every case holds >= 25 distinct ids; at 0.2 the attention scores (which grow
with the square of the range) get sharp enough that float32 summation order moves Qwen2's and
Llama's logits by up to 2.2e-4 (vs 7.5e-5 at 0.15, against the comparison's 1e-3 bound). A
case whose 32 tokens are all one id fails the set-up. Norm weights and biases, which
transformers initializes to 1 and 0, are drawn at random too, so a norm or bias that baton
skipped or misplaced changes the numbers.

DIR/stamp records what made the folder (this script, the tokenizer, the package versions); a
folder whose stamp matches is left as it is. Runs under $BATON_REFERENCE_PYTHON
(reference_python.py: skipped, exit 77, without it; a failure under CI=true).
"""
import argparse
import copy
import hashlib
import json
import os
import random
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_python  # noqa: E402

STEPS = 32
NEAR_TIE = 1e-4  # written into reference.json for its readers; hf_compare.py has the rule
INIT_RANGE = 0.15
SEED = 2323
DEFAULT_TOKENIZER = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "word-problems", "tokenizer.json"
)

ADAPTERS = {
    # name: (rank, alpha, use_rslora, targets). Scales: 4, 2 (alpha / r); 2, 2 (alpha /
    # sqrt(r): for r = 64 plain LoRA's scale would be 0.25, so rsLoRA's differs 8x).
    "lora-attn-r1": (1, 4, False, ("q_proj", "k_proj", "v_proj", "o_proj")),
    "lora-attn-r64": (64, 128, False, ("q_proj", "k_proj", "v_proj", "o_proj")),
    "rslora-all-r1": (1, 2, True, ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")),
    "rslora-all-r64": (64, 16, True, ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")),
}
# The activated LoRA (aLoRA) adapter of the Qwen2 and Llama families: rank, alpha, targets.
ALORA = ("alora-all-r8", 8, 16, ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"))
ALORA_FAMILIES = ("qwen2-d64", "llama-d64")
# The relay of activated adapters per aLoRA family: stage 0 is alora-all-r8, stages 1 and 2 these.
RELAY_ALORAS = (
    ("alora-attn-r4", 4, 8, ("q_proj", "k_proj", "v_proj", "o_proj")),
    ("alora-mlp-r2", 2, 6, ("gate_proj", "up_proj", "down_proj")),
)
RELAY_MAX_NEW = (6, 8, 5)
RELAY_ORDER = (0, 1, 2, 1, 2)  # two cycles, the second from stage 1 (loop_from 1)
# The adapters run on the rounded storages (besides no adapter); float32 runs all of them.
ROUNDED_ADAPTERS = {"bf16": ("lora-attn-r1", "rslora-all-r64"), "f16": ("lora-attn-r64", "rslora-all-r1")}


def families(vocab):
    """(name, config): small (2 layers, hidden 256, intermediate 512), max 256 positions."""
    from transformers import LlamaConfig, Qwen2Config, Qwen3Config

    common = dict(
        vocab_size=vocab,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        rms_norm_eps=1e-6,
        initializer_range=INIT_RANGE,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    return [
        ("qwen2-d64", Qwen2Config(**common, rope_theta=1000000.0, tie_word_embeddings=False, use_sliding_window=False)),
        (
            "llama-d64",
            LlamaConfig(
                **common,
                head_dim=64,
                rope_theta=500000.0,
                rope_scaling={
                    "rope_type": "llama3",
                    "factor": 32.0,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 32,
                },
                tie_word_embeddings=True,
                attention_bias=False,
                mlp_bias=False,
            ),
        ),
        ("qwen3-d128", Qwen3Config(**common, head_dim=128, rope_theta=1000000.0, tie_word_embeddings=False)),
    ]


def build_model(torch, config, seed):
    """The model from its config, seeded; then norm weights 1 + N(0, 0.2) and biases
    N(0, INIT_RANGE), which transformers would leave at 1 and 0."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32, attn_implementation="eager")
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.2 * torch.randn_like(p))
            elif name.endswith(".bias"):
                p.copy_(INIT_RANGE * torch.randn_like(p))
    return model.eval()


def save_model(torch, model, folder, dtype, tokenizer):
    m = model if dtype is torch.float32 else copy.deepcopy(model).to(dtype)
    m.save_pretrained(folder, safe_serialization=True)
    shutil.copyfile(tokenizer, os.path.join(folder, "tokenizer.json"))


def save_adapter(torch, model, folder, name, seed):
    from peft import LoraConfig, get_peft_model

    r, alpha, rs, targets = ADAPTERS[name]
    torch.manual_seed(seed)
    cfg = LoraConfig(
        r=r,
        lora_alpha=alpha,
        use_rslora=rs,
        target_modules=list(targets),
        lora_dropout=0.0,
        bias="none",
        init_lora_weights=False,  # A and B random (nn.Linear's init): the delta is not zero
        task_type="CAUSAL_LM",
    )
    peft_model = get_peft_model(copy.deepcopy(model), cfg)
    # No embedding layer is adapted: nothing to save beside the LoRA weights (and no warning
    # about a base model config that a model built from a config does not have).
    peft_model.save_pretrained(folder, safe_serialization=True, save_embedding_layers=False)


def invocation_from(base_tokens, prompt):
    """Two distinct ids the base model generates (from step 3 on) that the prompt lacks as a pair."""
    for i in range(3, len(base_tokens) - 1):
        pair = base_tokens[i : i + 2]
        if pair[0] != pair[1] and not any(prompt[j : j + 2] == pair for j in range(len(prompt) - 1)):
            return pair
    raise SystemExit(f"FAILED: the base model's greedy ids {base_tokens} hold no usable invocation pair")


def save_alora(torch, model, folder, invocation, seed, spec=ALORA):
    from peft import LoraConfig, get_peft_model

    name, r, alpha, targets = spec
    torch.manual_seed(seed)
    cfg = LoraConfig(
        r=r,
        lora_alpha=alpha,
        target_modules=list(targets),
        lora_dropout=0.0,
        bias="none",
        init_lora_weights=False,
        task_type="CAUSAL_LM",
        alora_invocation_tokens=list(invocation),
    )
    peft_model = get_peft_model(copy.deepcopy(model), cfg)
    peft_model.save_pretrained(folder, safe_serialization=True, save_embedding_layers=False)


def alora_prompts(vocab, short, long, invocation):
    """(kind, ids): the aLoRA cases' prompts. `short` is the prompt whose base continuation
    spells the invocation; the others are seeded random ids around it."""
    rng = random.Random(SEED + 1)
    ids = lambda n: [rng.randrange(vocab) for _ in range(n)]  # noqa: E731
    inv = list(invocation)
    return [
        ("absent, then generated", short),
        ("absent", long),
        ("once", ids(12) + inv + ids(5)),
        ("twice", ids(6) + inv + ids(8) + inv[:1] + inv + ids(3)),
        ("at the end", ids(10) + inv),
    ]


def generate(torch, model, ids, steps):
    """peft's generate(): greedy (argmax, lowest id on a tie), the KV cache, no stop at EOS, and
    the aLoRA start found once in the prompt. Returns tokens, [steps, vocab] logits, gaps."""
    model.generation_config.eos_token_id = None
    with torch.no_grad():
        out = model.generate(
            input_ids=torch.tensor([ids]),
            attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            max_new_tokens=steps,
            min_new_tokens=0,
            do_sample=False,
            output_logits=True,
            return_dict_in_generate=True,
            pad_token_id=0,
        )
    tokens = out.sequences[0, len(ids) :].tolist()
    rows = torch.stack([row[0].float() for row in out.logits])
    gaps = [float(v[0] - v[1]) for v in (torch.topk(row, 2).values for row in rows)]
    if len(tokens) != steps:
        raise SystemExit(f"FAILED: generate() gave {len(tokens)} tokens, not {steps}")
    return tokens, rows, gaps


def prompts(vocab):
    rng = random.Random(SEED)
    short = [0, vocab - 1] + [rng.randrange(vocab) for _ in range(4)] + [vocab - 1]  # 7 ids
    return [[rng.randrange(vocab)], short, [rng.randrange(vocab) for _ in range(40)]]


def greedy(torch, model, ids, steps):
    """The prompt in one forward, then one token per step with the KV cache; argmax (lowest id on
    an exact tie), no EOS stop. Returns the tokens, the [steps, vocab] logits (row s chose
    tokens[s]) and each step's top-1 - top-2 gap."""
    rows, tokens, gaps = [], [], []
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), use_cache=True)
        for s in range(steps):
            row = out.logits[0, -1].float()
            top2 = torch.topk(row, 2).values
            gaps.append(float(top2[0] - top2[1]))
            t = int(torch.argmax(row))
            tokens.append(t)
            rows.append(row.clone())
            if s + 1 < steps:
                out = model(input_ids=torch.tensor([[t]]), past_key_values=out.past_key_values, use_cache=True)
    return tokens, torch.stack(rows), gaps


def load_reference(torch, model_dir, adapter_dir):
    """As a user would: the saved files, float32 math, eager attention, peft unmerged."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager")
    if adapter_dir:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter_dir)
    return model.eval()


def stamp_of(tokenizer):
    """What made the folder: this script, the tokenizer and the packages' versions. The versions
    come from the installed metadata, without importing torch (seconds on a busy machine), so
    an up-to-date folder is confirmed at once. None where a package is missing."""
    from importlib import metadata

    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    with open(tokenizer, "rb") as f:
        h.update(f.read())
    try:
        h.update(" ".join(metadata.version(p) for p in ("torch", "transformers", "peft", "tokenizers")).encode())
    except metadata.PackageNotFoundError:
        return None
    return h.hexdigest()


def add_alora_cases(torch, out, name, fi, vocab, ps, cases, tensors):
    """The aLoRA adapter of family `name` and its cases (see the module comment), appended."""
    base = load_reference(torch, os.path.join(out, name), None)
    short, long = ps[1], ps[2]
    base_short, _, _ = greedy(torch, base, short, STEPS)
    invocation = invocation_from(base_short, short)
    adapter = f"adapters/{name}/{ALORA[0]}"
    save_alora(torch, load_reference(torch, os.path.join(out, name), None), os.path.join(out, adapter),
               invocation, SEED + 100 * fi + 50)
    ref = load_reference(torch, os.path.join(out, name), os.path.join(out, adapter))
    for kind, ids in alora_prompts(vocab, short, long, invocation):
        tokens, rows, gaps = generate(torch, ref, ids, STEPS)
        base_tokens, _, _ = greedy(torch, base, ids, STEPS)
        # The cases mean something only if the adapter visibly changes the ids where it applies.
        if (tokens == base_tokens) != kind.startswith("absent"):
            raise SystemExit(
                f"FAILED: {name} + {ALORA[0]}, invocation {invocation}, prompt '{kind}': peft's ids "
                f"{'equal' if tokens == base_tokens else 'differ from'} the base model's"
            )
        i = len(cases)
        cases.append(
            {
                "index": i,
                "logits": f"case.{i}",
                "family": name,
                "model": name,
                "adapter": adapter,
                "storage": "f32",
                "prompt": ids,
                "tokens": tokens,
                "gaps": gaps,
                "alora": {"invocation": list(invocation), "prompt": kind},
            }
        )
        tensors[f"case.{i}"] = rows.contiguous()


def add_alora_relay(torch, out, name, fi, vocab, relays):
    """A random relay of three activated adapters over one shared sequence (the common prefix, the
    opening with the request, each earlier run's turn: invocation + output + turn end), run the
    way baton's relay runs it, each stage by peft's generate() on its whole input. Appended to
    `relays`: the relay and every run's input, tokens and top-2 gaps."""
    rng = random.Random(SEED + 7 + fi)
    ids = lambda n: [rng.randrange(vocab) for _ in range(n)]  # noqa: E731
    first = f"adapters/{name}/{ALORA[0]}"
    with open(os.path.join(out, first, "adapter_config.json")) as f:
        invocations = [json.load(f)["alora_invocation_tokens"]]
    adapters = [first]
    for k, spec in enumerate(RELAY_ALORAS):
        invocations.append(ids(3 - k))
        adapters.append(f"adapters/{name}/{spec[0]}")
        save_alora(torch, load_reference(torch, os.path.join(out, name), None), os.path.join(out, adapters[-1]),
                   invocations[-1], SEED + 100 * fi + 60 + k, spec)
    refs = [load_reference(torch, os.path.join(out, name), os.path.join(out, a)) for a in adapters]
    base = load_reference(torch, os.path.join(out, name), None)
    relay = {"model": name, "adapters": adapters, "invocations": invocations, "prefix": ids(5),
             "before": ids(2), "request": ids(10), "after": ids(1), "turn_end": ids(1),
             "max_new": list(RELAY_MAX_NEW), "order": list(RELAY_ORDER), "runs": []}
    seq = relay["prefix"] + relay["before"] + relay["request"] + relay["after"]
    changed = 0
    for st in RELAY_ORDER:
        whole = seq + invocations[st]
        tokens, _, gaps = generate(torch, refs[st], whole, RELAY_MAX_NEW[st])
        changed += tokens != greedy(torch, base, whole, RELAY_MAX_NEW[st])[0]
        relay["runs"].append({"stage": st, "input": whole, "tokens": tokens, "gaps": gaps})
        seq = whole + tokens + relay["turn_end"]
    if changed < len(RELAY_ORDER) - 1:
        raise SystemExit(f"FAILED: {name}'s relay: only {changed} runs differ from the base model's ids")
    relays.append(relay)


def make(out, tokenizer):
    import peft
    import safetensors.torch
    import tokenizers
    import torch
    import transformers

    vocab = tokenizers.Tokenizer.from_file(tokenizer).get_vocab_size(with_added_tokens=True)
    ps = prompts(vocab)
    cases, tensors, relays = [], {}, []
    min_distinct, small_gaps = STEPS, 0
    for fi, (name, config) in enumerate(families(vocab)):
        model = build_model(torch, config, SEED + 100 * fi)
        storages = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
        for storage, dtype in storages.items():
            folder = name if storage == "f32" else f"{name}-{storage}"
            save_model(torch, model, os.path.join(out, folder), dtype, tokenizer)
        for ai, a in enumerate(ADAPTERS):
            save_adapter(torch, model, os.path.join(out, "adapters", name, a), a, SEED + 100 * fi + 10 + ai)
        del model
        for storage in storages:
            folder = name if storage == "f32" else f"{name}-{storage}"
            adapters = [None, *(ADAPTERS if storage == "f32" else ROUNDED_ADAPTERS[storage])]
            for a in adapters:
                adapter = f"adapters/{name}/{a}" if a else None
                ref = load_reference(torch, os.path.join(out, folder), adapter and os.path.join(out, adapter))
                for ids in ps:
                    tokens, rows, gaps = greedy(torch, ref, ids, STEPS)
                    distinct = len(set(tokens))
                    min_distinct = min(min_distinct, distinct)
                    small_gaps += sum(g < 1e-2 for g in gaps)
                    i = len(cases)
                    label = f"{folder}{' + ' + a if a else ''}, prompt of {len(ids)}"
                    if distinct == 1:
                        raise SystemExit(
                            f"FAILED: {label}: the 32 greedy tokens are all {tokens[0]}: the model is "
                            "degenerate (raise INIT_RANGE or change the seed)"
                        )
                    cases.append(
                        {
                            "index": i,
                            "logits": f"case.{i}",
                            "family": name,
                            "model": folder,
                            "adapter": adapter,
                            "storage": storage,
                            "prompt": ids,
                            "tokens": tokens,
                            "gaps": gaps,
                        }
                    )
                    tensors[f"case.{i}"] = rows.contiguous()
                del ref
        if name in ALORA_FAMILIES:
            add_alora_cases(torch, out, name, fi, vocab, ps, cases, tensors)
            add_alora_relay(torch, out, name, fi, vocab, relays)
    safetensors.torch.save_file(tensors, os.path.join(out, "reference.safetensors"))
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump(
            {
                "generator": "tests/reference/hf_models.py",
                "steps": STEPS,
                "near_tie": NEAR_TIE,
                "vocab_size": vocab,
                "versions": {
                    "torch": torch.__version__,
                    "transformers": transformers.__version__,
                    "peft": peft.__version__,
                },
                "cases": cases,
                "relays": relays,
            },
            f,
        )
        f.write("\n")
    return len(cases), min_distinct, small_gaps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="the folder to write (replaced)")
    ap.add_argument("--tokenizer", default=DEFAULT_TOKENIZER, help="the vocabulary (tokenizer.json)")
    ap.add_argument("--force", action="store_true", help="rebuild even when the stamp matches")
    args = ap.parse_args()

    reference_python.reexec_under_reference_python(__file__)
    out = os.path.abspath(args.out)
    stamp = stamp_of(args.tokenizer)
    try:
        with open(os.path.join(out, "stamp")) as f:
            if stamp and not args.force and f.read().strip() == stamp:
                print(f"{out}: up to date (stamp {stamp[:12]}; made under {sys.executable})")
                return 0
    except OSError:
        pass
    reference_python.require_reference()
    t0 = time.monotonic()
    # Built beside the folder and renamed over it: an interrupted run leaves no half folder
    # with a stale stamp.
    partial = out + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    n, min_distinct, small_gaps = make(partial, args.tokenizer)
    with open(os.path.join(partial, "stamp"), "w") as f:
        f.write(stamp + "\n")
    shutil.rmtree(out, ignore_errors=True)
    os.rename(partial, out)
    size = sum(os.path.getsize(os.path.join(d, x)) for d, _, fs in os.walk(out) for x in fs)
    print(
        f"{out}: {n} cases x {STEPS} steps; fewest distinct greedy tokens in a case {min_distinct}; "
        f"{small_gaps} steps with a top-2 gap below 1e-2; {size / 1e6:.1f} MB; {time.monotonic() - t0:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
