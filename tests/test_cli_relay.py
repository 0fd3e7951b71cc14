#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`baton relay` end to end: usage: test_cli_relay.py BATON GOLDEN_DIR WORK_DIR.

A three-stage relay over the golden qwen-c model and its adapters, described in JSON, is
checked stage by stage against `baton generate` on the whole sequence (prefix + assembled
input, fresh cache, no prefix region): the pre-warmed relay must give the same ids. Then the
text path: a byte-level ChatML tokenizer.json written here turns a question into ids, and
stage 0 must equal `baton generate` on the ChatML prefix + the tokenized question. Many
requests at once (--requests, the batch scheduler) must each equal their single run. The demo's
relay of activated adapters (models/word-problems/relay-activated.json: one shared sequence)
answers a held-out question, counts its shared and prefill tokens, and gives each request the
same ids batched as alone. Finally error paths (exit status and message)."""
import json
import os
import subprocess
import sys

baton, golden, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
failures = []


def run(*args, stdin=None):
    # Model text need not be valid UTF-8 (plain output prints it raw).
    p = subprocess.run([baton, *args], capture_output=True, text=True, errors="replace",
                       timeout=300, input=stdin)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def generate(adapter, ids, max_new):
    args = ["generate", "--model", f"{golden}/qwen-c", "--ids", ",".join(map(str, ids)),
            "--max-new", str(max_new), "--ignore-eos", "--json"]
    if adapter:
        args += ["--adapter", f"{golden}/{adapter}"]
    rc, out, err = run(*args)
    assert rc == 0, err
    return json.loads(out)["ids"]


# --- ids relay, two cycles with feedback --------------------------------------------------
prefix = {"extract": [5, 6, 7, 8], "reason": [9, 9, 12], "verify": [3, 4]}
spec = {
    "model": f"{golden}/qwen-c",
    "stages": [
        {"name": "extract", "adapter": f"{golden}/qwen-c-lora-qv", "prefix": prefix["extract"],
         "input": [{"ids": [10]}, {"request": True}, {"ids": [11]}], "max_new": 8},
        {"name": "reason", "adapter": f"{golden}/qwen-c-lora-all", "prefix": prefix["reason"],
         "input": [{"request": True}, {"out": "extract"}, {"feedback": "verify"}], "max_new": 10},
        {"name": "verify", "prefix": prefix["verify"], "input": [{"out": "reason"}], "max_new": 3}],
    "gate": {"starts_with": [383, 383]}, "max_cycles": 2}
cfg = os.path.join(work, "relay.json")
json.dump(spec, open(cfg, "w"))
request = [88, 160, 301]
rc, out, err = run("relay", "--config", cfg, "--ids", ",".join(map(str, request)), "--json")
check(rc == 0, f"relay exits 0 (stderr: {err.strip()})")
res = json.loads(out)
check(res["verdict"] == "fail" and res["cycles"] == 2, "gate never passes: 2 cycles, verdict fail")
check([s["name"] for s in res["stages"]] == ["extract", "reason", "verify", "reason", "verify"],
      "stage runs in order, extract once")
check(all(s["ms"] > 0 for s in res["stages"]) and res["total_ms"] > 0, "timings set")
e = generate("qwen-c-lora-qv", prefix["extract"] + [10] + request + [11], 8)
r1 = generate("qwen-c-lora-all", prefix["reason"] + request + e, 10)
v1 = generate(None, prefix["verify"] + r1, 3)
r2 = generate("qwen-c-lora-all", prefix["reason"] + request + e + v1, 10)
v2 = generate(None, prefix["verify"] + r2, 3)
got = [s["ids"] for s in res["stages"]]
check(got == [e, r1, v1, r2, v2], "every stage run equals baton generate on the whole sequence")
check(r1 != r2, "the verdict fed back changes the second cycle")

rc, plain, err = run("relay", "--config", cfg, "--ids", "88,160,301")
check(rc == 0 and "verdict: fail, cycles: 2" in plain, "plain output ends with the verdict line")

# The host options: the same stage ids on a pool of 1 or 3 threads; out of range is status 2.
for threads in ("1", "3"):
    rc, out, err = run("relay", "--config", cfg, "--ids", ",".join(map(str, request)), "--json",
                       "--threads", threads)
    check(rc == 0 and [s["ids"] for s in json.loads(out)["stages"]] == [s["ids"] for s in res["stages"]],
          f"--threads {threads}: the same stage ids (status {rc}, {err.strip()})")
rc, out, err = run("relay", "--config", cfg, "--ids", "88", "--threads", "2000")
check(rc == 2 and "--threads 2000 is outside [0, " in err, f"--threads 2000: status {rc}, {err.strip()}")

# --- many requests at once (--requests): each equals its own single run ----------------------
batch_requests = [[88, 160, 301], [5], [17, 200, 3, 3, 90, 41, 7], [300, 12], [61, 61, 61, 2]]
jsonl = os.path.join(work, "requests.jsonl")
with open(jsonl, "w") as f:
    for r in batch_requests:
        f.write(json.dumps({"ids": r}) + "\n")
    f.write("\n")  # a blank line is skipped
singles = []
for r in batch_requests:
    rc, out, err = run("relay", "--config", cfg, "--ids", ",".join(map(str, r)), "--json")
    singles.append(json.loads(out))
for conc in ("1", "3"):
    rc, out, err = run("relay", "--config", cfg, "--requests", jsonl, "--concurrency", conc,
                       "--json")
    lines = [json.loads(x) for x in out.splitlines()]
    check(rc == 0 and len(lines) == len(batch_requests) + 1 and "summary" in lines[-1],
          f"--requests --concurrency {conc}: a line per request and a summary (status {rc}, "
          f"{err.strip()})")
    if rc != 0 or len(lines) != len(batch_requests) + 1:
        continue
    same = all(l["request"] == k and l["verdict"] == singles[k]["verdict"] and
               l["cycles"] == singles[k]["cycles"] and
               [x["ids"] for x in l["stages"]] == [x["ids"] for x in singles[k]["stages"]]
               for k, l in enumerate(lines[:-1]))
    check(same, f"--concurrency {conc}: every request's stages equal its single run")
    summ = lines[-1]["summary"]
    gen = sum(len(x["ids"]) for l in lines[:-1] for x in l["stages"])
    check(summ["requests"] == len(batch_requests) and summ["failed"] == 0 and
          summ["generated_tokens"] == gen and summ["generated_tokens_per_s"] > 0 and
          summ["latency_ms_p99"] >= summ["latency_ms_p50"] > 0,
          f"--concurrency {conc}: the summary counts requests, tokens and latencies ({summ})")
    if conc == "3":
        check(summ["mean_rows_per_step"] > 1, "--concurrency 3: rows batched in a step")
rc, out, err = run("relay", "--config", cfg, "--requests", jsonl, "--ids", "1")
check(rc == 2 and "--requests replaces" in err, f"--requests with --ids: status 2 ({err.strip()})")
with open(os.path.join(work, "bad.jsonl"), "w") as f:
    f.write('{"ids": [1, 2]}\n{"ids": [1, -4]}\n')
rc, out, err = run("relay", "--config", cfg, "--requests", os.path.join(work, "bad.jsonl"))
check(rc == 1 and "bad.jsonl line 2" in err and "-4" in err,
      f"a bad request line: exit 1 naming file, line and value ({err.strip()})")

# --- sampling (docs/sampling.md) ------------------------------------------------------------
# The command line's options over the file's: equal to the file with every stage's "sampling".
def relay_json(config, ids, *extra):
    rc, out, err = run("relay", "--config", config, "--ids", ",".join(map(str, ids)), "--json",
                       *extra)
    return (json.loads(out) if rc == 0 else None), rc, err


sampled_spec = json.loads(json.dumps(spec))
for st in sampled_spec["stages"]:
    st["sampling"] = {"temperature": 1.1, "top_k": 60, "seed": 9}
sampled_cfg = os.path.join(work, "relay-sampled.json")
json.dump(sampled_spec, open(sampled_cfg, "w"))
differ = 0
for k, r in enumerate(batch_requests):
    from_file, rc, err = relay_json(sampled_cfg, r)
    from_flags, rc2, err2 = relay_json(cfg, r, "--temperature", "1.1", "--top-k", "60", "--seed", "9")
    ok = from_file is not None and from_flags is not None
    check(ok and [x["ids"] for x in from_file["stages"]] == [x["ids"] for x in from_flags["stages"]]
          and from_flags["seed"] == 9,
          f"request {k}: the sampling flags equal the file's \"sampling\" ({err.strip()} {err2.strip()})")
    if ok:
        differ += [x["ids"] for x in from_file["stages"]] != [x["ids"] for x in singles[k]["stages"]]
check(differ >= 3, f"sampling changed {differ} of {len(batch_requests)} requests' stages")
lp, rc, err = relay_json(cfg, batch_requests[0], "--logprobs", "2")
check(lp is not None and [x["ids"] for x in lp["stages"]] == [x["ids"] for x in singles[0]["stages"]]
      and all(len(x["logprobs"]) == len(x["ids"]) and
              all(len(e["top"]) == 2 and e["top"][0]["id"] == e["id"] for e in x["logprobs"])
              for x in lp["stages"]),
      f"--logprobs 2: greedy ids kept, one entry per id, its own best alternative ({err.strip()})")
# A --requests line's own "sampling": batched (3 in flight) equals each line run alone.
sampled_jsonl = os.path.join(work, "requests-sampled.jsonl")
with open(sampled_jsonl, "w") as f:
    for k, r in enumerate(batch_requests):
        line = {"ids": r}
        if k % 2 == 0:
            line["sampling"] = {"temperature": 1.3, "top_p": 0.9, "seed": 100 + k}
        f.write(json.dumps(line) + "\n")
runs = {}
for conc in ("1", "3"):
    rc, out, err = run("relay", "--config", cfg, "--requests", sampled_jsonl, "--concurrency", conc,
                       "--json")
    runs[conc] = [[x["ids"] for x in json.loads(l)["stages"]] for l in out.splitlines()[:-1]] if rc == 0 else None
    check(rc == 0, f"--requests with sampled lines, --concurrency {conc} (status {rc}, {err.strip()})")
check(runs["1"] is not None and runs["1"] == runs["3"],
      "sampled --requests lines: the same ids one at a time and 3 in flight")
if runs["1"]:
    check(all(runs["1"][k] == [x["ids"] for x in singles[k]["stages"]] for k in (1, 3)) and
          any(runs["1"][k] != [x["ids"] for x in singles[k]["stages"]] for k in (0, 2, 4)),
          "lines without \"sampling\" stay greedy; lines with it sample")
rc, out, err = run("relay", "--config", cfg, "--requests", sampled_jsonl, "--sequential")
check(rc == 1 and "drop --sequential" in err, f"a sampled line with --sequential: {err.strip()}")
rc, out, err = run("relay", "--config", cfg, "--ids", "1", "--top-p", "2")
check(rc == 2 and "--top-p" in err, f"--top-p 2: status {rc}, {err.strip()}")
bad_spec = json.loads(json.dumps(spec))
bad_spec["stages"][1]["sampling"] = {"temperature": 1, "logit_bias": {"384": 1}}
bad_cfg = os.path.join(work, "relay-bad-bias.json")
json.dump(bad_spec, open(bad_cfg, "w"))
rc, out, err = run("relay", "--config", bad_cfg, "--ids", "1")
check(rc == 1 and "reason" in err and "logit_bias names token 384" in err,
      f"a logit_bias id outside the vocabulary: exit 1 naming stage and id ({err.strip()})")

# --- text: a byte-level ChatML tokenizer within qwen-c's 384 ids ---------------------------
def byte_alphabet():
    out, nxt = [], 256
    for b in range(256):
        printable = 0x21 <= b <= 0x7e or 0xa1 <= b <= 0xac or b >= 0xae
        out.append(chr(b) if printable else chr(nxt))
        if not printable:
            nxt += 1
    return out


alpha = byte_alphabet()
vocab = {alpha[b]: b for b in range(256)}
added = [{"id": 256 + i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
          "normalized": False, "special": True} for i, c in enumerate(["<|im_start|>", "<|im_end|>"])]
split = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
         "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
tok = {"version": "1.0", "added_tokens": added, "normalizer": {"type": "NFC"},
       "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
           {"type": "Split", "pattern": {"Regex": split}, "behavior": "Isolated", "invert": False}, bl]},
       "post_processor": bl, "decoder": bl,
       "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                 "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                 "ignore_merges": False, "vocab": vocab, "merges": []}}
tok_path = os.path.join(work, "tokenizer.json")
json.dump(tok, open(tok_path, "w"))
text_spec = {"model": f"{golden}/qwen-c", "tokenizer": "tokenizer.json",
             "stages": [{"name": "answer", "adapter": f"{golden}/qwen-c-lora-qv", "system": "Be brief.",
                         "input": [{"text": "<|im_start|>user\n"}, {"request": True},
                                   {"text": "<|im_end|>\n<|im_start|>assistant\n"}],
                         "max_new": 6}]}
text_cfg = os.path.join(work, "text-relay.json")
json.dump(text_spec, open(text_cfg, "w"))
question = "Why is the sky blue?"
rc, out, err = run("relay", "--config", text_cfg, question, "--json")
check(rc == 0, f"text relay exits 0 (stderr: {err.strip()})")
if rc == 0:
    res = json.loads(out)
    rc2, tok_out, err2 = run("tokenize", "--tokenizer", tok_path, "--json",
                             stdin="<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n" + question +
                             "<|im_end|>\n<|im_start|>assistant\n")
    check(rc2 == 0, f"tokenize exits 0 ({err2.strip()})")
    full = json.loads(tok_out)
    check(full[0] == 256 and full.count(257) == 2, "ChatML tags became their special ids")
    want = generate("qwen-c-lora-qv", full, 6)
    check(res["stages"][0]["ids"] == want, "text relay stage equals generate on the tokenized ChatML text")
    check("text" in res["stages"][0], "--json carries the decoded text")

    # --trace: every step's token and position, as a table and in JSON.
    rc, out, err = run("relay", "--config", text_cfg, question, "--json", "--trace")
    check(rc == 0, f"--trace --json exits 0 ({err.strip()})")
    st = json.loads(out)["stages"][0]
    check([t["token"] for t in st["trace"]] == st["ids"], "--trace: one row per generated token")
    check([t["position"] for t in st["trace"]] == list(range(len(full), len(full) + 6)),
          "--trace: positions follow the prompt")
    check(st["host_waits"] == 6 and st["forwards"] == 6, "--trace: host waits and forwards counted")
    rc, out, err = run("relay", "--config", text_cfg, question, "--trace")
    rows = [l for l in out.splitlines() if l.strip() and l.split()[0].isdigit()]
    check(rc == 0 and "step_ms" in out and len(rows) == 6, "--trace prints the per-step table")

    # Interceptors named in the file: a stop sequence (given as the ids of the first two
    # generated tokens, matched on their bytes), a token set.
    stop_spec = json.loads(json.dumps(text_spec))
    stop_spec["stages"][0]["interceptors"] = [{"stop_sequences": [want[:2]]}]
    stop_cfg = os.path.join(work, "stop-relay.json")
    json.dump(stop_spec, open(stop_cfg, "w"))
    rc, out, err = run("relay", "--config", stop_cfg, question, "--json")
    check(rc == 0, f"stop-sequence relay exits 0 ({err.strip()})")
    if rc == 0:
        st = json.loads(out)["stages"][0]
        check(st["ids"] == want[:2] and st.get("stopped_by") == "baton.stop_sequences",
              "a stop sequence in the file ends the stage after the token that completes it")
    exact_spec = json.loads(json.dumps(text_spec))
    exact_spec["stages"][0]["exact"] = True
    exact_spec["stages"][0]["interceptors"] = [{"deny_tokens": [want[0]]}]
    exact_cfg = os.path.join(work, "exact-relay.json")
    json.dump(exact_spec, open(exact_cfg, "w"))
    rc, out, err = run("relay", "--config", exact_cfg, question)
    check(rc == 1 and "exact-relay.json: stages[0] ('answer').interceptors[0] (deny_tokens)" in err
          and "'baton.token_set'" in err,
          "an exact stage with a token set: exit 1 naming file, stage, field and interceptor")
    exact_spec["stages"][0]["exact"] = False
    # Also deny the model's ids past the tokenizer's 258, so the output can be decoded.
    exact_spec["stages"][0]["interceptors"] = [{"deny_tokens": [want[0]] + list(range(258, 384))}]
    json.dump(exact_spec, open(exact_cfg, "w"))
    rc, out, err = run("relay", "--config", exact_cfg, question, "--json")
    got = json.loads(out)["stages"][0]["ids"] if rc == 0 else []
    check(rc == 0 and got and want[0] not in got and max(got) < 258,
          f"a deny set in the file keeps its tokens out ({err.strip()})")

    # Output past the tokenizer's 258 ids (qwen-c has 384): every id the tokenizer has is
    # denied, so the model picks from the rest. The ids come back; the text leaves them out, as
    # Hugging Face's decode does, instead of failing the run.
    pad_spec = json.loads(json.dumps(text_spec))
    pad_spec["stages"][0]["interceptors"] = [{"deny_tokens": list(range(0, 258))}]
    pad_cfg = os.path.join(work, "pad-relay.json")
    json.dump(pad_spec, open(pad_cfg, "w"))
    rc, out, err = run("relay", "--config", pad_cfg, question, "--json")
    st = json.loads(out)["stages"][0] if rc == 0 else {}
    check(rc == 0 and len(st["ids"]) == 6 and min(st["ids"]) >= 258 and st["text"] == "",
          f"ids past the tokenizer: exit 0, exact ids, no text for them ({err.strip()})")
    rc, out, err = run("relay", "--config", pad_cfg, question)
    check(rc == 0 and "verdict" in out, f"the same in plain output ({err.strip()})")

# --- the demo's activated relay: one shared sequence (relay-activated.json) -------------------
demo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "word-problems")
act_cfg = os.path.join(demo, "relay-activated.json")
questions = ["Mia has 7 pears and buys 5 more. How many pears does she have?",
             "Anna has 5 flowers and Ella has 3 flowers. How many flowers do they have together?",
             "Leo has 9 apples and eats 4 of them. How many apples are left?"]
singles = []
for q in questions:
    rc, out, err = run("relay", "--config", act_cfg, q, "--json")
    singles.append(json.loads(out) if rc == 0 else {})
    check(rc == 0, f"activated relay on {q!r}: exit 0 ({err.strip()})")
r0 = singles[0]
if r0:
    texts = {s["name"]: s["text"] for s in r0["stages"]}
    check(r0["verdict"] == "pass" and texts.get("reason") == "7 + 5 = 12",
          f"activated relay: reason says 7 + 5 = 12 and the gate passes ({texts})")
    # The opening (the request in its template) once, then extract's and reason's turns.
    check(r0["shared_tokens"] > 0 and all(s["input_tokens"] > 0 for s in r0["stages"]),
          f"activated relay: the base appended {r0['shared_tokens']} shared tokens")
    check(r0["prefill_tokens"] == r0["shared_tokens"] + sum(s["input_tokens"] for s in r0["stages"]),
          "activated relay: prefill tokens = shared + every stage's own input")
reqs = os.path.join(work, "activated-requests.jsonl")
with open(reqs, "w") as f:
    for q in questions:
        f.write(json.dumps({"text": q}) + "\n")
rc, out, err = run("relay", "--config", act_cfg, "--requests", reqs, "--concurrency", "2", "--json")
lines = [j for j in (json.loads(x) for x in out.splitlines() if x.startswith("{")) if "request" in j]
check(rc == 0 and len(lines) == 3 and all(
    [s["ids"] for s in lines[k]["stages"]] == [s["ids"] for s in singles[k].get("stages", [])]
    for k in range(3)), f"activated relay batched (--requests, 2 slots): each as run alone ({err.strip()})")

# --- errors ----------------------------------------------------------------------------------
bad = dict(spec)
bad["stages"] = [dict(s) for s in spec["stages"]]
bad["stages"][0] = dict(bad["stages"][0], input=[{"out": "verify"}])
bad_cfg = os.path.join(work, "bad.json")
json.dump(bad, open(bad_cfg, "w"))
rc, out, err = run("relay", "--config", bad_cfg, "--ids", "1")
check(rc == 1 and "stages[0] ('extract').input[0]" in err and "earlier stage" in err,
      "a stage reading a later one: exit 1, message names file, stage and segment")
rc, out, err = run("relay", "--config", cfg)
check(rc == 2 and "either as --ids" in err, "no request: exit 2 with usage")
rc, out, err = run("relay", "--config", os.path.join(work, "missing.json"), "--ids", "1")
check(rc == 1 and "missing.json" in err, "missing file: exit 1 naming it")
rc, out, err = run("relay", "--config", cfg, "--ids", "1,384")
check(rc == 1 and "384" in err and "vocabulary" in err, "an id outside the vocabulary: exit 1 naming it")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
