#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Passes when SOURCE fails to compile with a diagnostic matching REGEX.

    expect_compile_error.py COMPILE_COMMANDS.json SOURCE REGEX

The command is SOURCE's own entry in the build's compile_commands.json (its flags, include
folders and definitions exactly as the build has them), run with -fsyntax-only outside the
build tool: nothing is written, so these tests run side by side with each other and with a
build. A compile that succeeds, or fails for another reason, fails the test.
"""
import json
import os
import re
import shlex
import subprocess
import sys


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    db, source, pattern = sys.argv[1:]
    source = os.path.realpath(source)
    entries = [e for e in json.load(open(db)) if os.path.realpath(
        os.path.join(e["directory"], e["file"])) == source]
    if not entries:
        print(f"FAILED: {source} has no entry in {db}")
        return 1
    entry = entries[0]
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    cmd, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a == "-c":
            cmd.append("-fsyntax-only")
        else:
            cmd.append(a)
    run = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True)
    output = run.stdout + run.stderr
    if run.returncode == 0:
        print(f"FAILED: {os.path.basename(source)} compiled; it must not")
        return 1
    if not re.search(pattern, output):
        print(output[-6000:])
        print(f"FAILED: {os.path.basename(source)} did not compile, but no diagnostic matches "
              f"'{pattern}' (shown above)")
        return 1
    print(f"{os.path.basename(source)}: rejected as expected ('{pattern}')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
