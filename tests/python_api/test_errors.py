# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Every baton::error subclass arrives as its own baton.Error subclass, with the C++ message
naming the file, field or value."""
import json
import os
import re

import pytest

import baton
from conftest import golden_relay_spec


def cpp_error_classes(repo):
    """The subclasses of baton::error that include/baton/core/error.hpp declares."""
    with open(os.path.join(repo, "include", "baton", "core", "error.hpp")) as f:
        return re.findall(r"class (\w+) : public error", f.read())


def python_name(cpp):
    return "".join(part.capitalize() for part in cpp.split("_"))


def test_the_hierarchy_mirrors_the_cpp_one(repo):
    classes = cpp_error_classes(repo)
    assert len(classes) >= 12  # the header was read
    assert issubclass(baton.Error, RuntimeError)
    for cpp in classes:
        py = getattr(baton, python_name(cpp))
        assert issubclass(py, baton.Error) and py is not baton.Error, cpp
        assert py.__module__ == "baton" and py.__doc__
    # and nothing in Python that C++ lacks
    names = {python_name(c) for c in classes}
    extra = {n for n in dir(baton) if n.endswith("Error") and n != "Error"} - names
    assert not extra


def test_a_missing_model_folder_is_an_io_error():
    with pytest.raises(baton.IoError, match="/nonexistent/model"):
        baton.Model("/nonexistent/model")


def test_a_malformed_relay_file_is_a_format_error(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"model": "x", "stages": [')
    with pytest.raises(baton.FormatError, match=re.escape(str(path))):
        baton.Relay.from_file(str(path))


def test_a_file_reading_a_later_stage_is_a_config_error_naming_the_field(golden, write_relay):
    spec = golden_relay_spec(golden)
    spec["stages"][0]["input"] = [{"request": True}, {"out": "verify"}]
    path = write_relay(spec)
    where = re.escape(f"{path}: stages[0] ('extract').input[1]")
    with pytest.raises(baton.ConfigError, match=where):
        baton.Relay.from_file(path)


def test_an_unknown_field_is_a_config_error(golden, write_relay):
    spec = golden_relay_spec(golden)
    spec["stages"][1]["max_newt"] = 3
    with pytest.raises(baton.ConfigError, match="max_newt"):
        baton.Relay.from_file(write_relay(spec))


def test_an_adapter_of_another_model_is_a_shape_error(golden):
    m = baton.Model(os.path.join(golden, "qwen-e"))
    with pytest.raises(baton.ShapeError, match="qwen-c-lora-qv"):
        m.generate([1, 2], max_new=2, adapter=os.path.join(golden, "qwen-c-lora-qv"))


def test_too_long_a_request_is_a_capacity_error(golden, write_relay):
    spec = dict(golden_relay_spec(golden), max_request_tokens=4)
    relay = baton.Relay.from_file(write_relay(spec))
    with pytest.raises(baton.CapacityError):
        relay.run(list(range(1, 10)))
    m = baton.Model(os.path.join(golden, "qwen-c"))
    with pytest.raises(baton.CapacityError, match="max_position_embeddings"):
        m.generate([1, 2, 3], max_new=1000)


def test_an_id_outside_the_vocabulary_is_a_usage_error(golden, write_relay):
    relay = baton.Relay.from_file(write_relay(golden_relay_spec(golden)))
    with pytest.raises(baton.UsageError, match="384"):
        relay.run([1, 384])


def test_a_bad_grammar_is_a_grammar_error(demo):
    with pytest.raises(baton.GrammarError):
        baton.Model(demo).generate("2 + 2 =", max_new=4, regex="(unclosed")


def test_bad_keywords_are_usage_errors_that_name_them(golden, demo):
    model_dir = os.path.join(golden, "qwen-c")
    with pytest.raises(baton.UsageError, match="storage='q3'"):
        baton.Model(model_dir, storage="q3")
    with pytest.raises(baton.UsageError, match="backend='cuda'"):
        baton.Model(model_dir, backend="cuda")
    with pytest.raises(baton.UsageError, match="isa='avx3'.*'avx512', 'avx2' or 'portable'"):
        baton.Model(model_dir, isa="avx3")
    with pytest.raises(baton.UsageError, match="isa='sse'"):
        baton.Relay.from_file(os.path.join(demo, "relay.json"), isa="sse")
    m = baton.Model(model_dir)
    with pytest.raises(baton.UsageError, match="max_new=0"):
        m.generate([1], max_new=0)
    with pytest.raises(baton.UsageError, match="top_p"):
        m.generate([1], max_new=2, top_p=1.5)
    with pytest.raises(baton.UsageError, match="no tokenizer"):
        m.generate("text needs a tokenizer", max_new=2)
    relay = baton.Relay.from_file(os.path.join(demo, "relay.json"), slots=2)
    with pytest.raises(baton.UsageError, match="concurrency=3"):
        relay.run_many(["a question"], concurrency=3)


def test_errors_are_catchable_as_baton_error_and_runtime_error():
    for base in (baton.Error, RuntimeError):
        with pytest.raises(base):
            baton.Model("/nonexistent/model")


def test_chat_without_a_template_is_a_config_error(demo):
    with pytest.raises(baton.ConfigError, match="word-problems"):
        baton.Model(demo).generate("hello", max_new=2, chat=True)
