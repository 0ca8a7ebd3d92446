"""hippo: succinct, offline-first long-term memory for AI agents."""

from __future__ import annotations

from hippo.base.config import Config, RetrievalConfig, SignatureConfig
from hippo.base.errors import (
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
from hippo.records import fitting_units, jsonable, message_time, storable_metadata, time_zone
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
    "ReadOnlyError",
    "ClosedError",
    "NativeError",
    "OutOfMemory",
    "LLMError",
]
