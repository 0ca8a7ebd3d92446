"""Index entries for the live context window (seed 004 §5-9): large content stored losslessly outside the
prompt, a compact entry in it, re-fetched on demand by pattern completion."""

from __future__ import annotations


class EntriesMixin:
    """``Memory`` methods for index entries."""
