#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The README's code example must compile: usage: readme_example.py README CXX OUT.cpp FLAGS...

Extracts the first ```cpp block that includes <baton/baton.hpp> and compiles it with
-fsyntax-only, so the front page never shows an API that does not exist."""
import re
import subprocess
import sys

readme, cxx, out, *flags = sys.argv[1:]
text = open(readme, encoding="utf-8").read()
m = re.search(r"```cpp\n(#include <baton/baton.hpp>.*?)```", text, re.S)
if not m:
    sys.exit("README has no ```cpp block including <baton/baton.hpp>")
open(out, "w").write("#include <iostream>\n" + m.group(1))
sys.exit(subprocess.run([cxx, "-std=c++20", "-fsyntax-only", *flags, out]).returncode)
