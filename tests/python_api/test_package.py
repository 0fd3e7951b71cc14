# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The package itself: its version is the project's, its stubs cover the module, its objects
explain themselves."""
import ast
import os
import re

import baton
import baton._baton as ext


def test_version_is_the_projects(repo):
    with open(os.path.join(repo, "CMakeLists.txt")) as f:
        version = re.search(r"project\(baton VERSION ([0-9.]+)", f.read()).group(1)
    assert baton.__version__ == version


def test_the_stubs_name_every_public_binding():
    package = os.path.dirname(baton.__file__)
    assert os.path.isfile(os.path.join(package, "py.typed"))
    with open(os.path.join(package, "_baton.pyi")) as f:
        tree = ast.parse(f.read())
    stubbed = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    stubbed |= {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                if isinstance(t, ast.Name)}
    public = {n for n in dir(ext) if not n.startswith("_")} | {"__version__"}
    assert public == stubbed
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        members = {m.name for m in cls.body if isinstance(m, ast.FunctionDef)}
        actual = {m for m in dir(getattr(ext, cls.name)) if not m.startswith("_")}
        assert members >= actual - {"add_note", "with_traceback", "args"}, cls.name


def test_reprs(golden, demo):
    m = baton.Model(os.path.join(golden, "qwen-c"))
    assert re.fullmatch(r"Model\('.*qwen-c', Qwen2ForCausalLM, vocab_size=384, backend='host'\)",
                        repr(m))
    g = m.generate([1, 2], max_new=3, ignore_eos=True)
    assert repr(g).startswith("Generation(ids=3 tokens, ")
    relay = baton.Relay.from_file(os.path.join(demo, "relay.json"))
    assert "stages='extract -> reason -> verify'" in repr(relay)
    r = relay.run("Mia has 7 pears and buys 5 more. How many pears does she have?")
    assert repr(r).startswith("RelayResult(verdict='pass', cycles=1, runs=3, total_ms=")
    assert "text='7 + 5 = 12'" in repr(r)
    assert repr(r.runs[0]).startswith("StageRun(name='extract', cycle=1, text='7 + 5', ms=")
    tok = baton.Tokenizer.from_file(os.path.join(demo, "tokenizer.json"))
    assert tok.decode(tok.encode("7 + 5 = 12")) == "7 + 5 = 12"
    assert "vocab_size=" in repr(tok)
    assert repr(baton.Pipeline(baton.Baton(relay))).endswith("last_ms=None)")
