"""Exception hierarchy shared by every layer of hippo.

Each subclass also inherits the matching built-in, so callers that already catch ``ValueError`` or
``KeyError`` keep working, while ``except hippo.HippoError`` catches everything hippo raises on purpose.
"""

from __future__ import annotations


class HippoError(Exception):
    """Base class of every error hippo raises deliberately."""


class InvalidInput(HippoError, ValueError):
    """An argument has the wrong type, shape, width or value. The message names the argument."""


class OutOfRange(InvalidInput, IndexError):
    """A position, rank or occurrence number lies outside the valid range."""


class CorruptData(HippoError, ValueError):
    """A serialized blob, snapshot or export file failed validation (length, offset, checksum, version)."""


class NotFound(HippoError, KeyError):
    """An id or namespace does not exist."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep messages readable
        return str(self.args[0]) if self.args else ""


class StoreError(HippoError, OSError):
    """The backing store failed (disk full, permission denied, I/O error). Committed data is unaffected."""


class StoreBusy(StoreError, TimeoutError):
    """The store stayed locked by another writer longer than the configured wait."""


class Changed(HippoError, RuntimeError):
    """A conditional write (``add_many(..., if_version=...)``) found that the namespace had changed since the
    version it was made against: another call, thread or process wrote to it in between. Nothing was written."""


class ReadOnlyError(StoreError, PermissionError):
    """A write was attempted on a store opened with ``read_only=True``. Nothing was written."""


class ClosedError(HippoError, RuntimeError):
    """The object was used after ``close()``."""


class NativeError(HippoError, RuntimeError):
    """The C core reported an unexpected internal condition."""


class OutOfMemory(HippoError, MemoryError):
    """The C core could not allocate memory."""


class LLMError(HippoError, RuntimeError):
    """A configured LLM or embedding endpoint failed after retries, or answered malformed output."""


__all__ = [
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
