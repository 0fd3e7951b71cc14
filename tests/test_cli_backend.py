#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`--backend host|cuda` on every subcommand:
usage: test_cli_backend.py BATON GOLDEN_DIR WORK_DIR CUDA_BUILT(0|1) DEFAULT(host|auto).

- parsing: host and cuda are the values; anything else, a repeated flag or a missing value is a
  command-line error (status 2) naming the option, on generate, relay, tokenize and detokenize;
- the JSON of generate and relay names the backend that ran ("backend"), the plain relay
  output ends its verdict line with it; the default is the build's BATON_DEFAULT_BACKEND;
- a build without CUDA refuses --backend cuda as a command-line error naming the build option;
- the relay file's "backend" field chooses the backend when --backend is not given, and
  --backend overrides it: "host" runs on the host; "cuda" in a build without CUDA is a
  config_error naming the file and the field (status 1), and --backend host overrides it;
- a CUDA build on a machine without a visible device (CUDA_VISIBLE_DEVICES="" forces that,
  also on a GPU machine) fails with the device_error message, status 1, before loading;
- where a device is visible: generate and relay on cuda give the host's tokens (golden
  fixtures, first logits within the golden tolerance).
tokenize/detokenize run on the host whatever the backend, and say so for --backend cuda."""
import json
import os
import subprocess
import sys

baton, golden, work, cuda_built, default = sys.argv[1:6]
golden = os.path.abspath(golden)
cuda_built = cuda_built in ("1", "ON", "TRUE", "true", "on")
os.makedirs(work, exist_ok=True)
failures = []
tokenizer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizer", "data",
                         "gpt2_style_tokenizer.json")


def run(*args, stdin=None, env=None):
    p = subprocess.run([baton, *args], capture_output=True, text=True, errors="replace",
                       timeout=300, input=stdin, env=env)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


no_device = dict(os.environ, CUDA_VISIBLE_DEVICES="")
gen = ["generate", "--model", f"{golden}/qwen-c", "--adapter", f"{golden}/qwen-c-lora-qv",
       "--ids", "88,160,301", "--max-new", "6", "--ignore-eos", "--json"]

# --- parsing, on every subcommand -----------------------------------------------------------
spec = {"model": f"{golden}/qwen-c",
        "stages": [{"name": "a", "adapter": f"{golden}/qwen-c-lora-qv", "prefix": [5, 6, 7],
                    "input": [{"request": True}], "max_new": 4},
                   {"name": "b", "prefix": [9, 9], "input": [{"out": "a"}], "max_new": 3}],
        "gate": {"starts_with": [383]}, "max_cycles": 1}
cfg = os.path.join(work, "relay.json")
json.dump(spec, open(cfg, "w"))
relay = ["relay", "--config", cfg, "--ids", "88,160"]
for name, base, stdin in [("generate", gen, None), ("relay", relay, None),
                          ("tokenize", ["tokenize", "--tokenizer", tokenizer], "hi"),
                          ("detokenize", ["detokenize", "--tokenizer", tokenizer], "72 105")]:
    rc, out, err = run(*base, "--backend", "gpu", stdin=stdin)
    check(rc == 2 and "--backend must be host or cuda, got 'gpu'" in err and out == "",
          f"{name} --backend gpu: status 2 naming the values ({rc}, {err.splitlines()[:1]})")
    rc, out, err = run(*base, "--backend", "host", "--backend", "host", stdin=stdin)
    check(rc == 2 and "--backend is given twice" in err, f"{name}: repeated --backend is status 2")
    rc, out, err = run(*base, "--backend", stdin=stdin)
    check(rc == 2 and "--backend needs a value" in err, f"{name}: --backend without a value")
    rc, out, err = run(*base, "--backend", "host", stdin=stdin)
    check(rc == 0, f"{name} --backend host runs (status {rc}, {err.strip()[:200]})")
    rc, out, err = run(base[0], "--help")
    check(rc == 0 and "--backend" in out, f"{name} --help lists --backend")

# --- the JSON names the backend; the default ------------------------------------------------
rc, out, err = run(*gen, "--backend", "host")
host_gen = json.loads(out) if rc == 0 else {}
check(host_gen.get("backend") == "host", f"generate --backend host: JSON backend 'host' ({out.strip()})")
rc, out, err = run(*gen, env=no_device)
check(rc == 0 and json.loads(out).get("backend") == "host" and json.loads(out)["ids"] == host_gen["ids"],
      f"generate without --backend and without a device runs on host (default {default}): {out.strip()}")
rc, out, err = run(*gen[:-1])  # without --json the output is the ids alone
check(rc == 0 and out.split() == [str(i) for i in host_gen["ids"]], "plain generate output is ids only")
rc, out, err = run(*relay, "--json", "--backend", "host")
host_relay = json.loads(out) if rc == 0 else {}
check(host_relay.get("backend") == "host", "relay --json: backend 'host'")
rc, out, err = run(*relay, "--backend", "host")
check(rc == 0 and out.rstrip().splitlines()[-1].endswith(", backend: host"),
      f"plain relay output: the verdict line ends with the backend ({out.rstrip().splitlines()[-1:]})")
rc, out, err = run("tokenize", "--tokenizer", tokenizer, "--json", "--backend", "host", stdin="hi")
rc2, out2, err2 = run("tokenize", "--tokenizer", tokenizer, "--json", stdin="hi")
check(rc == 0 and out == out2 and err == "", "tokenize --backend host: same output, no note")

# --- the relay file's "backend" field; --backend overrides it ---------------------------------
def relay_file(backend):
    path = os.path.join(work, f"relay_{backend}.json")
    json.dump(dict(spec, backend=backend), open(path, "w"))
    return ["relay", "--config", path, "--ids", "88,160", "--json"]


rc, out, err = run(*relay_file("host"), env=no_device)
check(rc == 0 and json.loads(out).get("backend") == "host" and
      [s["ids"] for s in json.loads(out)["stages"]] == [s["ids"] for s in host_relay["stages"]],
      f'relay file "backend": "host" runs on host ({err.strip()[:200]})')
cuda_file = relay_file("cuda")
rc, out, err = run(*cuda_file, "--backend", "host")
check(rc == 0 and json.loads(out).get("backend") == "host",
      f'--backend host overrides the file\'s "backend": "cuda" ({err.strip()[:200]})')
rc, out, err = run(*cuda_file, env=no_device)
if not cuda_built:
    check(rc == 1 and "relay_cuda.json: field 'backend' = \"cuda\"" in err and
          "built without the CUDA backend" in err and out == "",
          f'relay file "backend": "cuda" without CUDA: config_error naming file and field ({rc}, {err.strip()[:300]})')
else:
    check(rc == 1 and "no CUDA device is visible" in err and out == "",
          f'relay file "backend": "cuda", no device: the device_error ({rc}, {err.strip()[:300]})')
rc, out, err = run(*relay_file("tpu"))
check(rc == 1 and "field 'backend' = \"tpu\"" in err, f'relay file "backend": "tpu" is refused ({err.strip()[:200]})')

# --- cuda: refused without CUDA; device_error without a device; equal to host with one ---------
if not cuda_built:
    for name, base, stdin in [("generate", gen, None), ("relay", relay, None),
                              ("tokenize", ["tokenize", "--tokenizer", tokenizer], "hi")]:
        rc, out, err = run(*base, "--backend", "cuda", stdin=stdin)
        check(rc == 2 and "built without the CUDA backend" in err and "BATON_ENABLE_CUDA=ON" in err
              and out == "", f"{name} --backend cuda without CUDA: status 2 naming the build option")
else:
    for name, base in [("generate", gen), ("relay", relay)]:
        rc, out, err = run(*base, "--backend", "cuda", env=no_device)
        check(rc == 1 and "--backend cuda: no CUDA device is visible" in err and out == "",
              f"{name} --backend cuda, no device: status 1, device_error message ({rc}, {err.strip()})")
    rc, out, err = run("tokenize", "--tokenizer", tokenizer, "--json", "--backend", "cuda", stdin="hi",
                       env=no_device)
    check(rc == 0 and out == out2 and "runs on the host" in err,
          "tokenize --backend cuda: host output, and a note saying so")
    rc, out, err = run(*gen, "--backend", "cuda")
    if rc == 1 and "no CUDA device is visible" in err:
        what = "test_cli_backend: generate/relay --backend cuda against host: no CUDA device visible"
        print(f"NOT RUN: {what}")
        if os.environ.get("BATON_NOT_RUN_LOG"):  # .ci/run lists it in its summary
            with open(os.environ["BATON_NOT_RUN_LOG"], "a") as f:
                f.write(what + "\n")
    else:
        golden_json = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "golden", "golden.json")))
        tol = golden_json["tolerances"]["first_logits_max_abs"]
        cuda_gen = json.loads(out) if rc == 0 else {}
        check(cuda_gen.get("backend") == "cuda" and cuda_gen.get("ids") == host_gen["ids"],
              f"generate --backend cuda: host's ids ({out.strip()}; {err.strip()[:300]})")
        rc, out, err = run(*gen, "--logits", "--backend", "cuda")
        rc_h, out_h, _ = run(*gen, "--logits", "--backend", "host")
        if rc == 0 and rc_h == 0:
            a, b = json.loads(out)["logits"], json.loads(out_h)["logits"]
            diff = max(abs(x - y) for x, y in zip(a, b))
            check(len(a) == len(b) and diff <= tol, f"first logits cuda vs host within {tol} ({diff:.3g})")
        else:
            check(False, f"--logits on cuda and host run ({err.strip()[:300]})")
        rc, out, err = run(*relay, "--json", "--backend", "cuda")
        cuda_relay = json.loads(out) if rc == 0 else {}
        check(cuda_relay.get("backend") == "cuda" and
              [s["ids"] for s in cuda_relay.get("stages", [])] == [s["ids"] for s in host_relay["stages"]],
              f"relay --backend cuda: every stage's ids equal the host's ({err.strip()[:300]})")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
