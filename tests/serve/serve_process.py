# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`baton serve` started on a free loopback port, for the server tests."""
import re
import subprocess
import sys


def start_serve(args):
    """Runs `args` (a `baton serve ... --port 0` command line) and waits for the line saying
    which port it bound; returns (process, base URL). Exits with FAILED when it does not start."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r"listening on http://([^:]+):(\d+)", line)
    if not m:
        proc.kill()
        sys.exit(f"FAILED: baton serve did not start: {line!r} {proc.stderr.read()}")
    return proc, f"http://127.0.0.1:{m.group(2)}"
