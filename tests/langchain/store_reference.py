"""The reference a ``HippoStore`` is compared with: LangGraph's ``InMemoryStore``
(``langgraph/store/memory/__init__.py``), plus the two things it does not have, modelled here independently:

* TTL: ``InMemoryStore.supports_ttl`` is False. Expiry times are kept beside it (set by puts, pushed back by reads
  with ``refresh_ttl``, as ``BaseStore`` documents) and an item is deleted from it once the clock reaches them.
* Range filters between two strings: ``InMemoryStore`` raises ``ValueError`` (``float("2024-01-01")``); hippo
  compares the strings (docs/compatibility.md). Such clauses are taken out of the filter given to the reference
  and applied here with Python's own string comparison.

and with the normalizations docs/compatibility.md lists: namespaces that hold no item are not listed (the
reference's ``defaultdict`` keeps every namespace a get or a delete touched), and searches without a query list
namespaces in sorted order (the reference in first-use order).
"""

from __future__ import annotations

import math
from typing import Any

from langgraph.store.base import GetOp, ListNamespacesOp, SearchItem, SearchOp
from langgraph.store.memory import InMemoryStore

from langchain_hippo import store as store_module
from tests.concepts import CONCEPTS, DIMS, embed_texts


BIG = 10_000

class Clock:
    """The store module's clock, moved by hand."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start
        self._saved = None

    def __call__(self) -> float:
        return self.now

    def install(self) -> "Clock":
        self._saved = store_module._now
        store_module._now = self
        return self

    def restore(self) -> None:
        if self._saved is not None:
            store_module._now = self._saved
            self._saved = None


def _string_range(cond: Any) -> bool:
    return (isinstance(cond, dict) and any(op in ("$gt", "$gte", "$lt", "$lte") for op in cond)
            and all(isinstance(v, str) for op, v in cond.items() if op in ("$gt", "$gte", "$lt", "$lte")))


def _string_match(value: Any, cond: dict) -> bool:
    if not isinstance(value, str):
        return False
    checks = {"$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b,
              "$lte": lambda a, b: a <= b, "$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b}
    return all(checks[op](value, arg) for op, arg in cond.items())


class Reference:
    """``InMemoryStore`` with TTL and string ranges modelled; results normalized as described above."""

    def __init__(self, *, index: dict | None = None, ttl: dict | None = None, clock: Clock | None = None) -> None:
        self.store = InMemoryStore(index=index)
        self.ttl_config = ttl
        self.clock = clock
        self.expiry: dict[tuple[tuple[str, ...], str], float] = {}
        self.ttl: dict[tuple[tuple[str, ...], str], float] = {}

    # -- TTL model ---------------------------------------------------------------------------------------

    def _expire(self) -> None:
        if self.clock is None:
            return
        for ident, when in list(self.expiry.items()):
            if when <= self.clock.now:
                ns, key = ident
                self.store._data[ns].pop(key, None)
                self.store._vectors[ns].pop(key, None)
                del self.expiry[ident]
                del self.ttl[ident]

    def _refresh(self, items: list) -> None:
        for item in items:
            ident = (tuple(item.namespace), item.key)
            if ident in self.ttl:
                self.expiry[ident] = self.clock.now + self.ttl[ident] * 60.0

    def _drop_empty(self) -> None:
        for ns in [ns for ns, items in self.store._data.items() if not items]:
            del self.store._data[ns]

    # -- operations ----------------------------------------------------------------------------------------

    def _search(self, op: SearchOp) -> list:
        flt = dict(op.filter or {})
        strings = {k: v for k, v in flt.items() if _string_range(v)}
        rest = {k: v for k, v in flt.items() if k not in strings}
        full = self.store.batch([op._replace(filter=rest or None, limit=BIG, offset=0)])[0]
        full = [i for i in full if all(_string_match(i.value.get(k), c) for k, c in strings.items())]
        if not op.query:
            full = sorted(full, key=lambda item: item.namespace)  # stable: key order within a namespace stays
        return full

    def batch(self, ops: list) -> list:
        """Results of ``ops`` run as one batch (reads see the state before it, then the puts, last one wins)."""
        self._expire()
        results: list = []
        puts = []
        for op in ops:
            if isinstance(op, SearchOp):
                full = self._search(op)
                page = full[op.offset: op.offset + op.limit]
                results.append(("search", full, page))
                if op.refresh_ttl and self.clock is not None:
                    self._refresh(page)
            elif isinstance(op, GetOp):
                item = self.store._data.get(op.namespace, {}).get(op.key)
                results.append(item)
                if item is not None and op.refresh_ttl and self.clock is not None:
                    self._refresh([item])
            elif isinstance(op, ListNamespacesOp):
                self._drop_empty()
                results.append(self.store.batch([op])[0])
            else:
                results.append(None)
                puts.append(op)
        if puts:
            self._apply_puts(puts)
            last = {(tuple(p.namespace), p.key): p for p in puts}
            for ident, p in last.items():
                self.expiry.pop(ident, None)
                self.ttl.pop(ident, None)
                if p.value is not None and p.ttl is not None:
                    self.ttl[ident] = float(p.ttl)
                    self.expiry[ident] = self.clock.now + float(p.ttl) * 60.0
        self._drop_empty()
        return results

    def _apply_puts(self, puts: list) -> None:
        """``InMemoryStore.batch``'s put phase (dedupe, embed, apply), with one fix: it embeds each distinct
        text once but pairs the vectors with every (item, path) holding a text, so two fields (or two puts of a
        batch) with the same text make it raise ``ValueError: Number of embeddings ... does not match``. Here
        each vector goes to every (item, path) holding its text."""
        put_ops = {}
        for p in puts:
            put_ops[(p.namespace, p.key)] = p
        to_embed = self.store._extract_texts(put_ops)
        if to_embed and self.store.embeddings:
            vectors = self.store.embeddings.embed_documents(list(to_embed))
            for vector, places in zip(vectors, to_embed.values(), strict=True):
                for ns, key, path in places:
                    self.store._vectors[ns][key][path] = vector
        self.store._apply_put_ops(put_ops)

    def everything(self) -> list:
        self._expire()
        return self._search(SearchOp((), limit=BIG))


def view(result: Any) -> Any:
    """What two stores must agree on: namespace, key, value (times and scores are checked separately)."""
    if result is None:
        return None
    if isinstance(result, list):
        return [view(r) for r in result]
    if isinstance(result, tuple):
        return result
    return (tuple(result.namespace), result.key, result.value)


def check_search(got_page: list, got_full: list, want_full: list, op: SearchOp) -> None:
    """A search's page against the reference's full answer.

    Without a query the order is the reference's (namespace sorted, then key order). With one, the set of
    items is the reference's (every item is returned, as ``InMemoryStore`` returns every item), and hippo's
    order is its own ranking: scored items first with non-increasing scores, then unscored ones; the page is
    the matching slice of hippo's full answer."""
    if not op.query:
        assert view(got_page) == view(want_full[op.offset: op.offset + op.limit]), op
        return
    assert sorted(map(view, got_full)) == sorted(map(view, want_full)), op
    assert view(got_page) == view(got_full[op.offset: op.offset + op.limit]), op
    scores = [i.score for i in got_full]
    assert all(isinstance(i, SearchItem) for i in got_full)
    scored = [s for s in scores if s is not None]
    assert scores[: len(scored)] == scored, "scored items come first"
    assert all(isinstance(s, float) and math.isfinite(s) for s in scored)
    assert scored == sorted(scored, reverse=True)


__all__ = ["Reference", "Clock", "embed_texts", "view", "check_search", "BIG", "DIMS", "CONCEPTS"]

