#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The Python package as a user gets it: a wheel built from the clone, installed in a fresh
virtual environment, running a relay.

usage: wheel_check.py build   PYTHON REPO WORK       `pip wheel .` into WORK/dist (checked) with
                                                     PYTHON's own build requirements
       wheel_check.py install PYTHON REPO WORK WHEEL  WHEEL installed in a fresh environment,
                                                     then the demo relay through it
       wheel_check.py all     PYTHON REPO WORK       both from a fresh build environment, then
                                                     `pip install .` (ctest python_wheel)

CI builds the wheel once (phase 1, `build`, beside the build that compiled the same dispatch,
so its compiles are compiler-cache hits) and installs that file in the clean room (`install`).

PYTHON is the package environment's python (scripts/pyenv.sh tests/python_api/requirements.txt;
empty: skipped with exit 77, a failure under CI=true); the fresh environments are made from the
same interpreter, and what they install (scikit-build-core, nanobind, numpy: the pinned ones)
comes from the wheel cache scripts/pyenv.sh fills ($BATON_WHEEL_DIR), so no download is needed.
The compiler cache is used when ccache exists (CMAKE_ARGS; run from scripts/ so that its
settings, scripts/common.sh, are in the environment), and the build runs $BATON_JOBS (default 2)
jobs. Prints the wall time of each step.
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

if len(sys.argv) < 5 or sys.argv[1] not in ("build", "install", "all") or (
        sys.argv[1] == "install") != (len(sys.argv) == 6):
    sys.exit(__doc__)
mode, python, repo, work = sys.argv[1:5]
if not python or not os.access(python, os.X_OK):
    reference_python.skip("no Python package environment (scripts/pyenv.sh "
                          "tests/python_api/requirements.txt)")
env = dict(os.environ)
env.pop("PYTHONPATH", None)
env["CMAKE_BUILD_PARALLEL_LEVEL"] = env.get("BATON_JOBS", "2")
# CMake's own default compiler, which the project's builds use: scikit-build-core would set
# Python's (sysconfig's "g++"), the same compiler under another name, which the compiler cache
# hashes as another compiler (every compile a miss).
env.setdefault("CXX", "c++")
if shutil.which("ccache") and env.get("BATON_CCACHE", "1") != "0":
    launcher = "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
    env["CMAKE_ARGS"] = (env.get("CMAKE_ARGS", "") + " " + launcher).strip()
wheels = env.get("BATON_WHEEL_DIR") or os.path.join(
    env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "baton", "wheels")


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


def fresh_venv(path):
    """A virtual environment of PYTHON's interpreter without its packages; returns its pip."""
    shutil.rmtree(path, ignore_errors=True)
    base = subprocess.run([python, "-c", "import sys; print(sys._base_executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    step("fresh virtual environment", base, "-m", "venv", path)
    return [os.path.join(path, "bin", "python"), "-m", "pip", "--disable-pip-version-check",
            "--quiet"]


def build_wheel(pip):
    """`pip wheel .` with `pip`'s environment's build requirements; returns the checked wheel."""
    dist = os.path.join(work, "dist")
    shutil.rmtree(dist, ignore_errors=True)
    # --no-build-isolation: the pinned build requirements just installed, not a download.
    step("pip wheel .", *pip, "wheel", "--no-build-isolation", "--no-deps", "-w", dist, ".")
    built = [f for f in os.listdir(dist) if f.startswith("baton-") and f.endswith(".whl")]
    if len(built) != 1:
        sys.exit(f"FAILED: pip wheel . made {built}")
    names = zipfile.ZipFile(os.path.join(dist, built[0])).namelist()
    want = ["baton/__init__.py", "baton/prototype.py", "baton/py.typed", "baton/_baton.pyi"]
    missing = [n for n in want if n not in names]
    module = [n for n in names if n.startswith("baton/_baton") and n.endswith(".so")]
    stray = [n for n in names if n.startswith(("include/", "share/")) or "/include/" in n]
    if missing or len(module) != 1 or stray:
        sys.exit(f"FAILED: {built[0]}: missing {missing}, modules {module}, library files {stray}")
    print(f"ok    {built[0]}: {len(names)} files, {module[0]}")
    return os.path.join(dist, built[0])


def runs_the_demo(venv):
    """The installed package (not the clone's) runs the bundled relay to its known answer."""
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


def install_wheel(wheel):
    """WHEEL in a fresh environment, its dependency (numpy) from the wheel cache."""
    venv = os.path.join(work, "venv")
    pip = fresh_venv(venv)
    step(f"pip install {os.path.basename(wheel)}", *pip, "install", "--no-index", "--find-links",
         wheels, wheel)
    runs_the_demo(venv)
    return venv, pip


os.makedirs(work, exist_ok=True)
if mode == "build":
    # The package environment's own build requirements (nanobind from the same folder as the
    # build that ran the tests: its runtime and the module compile as compiler-cache hits).
    build_wheel([python, "-m", "pip", "--disable-pip-version-check", "--quiet"])
elif mode == "install":
    install_wheel(os.path.abspath(sys.argv[5]))
else:
    # As a user would: a fresh environment with the pinned build requirements.
    build_pip = fresh_venv(os.path.join(work, "build-venv"))
    step("build requirements (from the wheel cache)", *build_pip, "install", "--no-index",
         "--find-links", wheels, "-r", os.path.join(here, "requirements.txt"))
    wheel = build_wheel(build_pip)
    install_wheel(wheel)
    step("pip install . (from the clone)", *build_pip, "install", "--no-build-isolation", ".")
    runs_the_demo(os.path.join(work, "build-venv"))
print(f"python_wheel ({mode}): all passed")
