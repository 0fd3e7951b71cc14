# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Word problems about small quantities, deterministic from a seed, with a fixed held-out split.

Each problem is a dict:
  question  plain-English text ("Mia has 7 pears and buys 5 more. How many pears does she have?")
  facts     the structured form ("7 + 5"; operators +, -, * with single spaces)
  worked    the worked result ("7 + 5 = 12")
  answer    the result as a string ("12")
  wrong     a deliberately wrong worked candidate ("7 + 5 = 13", "7 + 6 = 13", "7 - 5 = 2")
  template  which phrasing it uses ("add.0": ADD[0])
  split     held-out problems only: "seen", "unseen_template" or "unseen_fact" (below)

The split is fixed before any training, independent of the training seed:
  held-out templates  the last two phrasings of each operation (add.6, add.7, sub.6, sub.7,
                      mul.3, mul.4): no training text uses them.
  held-out facts      a fixed tenth of each operation's facts in range, drawn with SPLIT_SEED;
                      + and * as unordered pairs (7 + 5 and 5 + 7 together), so that
                      commutativity does not give them away. The expression ("7 + 5") appears
                      in no training text: not in a question's facts, a worked answer, a wrong
                      candidate, verify's working, nor the pretraining arithmetic.
The held-out file has three parts: "seen" (a training phrasing and training facts, but never
that phrasing with those numbers in training), "unseen_template" (a held-out phrasing, training
facts) and "unseen_fact" (a training phrasing, a held-out fact).

CLI:  python problems.py --heldout models/word-problems/heldout.jsonl [--seed 1002] [--n 500]
      python problems.py --show 10 [--seed 1]
      python problems.py --split   (prints the held-out templates and facts)
