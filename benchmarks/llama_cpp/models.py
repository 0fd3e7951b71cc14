# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The side-by-side benchmark's models: random Hugging Face checkpoints (config.json +
model.safetensors, float32) and their GGUF conversions (f32, f16, bf16, q8_0, q4_0) for
llama.cpp.

The GGUF files follow what llama.cpp's qwen2 and llama loaders read: tensor names
token_embd / blk.N.* / output_norm / output, `{arch}.*` hyper-parameters, and no tokenizer
(`tokenizer.ggml.model = "none"` with `{arch}.vocab_size`, for which llama.cpp adds that many
dummy tokens). Llama's q/k rows are permuted from Hugging Face's rotate-half order to
llama.cpp's interleaved RoPE pairs, as llama.cpp's own converter does; Qwen2 needs no
permutation (its RoPE in llama.cpp is the NeoX, rotate-half, kind)."""

import json
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Shape:
    name: str
    arch: str  # "qwen2" or "llama"
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    rope_theta: float
    rms_eps: float

    @property
    def bias(self) -> bool:
        return self.arch == "qwen2"

    def parameters(self) -> int:
        h, q, kv, f, v = self.hidden, self.heads * self.head_dim, self.kv_heads * self.head_dim, self.ffn, self.vocab
        per_layer = h * (q + 2 * kv) + q * h + 3 * h * f + 2 * h + ((q + 2 * kv) if self.bias else 0)
        return 2 * v * h + h + self.layers * per_layer


# 155M parameters (620 MB at f32, 310 MB at 16 bits): far beyond any last-level cache here.
QWEN2 = Shape("qwen2-155m", "qwen2", hidden=1024, layers=8, heads=16, kv_heads=4, head_dim=64,
              ffn=2816, vocab=32000, rope_theta=1e6, rms_eps=1e-6)
# Llama: MHA, no biases, interleaved RoPE in GGUF; 106M parameters.
LLAMA = Shape("llama-106m", "llama", hidden=768, layers=8, heads=12, kv_heads=12, head_dim=64,
              ffn=2048, vocab=32000, rope_theta=1e4, rms_eps=1e-5)
SHAPES = {s.name: s for s in (QWEN2, LLAMA)}


def random_tensors(s: Shape, seed: int = 1234) -> dict[str, np.ndarray]:
    """Hugging Face names -> float32 arrays. Uniform weights of amplitude sqrt(3 / fan_in)
    keep activations near unit variance through the layers, so logits are spread out and
    greedy decoding has clear margins (the engines' rounding cannot flip a token)."""
    rng = np.random.default_rng(seed)
    h, q, kv = s.hidden, s.heads * s.head_dim, s.kv_heads * s.head_dim

    def u(shape, fan_in):
        a = np.sqrt(3.0 / fan_in)
        return rng.uniform(-a, a, size=shape).astype(np.float32)

    t = {
        "model.embed_tokens.weight": rng.uniform(-1.7, 1.7, size=(s.vocab, h)).astype(np.float32),
        "lm_head.weight": u((s.vocab, h), h),
        "model.norm.weight": np.ones(h, np.float32),
    }
    for i in range(s.layers):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = (1 + rng.uniform(-0.1, 0.1, h)).astype(np.float32)
        t[p + "post_attention_layernorm.weight"] = (1 + rng.uniform(-0.1, 0.1, h)).astype(np.float32)
        t[p + "self_attn.q_proj.weight"] = u((q, h), h)
        t[p + "self_attn.k_proj.weight"] = u((kv, h), h)
        t[p + "self_attn.v_proj.weight"] = u((kv, h), h)
        if s.bias:
            for n, d in (("q", q), ("k", kv), ("v", kv)):
                t[p + f"self_attn.{n}_proj.bias"] = rng.uniform(-0.1, 0.1, d).astype(np.float32)
        t[p + "self_attn.o_proj.weight"] = u((h, q), q)
        t[p + "mlp.gate_proj.weight"] = u((s.ffn, h), h)
        t[p + "mlp.up_proj.weight"] = u((s.ffn, h), h)
        t[p + "mlp.down_proj.weight"] = u((h, s.ffn), s.ffn) * np.float32(0.5)
    return t


def hf_config(s: Shape) -> dict:
    cfg = {
        "architectures": ["Qwen2ForCausalLM" if s.arch == "qwen2" else "LlamaForCausalLM"],
        "model_type": s.arch,
        "vocab_size": s.vocab,
        "hidden_size": s.hidden,
        "intermediate_size": s.ffn,
        "num_hidden_layers": s.layers,
        "num_attention_heads": s.heads,
        "num_key_value_heads": s.kv_heads,
        "head_dim": s.head_dim,
        "rms_norm_eps": s.rms_eps,
        "rope_theta": s.rope_theta,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "max_position_embeddings": 4096,
        "torch_dtype": "float32",
    }
    if s.arch == "llama":
        cfg["attention_bias"] = False
        cfg["mlp_bias"] = False
    return cfg


def write_hf(s: Shape, tensors: dict[str, np.ndarray], out: Path) -> None:
    """config.json + model.safetensors (F32), written directly (the format is a JSON header
    and the raw little-endian bytes)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(hf_config(s), indent=2))
    header, off = {}, 0
    names = sorted(tensors)
    for n in names:
        a = tensors[n]
        header[n] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(out / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for n in names:
            f.write(np.ascontiguousarray(tensors[n], dtype="<f4").tobytes())


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The F32 or BF16 tensors of one safetensors file, as float32 arrays."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, t = e["data_offsets"]
        buf = raw[base + b : base + t]
        if e["dtype"] == "F32":
            a = np.frombuffer(buf, "<f4")
        elif e["dtype"] == "BF16":
            a = (np.frombuffer(buf, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{path}: tensor {name} has dtype {e['dtype']}; F32 or BF16 expected")
        out[name] = a.reshape(e["shape"]).astype(np.float32)
    return out


def read_hf(folder: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """An F32 or BF16 safetensors checkpoint -> (config, float32 arrays)."""
    cfg = json.loads((folder / "config.json").read_text())
    return cfg, read_safetensors(folder / "model.safetensors")


def shape_of_config(name: str, cfg: dict) -> Shape:
    heads = cfg["num_attention_heads"]
    return Shape(
        name, "llama" if cfg["architectures"][0] == "LlamaForCausalLM" else "qwen2",
        hidden=cfg["hidden_size"], layers=cfg["num_hidden_layers"], heads=heads,
        kv_heads=cfg.get("num_key_value_heads", heads),
        head_dim=cfg.get("head_dim", cfg["hidden_size"] // heads), ffn=cfg["intermediate_size"],
        vocab=cfg["vocab_size"], rope_theta=float(cfg.get("rope_theta", 1e4)),
        rms_eps=float(cfg["rms_norm_eps"]))


def _llama_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    # rotate-half pairs (i, i + d/2) -> adjacent pairs (2i, 2i + 1), per head
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _made_up_tokens(n: int) -> list[str]:
    """`n` distinct token texts in GPT-2's byte-level alphabet: the 256 byte symbols, then
    letter strings (letters stand for themselves in that alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs, k = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + k)
            k += 1
    out = [chr(c) for c in cs]
    i = 0
    while len(out) < n:
        word, j = "", i
        while True:
            word = chr(ord("a") + j % 26) + word
            j = j // 26 - 1
            if j < 0:
                break
        out.append("t" + word)
        i += 1
    return out[:n]


# GGML's block-quantized formats: 32 weights per block, one f16 scale.
QUANT_BLOCK = 32
QUANTIZED = ("q8_0", "q4_0")


def write_gguf(s: Shape, tensors: dict[str, np.ndarray], precision: str, path: Path, tied: bool = False,
               token_list: bool = False) -> None:
    """One GGUF file: matrices at `precision` (f32, f16, bf16, q8_0 or q4_0); norms and biases
    f32, as llama.cpp's converter keeps them. At q8_0/q4_0 every matrix is quantized with
    gguf-py's reference quantizer (llama.cpp's round-to-nearest), the embedding and the output
    head included, except a matrix whose rows (its last dimension) are not a whole number of
    blocks: that one is written f16, as baton keeps it, and named on stderr. `token_list`: a
    byte-level BPE vocabulary of made-up tokens (the 256 byte symbols, then unique letter
    strings; one merge) instead of none, for llama-server, which turns every generated id into
    text."""
    import gguf

    T, F = gguf.GGMLQuantizationType, gguf.LlamaFileType
    qt = {"f32": T.F32, "f16": T.F16, "bf16": T.BF16, "q8_0": T.Q8_0, "q4_0": T.Q4_0}[precision]
    ftype = {"f32": F.ALL_F32, "f16": F.MOSTLY_F16, "bf16": F.MOSTLY_BF16, "q8_0": F.MOSTLY_Q8_0,
             "q4_0": F.MOSTLY_Q4_0}[precision]
    w = gguf.GGUFWriter(str(path), s.arch)
    w.add_name(s.name)
    w.add_file_type(ftype)
    w.add_context_length(4096)
    w.add_embedding_length(s.hidden)
    w.add_block_count(s.layers)
    w.add_feed_forward_length(s.ffn)
    w.add_head_count(s.heads)
    w.add_head_count_kv(s.kv_heads)
    w.add_key_length(s.head_dim)
    w.add_value_length(s.head_dim)
    w.add_rope_dimension_count(s.head_dim)
    w.add_rope_freq_base(s.rope_theta)
    w.add_layer_norm_rms_eps(s.rms_eps)
    w.add_vocab_size(s.vocab)  # explicit: there is no token list to count
    if token_list:
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("default")
        w.add_token_list(_made_up_tokens(s.vocab))
        w.add_token_types([1] * s.vocab)
        w.add_token_merges(["t a"])  # one merge: llama.cpp wants the list, and "ta" is a token
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
    else:
        w.add_tokenizer_model("none")

    fallback = []

    def put(name: str, a: np.ndarray, matrix: bool) -> None:
        a = np.ascontiguousarray(a, dtype=np.float32)
        t = qt if matrix else T.F32
        if precision in QUANTIZED and matrix and a.shape[-1] % QUANT_BLOCK:
            fallback.append(name)
            t = T.F16
        if t == T.F32:
            w.add_tensor(name, a)
        elif t == T.F16:
            w.add_tensor(name, a.astype(np.float16))
        else:
            w.add_tensor(name, gguf.quants.quantize(a, t), raw_dtype=t)

    put("token_embd.weight", tensors["model.embed_tokens.weight"], True)
    put("output_norm.weight", tensors["model.norm.weight"], False)
    if not tied:
        put("output.weight", tensors["lm_head.weight"], True)
    for i in range(s.layers):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        q = tensors[p + "self_attn.q_proj.weight"]
        k = tensors[p + "self_attn.k_proj.weight"]
        if s.arch == "llama":
            q, k = _llama_permute(q, s.heads), _llama_permute(k, s.kv_heads)
        put(b + "attn_norm.weight", tensors[p + "input_layernorm.weight"], False)
        put(b + "attn_q.weight", q, True)
        put(b + "attn_k.weight", k, True)
        put(b + "attn_v.weight", tensors[p + "self_attn.v_proj.weight"], True)
        if s.bias:
            put(b + "attn_q.bias", tensors[p + "self_attn.q_proj.bias"], False)
            put(b + "attn_k.bias", tensors[p + "self_attn.k_proj.bias"], False)
            put(b + "attn_v.bias", tensors[p + "self_attn.v_proj.bias"], False)
        put(b + "attn_output.weight", tensors[p + "self_attn.o_proj.weight"], True)
        put(b + "ffn_norm.weight", tensors[p + "post_attention_layernorm.weight"], False)
        put(b + "ffn_gate.weight", tensors[p + "mlp.gate_proj.weight"], True)
        put(b + "ffn_up.weight", tensors[p + "mlp.up_proj.weight"], True)
        put(b + "ffn_down.weight", tensors[p + "mlp.down_proj.weight"], True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    if fallback:
        print(f"models.py: {path.name}: {len(fallback)} matrices have rows that are not a multiple of "
              f"{QUANT_BLOCK} and stay f16: {', '.join(fallback)}", file=sys.stderr)


def prepare(work: Path, name: str, precisions) -> dict:
    """The cached benchmark model `name` under work/name: its Hugging Face folder (written once,
    stamped `.complete`) and one GGUF per precision, each written when first asked for (from
    the folder's tensors, so a cache made before a precision existed gains it). Returns the
    shape, the folder and {precision: GGUF path}."""
    s = SHAPES[name]
    d = work / name
    stamp = d / ".complete"
    tensors = None
    if not stamp.exists():
        print(f"models.py: writing {name} ({s.parameters() / 1e6:.0f}M parameters)", file=sys.stderr)
        tensors = random_tensors(s)
        write_hf(s, tensors, d / "hf")
        stamp.write_text("ok")
    ggufs = {p: d / f"{name}-{p}.gguf" for p in precisions}
    for p, path in ggufs.items():
        if path.exists():
            continue
        if tensors is None:
            tensors = read_hf(d / "hf")[1]
        print(f"models.py: writing {path.name}", file=sys.stderr)
        part = path.with_name(path.name + ".part")  # an interrupted write leaves no GGUF behind
        write_gguf(s, tensors, p, part)
        part.rename(path)
    return {"shape": s, "hf": d / "hf", "gguf": ggufs}
