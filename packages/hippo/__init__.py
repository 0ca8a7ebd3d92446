"""hippo: succinct, offline-first long-term memory for AI agents."""

from __future__ import annotations

import sys as _sys

if getattr(_sys, "argv", None) and _sys.argv[0] == "-m":
    # ``python -m hippo``: Python imports this package before the command line's ``__main__``, and the imports below
    # take most of a second; a Ctrl-C in them is answered as the ``hippo`` console script answers it.
    try:
        import _hippo_cli
    except ImportError:  # the library without the console script's entry (a vendored copy): Python's own handling
        pass
    else:
        if _hippo_cli.runs_as_main():
            _hippo_cli.guard_loading()
        del _hippo_cli
del _sys

from hippo.base.config import Config, RetrievalConfig, SignatureConfig
from hippo.base.errors import (
    Changed,
    ClosedError,
    CorruptData,
    HippoError,
    InvalidInput,
    LLMError,
    NativeError,
    NotFound,
    OutOfMemory,
    OutOfRange,
    ReadOnlyError,
    StoreBusy,
    StoreError,
)
from hippo.base.types import Hit, MemoryItem, Recall
from hippo.compaction import EXPAND_TOOL, ContextCompactor, ContextMessage, content_key
from hippo.memory import Memory
from hippo.native import BinaryIndex, DynamicWaveletMatrix, WaveletMatrix
from hippo.records import epoch_of, fitting_units, jsonable, message_time, storable_metadata, time_zone
from hippo.text.tokenizer import MAX_QUERY_CHARS, count_tokens, storable

__version__ = "0.1.0"

__all__ = [
    "Memory",
    "ContextCompactor",
    "ContextMessage",
    "content_key",
    "EXPAND_TOOL",
    "Config",
    "RetrievalConfig",
    "SignatureConfig",
    "MemoryItem",
    "Hit",
    "Recall",
    "count_tokens",
    "storable",
    "MAX_QUERY_CHARS",
    "jsonable",
    "storable_metadata",
    "message_time",
    "epoch_of",
    "time_zone",
    "fitting_units",
    "BinaryIndex",
    "DynamicWaveletMatrix",
    "WaveletMatrix",
    "HippoError",
    "InvalidInput",
    "OutOfRange",
    "CorruptData",
    "NotFound",
    "StoreError",
    "StoreBusy",
    "Changed",
    "ReadOnlyError",
    "ClosedError",
    "NativeError",
    "OutOfMemory",
    "LLMError",
]