"""
import argparse
import json
import random
import re

NAMES = [
    ("Mia", "she", "her"), ("Noah", "he", "his"), ("Emma", "she", "her"), ("Liam", "he", "his"),
    ("Ava", "she", "her"), ("Leo", "he", "his"), ("Zoe", "she", "her"), ("Omar", "he", "his"),
    ("Lily", "she", "her"), ("Ben", "he", "his"), ("Sara", "she", "her"), ("Jack", "he", "his"),
    ("Nina", "she", "her"), ("Sam", "he", "his"), ("Ella", "she", "her"), ("Max", "he", "his"),
    ("Ruby", "she", "her"), ("Theo", "he", "his"), ("Ivy", "she", "her"), ("Ali", "he", "his"),
    ("Grace", "she", "her"), ("Tom", "he", "his"), ("Maya", "she", "her"), ("Luca", "he", "his"),
    ("Anna", "she", "her"), ("Owen", "he", "his"), ("Chloe", "she", "her"), ("Ravi", "he", "his"),
    ("Julia", "she", "her"), ("Hugo", "he", "his"), ("Rosa", "she", "her"), ("Ken", "he", "his"),
]

OBJECTS = [
    "apples", "pears", "oranges", "plums", "lemons", "cookies", "cupcakes", "eggs", "carrots",
    "marbles", "stickers", "pencils", "crayons", "books", "stamps", "cards", "coins", "shells",
    "stones", "balloons", "toy cars", "blocks", "buttons", "beads", "flowers", "candles",
    "cherries", "muffins", "tickets", "ribbons",
]

CONTAINERS = [("bags", "bag"), ("boxes", "box"), ("jars", "jar"), ("baskets", "basket"),
              ("packs", "pack"), ("bowls", "bowl"), ("trays", "tray"), ("cups", "cup")]

ADD = [
    "{N} has {a} {o} and buys {b} more. How many {o} does {p} have?",
    "{N} had {a} {o}. {P} found {b} more. How many {o} does {N} have now?",
    "There are {a} {o} in a box. {N} puts in {b} more. How many {o} are in the box?",
    "{N} picked {a} {o} in the morning and {b} in the afternoon. How many {o} did {p} pick in all?",
    "{N} has {a} {o} and {M} has {b} {o}. How many {o} do they have together?",
    "{N} got {a} {o} from {M} and {b} {o} from a friend. How many {o} did {N} get?",
    "A shelf has {a} {o}. {N} adds {b} {o}. How many {o} are on the shelf now?",
    "{N} collects {o}. {P} had {a} and then got {b} more. How many {o} does {p} have?",
]

SUB = [
    "{N} has {a} {o} and gives {b} to {M}. How many {o} does {N} have left?",
    "{N} had {a} {o}. {P} lost {b} of them. How many {o} are left?",
    "There were {a} {o} on the table. {N} took {b}. How many {o} are on the table now?",
    "{N} has {a} {o}. {M} has {b} {o}. How many more {o} does {N} have than {M}?",
    "{N} sold {b} of {q} {a} {o}. How many {o} does {p} have left?",
    "A box held {a} {o}. {N} used {b} of them. How many {o} are still in the box?",
    "{N} wants {a} {o} and already has {b}. How many more {o} does {p} need?",
    "{N} had {a} {o} and ate {b}. How many {o} does {p} have now?",
]

MUL = [
    "{N} has {a} {c} with {b} {o} each. How many {o} does {p} have?",
    "There are {a} {c} and each {c1} holds {b} {o}. How many {o} are there in all?",
    "{N} buys {a} {c} of {b} {o}. How many {o} does {p} buy?",
    "{N} puts {b} {o} in each of {a} {c}. How many {o} does {p} use?",
    "Each of {a} {c} has {b} {o} in it. How many {o} is that in total?",
]

OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
TEMPLATES = {"+": ("add", ADD), "-": ("sub", SUB), "*": ("mul", MUL)}

# The split (see the module's docstring). SPLIT_SEED is not a training seed: the held-out facts
# stay the same whatever --seed a training run uses.
SPLIT_SEED = 23
HELDOUT_TEMPLATES_PER_OP = 2
HELDOUT_FACT_SHARE = 0.1
SPLITS = {"seen": 0.5, "unseen_template": 0.25, "unseen_fact": 0.25}


def operands(op):
    """Every (a, b) a problem may use for `op`: operands 2-20 (products 2-10), results >= 0."""
    if op == "+":
        return [(a, b) for a in range(2, 21) for b in range(2, 21)]
    if op == "-":
        return [(a, b) for a in range(3, 21) for b in range(2, a + 1)]
    return [(a, b) for a in range(2, 11) for b in range(2, 11)]


def heldout_templates():
    """Template ids no training text uses: the last HELDOUT_TEMPLATES_PER_OP of each operation."""
    out = set()
    for prefix, tpls in TEMPLATES.values():
        out |= {f"{prefix}.{i}" for i in range(len(tpls) - HELDOUT_TEMPLATES_PER_OP, len(tpls))}
    return frozenset(out)


def heldout_facts():
    """The held-out facts as expressions ("7 + 5"), both orders of a held-out + or * pair."""
    rng = random.Random(SPLIT_SEED)
    out = set()
    for op in "+-*":
        pairs = operands(op)
        if op in "+*":  # unordered: one draw holds out a + b and b + a
            pairs = [(a, b) for a, b in pairs if a <= b]
        for a, b in rng.sample(pairs, round(HELDOUT_FACT_SHARE * len(pairs))):
            out.add(f"{a} {op} {b}")
            if op in "+*":
                out.add(f"{b} {op} {a}")
    return frozenset(out)


EXPRESSION = re.compile(r"(\d+) ([-+*]) (\d+)")


def leaked_facts(text, held=None):
    """The held-out expressions that occur in `text` (empty for a text safe to train on)."""
    held = heldout_facts() if held is None else held
    return [m.group(0) for m in EXPRESSION.finditer(text) if m.group(0) in held]


def template_pattern(tpl):
    """A regex that finds a question written with `tpl`, whatever fills its slots."""
    parts = re.split(r"\{\w+\}", tpl)
    return re.compile(".+?".join(re.escape(p) for p in parts))


def heldout_template_patterns():
    out = []
    for prefix, tpls in TEMPLATES.values():
        out += [template_pattern(t) for i, t in enumerate(tpls) if f"{prefix}.{i}" in heldout_templates()]
    return out


def worked(a, op, b):
    return f"{a} {op} {b} = {OPS[op](a, b)}"


def wrong_candidate(rng, a, op, b, held=frozenset()):
    """A wrong worked answer: wrong result, wrong operand, or wrong operation; never one whose
    expression is in `held` (training passes the held-out facts)."""
    right = worked(a, op, b)
    for _ in range(100):
        kind = rng.random()
        if kind < 0.45:  # wrong result
            c = OPS[op](a, b) + rng.choice([-2, -1, 1, 2, 1, -1, 10, -10, 3])
            if c < 0:
                continue
            cand = f"{a} {op} {b} = {c}"
        elif kind < 0.8:  # wrong operand, arithmetic right for it
            x, y = a, b
            d = rng.choice([-3, -2, -1, 1, 2, 3])
            if rng.random() < 0.5:
                x = a + d
            else:
                y = b + d
            if x < 1 or y < 1 or OPS[op](x, y) < 0:
                continue
            cand = worked(x, op, y)
        else:  # wrong operation, arithmetic right for it
            op2 = rng.choice([o for o in "+-*" if o != op])
            if OPS[op2](a, b) < 0 or (op2 == "*" and (a > 10 or b > 10)):
                continue
            cand = worked(a, op2, b)
        if cand != right and cand.split(" = ")[0] not in held:
            return cand
    return f"{a} {op} {b} = {OPS[op](a, b) + 1}"


def make_problem(rng, held=frozenset()):
    """One problem from `rng`; its wrong candidate avoids the expressions in `held`."""
    n, p, q = rng.choice(NAMES)
    m = rng.choice([x for x in NAMES if x[0] != n])[0]
    o = rng.choice(OBJECTS)
    r = rng.random()
    if r < 0.4:
        op = "+"
        a, b = rng.randint(2, 20), rng.randint(2, 20)
    elif r < 0.8:
        op = "-"
        a = rng.randint(3, 20)
        b = rng.randint(2, a)
    else:
        op = "*"
        a, b = rng.randint(2, 10), rng.randint(2, 10)
    prefix, tpls = TEMPLATES[op]
    i = rng.randrange(len(tpls))
    c, c1 = rng.choice(CONTAINERS)
    text = tpls[i].format(N=n, P=p.capitalize(), p=p, q=q, M=m, o=o, a=a, b=b, c=c, c1=c1)
    return {
        "question": text,
        "facts": f"{a} {op} {b}",
        "worked": worked(a, op, b),
        "answer": str(OPS[op](a, b)),
        "wrong": wrong_candidate(rng, a, op, b, held),
        "template": f"{prefix}.{i}",
        # not written to the held-out file; used for the pretraining text
        "_names": (n, p, o),
    }


def split_of(pr, templates, facts):
    """Which part of the split a problem falls in; None for a held-out phrasing with a held-out
    fact (neither part: it would not say which of the two was new)."""
    new_template, new_fact = pr["template"] in templates, pr["facts"] in facts
    if new_template and new_fact:
        return None
    return "unseen_template" if new_template else "unseen_fact" if new_fact else "seen"


def heldout_problems(seed, n):
    """n held-out problems from `seed`, in SPLITS' shares, no question twice."""
    templates, facts = heldout_templates(), heldout_facts()
    want = {s: round(share * n) for s, share in SPLITS.items()}
    want["seen"] += n - sum(want.values())
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        pr = make_problem(rng)
        s = split_of(pr, templates, facts)
        if s is None or want[s] == 0 or pr["question"] in seen:
            continue
        want[s] -= 1
        seen.add(pr["question"])
        pr["split"] = s
        out.append(pr)
    return out


