# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""What every test of the Python package shares: the paths run_tests.py passes (the `baton`
program, the golden fixtures, the repository), the CLI as the reference, and small relay files
written per test."""
import json
import os
import subprocess

import pytest


def _env_path(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the suite through tests/python_api/run_tests.py")
    return value


@pytest.fixture(scope="session")
def baton_cli():
    return _env_path("BATON_CLI")


@pytest.fixture(scope="session")
def golden():
    return _env_path("BATON_GOLDEN_DIR")


@pytest.fixture(scope="session")
def repo():
    return _env_path("BATON_REPO_DIR")


@pytest.fixture(scope="session")
def demo(repo):
    """The bundled word-problems model: a real tokenizer, three adapters and a gated relay."""
    return os.path.join(repo, "models", "word-problems")


def run_cli(baton_cli, *args):
    """`baton ARGS...`; its stdout parsed as JSON (one object), or each line when there are
    several."""
    p = subprocess.run([baton_cli, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"baton {' '.join(args)} exited {p.returncode}: {p.stderr}"
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    return lines[0] if len(lines) == 1 else lines


@pytest.fixture(scope="session")
def cli(baton_cli):
    return lambda *args: run_cli(baton_cli, *args)


def golden_relay_spec(golden):
    """A three-stage ids relay on golden qwen-c with its two adapters, two cycles, verify's
    feedback read by reason (tests/test_cli_relay.py's relay). Its gate never passes on these
    random weights, so every cycle runs."""
    return {
        "model": f"{golden}/qwen-c",
        "stages": [
            {"name": "extract", "adapter": f"{golden}/qwen-c-lora-qv", "prefix": [5, 6, 7, 8],
             "input": [{"ids": [10]}, {"request": True}, {"ids": [11]}], "max_new": 8},
            {"name": "reason", "adapter": f"{golden}/qwen-c-lora-all", "prefix": [9, 9, 12],
             "input": [{"request": True}, {"out": "extract"}, {"feedback": "verify"}],
             "max_new": 10},
            {"name": "verify", "prefix": [3, 4], "input": [{"out": "reason"}], "max_new": 3},
        ],
        "gate": {"starts_with": [383, 383]},
        "max_cycles": 2,
    }


@pytest.fixture
def write_relay(tmp_path):
    """Writes a relay spec (a dict) to a file and returns its path."""

    def write(spec, name="relay.json"):
        path = tmp_path / name
        path.write_text(json.dumps(spec))
        return str(path)

    return write


@pytest.fixture(scope="module")
def demo_relay_shared(demo):
    """The demo relay, built once per module, for tests that share it between threads."""
    import baton

    return baton.Relay.from_file(os.path.join(demo, "relay.json"))
