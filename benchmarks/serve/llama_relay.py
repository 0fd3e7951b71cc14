# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The three-stage relay through llama-server, for the serving benchmark (serve_bench.py): the
same base model and the same three PEFT adapters (written as GGUF LoRA adapters here), each
stage one /completion request that selects its adapter with llama-server's per-request `lora`
field, with its prompt cache on (`cache_prompt`), so a slot that served a stage before keeps
that stage's prefix. A client runs a relay as a user of llama-server would: extract (prefix +
request), reason (prefix + request + extract's ids), verify (prefix + reason's ids), each
`max_new` greedy ids with end-of-sequence ignored, token ids in and out; the last stage is
streamed, and its first streamed token is the relay's time to first output token."""

import http.client
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "llama_cpp"))
import models  # noqa: E402


def peft_to_gguf(adapter: Path, arch: str, out: Path) -> Path:
    """A PEFT LoRA folder (adapter_config.json + adapter_model.safetensors, q/k/v/o targets) as
    the GGUF adapter llama.cpp loads: general.type "adapter", adapter.type "lora",
    adapter.lora.alpha, tensors blk.N.attn_{q,k,v,output}.weight.lora_{a,b} in f32 (A [r, in] and
    B [out, r] as numpy shapes: GGUF's ne order reverses them, which is what llama.cpp checks)."""
    if out.exists():
        return out
    import gguf

    cfg = json.loads((adapter / "adapter_config.json").read_text())
    tensors = models.read_safetensors(adapter / "adapter_model.safetensors")
    names = {"q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output"}
    w = gguf.GGUFWriter(str(out) + ".part", arch)
    w.add_string("general.type", "adapter")
    w.add_string("adapter.type", "lora")
    w.add_float32("adapter.lora.alpha", float(cfg["lora_alpha"]))
    for name in sorted(tensors):
        # base_model.model.model.layers.{i}.self_attn.{m}.lora_{A,B}.weight
        parts = name.split(".")
        layer, module, ab = int(parts[4]), parts[6], parts[7]
        gg = f"blk.{layer}.{names[module]}.weight.lora_{'a' if ab == 'lora_A' else 'b'}"
        w.add_tensor(gg, np.ascontiguousarray(tensors[name], dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    Path(str(out) + ".part").rename(out)
    return out


def _completion(conn, body):
    conn.request("POST", "/completion", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:300]!r}")
    return resp


def relay_request(host, port, prefixes, request, max_new, adapters=3):
    """(latency s, time to first output token s, output ids, generated ids) of one relay, counts
    as load_test.run_clients takes them."""
    conn = http.client.HTTPConnection(host, port, timeout=600)
    t0 = time.perf_counter()

    def body(stage, prompt, stream):
        return {"prompt": prompt, "n_predict": max_new, "ignore_eos": True, "temperature": 0.0,
                "cache_prompt": True, "return_tokens": True, "stream": stream,
                "lora": [{"id": k, "scale": 1.0 if k == stage else 0.0} for k in range(adapters)]}

    extract = json.loads(_completion(conn, body(0, prefixes[0] + request, False)).read())["tokens"]
    reason = json.loads(_completion(conn, body(1, prefixes[1] + request + extract, False))
                        .read())["tokens"]
    resp = _completion(conn, body(2, prefixes[2] + reason, True))
    ttft, verify = None, []
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data:"):
            continue
        j = json.loads(line[5:])
        if j.get("tokens"):
            if ttft is None:
                ttft = time.perf_counter() - t0
            verify += j["tokens"]
        if j.get("stop"):
            break
    latency = time.perf_counter() - t0
    conn.close()
    return latency, ttft if ttft is not None else latency, len(verify), \
        len(extract) + len(reason) + len(verify)
