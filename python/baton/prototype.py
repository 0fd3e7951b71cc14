# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""The Python prototype's names on the C++ engine: ``Baton`` (with ``LoraRing`` as its alias)
and ``Pipeline``.

The prototype (lora_static_ring.py) ran three LoRA slices, extract -> reason -> verify, on one
frozen base model with transformers' StaticCache; each slice kept a pre-filled prefix and the
verify slice gated the relay for up to a few cycles. Here the same shape is a ``Relay`` whose
stages are named extract, reason and verify, and the engine owns the caches. The prototype's
known bug is fixed: ``Pipeline.last_ms`` is set on every return, an early gate pass included.
"""
from __future__ import annotations

import os
from typing import Optional, Sequence, Union

from ._baton import Relay, RelayResult, WiringError

Request = Union[str, Sequence[int]]


class Baton:
    """Three LoRA slices, extract -> reason -> verify, on one frozen base model.

    Each slice has its pre-warmed prefix (computed when the relay is built, again by
    ``prewarm()``); verify is the gate, and a request runs cycles until it passes or the
    relay file's ``max_cycles`` is reached.

    ``relay`` is a ``Relay`` or a relay file; with a file, ``options`` go to
    ``Relay.from_file`` (storage, threads, slots, ...).
    """

    STAGES = ("extract", "reason", "verify")

    def __init__(self, relay: Union[Relay, str, os.PathLike], **options) -> None:
        if not isinstance(relay, Relay):
            relay = Relay.from_file(os.fspath(relay), **options)
        elif options:
            raise TypeError("options apply to a relay file, not to a Relay already built")
        if tuple(relay.stage_names) != self.STAGES:
            raise WiringError(
                f"{relay.path}: a Baton runs the stages extract, reason, verify in that order; "
                f"the relay has {', '.join(relay.stage_names) or 'none'}"
            )
        self.relay = relay

    def prewarm(self) -> None:
        """Computes every slice's prefix again, from an empty cache (the prototype's
        ``_prewarm``; needed after an adapter changed)."""
        self.relay.prewarm()

    def run(self, question: Request) -> RelayResult:
        """One question (text or token ids) through extract, reason and verify."""
        return self.relay.run(question)

    __call__ = run

    def __repr__(self) -> str:
        return f"Baton({self.relay!r})"


LoraRing = Baton
"""The prototype's first name for ``Baton``, kept as an alias."""


class Pipeline:
    """Runs questions through a ``Baton`` and keeps the latest run: ``last_ms`` (its total wall
    time) and ``last_result``.

    ``last_ms`` is set on every return, whether the gate passed early, passed on the last cycle
    or never passed (the prototype set it only when every cycle ran, so an early pass left the
    previous question's time there). It is None before the first run.
    """

    def __init__(self, baton: Baton) -> None:
        self.baton = baton
        self.last_ms: Optional[float] = None
        self.last_result: Optional[RelayResult] = None

    def run(self, question: Request) -> RelayResult:
        """Runs ``question`` and records its result and time before returning it."""
        result = self.baton.run(question)
        self.last_result = result
        self.last_ms = result.total_ms
        return result

    __call__ = run

    def __repr__(self) -> str:
        return f"Pipeline({self.baton!r}, last_ms={self.last_ms!r})"
