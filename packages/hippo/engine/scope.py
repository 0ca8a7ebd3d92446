"""One question, analysed once: its search terms (offline, or from the configured LLM), its time scope
(``since`` / ``until`` / ``as_of`` filters) and its temporal intent. Every stage of a search or recall reads the
same :class:`Ask`; nothing about a call travels in globals."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from hippo.base.errors import InvalidInput, LLMError
from hippo.base.timeutil import to_epoch, utc_offset
from hippo.engine import llm as llm_mod
from hippo.engine.state import NamespaceState
from hippo.text import lexicon, timeexpr
from hippo.text.query import Query, analyze, respelled

log = logging.getLogger("hippo.engine")

_KEYWORD_CACHE = 256


@dataclass(frozen=True)
class Scope:
    """The time scope of one call: event-time filters, the bi-temporal ``as_of``, when the question is asked
    (``asked``: epoch seconds and the asker's offset from UTC, None for when the latest message was said), and
    whether the question asks for an order (context laid out by event time) or for a current value."""

    since: float | None = None
    until: float | None = None
    as_of: float | None = None
    ordering: bool = False
    current: bool = False
    asked: tuple[float, float | None] | None = None

    @property
    def filters(self) -> bool:
        return self.since is not None or self.until is not None or self.as_of is not None


@dataclass(frozen=True)
class Ask:
    """A question as every stage of the engine sees it: its text, its search terms, its time scope and, with a
    user embedding, its vector (one call to the user's model per question)."""

    text: str
    terms: Query
    scope: Scope
    vector: np.ndarray | None = None


def scope_of(config: Any, query: str, since: Any = None, until: Any = None, as_of: Any = None,
             asked_at: Any = None) -> Scope:
    """Validate the time bounds and the time the question is asked (datetime, epoch seconds or ISO-8601; the
    offset from UTC ``asked_at`` is given with is the asker's calendar) and read the query's temporal intent."""
    bounds = {}
    for name, value in (("since", since), ("until", until), ("as_of", as_of), ("asked_at", asked_at)):
        bounds[name] = to_epoch(value, name, min_year=config.timestamp_min_year, max_year=config.timestamp_max_year)
    if bounds["since"] is not None and bounds["until"] is not None and bounds["since"] >= bounds["until"]:
        raise InvalidInput(f"since ({since!r}) must be earlier than until ({until!r})")
    qt = timeexpr.analyze_query(query)
    ordering = config.temporal.enabled and config.temporal.chronological and qt.ordering
    asked = None if bounds["asked_at"] is None else (bounds["asked_at"], utc_offset(asked_at))
    return Scope(bounds["since"], bounds["until"], bounds["as_of"], ordering, qt.current, asked)


def ask(state: NamespaceState, llm: Any, query: str, scope: Scope, vector: np.ndarray | None = None) -> Ask:
    """The analysed question: keywords from the LLM when one is configured (cached per namespace; an LLM
    failure falls back to the offline extractor), else offline; the query's embedding when the store has one:
    ``vector`` when the caller embedded the question itself (the text to embed may differ from the words to
    search, e.g. a hypothetical answer), else the store's query embedding of ``query``."""
    embed_query = state.host.embed_query
    codes = state.codes
    if vector is not None and codes is not None and codes.dims and vector.size not in codes.dims:
        # another model's vector: its SimHash code and cosines would rank by noise
        raise InvalidInput(f"query_embedding has {vector.size} dimensions; the stored embeddings have "
                           f"{sorted(codes.dims)}")
    if vector is None and embed_query is not None:
        mat = np.asarray(embed_query([query]), dtype=np.float32)
        if mat.ndim != 2 or mat.shape[0] != 1 or mat.shape[1] == 0 or not np.isfinite(mat).all():
            raise LLMError(f"embed returned shape {mat.shape} or non-finite values for the query")
        vector = mat[0]
    return Ask(query, analyze(query, _llm_keywords(state, llm, query)), scope, vector)


def spelled(indexes: list[Any], ask: Ask) -> Ask:
    """``ask`` with each of its content words that none of ``indexes`` holds read as the word it is a slip of
    (:func:`hippo.text.lexicon.corrections`: "pride fesetival" -> "festival", "Tennesee" -> "Tennessee"), the one
    they hold most often (ties: the first in alphabetical order), when they hold one; ``ask`` itself when no word
    changes. A question is typed too: a word no message holds finds nothing, and the word it misspells also finds
    its chat forms and relatives ("fest"). Off with ``config.retrieval.misspellings``. Caller holds the read lock."""
    q = ask.terms
    fixes: dict[str, str] = {}
    for w, pat in zip(q.keywords[: len(q.keywords) - q.supporting], q.patterns):
        options = lexicon.corrections(w)
        if not options or any(idx.term_stats(pat)[1] > 0 for idx in indexes):
            continue
        held = sorted((-sum(idx.term_stats(lexicon.pattern(c))[1] for idx in indexes), c) for c in options)
        if held[0][0] < 0:
            fixes[w] = held[0][1]
    return dataclasses.replace(ask, terms=respelled(q, fixes)) if fixes else ask


def respell(state: NamespaceState, ask: Ask) -> Ask:
    """:func:`spelled` against ``state``'s namespace, with ``config.retrieval.misspellings`` on (else ``ask``).
    Caller holds the read lock."""
    return spelled([state.index], ask) if state.config.retrieval.misspellings else ask


def _llm_keywords(state: NamespaceState, llm: Any, query: str) -> list[str] | None:
    if llm is None or not state.config.hierarchy.llm_keywords:
        return None
    cache = state.keyword_cache  # the keywords of the questions the LLM answered
    with state.keyword_lock:
        if query in cache:
            cache.move_to_end(query)
            return cache[query]
    try:
        words = llm_mod.as_llm(llm).keywords(query)
    except LLMError as exc:
        # the offline keywords for this call only: kept, they would answer the question so for as long as the
        # namespace stays loaded, after the endpoint is back, where a process that never saw the failure asks it
        log.warning("LLM keyword extraction failed, using the offline extractor: %s", exc)
        state.llm_fallbacks += 1
        return None
    with state.keyword_lock:
        cache[query] = words
        while len(cache) > _KEYWORD_CACHE:
            cache.popitem(last=False)
    return words
