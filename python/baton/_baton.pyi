# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Made by nanobind.stubgen from the built module, then typed where the bindings return objects
# (logits, output, the stream's self); tests/python_api/test_package.py checks it names every binding.
"""
baton's C++ engine: models, relays, the batch scheduler (docs/python.md)
"""

from collections.abc import Sequence

import numpy
import numpy.typing

__version__: str

class Error(RuntimeError):
    """Base of every error baton raises (baton::error in C++)."""

class CapacityError(Error): ...

class ConfigError(Error): ...

class DeviceError(Error): ...

class FormatError(Error): ...

class GrammarError(Error): ...

class IoError(Error): ...

class NumericError(Error): ...

class PositionError(Error): ...

class ShapeError(Error): ...

class TokenizerError(Error): ...

class UsageError(Error): ...

class WiringError(Error): ...


class Tokenizer:
    """A Hugging Face tokenizer.json (byte-level BPE)."""

    @staticmethod
    def from_file(path: str) -> Tokenizer:
        """Reads and checks a tokenizer.json file."""

    def encode(self, text: str, *, specials: bool = True) -> list[int]:
        """
        Token ids of `text`. With specials (the default) added tokens written in it ('<|im_end|>') become their ids; specials=False spells them byte by byte, as a relay encodes untrusted request text.
        """

    def decode(self, ids: Sequence[int]) -> str:
        """The text of `ids` (invalid UTF-8 replaced by U+FFFD)."""

    @property
    def vocab_size(self) -> int:
        """How many ids the tokenizer has."""

    @property
    def path(self) -> str:
        """The file it was read from."""

    def __repr__(self) -> str: ...

class TokenLogprob:
    """A chosen token's log-probability and its best alternatives."""

    @property
    def id(self) -> int:
        """The chosen token."""

    @property
    def logprob(self) -> float:
        """Its log-probability."""

    @property
    def top(self) -> list[tuple[int, float]]:
        """The most likely tokens at that step, as (id, logprob), best first."""

    def __repr__(self) -> str: ...

class StageRun:
    """One stage's run in one cycle of a relay."""

    @property
    def name(self) -> str:
        """The stage's name."""

    @property
    def stage(self) -> int:
        """The stage's index in the relay."""

    @property
    def cycle(self) -> int:
        """The cycle, from 1."""

    @property
    def ids(self) -> list[int]:
        """The generated token ids (stop token excluded)."""

    @property
    def text(self) -> str | None:
        """The ids decoded (None without a tokenizer)."""

    @property
    def ms(self) -> float:
        """Wall time of this stage run in milliseconds."""

    @property
    def stopped(self) -> bool:
        """
        Whether it ended on a stop id or an interceptor's stop (else at max_new).
        """

    @property
    def stopped_by(self) -> str:
        """The interceptor that stopped it, if one did ('' otherwise)."""

    @property
    def input_tokens(self) -> int:
        """Tokens of its input (its prefill)."""

    @property
    def forwards(self) -> int:
        """Model forwards, prefill included."""

    @property
    def skipped(self) -> int:
        """Steps whose forward was skipped (step-skip)."""

    @property
    def logprobs(self) -> list[TokenLogprob]:
        """Each id's log-probability, when the stage's sampling asks for them."""

    def __repr__(self) -> str: ...

class RelayResult:
    """What a relay run produced, with its timings however it ended."""

    @property
    def runs(self) -> list[StageRun]:
        """Every stage run, in execution order."""

    @property
    def verdict(self) -> str:
        """
        'pass' (the gate passed), 'fail' (every cycle ran, the gate never passed) or 'error' (run_many: this request failed; see error).
        """

    @property
    def cycles(self) -> int:
        """Cycles started."""

    @property
    def total_ms(self) -> float:
        """Wall time of the whole run in milliseconds, set however it ended."""

    @property
    def error(self) -> str:
        """The message when verdict is 'error'."""

    @property
    def passed(self) -> bool:
        """Whether the gate passed."""

    @property
    def output(self) -> StageRun | None:
        """
        The latest run of the relay's output stage (the file's "output"; by default the last stage), or None if it never ran.
        """

    @property
    def text(self) -> str | None:
        """The output stage's latest text (None without a tokenizer or output)."""

    def stage_ms(self, name: str) -> float:
        """Total wall time of the stage `name` over every cycle, in ms."""

    def __repr__(self) -> str: ...

class Generation:
    """What Model.generate produced."""

    @property
    def ids(self) -> list[int]:
        """The generated token ids (a stop id is not included)."""

    @property
    def text(self) -> str | None:
        """The ids decoded (None without a tokenizer)."""

    @property
    def seed(self) -> int:
        """The sampling seed used (given or drawn)."""

    @property
    def ms(self) -> float:
        """
        Wall time of the call in milliseconds: the adapter's loading (when one is named), the prompt's prefill and the decode (the weights are read once, by Model()).
        """

    @property
    def logits(self) -> numpy.typing.NDArray[numpy.float32] | None:
        """
        With logits=True: the row that chose the first token (after a grammar's mask), a float32 NumPy array over the model's vocabulary that owns the engine's memory.
        """

    @property
    def step_logits(self) -> list[numpy.typing.NDArray[numpy.float32] | None] | None:
        """
        With step_logits=True: one row per generated id, the logits that chose it, or None for a step that supplied its token without a forward (a grammar's forced token).
        """

    @property
    def logprobs(self) -> list[TokenLogprob]:
        """
        With logprobs=N: each id's log-probability and its N best alternatives.
        """

    def __repr__(self) -> str: ...

