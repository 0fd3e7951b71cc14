# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""baton: a relay of LoRA adapters on one frozen transformer, from Python.

The engine is baton's C++ library (the extension module ``baton._baton``): ``Model`` generates
as ``baton generate`` does, ``Relay`` runs a relay file as ``baton relay`` does (one request,
many through the batch scheduler, or a stream of tokens), and every error the engine raises is
a ``baton.Error`` subclass named after its C++ type. ``Baton``, ``LoraRing`` and ``Pipeline``
keep the Python prototype's names on top (docs/python.md).
"""
from ._baton import (
    CapacityError,
    ConfigError,
    DeviceError,
    Error,
    FormatError,
    Generation,
    GrammarError,
    IoError,
    Model,
    NumericError,
    PositionError,
    Relay,
    RelayResult,
    RelayStream,
    ShapeError,
    StageRun,
    StreamToken,
    TokenizerError,
    Tokenizer,
    TokenLogprob,
    UsageError,
    WiringError,
    __version__,
)
from .prototype import Baton, LoraRing, Pipeline

__all__ = [
    "Baton",
    "CapacityError",
    "ConfigError",
    "DeviceError",
    "Error",
    "FormatError",
    "Generation",
    "GrammarError",
    "IoError",
    "LoraRing",
    "Model",
    "NumericError",
    "Pipeline",
    "PositionError",
    "Relay",
    "RelayResult",
    "RelayStream",
    "ShapeError",
    "StageRun",
    "StreamToken",
    "TokenLogprob",
    "Tokenizer",
    "TokenizerError",
    "UsageError",
    "WiringError",
    "__version__",
]
