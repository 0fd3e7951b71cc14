# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The token ids baton builds for each stage of a relay.json, rendered in Python.

Mirrors baton's text relay (include/baton/text/relay_text.hpp, text/chat.hpp):
  prefix  = encode("<|im_start|>system\\n" + system + "<|im_end|>\\n")   (one call, no BOS)
  input   = the segments in order, each encoded on its own and concatenated:
            text -> encode(text); request -> encode(question);
            out / feedback -> the ids that stage generated (without its stop id)
  target  = encode(target text) + [stop id]   (the stop id ends the stage; it is not handed on)
Training sequences are prefix + input + target, with the loss on the target only.
"""
import json
import os

from tokenizers import Tokenizer


class RelayFormat:
    def __init__(self, relay_json, tokenizer=None):
        with open(relay_json, encoding="utf-8") as f:
            self.cfg = json.load(f)
        base = os.path.dirname(os.path.abspath(relay_json))
        if tokenizer is None:
            tokenizer = Tokenizer.from_file(os.path.join(base, self.cfg["tokenizer"]))
        self.tok = tokenizer
        self.stages = {s["name"]: s for s in self.cfg["stages"]}
        self.stop = {}
        for s in self.cfg["stages"]:
            (stop_text,) = s["stop_text"]
            ids = self.encode(stop_text)
            assert len(ids) == 1, f"stop text {stop_text!r} is not one token"
            self.stop[s["name"]] = ids[0]

    def encode(self, text):
        return self.tok.encode(text, add_special_tokens=False).ids

    def prefix(self, stage):
        s = self.stages[stage]
        return self.encode("<|im_start|>system\n" + s["system"] + "<|im_end|>\n")

    def input_ids(self, stage, question, outs=None, feedback=None):
        """outs / feedback: {stage name: text} (text is encoded as the stage's generated ids;
        a missing feedback entry is empty, as in cycle 1)."""
        outs, feedback = outs or {}, feedback or {}
        ids = []
        for seg in self.stages[stage]["input"]:
            if "text" in seg:
                ids += self.encode(seg["text"])
            elif seg.get("request"):
                ids += self.encode(question)
            elif "out" in seg:
                ids += self.encode(outs[seg["out"]])
            elif "feedback" in seg:
                fb = feedback.get(seg["feedback"], "")
                ids += self.encode(fb) if fb else []
            else:
                raise ValueError(f"unknown segment {seg}")
        return ids

    def target_ids(self, stage, text):
        return self.encode(text) + [self.stop[stage]]

    def example(self, stage, question, target, outs=None, feedback=None):
        """(ids, number of leading ids without loss) for one training sequence."""
        ctx = self.prefix(stage) + self.input_ids(stage, question, outs, feedback)
        return ctx + self.target_ids(stage, target), len(ctx)
