# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""How far block-quantized weights (q8_0, q4_0) move the next-token distribution, baton
against llama.cpp on the same models and the same tokens.

Run through benchmarks/run_quant_accuracy.sh (it builds quant_accuracy and this environment).
Each engine is measured against its own f32 run: for every position of a fixed token stream,
KL(P_f32 || P_q) = sum_v p_f32(v) log(p_f32(v) / p_q(v)) (natural log, from log-softmax in
float64) and whether the top-1 token is the same. llama.cpp reads GGUF files written by
models.write_gguf at f32 and at each format (gguf-py's quantizer, which is llama.cpp's own
round-to-nearest; matrices whose rows are not a multiple of 32 stay f16, as in baton); baton
runs the quant_accuracy program on the Hugging Face folder. The target: baton's mean KL at most
1.1x llama.cpp's, per model and format."""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import models  # noqa: E402
import vs_llama_cpp  # noqa: E402
from vs_llama_cpp import log, ratio, run_json  # noqa: E402

GOLDEN = ("qwen-c", "qwen-e")  # tests/golden: small, and golden.json checks their f32 conversion
SEED = 2026
MIN_POSITIONS = 2048
MAX_CONTEXT = 512
TARGET = 1.1  # baton's mean KL over llama.cpp's, at most


def token_stream(vocab: int, context: int) -> np.ndarray:
    """The fixed stream, a whole number of sequences of `context` tokens, at least MIN_POSITIONS."""
    sequences = -(-MIN_POSITIONS // context)
    return np.random.default_rng(SEED).integers(0, vocab, sequences * context)


def prepare(name: str, root: Path, work: Path, formats: list[str], e: vs_llama_cpp.Engines) -> dict:
    """A model's Hugging Face folder, config and GGUF files (f32 and each format). A golden model
    is converted afresh (it is small), and its f32 file is checked against golden.json's
    llama.cpp tokens first; a benchmark model comes from the side-by-side benchmark's cache."""
    if name in GOLDEN:
        gwork = work / "golden"
        gwork.mkdir(parents=True, exist_ok=True)
        check = vs_llama_cpp.check_golden_conversion(e, root, gwork, name)
        log(f"  {name}: f32 conversion against golden.json: {check['runs']} runs, agree = {check['agree']}")
        hf = root / "tests/golden" / name
        cfg, t = models.read_hf(hf)
        s = models.shape_of_config(name, cfg)
        ggufs = {"f32": gwork / f"{name}-f32.gguf"}  # written by the check
        for f in formats:
            ggufs[f] = gwork / f"{name}-{f}.gguf"
            models.write_gguf(s, t, f, ggufs[f], tied=cfg.get("tie_word_embeddings", False))
        return {"hf": hf, "config": cfg, "gguf": ggufs, "golden_conversion_check": check}
    m = models.prepare(work, name, ["f32"] + formats)
    return {"hf": m["hf"], "config": json.loads((m["hf"] / "config.json").read_text()), "gguf": m["gguf"]}


def f16_matrices(path: Path) -> tuple[list[str], int]:
    """The matrices a quantized GGUF keeps at f16 (its fallbacks), and how many matrices it has."""
    import gguf

    mats = [t for t in gguf.GGUFReader(path).tensors if len(t.shape) == 2]
    return [t.name for t in mats if t.tensor_type == gguf.GGMLQuantizationType.F16], len(mats)


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def summary(kl: np.ndarray, same_top1: np.ndarray) -> dict:
    """The statistics as baton's quant_accuracy takes them (tests/support/logit_compare.hpp):
    KL clamped at 0 (rounding leaves -1e-17 where the distributions are equal), the median and
    p99 as elements of the sorted list (no interpolation)."""
    s = np.sort(np.maximum(kl, 0.0))
    return {"kl_mean": float(s.mean()), "kl_median": float(s[s.size // 2]),
            "kl_p99": float(s[min(s.size - 1, s.size * 99 // 100)]), "kl_max": float(s[-1]),
            "top1": float(same_top1.mean())}


def llama_cpp_accuracy(ggufs: dict, formats: list[str], sequences: np.ndarray, threads: int) -> dict:
    """llama.cpp's KL and top-1 agreement of each format against its f32 model: every sequence
    from an empty cache at position 0, in one batch, logits kept for every position. The KV
    cache is f32 and flash attention off (baton's arithmetic), so its two runs differ in the
    weights' format alone."""
    import llama_cpp

    context = sequences.shape[1]

    def load(path):
        return llama_cpp.Llama(str(path), n_ctx=context, n_batch=context, n_ubatch=context, logits_all=True,
                               n_threads=threads, n_threads_batch=threads, n_gpu_layers=0,
                               type_k=llama_cpp.GGML_TYPE_F32, type_v=llama_cpp.GGML_TYPE_F32,
                               flash_attn=False, verbose=False)

    def logits(llm, seq):
        llm.reset()  # the next eval drops the cache from position 0 on
        llm.eval(seq)
        return llm.scores[: llm.n_tokens].copy()  # with logits_all: one row per position

    ref = load(ggufs["f32"])
    quant = {f: load(ggufs[f]) for f in formats}
    kl = {f: [] for f in formats}
    same = {f: [] for f in formats}
    for seq in sequences:
        seq = [int(t) for t in seq]
        base = logits(ref, seq)
        lp = log_softmax(base)
        for f in formats:
            q = logits(quant[f], seq)
            kl[f].append((np.exp(lp) * (lp - log_softmax(q))).sum(axis=-1))
            same[f].append(q.argmax(axis=-1) == base.argmax(axis=-1))
    for llm in [ref, *quant.values()]:
        llm.close()  # the next model's weights need the memory
    return {f: summary(np.concatenate(kl[f]), np.concatenate(same[f])) for f in formats}


def baton_accuracy(program: str, hf: Path, formats: list[str], tokens: np.ndarray, context: int, threads: int,
                   isa: str | None) -> dict:
    """baton's quant_accuracy on the same stream: its JSON, with the results as {format: result}."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tokens.json"
        path.write_text(json.dumps(tokens.tolist()))
        cmd = [program, "--model", str(hf), "--storage", ",".join(formats), "--tokens", str(path),
               "--context", str(context), "--threads", str(threads)] + (["--isa", isa] if isa else [])
        out = run_json(cmd, dict(os.environ, OMP_NUM_THREADS=str(threads)))
    if out["positions"] != tokens.size or out["context"] != context:
        raise RuntimeError(f"quant_accuracy evaluated {out['positions']} positions in contexts of "
                           f"{out['context']}; {tokens.size} in {context} were asked for")
    out["results"] = {r["storage"]: r for r in out["results"]}
    return out


def print_table(result: dict) -> None:
    print("| model | format | baton KL mean | llama.cpp KL mean | baton / llama.cpp | baton top-1 | "
          f"llama.cpp top-1 | target (<= {TARGET}x) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, m in result["models"].items():
        for f, r in m["formats"].items():
            b, ll = r["baton"], r["llama_cpp"]
            print(f"| {name} | {f} | {b['kl_mean']:.3e} | {ll['kl_mean']:.3e} | {r['ratio']:.3f} | "
                  f"{b['top1']:.4f} | {ll['top1']:.4f} | {'PASS' if r['target_met'] else 'MISS'} |")
    for name, m in result["models"].items():
        check = m.get("golden_conversion_check")
        if check and not check["agree"]:
            print(f"{name}: its f32 GGUF does not give golden.json's llama.cpp tokens; its llama.cpp "
                  "figures are not for the same model")
        for f, r in m["formats"].items():
            fb = r["llama_cpp_f16_matrices"]
            if fb:
                print(f"{name} {f}: {len(fb)} of {r['matrices']} matrices have rows that are not a multiple of "
                      f"{models.QUANT_BLOCK} and stay f16 (llama.cpp's GGUF; baton reports "
                      f"{len(r['baton'].get('fallback_matrices', []))}), so the format is only partly exercised")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quant-accuracy", required=True, help="baton's quant_accuracy program")
    ap.add_argument("--root", required=True, help="the repository (for tests/golden)")
    ap.add_argument("--work", required=True, help="where the models go (cached between runs)")
    ap.add_argument("--out", help="the JSON file to write (default: build/dev/benchmarks/quant_accuracy.json)")
    ap.add_argument("--models", default="qwen-c,qwen-e,qwen2-155m",
                    help=f"of {', '.join(GOLDEN)} (tests/golden) and {', '.join(models.SHAPES)} (random, cached)")
    ap.add_argument("--formats", default=",".join(models.QUANTIZED), help="of " + ", ".join(models.QUANTIZED))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--isa", choices=("avx512", "avx2", "portable"),
                    help="cap baton's kernels at this instruction set (quant_accuracy --isa; avx2: as on a "
                         "CPU without AVX-512)")
    a = ap.parse_args()

    formats = a.formats.split(",")
    names = a.models.split(",")
    for bad, known, what in ((formats, models.QUANTIZED, "format"), (names, GOLDEN + tuple(models.SHAPES), "model")):
        unknown = [x for x in bad if x not in known]
        if unknown:
            ap.error(f"unknown {what} {', '.join(unknown)}")
    root, work = Path(a.root), Path(a.work)
    out = Path(a.out or root / "build/dev/benchmarks/quant_accuracy.json")
    work.mkdir(parents=True, exist_ok=True)
    engines = vs_llama_cpp.Engines(decode_bench="", threads=a.threads)  # its llama.cpp worker only
    result = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
              "threads": a.threads, "baton_isa": a.isa, "seed": SEED, "target_ratio": TARGET, "models": {}}
    import llama_cpp  # the build's instruction sets (BATON_LLAMA_ISA=avx2: llama_cpp/pyenv.sh)
    result["llama_system_info"] = llama_cpp.llama_print_system_info().decode()
    for name in names:
        log(f"quant_accuracy: {name}")
        m = prepare(name, root, work, formats, engines)
        vocab = m["config"]["vocab_size"]
        context = min(MAX_CONTEXT, m["config"]["max_position_embeddings"])
        tokens = token_stream(vocab, context)
        sequences = tokens.reshape(-1, context)
        log(f"  {sequences.shape[0]} sequences of {context} tokens: llama.cpp")
        ll = llama_cpp_accuracy(m["gguf"], formats, sequences, a.threads)
        log("  baton")
        bout = baton_accuracy(a.quant_accuracy, m["hf"], formats, tokens, context, a.threads, a.isa)
        b = bout["results"]
        entry = {"hf": str(m["hf"]), "context": context, "sequences": sequences.shape[0], "positions": tokens.size,
                 "vocab": vocab, "baton_mode": bout.get("mode"), "formats": {}}
        if "golden_conversion_check" in m:
            entry["golden_conversion_check"] = m["golden_conversion_check"]
        for f in formats:
            fb, mats = f16_matrices(m["gguf"][f])
            r = ratio(b[f]["kl_mean"], ll[f]["kl_mean"])
            entry["formats"][f] = {"baton": b[f], "llama_cpp": ll[f], "ratio": r, "target_met": r <= TARGET,
                                   "matrices": mats, "llama_cpp_f16_matrices": fb}
            log(f"  {f}: KL mean baton {b[f]['kl_mean']:.3e}, llama.cpp {ll[f]['kl_mean']:.3e} (ratio {r:.3f}); "
                f"top-1 {b[f]['top1']:.4f} / {ll[f]['top1']:.4f}")
        result["models"][name] = entry
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1))  # after every model
    print_table(result)
    log(f"quant_accuracy: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
