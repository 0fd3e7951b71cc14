# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Word problems about small quantities, deterministic from a seed.

Each problem is a dict:
  question  plain-English text ("Mia has 7 pears and buys 5 more. How many pears does she have?")
  facts     the structured form ("7 + 5"; operators +, -, * with single spaces)
  worked    the worked result ("7 + 5 = 12")
  answer    the result as a string ("12")
  wrong     a deliberately wrong worked candidate ("7 + 5 = 13", "7 + 6 = 13", "7 - 5 = 2")

CLI:  python problems.py --heldout models/word-problems/heldout.jsonl [--seed 2] [--n 500]
      python problems.py --show 10 [--seed 1]
"""
import argparse
import json
import random

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


def worked(a, op, b):
    return f"{a} {op} {b} = {OPS[op](a, b)}"


def wrong_candidate(rng, a, op, b):
    """A wrong worked answer: wrong result, wrong operand, or wrong operation."""
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
        if cand != right:
            return cand
    return f"{a} {op} {b} = {OPS[op](a, b) + 1}"


def make_problem(rng):
    n, p, q = rng.choice(NAMES)
    m = rng.choice([x for x in NAMES if x[0] != n])[0]
    o = rng.choice(OBJECTS)
    r = rng.random()
    if r < 0.4:
        op, tpl = "+", rng.choice(ADD)
        a, b = rng.randint(2, 20), rng.randint(2, 20)
    elif r < 0.8:
        op, tpl = "-", rng.choice(SUB)
        a = rng.randint(3, 20)
        b = rng.randint(2, a)
    else:
        op, tpl = "*", rng.choice(MUL)
        a, b = rng.randint(2, 10), rng.randint(2, 10)
    c, c1 = rng.choice(CONTAINERS)
    text = tpl.format(N=n, P=p.capitalize(), p=p, q=q, M=m, o=o, a=a, b=b, c=c, c1=c1)
    return {
        "question": text,
        "facts": f"{a} {op} {b}",
        "worked": worked(a, op, b),
        "answer": str(OPS[op](a, b)),
        "wrong": wrong_candidate(rng, a, op, b),
        # not written to the held-out file; used for the pretraining text
        "_names": (n, p, o),
    }


def problems(seed, n, exclude=frozenset()):
    """n problems from `seed`, none of whose questions is in `exclude`, no repeats."""
    rng = random.Random(seed)
    out, seen = [], set(exclude)
    while len(out) < n:
        pr = make_problem(rng)
        if pr["question"] in seen:
            continue
        seen.add(pr["question"])
        out.append(pr)
    return out


def public(pr):
    return {k: pr[k] for k in ("question", "facts", "worked", "answer", "wrong")}


def write_jsonl(path, probs):
    with open(path, "w", encoding="utf-8") as f:
        for pr in probs:
            f.write(json.dumps(public(pr)) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--heldout", help="write n problems from --seed to this JSONL file")
    ap.add_argument("--show", type=int, default=0, help="print this many problems")
    args = ap.parse_args()
    probs = problems(args.seed, max(args.n, args.show))
    if args.heldout:
        write_jsonl(args.heldout, probs[: args.n])
    for pr in probs[: args.show]:
        print(json.dumps(public(pr)))


if __name__ == "__main__":
    main()