def training_problems(seed, n, heldout):
    """n training problems from `seed`: training phrasings and training facts only, never a
    held-out question, nor a seen held-out problem's phrasing with its numbers (so "seen" means
    both were trained, never together), no question twice; wrong candidates avoid the held-out
    facts too."""
    templates, facts = heldout_templates(), heldout_facts()
    pairs = {(p["template"], p["facts"]) for p in heldout if p["split"] == "seen"}
    rng = random.Random(seed)
    out, seen = [], {p["question"] for p in heldout}
    while len(out) < n:
        pr = make_problem(rng, facts)
        if (pr["template"] in templates or pr["facts"] in facts
                or (pr["template"], pr["facts"]) in pairs or pr["question"] in seen):
            continue
        seen.add(pr["question"])
        out.append(pr)
    return out


def public(pr):
    keys = ("question", "facts", "worked", "answer", "wrong", "template", "split")
    return {k: pr[k] for k in keys if k in pr}


def write_jsonl(path, probs):
    with open(path, "w", encoding="utf-8") as f:
        for pr in probs:
            f.write(json.dumps(public(pr)) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1002)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--heldout", help="write n held-out problems from --seed to this JSONL file")
    ap.add_argument("--show", type=int, default=0, help="print this many held-out problems")
    ap.add_argument("--split", action="store_true", help="print the held-out templates and facts")
    args = ap.parse_args()
    if args.split:
        print("templates:", " ".join(sorted(heldout_templates())))
        for op in "+-*":
            fs = sorted((f for f in heldout_facts() if f.split(" ")[1] == op),
                        key=lambda f: tuple(int(x) for x in f.split(f" {op} ")))
            print(f"facts {op} ({len(fs)} of {len(operands(op))}):", ", ".join(fs))
    probs = heldout_problems(args.seed, max(args.n, args.show))
    if args.heldout:
        write_jsonl(args.heldout, probs[: args.n])
    for pr in probs[: args.show]:
        print(json.dumps(public(pr)))


if __name__ == "__main__":
    main()
