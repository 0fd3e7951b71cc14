# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The token ids baton builds for each stage of a relay, rendered in Python.

relay.json (RelayFormat) mirrors baton's text relay (include/baton/text/relay_text.hpp,
text/chat.hpp):
  prefix  = encode("<|im_start|>system\\n" + system + "<|im_end|>\\n")   (one call, no BOS)
  input   = the segments in order, each encoded on its own and concatenated:
            text -> encode(text); request -> encode(question);
            out / feedback -> the ids that stage generated (without its stop id)
  target  = encode(target text) + [stop id]   (the stop id ends the stage; it is not handed on)
Training sequences are prefix + input + target, with the loss on the target only.

relay-activated.json (ActivatedRelayFormat): every stage reads one shared, growing stream,
and its adapter (aLoRA) applies from the last occurrence of its invocation on:
  prefix  = encode("<|im_start|>system\\n" + shared.system + "<|im_end|>\\n")   (one call)
  input   = shared.input's segments, each encoded on its own (text / request, as above)
  then, for every stage run that finished earlier in the request, in order:
            encode(its invocation) + encode(its output text) + encode(shared.turn_end)
  then      encode(this stage's invocation)
  target  = encode(target text) + [stop id], as above.
"""
import json
import os

from tokenizers import Tokenizer


class _Relay:
    """What both formats share: the file, the tokenizer, encode, each stage's stop id."""

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

    def system_ids(self, system):
        return self.encode("<|im_start|>system\n" + system + "<|im_end|>\n")

    def segment_ids(self, seg, question):
        """A text or request segment; None for any other kind (the caller's to handle)."""
        if "text" in seg:
            return self.encode(seg["text"])
        if seg.get("request"):
            return self.encode(question)
        return None

    def target_ids(self, stage, text):
        return self.encode(text) + [self.stop[stage]]


class RelayFormat(_Relay):
    """relay.json: each stage has its own system text and input template."""

    def prefix(self, stage):
        return self.system_ids(self.stages[stage]["system"])

    def input_ids(self, stage, question, outs=None, feedback=None):
        """outs / feedback: {stage name: text} (text is encoded as the stage's generated ids;
        a missing feedback entry is empty, as in cycle 1)."""
        outs, feedback = outs or {}, feedback or {}
        ids = []
        for seg in self.stages[stage]["input"]:
            got = self.segment_ids(seg, question)
            if got is not None:
                ids += got
            elif "out" in seg:
                ids += self.encode(outs[seg["out"]])
            elif "feedback" in seg:
                fb = feedback.get(seg["feedback"], "")
                ids += self.encode(fb) if fb else []
            else:
                raise ValueError(f"unknown segment {seg}")
        return ids

    def example(self, stage, question, target, outs=None, feedback=None):
        """(ids, number of leading ids without loss) for one training sequence."""
        ctx = self.prefix(stage) + self.input_ids(stage, question, outs, feedback)
        return ctx + self.target_ids(stage, target), len(ctx)

    def example_after(self, stage, question, target, transcript=()):
        """example() for `stage` after the stage runs of `transcript` ([(stage, output text)],
        in the order they ran): out:X reads X's latest output; feedback:X, X's latest output
        once `stage` itself has run before (cycle 2 on), else nothing."""
        latest = dict(transcript)
        return self.example(stage, question, target, outs=latest,
                            feedback=latest if stage in latest else {})


def find_last(ids, sub):
    """Start of the last occurrence of `sub` in `ids`, -1 if none."""
    n = len(sub)
    for i in range(len(ids) - n, -1, -1):
        if ids[i: i + n] == sub:
            return i
    return -1


class ActivatedRelayFormat(_Relay):
    """relay-activated.json: one shared stream; each stage's turn opens with its invocation."""

    def __init__(self, relay_json, tokenizer=None):
        super().__init__(relay_json, tokenizer)
        self.shared = self.cfg["shared"]
        self.turn_end = self.encode(self.shared["turn_end"])
        self.invocation = {name: self.encode(s["invocation"]) for name, s in self.stages.items()}

    def invocation_ids(self, stage):
        """The adapter's alora_invocation_tokens."""
        return self.invocation[stage]

    def prefix(self, stage=None):
        return self.system_ids(self.shared["system"])

    def input_ids(self, question):
        ids = []
        for seg in self.shared["input"]:
            got = self.segment_ids(seg, question)
            if got is None:
                raise ValueError(f"shared input takes text and request segments only: {seg}")
            ids += got
        return ids

    def turn_ids(self, stage, text):
        """One finished stage run as the next stages read it."""
        return self.invocation[stage] + self.encode(text) + self.turn_end

    def example_after(self, stage, question, target, transcript=()):
        """(ids, number of leading ids without loss): prefix, shared input, the turns of
        `transcript` ([(stage, output text)] in the order they ran), `stage`'s invocation,
        then the target. Checks that every invocation sits where it was put and that the last
        occurrence of `stage`'s invocation is the one just before the target (where its
        adapter starts)."""
        ids = self.prefix() + self.input_ids(question)
        starts = []
        for name, text in transcript:
            starts.append((name, len(ids)))
            ids += self.turn_ids(name, text)
        starts.append((stage, len(ids)))
        ids += self.invocation[stage]
        nctx = len(ids)
        ids += self.target_ids(stage, target)
        for name, at in starts:
            inv = self.invocation[name]
            assert ids[at: at + len(inv)] == inv, f"{name}'s invocation is not at {at}"
        inv = self.invocation[stage]
        assert find_last(ids, inv) == nctx - len(inv), \
            f"{stage}'s last invocation is not the one before its target: {self.tok.decode(ids)!r}"
        return ids, nctx
