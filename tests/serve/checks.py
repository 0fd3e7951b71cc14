# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The server tests' checks: each printed as it is made ("ok" or "FAIL"), the failures kept so
a test runs every check and exits 1 at the end when any failed."""
import sys

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def finish(name):
    """Exits 1 with the count when a check failed, else says all passed."""
    if failures:
        print(f"FAILED: {len(failures)} checks")
        sys.exit(1)
    print(f"{name}: all checks passed")
