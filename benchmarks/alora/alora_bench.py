# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""A request-heavy relay, activated adapters (one shared sequence) against plain adapters, and
against llama.cpp's server with the same activated adapters: prefill tokens computed and relay
latency, side by side in one run.

usage: alora_bench.py --baton BIN --work DIR [--model-dir HF] [--llama-server BIN] [--gguf FILE]
                      [--rounds 7] [--repeat 3] [--threads 2] [--request 512] [--max-new 24,16,32]
                      [--storage bf16] [--bf16-products] [--skip-peft] [--out FILE.json]

Runs under the reference python (scripts/pyenv.sh: torch, transformers, peft). On the 156M
benchmark model (random weights; benchmarks/llama_cpp/models.py makes it) peft makes three
activated adapters (rank 16, all seven projections, init_lora_weights=False, each with its own
invocation of 4 ids) and the same weights as plain LoRA adapters. The workload: a common prefix
of 32 ids, a request of --request ids, three stages writing --max-new tokens each (no stop id),
one cycle. The two relays compute the same token stream for every stage:

  plain      each stage pre-warms the common prefix and reads request, then for every earlier stage
             its invocation, output and the turn-end id, then its own invocation; all of it
             prefilled by the stage through its own (plain) adapter
  activated  relay "shared": the common prefix pre-warmed once, the request appended once by the
             base, each finished stage's turn (invocation, output, turn end) appended once by the
             base; each stage prefills only its invocation

Checks first, in f32: every stage's output of the activated relay equals peft's generate() on
that stage's whole input (the outputs chained as the relay chains them). Then --rounds rounds,
each: baton plain, baton activated (`baton relay --repeat N`: the median of N runs of the
pre-warmed relay), the prefill cost per token (a one-stage relay prefilling the request, minus
one prefilling 64 ids, over the difference), and llama-server driving the same relay through its
/completion endpoint (the three activated adapters converted with llama.cpp's
convert_lora_to_gguf.py; greedy, prompt cache on, one slot; its prompt_n is the tokens it
computed). Reported: medians over rounds, and the bound the saved prefill predicts:
plain latency - (plain - activated prefill tokens) x cost per token.
"""
import argparse
import copy
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
PREFIX_LEN = 32
INVOCATION_LEN = 4
SEED = 4711


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def make_adapters(model_dir, work, invocations):
    """Activated adapters (peft, random A and B) and the same weights as plain LoRA."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    dirs = {"activated": [], "plain": []}
    for k, inv in enumerate(invocations):
        act, plain = work / "activated" / f"s{k}", work / "plain" / f"s{k}"
        if not (act / "adapter_config.json").exists():
            torch.manual_seed(SEED + k)
            cfg = LoraConfig(r=16, lora_alpha=32, target_modules=TARGETS, lora_dropout=0.0, bias="none",
                             init_lora_weights=False, task_type="CAUSAL_LM", alora_invocation_tokens=inv)
            get_peft_model(copy.deepcopy(base), cfg).save_pretrained(act, safe_serialization=True,
                                                                     save_embedding_layers=False)
            # PEFT's init draws B like A (nn.Linear's); scale the update down so the adapter
            # steers the random model without swamping it.
            from safetensors.torch import load_file, save_file
            t = load_file(act / "adapter_model.safetensors")
            save_file({n: (v * 0.25 if "lora_B" in n else v) for n, v in t.items()},
                      act / "adapter_model.safetensors", metadata={"format": "pt"})
        if not (plain / "adapter_config.json").exists():
            shutil.copytree(act, plain, dirs_exist_ok=True)
            c = json.loads((plain / "adapter_config.json").read_text())
            c.pop("alora_invocation_tokens", None)
            (plain / "adapter_config.json").write_text(json.dumps(c, indent=2))
        dirs["activated"].append(act)
        dirs["plain"].append(plain)
    return dirs


def relay_files(work, model_dir, dirs, prefix, invocations, turn_end, max_new, request_len, storage, threads,
                bf16_products=False):
    """The two relay files (and the prefill-cost ones) for `storage`."""
    common = {"model": str(model_dir), "storage": storage,
              "host": {"threads": threads, "bf16_products": bf16_products},
              "max_cycles": 1, "max_request_tokens": request_len}
    activated = dict(common, shared={"prefix": prefix, "input": [{"request": True}], "turn_end": turn_end},
                     stages=[{"name": f"s{k}", "adapter": str(dirs["activated"][k]), "invocation": invocations[k],
                              "max_new": max_new[k]} for k in range(3)])
    stages = []
    for k in range(3):
        inp = [{"request": True}]
        for j in range(k):
            inp += [{"ids": invocations[j]}, {"out": f"s{j}"}, {"ids": turn_end}]
        inp.append({"ids": invocations[k]})
        stages.append({"name": f"s{k}", "adapter": str(dirs["plain"][k]), "prefix": prefix, "input": inp,
                       "max_new": max_new[k]})
    plain = dict(common, stages=stages)
    one = dict(common, stages=[{"name": "prefill", "adapter": str(dirs["plain"][0]), "prefix": prefix,
                                "input": [{"request": True}], "max_new": 1}])
    files = {}
    for name, spec in (("activated", activated), ("plain", plain), ("prefill", one)):
        files[name] = work / f"{name}-{storage}.json"
        files[name].write_text(json.dumps(spec, indent=1))
    return files


