#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Hostile input through the `baton` CLI (issue #9): usage: test_cli_hostile.py BATON GOLDEN_DIR WORK_DIR.

Each case must end quickly with exit status 1 (a baton::error: the inputs were bad) or 2 (a bad
command line), a message naming the file/option and the value, and a short stderr: never a
signal, a hang, a huge allocation or a silent run. The numbers are the issue's."""
import json
import os
import shutil
import subprocess
import sys

baton, golden_dir, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []
model = f"{golden_dir}/qwen-c"  # max_position_embeddings 128, vocab 64


def run(*args, stdin=None):
    p = subprocess.run([baton, *args], capture_output=True, text=True, timeout=60, input=stdin)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def expect(rc_want, parts, *args, stdin=None):
    rc, out, err = run(*args, stdin=stdin)
    label = " ".join(a if len(a) < 40 else a[:37] + "..." for a in args)
    check(rc == rc_want and all(p in err for p in parts) and len(err) < 2000 and out == "",
          f"{label}: exit {rc} (want {rc_want}), stderr names {parts}: {err.strip()[:300]}")


vocab = json.load(open(f"{model}/config.json"))["vocab_size"]

# 3. positions: max_new / prompt beyond max_position_embeddings, and int overflow.
expect(1, ["--max-new 2147483647", "= 2147483649 positions", "max_position_embeddings = 128"],
       "generate", "--model", model, "--ids", "1,2", "--max-new", "2147483647", "--ignore-eos")
expect(1, ["--max-new 10000000", "max_position_embeddings = 128"],
       "generate", "--model", model, "--ids", "1,2", "--max-new", "10000000", "--ignore-eos")
expect(1, ["prompt's 129 ids", "max_position_embeddings = 128"],
       "generate", "--model", model, "--ids", ",".join(["1"] * 129), "--max-new", "1")
rc, out, err = run("generate", "--model", model, "--ids", "1,2", "--max-new", "126", "--ignore-eos")
check(rc == 0 and len(out.split()) == 126, f"exactly max_position_embeddings positions run (rc {rc})")

# 1. deep nesting on detokenize's stdin.
tokenizer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizer", "data",
                         "gpt2_style_tokenizer.json")
expect(1, ["stdin", "nests deeper than 64"], "detokenize", "--tokenizer", tokenizer,
       stdin="[" * 100000 + "]" * 100000)

# 4. a model folder whose config.json is a FIFO or a directory.
for kind in ("fifo", "dir"):
    d = os.path.join(work, kind)
    os.makedirs(d)
    shutil.copy(f"{model}/model.safetensors", d)
    if kind == "fifo":
        os.mkfifo(os.path.join(d, "config.json"))
    else:
        os.makedirs(os.path.join(d, "config.json"))
    expect(1, [f"{d}/config.json", "not a regular file"],
           "generate", "--model", d, "--ids", "1", "--max-new", "1")

# 6. a flag given twice, an empty adapter.
expect(2, ["--adapter is given twice"], "generate", "--model", model, "--adapter",
       f"{golden_dir}/qwen-c-lora-qv", "--adapter", f"{golden_dir}/qwen-c-lora-all",
       "--ids", "1", "--max-new", "1")
expect(2, ["--adapter needs a value, got an empty string"], "generate", "--model", model,
       "--adapter", "", "--ids", "1", "--max-new", "1")
expect(2, ["--max-new is given twice"], "generate", "--model", model, "--ids", "1",
       "--max-new", "1", "--max-new", "2")

# 6./7. relay stop and gate ids outside the vocabulary name the stage.
relay = {"model": model,
         "stages": [{"name": "a", "input": [{"request": True}], "max_new": 2, "stop": [vocab + 5]}]}
path = os.path.join(work, "relay.json")
json.dump(relay, open(path, "w"))
expect(1, ["stage 'a' stop[0] = %d" % (vocab + 5), "outside the model's vocabulary"],
       "relay", "--config", path, "--ids", "1,2")
relay["stages"][0]["stop"] = [1]
relay["gate"] = {"contains": [vocab]}
relay["max_cycles"] = 2
json.dump(relay, open(path, "w"))
expect(1, ["gate[0] = %d" % vocab, "outside the model's vocabulary"],
       "relay", "--config", path, "--ids", "1,2")

# Round two, composition: constraints that do not compose are an error naming them; a forced
# token is emitted only with every member's consent; an empty grammar works; --logits keeps
# the full row when step 0 is forced. On the bundled demo model (a byte-level tokenizer).
demo = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models",
                    "word-problems")
demo_tok = f"{demo}/tokenizer.json"


def demo_relay(name, stage):
    cfg = {"model": demo, "tokenizer": demo_tok,
           "stages": [dict({"name": "s", "input": [{"request": True}], "max_new": 6}, **stage)]}
    path = os.path.join(work, name + ".json")
    json.dump(cfg, open(path, "w"))
    return path


def token_id(text):
    rc, out, err = run("tokenize", "--tokenizer", demo_tok, "--json", stdin=text)
    ids = json.loads(out) if rc == 0 else []
    return ids[0] if len(ids) == 1 else None


percent, zed = token_id("%"), token_id("z")
check(percent is not None and zed is not None, f"the demo's tokenizer has '%' and 'z' ({percent}, {zed})")
for name, grammar, inter in [
        ("digits_allow", "[0-9]{3}", [{"allow_tokens": [percent]}, {"step_skip": True}]),
        ("z_deny", "z", [{"deny_tokens": [zed]}, {"step_skip": True}]),
        ("zplus_allow", "z+", [{"allow_tokens": [percent]}, {"step_skip": True}])]:
    expect(1, ["stage 's'", "'baton.grammar' and 'baton.token_set' leave no token in common"],
           "relay", "--config", demo_relay(name, {"grammar": {"regex": grammar},
                                                   "interceptors": inter}), "--ids", "1,2")
# With consent, the forced tokens still come out (and a stop string inside the match waits).
rc, out, err = run("relay", "--config", demo_relay("consent", {
    "grammar": {"regex": "zz"}, "interceptors": [{"stop_sequences": ["z"]}, {"step_skip": True}]}),
    "--ids", "1,2", "--json")
check(rc == 0 and json.loads(out)["stages"][-1]["text"] == "zz" if rc == 0 else False,
      f"regex zz + stop 'z' + step_skip: 'zz' (rc {rc}: {(out + err)[:200]})")
for extra in (["--ignore-eos"], []):
    rc, out, err = run("generate", "--model", demo, "--tokenizer", demo_tok, "--regex", "",
                       "--json", "--max-new", "4", "--prompt", "hi", *extra)
    check(rc == 0 and json.loads(out)["ids"] == [], f"--regex '' {extra}: empty output (rc {rc}: {err[:200]})")
rc, out, err = run("relay", "--config", demo_relay("empty", {"grammar": {"regex": ""}}),
                   "--ids", "1,2", "--json")
check(rc == 0 and json.loads(out)["stages"][-1]["text"] == "" if rc == 0 else False,
      f"a stage with regex '' and no stop ids: empty output (rc {rc}: {err[:200]})")
rc, out, err = run("generate", "--model", demo, "--tokenizer", demo_tok, "--regex", "\\{", "--json",
                   "--logits", "--max-new", "2", "--prompt", "hi")
row = json.loads(out)["logits"] if rc == 0 else []
check(rc == 0 and len(row) > 100 and sum(x is not None for x in row) == 1,
      f"--logits with a forced step 0: the full row, one id allowed ({len(row)} entries, rc {rc})")

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("all passed")
