#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Hostile input through the `baton` CLI (issues #9, #22).

usage: test_cli_hostile.py BATON GOLDEN_DIR WORK_DIR [ASAN]   (ASAN: 1 for a sanitizer build)

Each case must end with exit status 1 (a baton::error: the inputs were bad) or 2 (a bad command
line) within 20 s and a 4 GB address space (not under ASan, which reserves terabytes of shadow),
with a message naming the file/option and the value, and a short stderr (< 2000 bytes) that
quotes no build path (no "/work/", no source folder: the commands run in WORK_DIR on relative
paths, so no absolute path belongs in a message) and no "json.exception": never a signal, a
hang, a huge allocation or a silent run. The numbers are the issues'. The checks behind them
are mutation-checked at the C++ level (tests/test_hostile_counts.cpp, test_hostile_messages.cpp)."""
import json
import os
import re
import resource
import shutil
import subprocess
import sys

baton, golden_dir, work = (os.path.abspath(a) for a in sys.argv[1:4])
asan = len(sys.argv) > 4 and sys.argv[4] == "1"
source_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []
# Relative to `work`, where every command runs: a message quoting it holds no build path.
os.symlink(f"{golden_dir}/qwen-c", os.path.join(work, "qwen-c"))
model = "qwen-c"  # max_position_embeddings 128, vocab 384
GB = 1 << 30


def limits(address_space):
    """preexec_fn: the address-space cap (skipped under ASan)."""
    def apply():
        if not asan:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    return apply


def run(*args, stdin=None, address_space=4 * GB):
    try:
        p = subprocess.run([baton, *args], capture_output=True, text=True, timeout=20, input=stdin,
                           cwd=work, preexec_fn=limits(address_space), errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout after 20 s", "", ""
    return p.returncode, p.stdout, p.stderr


def clean(err):
    """Short, no build path, no nlohmann tag, no source location."""
    return (len(err) < 2000 and "/work/" not in err and source_dir not in err
            and "json.exception" not in err and not re.search(r"\.(hpp|cpp|cuh|cu):\d", err))


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def expect(rc_want, parts, *args, stdin=None, address_space=4 * GB):
    rc, out, err = run(*args, stdin=stdin, address_space=address_space)
    label = " ".join(a if len(a) < 40 else a[:37] + "..." for a in args)
    check(rc == rc_want and all(p in err for p in parts) and clean(err) and out == "",
          f"{label}: exit {rc} (want {rc_want}), {len(err)} bytes of stderr naming {parts}: "
          f"{err.strip()[:300]}")


def write_relay(relay, name="relay.json"):
    with open(os.path.join(work, name), "w") as f:
        json.dump(relay, f)
    return name


vocab = json.load(open(f"{golden_dir}/qwen-c/config.json"))["vocab_size"]

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
shutil.copy(os.path.join(source_dir, "tests", "tokenizer", "data", "gpt2_style_tokenizer.json"),
            work)
tokenizer = "gpt2_style_tokenizer.json"
expect(1, ["stdin", "nests deeper than 64"], "detokenize", "--tokenizer", tokenizer,
       stdin="[" * 100000 + "]" * 100000)

# 4. a model folder whose config.json is a FIFO or a directory.
for kind in ("fifo", "dir"):
    d = kind
    os.makedirs(os.path.join(work, d))
    shutil.copy(f"{golden_dir}/qwen-c/model.safetensors", os.path.join(work, d))
    if kind == "fifo":
        os.mkfifo(os.path.join(work, d, "config.json"))
    else:
        os.makedirs(os.path.join(work, d, "config.json"))
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
path = write_relay(relay)
expect(1, ["stage 'a' stop[0] = %d" % (vocab + 5), "outside the model's vocabulary"],
       "relay", "--config", path, "--ids", "1,2")
relay["stages"][0]["stop"] = [1]
relay["gate"] = {"contains": [vocab]}
relay["max_cycles"] = 2
write_relay(relay)
expect(1, ["gate[0] = %d" % vocab, "outside the model's vocabulary"],
       "relay", "--config", path, "--ids", "1,2")

# --- issue #22 ---
one = {"model": model, "stages": [{"name": "a", "input": [{"request": True}], "max_new": 2}]}

# Threads: the bound (on the command line and in a relay file), and creation that fails.
max_threads = max(256, os.cpu_count() or 1)
for n in (100000, max_threads + 1):
    expect(2, [f"--threads {n} is outside [0, {max_threads}]"],
           "generate", "--model", model, "--ids", "1", "--max-new", "1", "--threads", str(n))
write_relay(dict(one, host={"threads": 100000}))
expect(1, ["field 'host'", "'threads' = 100000", f"[0, {max_threads}]"],
       "relay", "--config", path, "--ids", "1")
if not asan:
    # 1 GB of address space holds about 100 thread stacks of 8 MiB: the rest are refused.
    for cmd in (["generate", "--model", model, "--ids", "1", "--max-new", "1"],
                ["relay", "--config", write_relay(one, "one.json"), "--ids", "1"]):
        expect(1, ["ThreadPool: the system refused thread", f"of {max_threads}", "fewer threads"],
               *cmd, "--threads", str(max_threads), address_space=GB)

# Counts: cycles, repeats, stages; an empty gate needle.
write_relay(dict(one, max_cycles=1000000000, gate={"contains": [1]}))
expect(1, ["field 'max_cycles' = 1000000000", "limit of 1000", "relay_cycles"],
       "relay", "--config", path, "--ids", "1")
for n in ("1000000000", "1001", "0"):
    expect(2, [f"--repeat {n} is outside [1, 1000]"],
           "relay", "--config", "one.json", "--ids", "1", "--repeat", n)
many = dict(one, stages=[{"name": f"s{i}", "input": [{"request": True}], "max_new": 2}
                         for i in range(40000)])
write_relay(many)
check(os.path.getsize(os.path.join(work, path)) > 2_500_000, "the 40,000-stage file is ~3 MB")
expect(1, ["field 'stages' has 40000 stages", "limit of 64", "relay_stages"],
       "relay", "--config", path, "--ids", "1")
for gate in ({"contains": []}, {"contains": ""}, {"starts_with": []}):
    write_relay(dict(one, gate=gate, max_cycles=3))
    key = next(iter(gate))
    expect(1, [f"gate.{key} is empty"], "relay", "--config", path, "--ids", "1")

# Strings: a 1 MB allow_tokens string, stage name, regex; bad ids on the command line and stdin.
big = "z" * (1 << 20)
stage = dict(one["stages"][0], interceptors=[{"allow_tokens": [big]}])
write_relay(dict(one, stages=[stage]))
expect(1, ["interceptors[0].allow_tokens[0] = \"zzz", "(1048576 bytes)", "limit of 262144"],
       "relay", "--config", path, "--ids", "1")
write_relay(dict(one, stages=[dict(one["stages"][0], name=big)]))
expect(1, ["stages[0].name", "is 1048576 bytes", "limit of 256"],
       "relay", "--config", path, "--ids", "1")
expect(1, ["stdin: \"xxx", "(20971520 bytes)\" at byte offset 0 is not a token id"],
       "detokenize", "--tokenizer", tokenizer, stdin="x" * (20 << 20))
expect(2, ["--ids: 'yyy", "(131000 bytes)' is not an integer"],
       "generate", "--model", model, "--ids", "y" * 131000, "--max-new", "1")

# JSON in baton's words; an adapter's rank; a tokenizer larger than the model.
with open(os.path.join(work, "bad.json"), "w") as f:
    f.write('{"model": "qwen-c", "stages": [}')
expect(1, ["bad.json: invalid JSON at byte 31, line 1, column 32"],
       "relay", "--config", "bad.json", "--ids", "1")
shutil.copytree(f"{golden_dir}/qwen-c-lora-qv", os.path.join(work, "r257"))
acfg = json.load(open(os.path.join(work, "r257", "adapter_config.json")))
acfg["r"] = 257
json.dump(acfg, open(os.path.join(work, "r257", "adapter_config.json"), "w"))
expect(1, ["adapter_config.json's 'r'", "= 257", "exceeds the largest rank 256"],
       "generate", "--model", model, "--adapter", "r257", "--ids", "1", "--max-new", "1")
# The small tokenizer grown by added tokens (consecutive ids after it, as Hugging Face assigns
# them) to vocab + 10 ids; with exactly `vocab` ids it fits.
for name, ids in (("big_tokenizer.json", vocab + 10), ("fit_tokenizer.json", vocab)):
    t = json.load(open(os.path.join(work, tokenizer)))
    n = 1 + max(list(t["model"]["vocab"].values()) + [a["id"] for a in t["added_tokens"]])
    t["added_tokens"] += [{"id": i, "content": f"<x{i}>", "special": True, "single_word": False,
                           "lstrip": False, "rstrip": False, "normalized": False}
                          for i in range(n, ids)]
    json.dump(t, open(os.path.join(work, name), "w"))
size_parts = [f"tokenizer big_tokenizer.json has {vocab + 10} ids",
              f"model qwen-c's vocab_size = {vocab}"]
expect(1, size_parts, "generate", "--model", model, "--tokenizer", "big_tokenizer.json",
       "--prompt", "a", "--max-new", "1")
rc, out, err = run("generate", "--model", model, "--tokenizer", "fit_tokenizer.json", "--prompt",
                   "a", "--max-new", "1")
check(rc == 0, f"a tokenizer of exactly vocab_size ids fits: exit {rc}, {err.strip()[:200]}")
write_relay(dict(one, tokenizer="big_tokenizer.json"))
expect(1, size_parts, "relay", "--config", path, "a")

# The bundled relay runs without warnings ("model": "." is the folder word-problems).
bundled = os.path.join(source_dir, "models", "word-problems", "relay.json")
if os.path.exists(bundled):
    rc, out, err = run("relay", "--config", bundled, "--threads", "2",
                       "Tom has 3 apples and buys 4 more. How many apples does he have?")
    check(rc == 0 and "warning" not in err and "verdict:" in out,
          f"the bundled relay runs without warnings: exit {rc}, stderr {err.strip()[:300]}")

# Round two, composition: constraints that do not compose are an error naming them; a forced
# token is emitted only with every member's consent; an empty grammar works; --logits keeps
# the full row when step 0 is forced. On the bundled demo model (a byte-level tokenizer).
os.symlink(os.path.join(source_dir, "models", "word-problems"), os.path.join(work, "demo"))
demo, demo_tok = "demo", "demo/tokenizer.json"


def demo_relay(name, stage):
    cfg = {"model": demo, "tokenizer": demo_tok,
           "stages": [dict({"name": "s", "input": [{"request": True}], "max_new": 6}, **stage)]}
    return write_relay(cfg, name + ".json")


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
