"""hippo: succinct, offline-first long-term memory for AI agents."""

from __future__ import annotations

from hippo.errors import (
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
from hippo._native import BinaryIndex, DynamicWaveletMatrix, WaveletMatrix
from hippo.config import Config, RetrievalConfig, SignatureConfig
from hippo.memory import Memory
from hippo.tokenizer import count_tokens
from hippo.types import Hit, MemoryItem, Recall

__version__ = "0.1.0"

__all__ = [
    "Memory",
    "Config",
    "RetrievalConfig",
    "SignatureConfig",
    "MemoryItem",
    "Hit",
    "Recall",
    "count_tokens",
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
