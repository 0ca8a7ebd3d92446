"""Helpers for the tests of a word's other forms (British spellings, a chat's short forms): whether a query word's
pattern holds another form's tokens, the lexical channel's scores over a few messages, and a recall with the
lexicon's table of forms in place or emptied (the reference that the table is what finds the message)."""

from __future__ import annotations

from typing import Any

import pytest

from hippo import Memory
from hippo.index import channels
from hippo.text import lexicon, tokenizer
from hippo.text.query import analyze


def pattern_holds(word: str, other: str) -> bool:
    """Whether the pattern of the query word ``word`` matches ``other`` written after a space."""
    p = lexicon.pattern(word)
    ids = tuple(tokenizer.encoding().encode(" " + other))
    return (ids[0] if len(ids) == 1 else ids) in set(p.singles.tolist()) | set(p.phrases)


def lexical(texts: list[str], query: str) -> dict[int, float]:
    """The lexical channel's BM25 score of each of ``texts`` (Ann's messages) for ``query``, by position."""
    mem = Memory(None, namespace="forms")
    try:
        mem.add_many({"text": t, "speaker": "Ann"} for t in texts)
        got = channels.lexical(mem.engine.state().index, analyze(query), mem.config)
        return dict(zip(got.rows.tolist(), got.scores.tolist()))
    finally:
        mem.close()


def recalled(monkeypatch: pytest.MonkeyPatch | None, table: Any, target: str, question: str) -> list[str]:
    """The texts ``recall(question, budget_tokens=60)`` returns over sixty unrelated messages of Ann's with
    ``target`` among them; with ``monkeypatch``, ``table.variants`` gives no forms."""
    if monkeypatch is not None:
        monkeypatch.setattr(table, "variants", lambda form: ())
    lexicon.pattern.cache_clear()
    lexicon._kept_forms.cache_clear()  # the forms of the last words asked, made with the table as it was
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
        lexicon._kept_forms.cache_clear()
