# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""transformers + peft on the cases test_generate.py sends (JSON on stdin: a list of
{"model", "adapter", "ids", "steps"}), run under $BATON_REFERENCE_PYTHON with
tests/reference/hf_compare.py's own greedy decode (load_hf, run_hf). Prints one JSON object:
the tolerances and, per case, the ids, the first logits row and each step's near-tie set."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import hf_compare  # noqa: E402
import reference_python  # noqa: E402

reference_python.require_reference()
cases = json.load(sys.stdin)
out = {"logit_rtol": hf_compare.LOGIT_RTOL, "near_tie": hf_compare.NEAR_TIE, "cases": []}
loaded = {}
for c in cases:
    key = (c["model"], c["adapter"])
    if key not in loaded:
        loaded[key] = hf_compare.load_hf(c["model"], c["adapter"])
    tokens, first, _gaps, tied = hf_compare.run_hf(loaded[key], c["ids"], c["steps"])
    out["cases"].append({"ids": tokens, "first": first.tolist(), "tied": [sorted(t) for t in tied]})
print(json.dumps(out))
