"""Agentic recall (seed 003 §3.4): an OpenAI-compatible model drives hippo's memory tools."""

from __future__ import annotations


class AgenticMixin:
    """``Memory`` methods for LLM-driven recall."""
