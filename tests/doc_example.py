#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""A doc shows an example program as it is: usage: doc_example.py DOC.md PROGRAM.cpp.

The doc's ```cpp block that starts with the program's first three lines must equal the program, so
the page never shows code that the build (which compiles and runs the program) does not."""
import re
import sys

doc, program = sys.argv[1:3]
code = open(program, encoding="utf-8").read()
head = "\n".join(code.splitlines()[:3])  # the SPDX lines and the program's own first comment
blocks = re.findall(r"```cpp\n(.*?)```", open(doc, encoding="utf-8").read(), re.S)
shown = [b for b in blocks if b.startswith(head)]
if not shown:
    sys.exit(f"{doc}: no ```cpp block starting with the first lines of {program}")
if shown[0] != code:
    sys.exit(f"{doc}: the block showing {program} differs from the program; copy it again")
print(f"{doc} shows {program} as it is")