class Model:
    """
    A model folder (Hugging Face layout: config.json + safetensors) loaded for generation on the host backend.
    """

    def __init__(self, path: str, *, tokenizer: str | None = None, backend: str | None = None, storage: str | None = None, threads: int | None = None, bf16_products: bool | None = None, isa: str | None = None) -> None:
        """
        Reads and checks `path`/config.json, loads the weights (once: every generate() runs on them) and the tokenizer (`tokenizer`, else `path`/tokenizer.json when it exists). storage: 'f32', 'bf16', 'f16', 'q8_0' or 'q4_0' (default: the checkpoint's dtype); threads: the host thread pool's size (0 or None: every core); bf16_products: as `baton generate --bf16-products`; isa: the kernel family, 'avx512', 'avx2' or 'portable', as `baton generate --isa` (default: the best this CPU runs); backend: 'host' (the only one this module has).
        """

    def generate(self, prompt: str | Sequence[int], *, max_new: int, adapter: str | None = None, chat: bool = False, ignore_eos: bool = False, regex: str | None = None, json_schema: str | None = None, temperature: float | None = None, top_k: int | None = None, top_p: float | None = None, min_p: float | None = None, repeat_penalty: float | None = None, presence_penalty: float | None = None, frequency_penalty: float | None = None, repeat_last_n: int | None = None, seed: int | None = None, logprobs: int | None = None, logits: bool = False, step_logits: bool = False) -> Generation:
        """
        Generates up to max_new tokens after `prompt` (text, encoded with added tokens recognised, or token ids used as given), exactly as `baton generate` does: greedy unless a sampling keyword is given, stopping at the model's eos ids unless ignore_eos. See docs/python.md for every keyword.
        """

    @property
    def path(self) -> str:
        """The model folder."""

    @property
    def vocab_size(self) -> int:
        """Rows of the model's logits."""

    @property
    def architecture(self) -> str:
        """config.json's architecture."""

    def __repr__(self) -> str: ...

class Relay:
    """
    A relay of LoRA stages on one frozen model, from a relay JSON file (docs/relay.md), built and pre-warmed on the host backend.
    """

    @staticmethod
    def from_file(path: str, *, backend: str | None = None, storage: str | None = None, threads: int | None = None, bf16_products: bool | None = None, isa: str | None = None, slots: int = 1, request_specials: bool = False) -> Relay:
        """
        Reads `path` as `baton relay --config` does, builds the relay and pre-warms every stage's prefix. slots: requests each stage serves at once (run_many's concurrency at most); request_specials: request text may spell added tokens as those tokens (default: request text is plain text). storage, threads, bf16_products, isa and backend override the file as the CLI's options do.
        """

    def run(self, request: str | Sequence[int]) -> RelayResult:
        """
        Runs one request (text, or token ids used as given) through the relay: every stage in order, cycles until the gate passes or max_cycles. Raises the matching baton.Error when a stage fails.
        """

    def run_many(self, requests: Sequence[str | Sequence[int]], *, concurrency: int | None = None) -> list[RelayResult]:
        """
        Runs every request through the batch scheduler, `concurrency` at a time (default: the relay's slots), batching the rows of every request and stage into one forward per step. Results come in request order and equal each request run alone; a request that fails gets verdict 'error' and its message, and the others go on.
        """

    def prewarm(self) -> None:
        """
        Computes every stage's prefix again from an empty cache (after it was built, the relay is warm already).
        """

    def encode(self, text: str) -> list[int]:
        """The ids a text request becomes (as run() encodes it)."""

    def decode(self, ids: Sequence[int]) -> str:
        """The text of `ids` in the relay's tokenizer."""

    def prefix(self, stage: str) -> list[int]:
        """The pre-warmed prefix ids of the stage named `stage`."""

    @property
    def stage_names(self) -> list[str]:
        """The stages' names, in relay order."""

    @property
    def path(self) -> str:
        """The relay file."""

    @property
    def slots(self) -> int:
        """Requests each stage serves at once."""

    @property
    def has_tokenizer(self) -> bool:
        """Whether text requests and text results are available."""

    @property
    def warnings(self) -> list[str]:
        """What building the relay noticed but did not refuse, one sentence each."""

    @property
    def backend(self) -> str:
        """The backend the relay runs on."""

    def __repr__(self) -> str: ...

    def stream(self, request: str | Sequence[int]) -> RelayStream:
        """
        Runs one request and yields each StreamToken as a stage accepts it; the iterator's `result` is the RelayResult once it is exhausted. The relay is held from this call until the request ends (close() or leaving a `with` block ends it early).
        """

class StreamToken:
    """A token a relay stage accepted, as it was accepted."""

    @property
    def stage(self) -> str:
        """The stage's name."""

    @property
    def stage_index(self) -> int:
        """The stage's index in the relay."""

    @property
    def cycle(self) -> int:
        """The cycle, from 1."""

    @property
    def id(self) -> int:
        """The token id."""

    @property
    def text(self) -> str | None:
        """
        The token's bytes decoded (a character split across tokens shows as U+FFFD here; decode the ids together for the exact text).
        """

    def __repr__(self) -> str: ...

class RelayStream:
    """
    Iterator over the tokens of one relay request, every stage and cycle, as they are accepted; `result` holds the RelayResult once it ends.
    """

    def __iter__(self) -> RelayStream: ...

    def __next__(self) -> StreamToken: ...

    @property
    def result(self) -> RelayResult | None:
        """
        The request's RelayResult once the iterator is exhausted (None before; verdict 'error' with its message when a stage failed).
        """

    def close(self) -> None:
        """
        Cancels the request if it is still running and gives the relay back to other callers.
        """

    def __enter__(self) -> RelayStream: ...

    def __exit__(self, *args) -> None: ...
