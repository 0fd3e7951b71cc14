# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Train baton's bundled demo model: tokenizer -> base LM -> three LoRA adapters -> held-out file.

  PY=$(scripts/pyenv.sh)
  $PY training/train.py --out models/word-problems --seed 1
  $PY training/train.py --out models/word-problems --seed 1 --activated

Reads <out>/relay.json (the stage formats); writes <out>/tokenizer.json, config.json,
model.safetensors (bf16), adapters/{extract,reason,verify}/ (PEFT LoRA, f32) and heldout.jsonl.
--activated reads <out>/relay-activated.json instead and trains the same three adapters as
activated LoRA (aLoRA) on the existing tokenizer and base, into adapters-activated/.
See training/README.md.
"""
import argparse
import copy
import json
import math
import os
import random
import sys
import time

# Everything is local: without this, PEFT looks up the adapters' base model name on the Hub at
# every save (five retries each, offline).
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import Qwen2Config, Qwen2ForCausalLM  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import problems as P  # noqa: E402
from relay_format import ActivatedRelayFormat, RelayFormat  # noqa: E402

QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
               r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

HP = dict(
    vocab=1024,
    hidden=192, layers=4, heads=6, kv_heads=2, head_dim=32, intermediate=528,
    n_train=12000,            # training problems
    n_heldout=500,
    block=64,                 # pretraining block length (tokens)
    base_steps=1000, base_batch=32, base_lr=2e-3,
    lora_r=16, lora_alpha=32,
    lora_steps={"extract": 250, "reason": 600, "verify": 1200}, lora_batch=32, lora_lr=2e-3,
    verdict_weight={"verify": 8.0},
)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------- data

def answer_sentence(rng, pr):
    n, p, o = pr["_names"]
    c = pr["answer"]
    return rng.choice([f"The answer is {c}.", f"So there are {c} {o}.", f"That makes {c} {o}.",
                       f"The answer is {c} {o}."])


def arithmetic_facts(held):
    """Every fact in range, written out, less the held-out ones (`held`: "7 + 5", ...)."""
    facts = []
    for a in range(0, 21):
        for b in range(0, 21):
            facts.append(P.worked(a, "+", b))
            if b <= a:
                facts.append(P.worked(a, "-", b))
    for a in range(0, 11):
        for b in range(0, 11):
            facts.append(P.worked(a, "*", b))
    for c in range(0, 41):  # sums read backwards: 12 - 5 = 7 for results up to 40
        for b in range(0, min(c, 20) + 1):
            if c - b <= 20 and c > 20:
                facts.append(P.worked(c, "-", b))
    return [f for f in facts if f.split(" = ")[0] not in held]


def checked(rng, fact):
    """A fact as written, or marked PASS, or changed and marked FAIL (on the next line, so the
    tokens are the bare "PASS" / "FAIL" that the verify stage answers with). Tokens that
    pretraining never produces end up with nearly identical tied embedding rows (PASS and FAIL
    had cosine 0.996), and no adapter then learns to choose between them."""
    r = rng.random()
    if r < 0.5:
        return fact
    if r < 0.75:
        return fact + "\nPASS"
    lhs, c = fact.split(" = ")
    wrong = int(c) + rng.choice([-2, -1, 1, 2, 10, -10])
    return f"{lhs} = {wrong if wrong >= 0 else int(c) + 1}\nFAIL"


def pretrain_docs(rng, train, held):
    """Domain text, not the stage formats: questions, worked sums, answer sentences."""
    docs = []
    facts = arithmetic_facts(held)
    for _ in range(6):
        rng.shuffle(facts)
        for i in range(0, len(facts), 8):
            docs.append("\n".join(checked(rng, f) for f in facts[i:i + 8]))
    for pr in train:
        r = rng.random()
        if r < 0.3:
            docs.append(pr["question"])
        elif r < 0.65:
            docs.append(pr["question"] + " " + pr["worked"] + ". " + answer_sentence(rng, pr))
        else:
            docs.append(pr["question"] + " " + answer_sentence(rng, pr))
    rng.shuffle(docs)
    return docs


def result_of(worked_text):
    return int(worked_text.split(" = ")[1])


def wrong_answer(rng, a, op, b, held):
    """A wrong worked answer whose result differs from the right one (verify compares results,
    so a candidate with another route to the same number is not wrong for it), never a held-out
    fact."""
    right = P.OPS[op](a, b)
    while True:
        w = P.wrong_candidate(rng, a, op, b, held)
        if result_of(w) != right:
            return w


def verify_text(own_worked, candidate_result):
    """What the verify stage writes: its own working from the question, the candidate's result
    beside it, and the verdict on the next line. Judging a number it has just written next to
    the candidate's is a local comparison; judging "a op b = c" in one step was not learnable
    for this small model (the adapter stayed at chance)."""
    verdict = "PASS" if result_of(own_worked) == candidate_result else "FAIL"
    return f"{own_worked} vs {candidate_result}\n{verdict}"


def stage_examples(rng, fmt, train, held=frozenset(), later_rng=None, verify_later=0.0):
    """(ids, n_context) training sequences per stage, built exactly as baton builds them.

    Each example is the stage's target after the stage runs that came before it in the request
    (the transcript: [(stage, output text)], in order), rendered by `fmt` (relay.json reads the
    latest outputs as out / feedback; relay-activated.json reads every turn). With
    `verify_later`, that share of verify's examples (drawn from `later_rng`, so that `rng`'s
    draws and with them every other example stay as they are) sees its candidate in cycle 2:
    after a wrong first try and verify's FAIL about it. relay.json's verify reads only the
    latest candidate, so there it renders the same ids either way."""
    ex = {"extract": [], "reason": [], "verify": []}
    for pr in train:
        q = pr["question"]
        a, op, b = pr["facts"].split(" ")
        a, b = int(a), int(b)
        facts = [("extract", pr["facts"])]
        ex["extract"].append(fmt.example_after("extract", q, pr["facts"]))
        # reason: cycle 1 reads the facts; later cycles also read its own last answer and what
        # verify wrote about it (its own working and the verdict), and must give the right one.
        r = rng.random()
        if r < 0.45:  # cycle 1
            before = facts
        elif r < 0.8:  # its wrong answer came back with FAIL
            wrong = wrong_answer(rng, a, op, b, held)
            before = facts + [("reason", wrong), ("verify", verify_text(pr["worked"], result_of(wrong)))]
        elif r < 0.95:  # extract was wrong too: restate from the question
            wrong = wrong_answer(rng, a, op, b, held)
            before = [("extract", wrong.split(" = ")[0]), ("reason", wrong),
                      ("verify", verify_text(pr["worked"], result_of(wrong)))]
        else:  # verify miscomputed and failed a right answer: say it again
            slip = wrong_answer(rng, a, op, b, held)
            before = facts + [("reason", pr["worked"]), ("verify", f"{slip} vs {pr['answer']}\nFAIL")]
        ex["reason"].append(fmt.example_after("reason", q, pr["worked"], before))
        # verify: half right candidates, half wrong ones
        if rng.random() < 0.5:
            cand = pr["worked"]
        else:
            cand = wrong_answer(rng, a, op, b, held)
        before = facts
        if verify_later and later_rng.random() < verify_later:  # cycle 2: corrected or still wrong
            first = wrong_answer(later_rng, a, op, b, held)
            before = facts + [("reason", first), ("verify", verify_text(pr["worked"], result_of(first)))]
        ex["verify"].append(fmt.example_after("verify", q, verify_text(pr["worked"], result_of(cand)),
                                              before + [("reason", cand)]))
    return ex


def audit(texts, held):
    """Fails unless no training text holds a held-out fact or a held-out phrasing: the split
    is only worth its name if this holds for everything training reads."""
    patterns = P.heldout_template_patterns()
    for t in texts:
        leaked = P.leaked_facts(t, held)
        assert not leaked, f"held-out fact {leaked[0]!r} in training text {t!r}"
        for pat in patterns:
            assert not pat.search(t), f"held-out template {pat.pattern!r} in training text {t!r}"
    log(f"audit: {len(texts)} training texts, none with a held-out fact or phrasing")


# ---------------------------------------------------------------- tokenizer

def train_tokenizer(texts, vocab):
    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.normalizer = None
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=2, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


# ---------------------------------------------------------------- training helpers

def lr_at(step, total, peak, warmup):
    if step < warmup:
        return peak * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


def pack_blocks(tok, docs, block, eot):
    stream = []
    for d in docs:
        stream += tok.encode(d, add_special_tokens=False).ids + [eot]
    n = len(stream) // block
    return torch.tensor(stream[: n * block], dtype=torch.long).view(n, block)


def pad_batch(seqs, pad):
    L = max(len(s) for s, _ in seqs)
    ids = torch.full((len(seqs), L), pad, dtype=torch.long)
    labels = torch.full((len(seqs), L), -100, dtype=torch.long)
    mask = torch.zeros((len(seqs), L), dtype=torch.long)
    for i, (s, nctx) in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        labels[i, nctx: len(s)] = torch.tensor(s[nctx:])
        mask[i, : len(s)] = 1
    return ids, labels, mask


def train_base(tok, docs, hp, seed):
    torch.manual_seed(seed)
    eot = tok.token_to_id("<|endoftext|>")
    cfg = Qwen2Config(
        vocab_size=tok.get_vocab_size(), hidden_size=hp["hidden"], intermediate_size=hp["intermediate"],
        num_hidden_layers=hp["layers"], num_attention_heads=hp["heads"],
        num_key_value_heads=hp["kv_heads"], head_dim=hp["head_dim"], max_position_embeddings=512,
        rope_theta=10000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, hidden_act="silu",
        bos_token_id=None, eos_token_id=tok.token_to_id("<|im_end|>"), pad_token_id=eot,
        use_sliding_window=False, attention_dropout=0.0)
    model = Qwen2ForCausalLM(cfg)
    nparams = sum(p.numel() for p in model.parameters())
    blocks = pack_blocks(tok, docs, hp["block"], eot)
    log(f"base: {nparams} parameters, {blocks.shape[0]} blocks of {hp['block']} tokens")
    opt = torch.optim.AdamW(model.parameters(), lr=hp["base_lr"], betas=(0.9, 0.95), weight_decay=0.05)
    g = torch.Generator().manual_seed(seed)
    steps, bs = hp["base_steps"], hp["base_batch"]
    model.train()
    perm, pos = torch.randperm(blocks.shape[0], generator=g), 0
    for step in range(steps):
        if pos + bs > len(perm):
            perm, pos = torch.randperm(blocks.shape[0], generator=g), 0
        x = blocks[perm[pos: pos + bs]]
        pos += bs
        for grp in opt.param_groups:
            grp["lr"] = lr_at(step, steps, hp["base_lr"], 100)
        loss = model(input_ids=x, labels=x).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0 or step == steps - 1:
            log(f"base step {step}/{steps} loss {loss.item():.4f}")
    model.eval()
    return model, nparams


def weighted_loss(model, ids, mask, labels, last_word_weight):
    """Cross-entropy on the target tokens, the token before the stop id weighted by
    last_word_weight. verify's verdict is one token of about fourteen it writes; at equal
    weight its gradient drowns in the working, which is the easy part."""
    logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
    target = labels[:, 1:]
    ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1),
                                           ignore_index=-100, reduction="none").view(target.shape)
    weight = (target != -100).float()
    if last_word_weight != 1.0:
        lengths = mask.sum(dim=1)  # sequence i ends [..., verdict, stop]: verdict at lengths - 2
        rows = torch.arange(ids.shape[0])
        weight[rows, lengths - 3] *= last_word_weight  # logits at t predict token t + 1
    return (ce * weight).sum() / weight.sum()


def lora_config(hp, invocation=None):
    """The adapters' LoRA config; with `invocation` (token ids) an activated LoRA, which applies
    from the last occurrence of those ids in its input on."""
    from peft import LoraConfig
    return LoraConfig(r=hp["lora_r"], lora_alpha=hp["lora_alpha"], lora_dropout=0.0, bias="none",
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                      "down_proj"], task_type="CAUSAL_LM", alora_invocation_tokens=invocation)


def check_activation(fmt, ex, hp, pad):
    """Where PEFT will switch each activated adapter on, computed by PEFT itself on the padded
    training batches, is where the format put the stage's invocation: the start of the last
    occurrence, just before the target (every earlier id, earlier invocations of the same stage
    included, is the base model's)."""
    from peft.tuners.lora.variants import calculate_alora_offsets
    n = 0
    for name, examples in ex.items():
        inv = fmt.invocation_ids(name)
        peft_config = {"default": lora_config(hp, inv)}
        for i in range(0, len(examples), hp["lora_batch"]):
            batch = examples[i: i + hp["lora_batch"]]
            ids, _, _ = pad_batch(batch, pad)
            got = calculate_alora_offsets(peft_config, "default", ids)
            want = [ids.shape[1] - (nctx - len(inv)) for _, nctx in batch]
            assert got == want, f"{name}: PEFT activates at {got}, the format at {want}"
            n += len(batch)
    log(f"activation: PEFT starts each adapter at its last invocation in all {n} sequences")


def train_adapter(base, name, examples, hp, seed, pad, invocation=None):
    from peft import get_peft_model
    torch.manual_seed(seed)
    cfg = lora_config(hp, invocation)
    model = get_peft_model(copy.deepcopy(base), cfg)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=hp["lora_lr"], weight_decay=0.0)
    rng = random.Random(seed)
    steps, bs = hp["lora_steps"][name], hp["lora_batch"]
    order, pos = list(range(len(examples))), len(examples)
    model.train()
    for step in range(steps):
        if pos + bs > len(order):
            rng.shuffle(order)
            pos = 0
        ids, labels, mask = pad_batch([examples[i] for i in order[pos: pos + bs]], pad)
        pos += bs
        for grp in opt.param_groups:
            grp["lr"] = lr_at(step, steps, hp["lora_lr"], 30)
        loss = weighted_loss(model, ids, mask, labels, hp["verdict_weight"].get(name, 1.0))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == steps - 1:
            log(f"{name} step {step}/{steps} loss {loss.item():.4f}")
    model.eval()
    return model


