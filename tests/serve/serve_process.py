# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""`baton serve` started on a free loopback port, and plain JSON requests to it, for the server
tests."""
import json
import re
import subprocess
import sys
import urllib.error
import urllib.request


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


def http_json(method, url, body=None, key=None, timeout=300):
    """(status, JSON body) of one request, with `key` as the bearer key when given."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())
