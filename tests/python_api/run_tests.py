#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The Python package's pytest suite, as ctest runs it.

usage: run_tests.py PYTHON PACKAGE_DIR BATON GOLDEN_DIR REPO_DIR [pytest args...]

PYTHON is the interpreter the extension was built for (the package environment,
scripts/pyenv.sh tests/python_api/requirements.txt; empty when the build had none, and then the
suite is skipped with exit 77, or fails under CI=true, reference_python.skip's rule);
PACKAGE_DIR holds the importable package (the build tree's python/: baton/ with _baton*.so);
BATON is the `baton` program the tests compare against; GOLDEN_DIR the golden fixtures. The
transformers comparison reads $BATON_REFERENCE_PYTHON (scripts/test.sh sets it).
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "reference"))
import reference_python  # noqa: E402

python, package_dir, baton, golden, repo = sys.argv[1:6]
if not python or not os.access(python, os.X_OK):
    reference_python.skip(
        "no Python package environment at configure time (scripts/pyenv.sh "
        "tests/python_api/requirements.txt; scripts/test.sh installs it), so the extension "
        "was not built"
    )
env = dict(os.environ)
env["PYTHONPATH"] = package_dir
env["BATON_CLI"] = baton
env["BATON_GOLDEN_DIR"] = golden
env["BATON_REPO_DIR"] = repo
env.setdefault("OMP_WAIT_POLICY", "passive")  # ctest runs tests side by side
# -p no:cacheprovider: nothing written into the source tree.
args = [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", here, *sys.argv[6:]]
sys.stdout.flush()
os.execve(python, args, env)
