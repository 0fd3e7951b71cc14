#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`pip install .` and `pip wheel .` from the clone in a fresh virtual environment, as a user
would run them, then a relay through the installed package.

usage: wheel_check.py PYTHON REPO WORK

PYTHON is the package environment's python (scripts/pyenv.sh tests/python_api/requirements.txt;
empty: skipped with exit 77, a failure under CI=true); the fresh environment is made from the
same interpreter, and the build requirements (scikit-build-core, nanobind, numpy: the pinned
ones) come from the wheel cache scripts/pyenv.sh fills ($BATON_WHEEL_DIR), so no download is
needed there. The compiler cache is used when ccache exists (CMAKE_ARGS), and the build runs
$BATON_JOBS (default 2) jobs. Prints the wall time of each step.
"""
import os
import shutil
import subprocess
import sys
import time
import zipfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "reference"))
import reference_python  # noqa: E402

python, repo, work = sys.argv[1:4]
if not python or not os.access(python, os.X_OK):
    reference_python.skip("no Python package environment (scripts/pyenv.sh "
                          "tests/python_api/requirements.txt)")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
venv = os.path.join(work, "venv")
env = dict(os.environ)
env.pop("PYTHONPATH", None)
env["CMAKE_BUILD_PARALLEL_LEVEL"] = env.get("BATON_JOBS", "2")
if shutil.which("ccache") and env.get("BATON_CCACHE", "1") != "0":
    launcher = "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
    env["CMAKE_ARGS"] = (env.get("CMAKE_ARGS", "") + " " + launcher).strip()


def step(what, *cmd, cwd=repo):
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    took = time.monotonic() - t0
    if p.returncode != 0:
        print(f"FAILED: {what} ({' '.join(cmd)}) exited {p.returncode} after {took:.0f} s")
        print(p.stdout[-6000:], p.stderr[-6000:])
        sys.exit(1)
    print(f"ok    {what}: {took:.1f} s")
    return p.stdout


# The same interpreter as the package environment's, without its packages.
base = subprocess.run([python, "-c", "import sys; print(sys._base_executable)"],
                      capture_output=True, text=True, check=True).stdout.strip()
step("fresh virtual environment", base, "-m", "venv", venv)
pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "--disable-pip-version-check", "--quiet"]
requirements = os.path.join(here, "requirements.txt")
wheels = env.get("BATON_WHEEL_DIR") or os.path.join(
    env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "baton", "wheels")
step("build requirements (from the wheel cache)", *pip, "install", "--no-index",
     "--find-links", wheels, "-r", requirements)

dist = os.path.join(work, "dist")
# --no-build-isolation: the pinned build requirements just installed, not a download.
step("pip wheel .", *pip, "wheel", "--no-build-isolation", "--no-deps", "-w", dist, ".")
built = [f for f in os.listdir(dist) if f.startswith("baton-") and f.endswith(".whl")]
if len(built) != 1:
    print(f"FAILED: pip wheel . made {built}")
    sys.exit(1)
names = zipfile.ZipFile(os.path.join(dist, built[0])).namelist()
want = ["baton/__init__.py", "baton/prototype.py", "baton/py.typed", "baton/_baton.pyi"]
missing = [n for n in want if n not in names]
module = [n for n in names if n.startswith("baton/_baton") and n.endswith(".so")]
stray = [n for n in names if n.startswith(("include/", "share/")) or "/include/" in n]
if missing or len(module) != 1 or stray:
    print(f"FAILED: {built[0]}: missing {missing}, modules {module}, library files {stray}")
    sys.exit(1)
print(f"ok    {built[0]}: {len(names)} files, {module[0]}")

step("pip install .", *pip, "install", "--no-build-isolation", ".")
check = f"""
import os, sys, baton
assert os.path.realpath(baton.__file__).startswith(os.path.realpath({venv!r})), baton.__file__
r = baton.Relay.from_file(os.path.join({repo!r}, "models", "word-problems", "relay.json")).run(
    "Mia has 7 pears and buys 5 more. How many pears does she have?")
assert (r.verdict, r.cycles, r.text) == ("pass", 1, "7 + 5 = 12"), r
print("installed baton", baton.__version__, "ran:", r)
"""
print(step("the installed package runs the demo relay", os.path.join(venv, "bin", "python"),
           "-c", check, cwd=work).strip())
print("python_wheel: all passed")
