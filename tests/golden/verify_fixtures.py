#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The golden fixtures' integrity check (ctest fixture `golden`).

usage: verify_fixtures.py GOLDEN_JSON OUT_DIR

Checks every model and adapter file shipped beside GOLDEN_JSON against the SHA-256 that
golden.json records for it (`generator.sha256`), then copies the folders to OUT_DIR, where the
tests read them. The golden data (llama.cpp's tokens and logits) apply only to these exact bytes,
so a changed file fails here, naming it, before any test compares numbers.
"""
import hashlib
import json
import pathlib
import shutil
import sys

golden_json, out_dir = map(pathlib.Path, sys.argv[1:3])
src = golden_json.parent
expected = json.loads(golden_json.read_text())["generator"]["sha256"]
bad = []
for rel, sha in sorted(expected.items()):
    path = src / rel
    if not path.is_file():
        bad.append(f"{path}: missing")
    elif hashlib.sha256(path.read_bytes()).hexdigest() != sha:
        bad.append(f"{path}: SHA-256 differs from golden.json")
if bad:
    print("golden fixtures do not match golden.json:\n  " + "\n  ".join(bad))
    sys.exit(1)
for folder in sorted({rel.split("/")[0] for rel in expected}):
    shutil.copytree(src / folder, out_dir / folder, dirs_exist_ok=True)
print(f"golden fixtures: {len(expected)} files match golden.json; copied to {out_dir}")
