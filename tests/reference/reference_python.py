# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The reference python, shared by the scripts that run transformers at test time
(hf_compare.py, hf_models.py): the skip rule and the move onto $BATON_REFERENCE_PYTHON.

ctest starts these scripts under any python3; the work runs under the reference python
(scripts/pyenv.sh: torch, transformers, peft, tokenizers, pinned). Without it a script prints
"skipped: <reason>" and exits 77 (ctest: Skipped), except under CI=true, where the reference
must be there (CI can reach PyPI) and its absence is a failure (exit 1).
"""
import os
import sys

SKIP = 77


def skip(reason):
    """The skip rule: 77, or a failure under CI=true."""
    if os.environ.get("CI") == "true":
        print(f"FAILED: {reason} (CI=true: the reference must be available)")
        sys.exit(1)
    print(f"skipped: {reason}")
    sys.exit(SKIP)


def reexec_under_serve_python(script):
    """Runs `script` again under $BATON_SERVE_PYTHON (the `openai` client's environment,
    scripts/pyenv.sh tests/serve/requirements.txt) with the same arguments, unless this process
    already is that run; skips without it."""
    if os.environ.get("BATON_SERVE_CHILD") == "1":
        return
    py = os.environ.get("BATON_SERVE_PYTHON", "")
    if not py or not os.access(py, os.X_OK):
        skip("no openai client (BATON_SERVE_PYTHON is not set; scripts/test.sh sets it: "
             "scripts/pyenv.sh tests/serve/requirements.txt)")
    os.environ["BATON_SERVE_CHILD"] = "1"
    sys.stdout.flush()
    os.execv(py, [py, os.path.abspath(script), *sys.argv[1:]])


def reexec_under_reference_python(script):
    """Runs `script` (the caller's __file__) again under $BATON_REFERENCE_PYTHON with the same
    arguments, unless this process already is that run."""
    if os.environ.get("BATON_REFERENCE_CHILD") == "1":
        return
    py = os.environ.get("BATON_REFERENCE_PYTHON", "")
    if not py:
        skip("no torch (BATON_REFERENCE_PYTHON is not set; scripts/test.sh sets it)")
    if not os.access(py, os.X_OK):
        skip(f"no torch (BATON_REFERENCE_PYTHON={py} is not an executable)")
    os.environ["BATON_REFERENCE_CHILD"] = "1"
    sys.stdout.flush()
    os.execv(py, [py, os.path.abspath(script), *sys.argv[1:]])


def require_reference():
    """Imports the reference packages (or skips, naming what failed) and prints their versions.
    Returns the torch module, set to one thread: the models are small, one thread is fast and
    never fights ctest's parallel tests."""
    try:
        import torch
        import transformers
        import peft
    except Exception as e:  # noqa: BLE001 - any import failure means no reference
        skip(f"no torch ({type(e).__name__}: {e})")
    try:
        import tokenizers  # noqa: F401
        import safetensors  # noqa: F401
    except Exception as e:  # noqa: BLE001
        skip(f"no tokenizers/safetensors ({type(e).__name__}: {e})")
    torch.set_num_threads(1)
    print(
        f"reference: torch {torch.__version__}, transformers {transformers.__version__}, "
        f"peft {peft.__version__} ({sys.executable})"
    )
    return torch
