# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Random PEFT adapters for the demo model (models/word-problems), written here with the standard
library alone (safetensors' layout: an 8-byte little-endian header length, a JSON header, f32
data), so the server tests need no torch: different ranks and target sets, seeded."""
import json
import os
import random
import struct

# The demo's projections: (parent, in, out) for hidden 192, 6 query and 2 key/value heads of 32,
# intermediate 528 (models/word-problems/config.json).
SHAPES = {"q_proj": ("self_attn", 192, 192), "k_proj": ("self_attn", 192, 64),
          "v_proj": ("self_attn", 192, 64), "o_proj": ("self_attn", 192, 192),
          "gate_proj": ("mlp", 192, 528), "up_proj": ("mlp", 192, 528),
          "down_proj": ("mlp", 528, 192)}
LAYERS = 4


def write_safetensors(path, tensors):
    """tensors: {name: (shape, [floats])} as F32."""
    header, blobs, offset = {}, [], 0
    for name, (shape, values) in tensors.items():
        data = struct.pack(f"<{len(values)}f", *values)
        header[name] = {"dtype": "F32", "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def random_adapter(folder, rank, targets, seed, alpha=None, scale=0.15, extra_config=None):
    """A PEFT folder at `folder` with rank `rank` on `targets` of every layer, weights drawn
    from `seed` (large enough to change the demo's greedy answers); returns the folder."""
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(seed)
    tensors = {}
    for layer in range(LAYERS):
        for t in targets:
            parent, n_in, n_out = SHAPES[t]
            base = f"base_model.model.model.layers.{layer}.{parent}.{t}"
            tensors[base + ".lora_A.weight"] = (
                (rank, n_in), [rng.gauss(0, scale) for _ in range(rank * n_in)])
            tensors[base + ".lora_B.weight"] = (
                (n_out, rank), [rng.gauss(0, scale) for _ in range(n_out * rank)])
    write_safetensors(os.path.join(folder, "adapter_model.safetensors"), tensors)
    config = {"peft_type": "LORA", "r": rank, "lora_alpha": alpha or 2 * rank,
              "target_modules": list(targets), "base_model_name_or_path": "word-problems",
              "bias": "none", "fan_in_fan_out": False}
    config.update(extra_config or {})
    with open(os.path.join(folder, "adapter_config.json"), "w") as f:
        json.dump(config, f)
    return folder


# Eight adapters of different ranks and target sets (the load test's and the tests' set).
SPECS = [
    ("ad-q4", 4, ["q_proj", "v_proj"]),
    ("ad-all8", 8, list(SHAPES)),
    ("ad-mlp16", 16, ["gate_proj", "up_proj", "down_proj"]),
    ("ad-o2", 2, ["o_proj"]),
    ("ad-kv12", 12, ["k_proj", "v_proj", "o_proj"]),
    ("ad-att6", 6, ["q_proj", "k_proj", "v_proj", "o_proj"]),
    ("ad-down1", 1, ["down_proj"]),
    ("ad-up32", 32, ["up_proj", "gate_proj"]),
]


def adapters(work, count=len(SPECS)):
    """The first `count` of SPECS written under `work`: [(name, folder)]."""
    return [(name, random_adapter(os.path.join(work, name), rank, targets, seed=k + 1))
            for k, (name, rank, targets) in enumerate(SPECS[:count])]
