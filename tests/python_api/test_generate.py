# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Model.generate against `baton generate` (ids, text, logits, logprobs: exactly) and against
transformers + peft (hf_compare.py's tolerances), on the golden models and the bundled one."""
import json
import os
import random
import re
import shutil
import subprocess

import numpy as np
import pytest

import baton

GOLDEN_CASES = [  # (model, adapter or None)
    ("qwen-c", None),
    ("qwen-c", "qwen-c-lora-qv"),
    ("qwen-c", "qwen-c-lora-all"),
    ("qwen-c-bf16", "qwen-c-lora-all"),
    ("qwen-e", None),
    ("qwen-e", "qwen-e-lora-1"),
]
VOCAB = {"qwen-c": 384, "qwen-c-bf16": 384, "qwen-e": 520}


def prompt_for(model, seed, n):
    rng = random.Random(seed)
    return [rng.randrange(VOCAB[model]) for _ in range(n)]


def cli_generate(cli, model_dir, ids, max_new, *extra):
    return cli("generate", "--model", model_dir, "--ids", ",".join(map(str, ids)),
               "--max-new", str(max_new), "--json", *extra)


@pytest.mark.parametrize("model,adapter", GOLDEN_CASES)
def test_ids_and_logits_equal_the_cli(cli, golden, model, adapter):
    m = baton.Model(os.path.join(golden, model))
    ids = prompt_for(model, 11 + len(adapter or ""), 7)
    g = m.generate(ids, max_new=12, adapter=adapter and os.path.join(golden, adapter),
                   ignore_eos=True, logits=True)
    extra = ["--ignore-eos", "--logits"]
    if adapter:
        extra += ["--adapter", os.path.join(golden, adapter)]
    ref = cli_generate(cli, os.path.join(golden, model), ids, 12, *extra)
    assert g.ids == ref["ids"]
    assert len(g.ids) == 12
    assert g.logits.dtype == np.float32 and g.logits.shape == (VOCAB[model],)
    # The CLI prints each float32 in its shortest round-trip form: equal bit for bit.
    assert np.array_equal(g.logits, np.array(ref["logits"], dtype=np.float32))


@pytest.mark.parametrize("isa", ["avx2", "portable"])
def test_isa_keyword_equals_the_clis_isa(cli, golden, isa):
    """isa= reaches the host context as --isa does: the logits of that kernel family, bit for
    bit (each family sums in its own order, docs/batching.md)."""
    if isa == "avx2" and "avx2" not in open("/proc/cpuinfo").read():
        pytest.skip("this CPU does not run the avx2 kernels")
    model_dir = os.path.join(golden, "qwen-c")
    ids = prompt_for("qwen-c", 5, 9)
    g = baton.Model(model_dir, isa=isa).generate(ids, max_new=6, ignore_eos=True, logits=True)
    ref = cli_generate(cli, model_dir, ids, 6, "--ignore-eos", "--logits", "--isa", isa)
    assert g.ids == ref["ids"]
    assert np.array_equal(g.logits, np.array(ref["logits"], dtype=np.float32))


def test_stops_at_the_models_eos_as_the_cli_does(cli, demo):
    """The demo model ends its answer with <|im_end|> (config.json's eos_token_id): generation
    stops there, before max_new, and the stop id is not among the ids."""
    m = baton.Model(demo)
    tok = os.path.join(demo, "tokenizer.json")
    for question in ("Mia has 7 pears and buys 5 more. How many pears does she have?",
                     "Sam has 9 apples and eats 4 of them. How many apples are left?"):
        prompt = f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
        g = m.generate(prompt, max_new=40, adapter=os.path.join(demo, "adapters", "extract"))
        ref = cli("generate", "--model", demo, "--tokenizer", tok, "--prompt", prompt, "--max-new",
                  "40", "--adapter", os.path.join(demo, "adapters", "extract"), "--json")
        assert g.ids == ref["ids"]
        assert 0 < len(g.ids) < 40 and 2 not in g.ids, g.ids
        assert len(m.generate(prompt, max_new=40, ignore_eos=True,
                              adapter=os.path.join(demo, "adapters", "extract")).ids) == 40


def test_step_logits_equal_the_cli(cli, golden):
    model_dir = os.path.join(golden, "qwen-c")
    ids = prompt_for("qwen-c", 3, 9)
    g = baton.Model(model_dir).generate(ids, max_new=5, ignore_eos=True, step_logits=True)
    ref = cli_generate(cli, model_dir, ids, 5, "--ignore-eos", "--step-logits")
    assert len(g.step_logits) == len(ref["step_logits"]) == 5
    for mine, theirs in zip(g.step_logits, ref["step_logits"]):
        assert np.array_equal(mine, np.array(theirs, dtype=np.float32))


def test_logits_arrive_without_a_copy(golden):
    g = baton.Model(os.path.join(golden, "qwen-c")).generate([1, 2, 3], max_new=2, logits=True,
                                                             step_logits=True)
    for row in [g.logits, *g.step_logits]:
        # A view of memory the engine allocated: NumPy did not allocate (copy) it.
        assert not row.flags.owndata and row.base is not None
        assert row.flags.c_contiguous and row.dtype == np.float32
    assert g.logits.argmax() == g.ids[0]  # the row that chose the first token


def test_sampling_and_logprobs_equal_the_cli(cli, golden):
    model_dir = os.path.join(golden, "qwen-c")
    ids = prompt_for("qwen-c", 21, 6)
    opts = dict(temperature=0.9, top_k=40, top_p=0.95, repeat_penalty=1.1, seed=1234, logprobs=3)
    g = baton.Model(model_dir).generate(ids, max_new=16, ignore_eos=True, **opts)
    ref = cli_generate(cli, model_dir, ids, 16, "--ignore-eos", "--temperature", "0.9",
                       "--top-k", "40", "--top-p", "0.95", "--repeat-penalty", "1.1",
                       "--seed", "1234", "--logprobs", "3")
    assert g.seed == ref["seed"] == 1234
    assert g.ids == ref["ids"]
    assert [t.id for t in g.logprobs] == [t["id"] for t in ref["logprobs"]] == g.ids
    for mine, theirs in zip(g.logprobs, ref["logprobs"]):
        assert mine.logprob == pytest.approx(theirs["logprob"], abs=1e-6)
        assert [i for i, _ in mine.top] == [t["id"] for t in theirs["top"]]
    # Another seed draws other tokens (the sampler is really sampling here).
    other = baton.Model(model_dir).generate(ids, max_new=16, ignore_eos=True,
                                            **{**opts, "seed": 99})
    assert other.ids != g.ids


def test_text_prompt_and_grammar_equal_the_cli(cli, demo):
    m = baton.Model(demo)
    question = ("<|im_start|>user\nTom has 4 cups and buys 3 more. How many cups?<|im_end|>\n"
                "<|im_start|>assistant\n")
    tok = os.path.join(demo, "tokenizer.json")
    g = m.generate(question, max_new=10)
    ref = cli("generate", "--model", demo, "--tokenizer", tok, "--prompt", question,
              "--max-new", "10", "--json")
    assert (g.ids, g.text) == (ref["ids"], ref["text"])
    pattern = "[0-9] [+] [0-9]"
    g = m.generate(question, max_new=10, regex=pattern)
    ref = cli("generate", "--model", demo, "--tokenizer", tok, "--prompt", question,
              "--max-new", "10", "--regex", pattern, "--json")
    assert (g.ids, g.text) == (ref["ids"], ref["text"])
    assert re.fullmatch(pattern, g.text), g.text  # the grammar held, independently of the CLI


def test_generate_equals_transformers_and_peft(golden):
    """The same greedy decode in transformers + peft (tests/reference/hf_compare.py's run_hf):
    ids identical up to the first near-tie, first logits within LOGIT_RTOL * max(1, |hf|)."""
    py = os.environ.get("BATON_REFERENCE_PYTHON", "")
    if not py or not os.access(py, os.X_OK):
        if os.environ.get("CI") == "true":
            pytest.fail("no reference python (BATON_REFERENCE_PYTHON) under CI=true")
        pytest.skip("no reference python (BATON_REFERENCE_PYTHON; scripts/test.sh sets it)")
    cases = [{"model": os.path.join(golden, m), "adapter": a and os.path.join(golden, a),
              "ids": prompt_for(m, 500 + k, 4 + 9 * k), "steps": 10}
             for k, (m, a) in enumerate(GOLDEN_CASES)]
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, BATON_REFERENCE_CHILD="1")
    p = subprocess.run([py, os.path.join(here, "hf_reference.py")], input=json.dumps(cases),
                       capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    ref = json.loads(p.stdout.splitlines()[-1])
    rtol = ref["logit_rtol"]
    for case, hf in zip(cases, ref["cases"]):
        g = baton.Model(case["model"]).generate(case["ids"], max_new=case["steps"],
                                                adapter=case["adapter"], ignore_eos=True,
                                                logits=True)
        h = np.array(hf["first"], dtype=np.float64)
        assert np.all(np.abs(g.logits - h) <= rtol * np.maximum(1.0, np.abs(h))), case
        for step, (mine, theirs) in enumerate(zip(g.ids, hf["ids"])):
            if len(hf["tied"][step]) > 1:  # a near-tie: either token, and no later comparison
                assert mine in hf["tied"][step]
                break
            assert mine == theirs, f"{case}: step {step}"


def test_json_schema_grammar_equals_the_cli(cli, demo, tmp_path):
    schema = '{"type": "integer"}'
    (tmp_path / "schema.json").write_text(schema)
    prompt = "<|im_start|>user\nMia has 7 pears and buys 5 more.<|im_end|>\n<|im_start|>assistant\n"
    g = baton.Model(demo).generate(prompt, max_new=6, json_schema=schema)
    ref = cli("generate", "--model", demo, "--tokenizer", os.path.join(demo, "tokenizer.json"),
              "--prompt", prompt, "--max-new", "6", "--json-schema", str(tmp_path / "schema.json"),
              "--json")
    assert (g.ids, g.text) == (ref["ids"], ref["text"])
    assert re.fullmatch(r"-?(0|[1-9][0-9]*)", g.text), g.text


def test_the_weights_are_read_once(cli, golden, tmp_path):
    # A Model keeps the weights it loaded: with its folder's weights file gone, every later
    # generate() (another adapter, another prompt) still equals the CLI's on the original folder.
    for name in ("config.json", "model.safetensors"):
        shutil.copy(os.path.join(golden, "qwen-c", name), tmp_path / name)
    m = baton.Model(str(tmp_path))
    os.remove(tmp_path / "model.safetensors")
    for adapter, seed in ((None, 3), ("qwen-c-lora-qv", 4), (None, 5)):
        ids = prompt_for("qwen-c", seed, 6)
        g = m.generate(ids, max_new=5, adapter=adapter and os.path.join(golden, adapter),
                       ignore_eos=True)
        extra = ["--ignore-eos"] + (["--adapter", os.path.join(golden, adapter)] if adapter else [])
        assert g.ids == cli_generate(cli, os.path.join(golden, "qwen-c"), ids, 5, *extra)["ids"]
