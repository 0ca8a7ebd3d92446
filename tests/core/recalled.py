"""A recall over a namespace where one message is written differently from the question's word (a British spelling,
a chat's short form), with the lexicon's table of such forms in place or emptied: the reference for tests that a
table of forms is what finds the message."""

from __future__ import annotations

from typing import Any

import pytest

from hippo import Memory
from hippo.text import lexicon


def recalled(monkeypatch: pytest.MonkeyPatch | None, table: Any, target: str, question: str) -> list[str]:
    """The texts ``recall(question, budget_tokens=60)`` returns over sixty unrelated messages of Ann's with
    ``target`` among them; with ``monkeypatch``, ``table.variants`` gives no forms."""
    if monkeypatch is not None:
        monkeypatch.setattr(table, "variants", lambda form: ())
    lexicon.pattern.cache_clear()
    mem = Memory(None, namespace="forms")
    try:
        for k in range(30):
            mem.add(f"Ann went to the shop on day {k} and bought bread.", role="user", speaker="Ann")
        mem.add(target, role="user", speaker="Ann")
        for k in range(30):
            mem.add(f"Ann walked the dog in the park on day {k}.", role="user", speaker="Ann")
        return [m.text for m in mem.recall(question, budget_tokens=60).messages]
    finally:
        mem.close()
        lexicon.pattern.cache_clear()
