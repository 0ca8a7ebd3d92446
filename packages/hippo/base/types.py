"""Plain data types returned by :class:`hippo.Memory`. They carry no behaviour beyond rendering."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class MemoryItem:
    """One stored message, reconstructed losslessly from the Content DWM."""

    id: int
    text: str
    speaker: str | None = None
    role: str = "user"
    timestamp: datetime | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    namespace: str = "default"
    seq: int = 0
    n_tokens: int = 0
    created_at: datetime | None = None


@dataclass(frozen=True)
class Hit(MemoryItem):
    """A ranked search result: a message plus its fused score and per-channel evidence."""

    score: float = 0.0
    channels: dict[str, float] = field(default_factory=dict)
    level: str = "message"
    event_time: datetime | None = None   # when the reported event happened (resolved from the text or given)
    superseded_by: int | None = None     # id of a newer message that updates this one
    surprise: float = 0.0                # share of new fact fingerprints (seed 002 stage 4), in [0, 1]
    salience: float = 0.0                # rule-based salience (seed 002 stage 1), in [0, 1]


@dataclass
class Recall:
    """A prompt-ready context built under a token budget.

    ``text`` is at most ``budget_tokens`` cl100k tokens; ``messages`` lists the raw messages included verbatim,
    in the order they appear in ``text``; ``units`` lists the higher-level units (episodes, semantics, themes)
    the included messages belong to (top-down: that guided their choice), each a dict with ``id``, ``level``,
    ``text`` and ``message_ids``; their texts are no part of ``text`` (``hippo.fitting_units`` gives those that fit
    in what it leaves of the budget). A text is included once: where a
    message stands for its copies (the same text in the same voice), ``repeats`` maps its id to how many times the
    text was written, as its line's note says.
    """

    query: str
    text: str
    tokens: int
    budget_tokens: int
    messages: list[MemoryItem] = field(default_factory=list)
    units: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    trace: list[dict[str, Any]] = field(default_factory=list)  # agentic recall: one entry per tool call / event
    repeats: dict[int, int] = field(default_factory=dict)      # message id -> times its text was written (> 1)

    def __str__(self) -> str:
        return self.text