def sort_target_modules(adapter_dir):
    """PEFT keeps target_modules as a set and writes it in the order of Python's string hashes,
    which changes from process to process; sorted, two runs write the same bytes."""
    path = os.path.join(adapter_dir, "adapter_config.json")
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["target_modules"] = sorted(cfg["target_modules"])
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True))  # as PEFT writes it


def greedy_check(model, fmt, name, examples, n, stop):
    """Quick PyTorch exact-match on n examples (the real figures come from baton)."""
    ok = 0
    with torch.no_grad():
        for ids, nctx in examples[:n]:
            x = torch.tensor([ids[:nctx]])
            out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), do_sample=False,
                                 max_new_tokens=len(ids) - nctx + 2, eos_token_id=stop, pad_token_id=stop)
            ok += out[0, nctx:].tolist()[: len(ids) - nctx] == ids[nctx:]
    return ok / n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--heldout-seed", type=int, default=1002)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply all step counts (quick trials)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (1: two threads on two busy cores were 5x slower)")
    ap.add_argument("--skip-base", action="store_true",
                    help="reuse <out>'s tokenizer and base; train the adapters only")
    ap.add_argument("--stages", default="extract,reason,verify",
                    help="which adapters to train (comma-separated; others are left as they are)")
    ap.add_argument("--check", type=int, default=30, help="PyTorch exact-match check on N held-out")
    ap.add_argument("--activated", action="store_true",
                    help="activated adapters (aLoRA) for <out>/relay-activated.json, written where it "
                         "names them (adapters-activated/); implies --skip-base")
    args = ap.parse_args()
    if args.activated:
        args.skip_base = True
    relay_file = os.path.join(args.out, "relay-activated.json" if args.activated else "relay.json")
    Format = ActivatedRelayFormat if args.activated else RelayFormat
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    hp = dict(HP)
    hp["base_steps"] = max(1, int(hp["base_steps"] * args.scale))
    hp["lora_steps"] = {k: max(1, int(v * args.scale)) for k, v in hp["lora_steps"].items()}
    out = args.out
    times = {}
    t_all = time.time()

    # data: the held-out set first (its own seed, the fixed split of problems.py), then training
    # problems from the training phrasings and facts only
    t = time.time()
    held = P.heldout_facts()
    heldout = P.heldout_problems(args.heldout_seed, hp["n_heldout"])
    train = P.training_problems(args.seed, hp["n_train"], heldout)
    assert not {p["question"] for p in train} & {p["question"] for p in heldout}
    P.write_jsonl(os.path.join(out, "heldout.jsonl"), heldout)
    rng = random.Random(args.seed)
    docs = pretrain_docs(rng, train, held)
    times["data"] = time.time() - t

    # tokenizer
    t = time.time()
    if not args.skip_base:
        with open(os.path.join(out, "relay.json"), encoding="utf-8") as f:
            relay = json.load(f)
        format_texts = []
        for s in relay["stages"]:
            format_texts.append(s["system"])
            format_texts += [seg["text"] for seg in s["input"] if "text" in seg]
        format_texts += ["PASS", "FAIL"]
        tok = train_tokenizer(docs + format_texts * 50, hp["vocab"])
        tok.save(os.path.join(out, "tokenizer.json"))
    tok = Tokenizer.from_file(os.path.join(out, "tokenizer.json"))
    fmt = Format(relay_file, tok)
    times["tokenizer"] = time.time() - t
    log(f"tokenizer: {tok.get_vocab_size()} ids ({times['tokenizer']:.1f} s)")
    # the activated adapters also see verify in later cycles (relay.json's verify reads only the
    # latest candidate, so the share would change nothing there)
    later = 0.25 if args.activated else 0.0
    t = time.time()
    ex = stage_examples(random.Random(args.seed + 7), fmt, train, held,
                        random.Random(args.seed + 11), later)
    audit(docs + [tok.decode(ids) for stage in ex.values() for ids, _ in stage], held)
    pad = tok.token_to_id("<|endoftext|>")
    # held-out sequences for --check, in the same mixture
    hex_ = stage_examples(random.Random(args.heldout_seed + 7), fmt, heldout,
                          later_rng=random.Random(args.heldout_seed + 11), verify_later=later)
    if args.activated:
        check_activation(fmt, ex, hp, pad)
        check_activation(fmt, hex_, hp, pad)
    times["sequences"] = time.time() - t

    # base
    t = time.time()
    if args.skip_base:
        base = Qwen2ForCausalLM.from_pretrained(out, dtype=torch.bfloat16)
        nparams = sum(p.numel() for p in base.parameters())
    else:
        base, nparams = train_base(tok, docs, hp, args.seed)
        base = base.to(torch.bfloat16)
        # save_pretrained adds a generation config (not part of the bundled model); <out>'s own
        # README.md, the committed model card, stays, and only a card it would add goes.
        extras = ["generation_config.json"]
        if not os.path.exists(os.path.join(out, "README.md")):
            extras.append("README.md")
        base.save_pretrained(out, safe_serialization=True)
        for extra in extras:
            if os.path.exists(os.path.join(out, extra)):
                os.remove(os.path.join(out, extra))
    base = base.to(torch.float32)  # exactly the bf16 weights baton runs, math in f32
    for p in base.parameters():
        p.requires_grad_(False)
    times["base"] = time.time() - t
    log(f"base done ({times['base']:.1f} s)")

    # adapters
    for i, name in enumerate(("extract", "reason", "verify")):
        if name not in args.stages.split(","):
            continue
        t = time.time()
        invocation = fmt.invocation_ids(name) if args.activated else None
        model = train_adapter(base, name, ex[name], hp, args.seed + 100 + i, pad, invocation)
        # PEFT records the path the base was loaded from (a scratch folder here); name the
        # bundled model instead, which is what baton compares it with (lora/base_model_check.hpp).
        model.peft_config["default"].base_model_name_or_path = "word-problems"
        d = os.path.join(out, fmt.stages[name]["adapter"])  # adapters[-activated]/<name>
        model.save_pretrained(d, safe_serialization=True)
        sort_target_modules(d)
        if os.path.exists(os.path.join(d, "README.md")):
            os.remove(os.path.join(d, "README.md"))
        acc = greedy_check(model, fmt, name, hex_[name], args.check, fmt.stop[name]) if args.check else -1
        times[name] = time.time() - t
        log(f"{name} done ({times[name]:.1f} s); PyTorch held-out exact match {acc:.2f} ({args.check} examples)")
        del model

    times["total"] = time.time() - t_all
    print(json.dumps({"parameters": nparams, "seconds": {k: round(v, 1) for k, v in times.items()}}))


if __name__ == "__main__":
    main()