def baton_run(baton, config, request, repeat):
    out = subprocess.run([str(baton), "relay", "--config", str(config), "--ids", ",".join(map(str, request)),
                          "--json", "--repeat", str(repeat)], check=True, capture_output=True, text=True)
    r = json.loads(out.stdout)
    r["ms"] = r.get("median_total_ms", r["total_ms"])  # --repeat 1 reports total_ms alone
    return r


def peft_chain(model_dir, dirs, prefix, request, invocations, turn_end, max_new):
    """peft's generate() for each stage on its whole input, chained as the activated relay chains."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    seq, outs = prefix + request, []
    for k in range(3):
        base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager")
        model = PeftModel.from_pretrained(base, dirs["activated"][k]).eval()
        model.generation_config.eos_token_id = None
        whole = seq + invocations[k]
        with torch.no_grad():
            out = model.generate(input_ids=torch.tensor([whole]), attention_mask=torch.ones(1, len(whole), dtype=torch.long),
                                 max_new_tokens=max_new[k], min_new_tokens=max_new[k], do_sample=False, pad_token_id=0)
        tokens = out[0, len(whole):].tolist()
        outs.append(tokens)
        seq = whole + tokens + turn_end
    return outs


class LlamaServer:
    def __init__(self, binary, gguf, adapters, threads):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        cmd = [str(binary), "-m", str(gguf), "--port", str(self.port), "--host", "127.0.0.1", "-t", str(threads),
               "-tb", str(threads), "-c", "4096", "-np", "1", "-b", "2048", "-ub", "512", "--lora-init-without-apply"]
        for a in adapters:
            cmd += ["--lora", str(a)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except Exception:  # noqa: BLE001 - not up yet
                if self.proc.poll() is not None:
                    raise SystemExit("llama-server exited: " + self.proc.stderr.read()[-2000:])
                time.sleep(0.2)
        raise SystemExit("llama-server did not come up")

    def complete(self, tokens, n, adapter):
        body = {"prompt": tokens, "n_predict": n, "temperature": 0.0, "top_k": 1, "cache_prompt": True,
                "id_slot": 0, "ignore_eos": True, "return_tokens": True, "samplers": ["top_k"],
                "lora": [{"id": j, "scale": 1.0 if j == adapter else 0.0} for j in range(3)]}
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/completion", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=600) as r:
            return json.loads(r.read())

    def relay(self, prefix, request, invocations, turn_end, max_new):
        t0 = time.perf_counter()
        seq, prompt_n, outs = prefix + request, 0, []
        for k in range(3):
            whole = seq + invocations[k]
            r = self.complete(whole, max_new[k], k)
            prompt_n += r["timings"]["prompt_n"]
            outs.append(r["tokens"])
            seq = whole + r["tokens"] + turn_end
        return (time.perf_counter() - t0) * 1000, prompt_n, outs

    def close(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def gguf_with_tokens(src, model_dir, work, storage):
    """The model as a GGUF with a token list (llama-server detokenizes what it generates; the
    side-by-side harness's files have none): benchmarks/llama_cpp/models.py's writer."""
    path = work / f"model-{storage}-tokens.gguf"
    if not path.exists():
        sys.path.insert(0, str(src / "gguf-py"))
        sys.path.insert(0, str(HERE.parent / "llama_cpp"))
        import models  # noqa: PLC0415 - the harness's writer, found only now

        cfg, tensors = models.read_hf(model_dir)
        models.write_gguf(models.shape_of_config("qwen2-155m", cfg), tensors, storage, path, token_list=True)
    return path


def convert_adapters(src, model_dir, dirs, work):
    """llama.cpp's own converter (with its gguf-py), run by this python."""
    out = []
    env = dict(os.environ, PYTHONPATH=str(src / "gguf-py"))
    for k, d in enumerate(dirs["activated"]):
        g = work / f"s{k}-alora.gguf"
        if not g.exists():
            subprocess.run([sys.executable, str(src / "convert_lora_to_gguf.py"), "--base", str(model_dir),
                            "--outtype", "f32", "--outfile", str(g), str(d)], check=True, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        out.append(g)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    models = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "baton" / "bench-models" / "qwen2-155m"
    ap.add_argument("--baton", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model-dir", default=str(models / "hf"))
    ap.add_argument("--gguf", default="", help="the model for llama-server (default: written from --model-dir)")
    ap.add_argument("--llama-server", default="")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--request", type=int, default=512)
    ap.add_argument("--max-new", default="24,16,32")
    ap.add_argument("--storage", default="bf16")
    ap.add_argument("--skip-peft", action="store_true")
    ap.add_argument("--bf16-products", action="store_true",
                    help="baton's bf16 prefill products on AVX512-BF16 (activations rounded to bf16, as llama.cpp's)")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    model_dir = Path(a.model_dir)
    vocab = json.loads((model_dir / "config.json").read_text())["vocab_size"]
    rng = random.Random(SEED)
    ids = lambda n: [rng.randrange(3, vocab) for _ in range(n)]  # noqa: E731
    prefix, turn_end = ids(PREFIX_LEN), ids(1)
    invocations = [ids(INVOCATION_LEN) for _ in range(3)]
    max_new = [int(x) for x in a.max_new.split(",")]
    requests = [ids(a.request) for _ in range(a.rounds * (a.repeat + 1) + 1)]

    log("adapters (peft)")
    dirs = make_adapters(model_dir, work, invocations)
    report = {"model": str(model_dir), "storage": a.storage, "bf16_products": a.bf16_products,
              "threads": a.threads, "request": a.request,
              "max_new": max_new, "prefix": PREFIX_LEN, "invocation": INVOCATION_LEN}

    if not a.skip_peft:
        log("activated relay vs peft (f32)")
        f32 = relay_files(work, model_dir, dirs, prefix, invocations, turn_end, max_new, a.request, "f32", a.threads)
        got = baton_run(a.baton, f32["activated"], requests[0], 1)
        want = peft_chain(model_dir, dirs, prefix, requests[0], invocations, turn_end, max_new)
        equal = [s["ids"] == w for s, w in zip(got["stages"], want)]
        report["peft_equal"] = equal
        log(f"  stages equal to peft: {equal}")

    files = relay_files(work, model_dir, dirs, prefix, invocations, turn_end, max_new, a.request, a.storage, a.threads,
                        a.bf16_products)
    server = None
    if a.llama_server:
        src = Path(a.llama_server).resolve().parents[2] / "src"
        log("llama.cpp: converting the adapters, starting llama-server")
        gguf = Path(a.gguf) if a.gguf else gguf_with_tokens(src, model_dir, work, a.storage)
        server = LlamaServer(a.llama_server, gguf, convert_adapters(src, model_dir, dirs, work), a.threads)
    rounds = []
    try:
        for i in range(a.rounds):
            req = requests[1 + i]
            row = {}
            for name in ("plain", "activated"):
                r = baton_run(a.baton, files[name], req, a.repeat)
                row[name] = {"ms": r["ms"], "prefill_tokens": r["prefill_tokens"],
                             "shared_tokens": r["shared_tokens"], "outputs": [len(s["ids"]) for s in r["stages"]]}
            long_ms = baton_run(a.baton, files["prefill"], req, a.repeat)
            short_ms = baton_run(a.baton, files["prefill"], req[:64], a.repeat)
            row["prefill_ms_per_token"] = (long_ms["ms"] - short_ms["ms"]) / (a.request - 64)
            if server:
                times, prompt_n = [], 0
                for j in range(a.repeat):
                    # A fresh request each time: the server's prompt cache must not hold it.
                    ms, prompt_n, _ = server.relay(prefix, requests[1 + a.rounds + i * a.repeat + j],
                                                   invocations, turn_end, max_new)
                    times.append(ms)
                row["llama"] = {"ms": statistics.median(times), "prefill_tokens": prompt_n}
            rounds.append(row)
            log(f"  round {i + 1}: " + ", ".join(f"{k} {v['ms']:.0f} ms / {v['prefill_tokens']} tok"
                                                  for k, v in row.items() if isinstance(v, dict)))
    finally:
        if server:
            server.close()

    med = lambda f: statistics.median(f(r) for r in rounds)  # noqa: E731
    plain_ms, act_ms = med(lambda r: r["plain"]["ms"]), med(lambda r: r["activated"]["ms"])
    per_token = med(lambda r: r["prefill_ms_per_token"])
    plain_tok, act_tok = rounds[0]["plain"]["prefill_tokens"], rounds[0]["activated"]["prefill_tokens"]
    bound = plain_ms - (plain_tok - act_tok) * per_token
    summary = {"plain": {"ms": plain_ms, "prefill_tokens": plain_tok},
               "activated": {"ms": act_ms, "prefill_tokens": act_tok},
               "prefill_ms_per_token": per_token,
               "prefill_ratio": act_tok / plain_tok,
               "bound_ms": bound,
               "activated_over_bound": act_ms / bound,
               "speedup": plain_ms / act_ms}
    if server:
        summary["llama"] = {"ms": med(lambda r: r["llama"]["ms"]), "prefill_tokens": rounds[0]["llama"]["prefill_tokens"]}
        summary["activated_vs_llama"] = summary["llama"]["ms"] / act_ms
    report["rounds"] = rounds
    report["summary"] = summary
    text = json.dumps(report, indent=1)
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
