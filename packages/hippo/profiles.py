"""Speaker profiles (seed 002 §4.1 stage 5, L0 speaker engram)."""

from __future__ import annotations


class ProfilesMixin:
    """``Memory`` methods for speaker profiles."""
