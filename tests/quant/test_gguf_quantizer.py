#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`baton quantize`'s blocks against gguf-py's quantizer (llama.cpp's Python package), byte for
byte: the golden models (qwen-c: every matrix in blocks; qwen-e: hidden 80, so most matrices stay
f16) and a checkpoint made here of rows that probe the rounding rules (values exactly half a step
apart, all-zero blocks, tiny and large scales, a negative and a positive largest value, bf16 and
f16 source dtypes).

    test_gguf_quantizer.py --baton BIN --golden DIR --work DIR

Needs $BATON_QUANT_PYTHON (scripts/test.sh sets it: tests/quant/requirements.txt); without it the
test prints "skipped" and exits 77 (ctest: Skipped), except under CI=true, where it fails."""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path


def reexec_in_env() -> None:
    py = os.environ.get("BATON_QUANT_PYTHON", "")
    if os.environ.get("BATON_QUANT_CHILD") == "1":
        return
    if not py:
        if os.environ.get("CI") == "true":
            print("BATON_QUANT_PYTHON is not set (scripts/test.sh sets it)", file=sys.stderr)
            sys.exit(1)
        print("skipped: no $BATON_QUANT_PYTHON (gguf-py)")
        sys.exit(77)
    env = dict(os.environ, BATON_QUANT_CHILD="1")
    sys.exit(subprocess.run([py, __file__] + sys.argv[1:], env=env).returncode)


def read_safetensors(path: Path):
    import numpy as np
    data = path.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        raw = data[base + b:base + e]
        dt = t["dtype"]
        if dt == "F32":
            a = np.frombuffer(raw, dtype=np.float32)
        elif dt == "F16":
            a = np.frombuffer(raw, dtype=np.float16)
        elif dt == "BF16":
            a = (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif dt == "U8":
            a = np.frombuffer(raw, dtype=np.uint8)
        else:
            raise ValueError(f"{path}: {name} has dtype {dt}")
        out[name] = (dt, a.reshape(t["shape"]))
    return header.get("__metadata__", {}), out


def write_safetensors(path: Path, tensors: dict) -> None:
    """tensors: name -> (dtype name, numpy array of that dtype's bits)."""
    header, blobs, off = {}, [], 0
    for name, (dt, a) in tensors.items():
        raw = a.tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def probe_checkpoint(folder: Path) -> None:
    """Rows that decide the rounding rules, in f32, bf16 and f16."""
    import numpy as np
    rng = np.random.default_rng(7)
    rows = []
    # max |x| = 127 gives the Q8_0 step 1: x.5 rounds away from zero (2.5 -> 3, -2.5 -> -3)
    r = np.zeros(64, np.float32); r[0] = 127; r[1:20] = np.arange(19) - 9.5; r[32] = -127
    r[33:52] = np.arange(19) + 0.5; rows.append(r)
    # the largest magnitude negative (-8 -> step 1 for Q4_0) and then positive (8 -> step -1)
    r = np.zeros(64, np.float32); r[0] = -8; r[1:31] = np.linspace(-7.5, 7.5, 30); r[32] = 8
    r[33:63] = np.linspace(-7.5, 7.5, 30); rows.append(r)
    rows.append(np.zeros(64, np.float32))                                  # all-zero blocks
    rows.append((rng.standard_normal(64) * 1e-6).astype(np.float32))     # f16 subnormal scales
    rows.append((rng.standard_normal(64) * 3e3).astype(np.float32))      # large scales
    for _ in range(11):
        rows.append(rng.standard_normal(64).astype(np.float32))
    m = np.stack(rows)
    bf = (m.view(np.uint32) >> 16).astype(np.uint16)  # bf16 by truncation: exact in both readers
    write_safetensors(folder / "model.safetensors", {
        "probe.f32.weight": ("F32", m),
        "probe.bf16.weight": ("BF16", bf),
        "probe.f16.weight": ("F16", m.astype(np.float16)),
        "probe.odd.weight": ("F32", m[:, :40].copy()),  # 40 columns: stays f16
    })


def check(baton: str, folder: Path, out: Path) -> int:
    import numpy as np
    from gguf import GGMLQuantizationType as T
    from gguf.quants import quantize
    _, source = read_safetensors(folder / "model.safetensors")
    bad = 0
    for fmt, qt in (("q8_0", T.Q8_0), ("q4_0", T.Q4_0)):
        dest = out / f"{folder.name}.{fmt}.safetensors"
        subprocess.run([baton, "quantize", "--model", str(folder), "--storage", fmt, "--out",
                        str(dest)], check=True, stdout=subprocess.DEVNULL)
        meta, got = read_safetensors(dest)
        assert meta.get("baton.storage") == fmt, meta
        checked = 0
        for name, (dt, a) in source.items():
            if a.ndim != 2:
                continue
            f32 = a.astype(np.float32)
            gdt, g = got[name]
            if a.shape[1] % 32:
                want, wdt = f32.astype(np.float16), "F16"
            else:
                want, wdt = quantize(f32, qt), "U8"
            same = gdt == wdt and g.shape == want.shape and g.tobytes() == want.tobytes()
            if not same:
                bad += 1
                print(f"MISMATCH {folder.name} {fmt} {name}: baton {gdt} {g.shape}, "
                      f"gguf-py {wdt} {want.shape}")
            checked += 1
        print(f"{folder.name} {fmt}: {checked} matrices equal gguf-py's bytes"
              if not bad else f"{folder.name} {fmt}: {bad} mismatches")
    return bad


def main() -> int:
    reexec_in_env()
    ap = argparse.ArgumentParser()
    ap.add_argument("--baton", required=True)
    ap.add_argument("--golden", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    work = Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    (work / "probe").mkdir(parents=True)
    probe_checkpoint(work / "probe")
    bad = 0
    for folder in (Path(a.golden) / "qwen-c", Path(a.golden) / "qwen-e", work / "probe"):
        bad += check(a.baton, folder, work)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
