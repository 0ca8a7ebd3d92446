"""``Memory.check`` / ``hippo check``: verify every structure of a store, report damage, rebuild what is derived.

What is verified, per namespace:

* ``messages``: every message row (metadata is a JSON object, times are times) and that a chunk or a tail row holds
  its tokens;
* ``tail``: every unsealed token row against its checksum (tokens, seq, n_tokens) and its length;
* ``chunks``: every sealed chunk: its checksum (blob, row, the seq / n_tokens of the messages it covers), its
  deflate stream and serialized wavelet matrix, its token count;
* ``text``: the tokens of every message are in the vocabulary and decode to UTF-8 text;
* ``namespace_row``: next_seq lies past every message (a reused seq would collide);
* ``codes``: every embedding blob starts with a code of the configured width (then its int8 vector) and belongs to a
  message;
* ``snapshots``: the saved hierarchy and strength snapshots load (checksum, structure, settings);
* ``index``: the process's co-index holds exactly the store's messages and tokens.

And for the whole file: SQLite's ``integrity_check`` (b-trees, indexes, free list) and the write-ahead log (see
:mod:`hippo.store.wal`).

Messages, their tokens and metadata are the data; damage to them is reported (with message ids) and never
"repaired" by guessing. Everything else is derived from them and ``repair=True`` rebuilds it: SQLite indexes
(``REINDEX``), namespace rows, embedding codes (dropped, recomputed by the next load when an ``embed`` function is
configured), unit snapshots (dropped and rebuilt from the messages; a damaged strength snapshot loses its access
records, which nothing else holds) and the in-memory co-index.

A check holds the handle's write lock one step at a time (the file, then per namespace its rows, the comparison of
its co-index, the save of what was rebuilt), so the handle's other calls proceed between steps, and waits for a
follower rebuilt in the background between them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hippo.base.errors import CorruptData, HippoError, ReadOnlyError, StoreBusy
from hippo.engine import persist
from hippo.engine.hierarchy.state import fingerprint
from hippo.engine.namespace import Namespace
from hippo.index.coindex import NamespaceIndex
from hippo.store import snapshot, wal
from hippo.store.sqlite import SQLiteStore
from hippo.store.base import MessageRow
from hippo.text import tokenizer

DATA = ("messages", "tail", "chunks", "text")          # damage here is reported, never rebuilt
DERIVED = ("namespace_row", "codes", "snapshots", "index")
_CHECK_TRIES = 20  # reads of a namespace that other processes keep changing before its co-index check gives up


def _section(verified: Any, damaged: list | None = None) -> dict[str, Any]:
    return {"verified": verified, "damaged": list(damaged or []), "rebuilt": []}


def check(ns: Namespace, repair: bool = False) -> dict[str, Any]:
    """The report of :meth:`hippo.Memory.check` for the store behind ``ns`` (every namespace of it). The caller
    has validated ``repair`` and refused it on a read-only store."""
    rt = ns.rt
    store = rt.store
    vocab = tokenizer.vocab_size()

    def check_tokens(mid: int, tokens: np.ndarray) -> str | None:
        if tokens.size and int(tokens.max()) >= vocab:
            return f"message {mid}: token ids outside the vocabulary"
        try:
            tokenizer.decode(tokens)
        except CorruptData as exc:
            return f"message {mid}: {exc}"
        return None

    report: dict[str, Any] = {"path": store.path, "read_only": store.read_only,
                              "schema_version": getattr(store, "version", None), "repair": repair}
    # Each step takes the write lock on its own, so that the handle's other calls proceed between steps; waiting
    # for a follower rebuilt in the background happens between them (the rebuild reads under the lock).
    with rt.lock.write():
        problems = store.integrity_check()
        file_section = _section("integrity_check", problems)
        if problems and repair and all("index" in p for p in problems):
            store.reindex()  # index entries are derived from their tables
            if not store.integrity_check():
                file_section["rebuilt"].append("sqlite indexes")
        report["file"] = file_section
        # only a SQLite file has a write-ahead log of its own to read (a server keeps its WAL to itself)
        wal_report = wal.analyze(store.path).as_dict() if isinstance(store, SQLiteStore) and store.path is not None \
            else None
        report["wal"] = {"verified": wal_report, "damaged": [wal_report] if wal_report and wal_report["damaged"]
                         else [], "rebuilt": []}
    report["namespaces"] = {}
    try:
        names = store.all_namespaces()
    except CorruptData as exc:  # a namespace column damaged in a table itself: reported, not raised
        names = []
        file_section["damaged"].append(f"the namespaces could not be listed: {exc}")
        file_section["rebuilt"].clear()
    for name in names:
        try:
            report["namespaces"][name] = _check_namespace(ns.sibling(name), check_tokens, repair)
        except HippoError as exc:
            if isinstance(exc, ReadOnlyError):
                raise
            # rows so damaged that they cannot even be listed (a text column that is not UTF-8, say)
            report["namespaces"][name] = {"messages": _section(0, [{"problem": str(exc)}])}
    unrepaired = []
    if report["file"]["damaged"] and not report["file"]["rebuilt"]:
        unrepaired.append("file")
    if report["wal"]["damaged"]:
        unrepaired.append("wal")
    for name, sections in report["namespaces"].items():
        for part, sec in sections.items():
            if sec["damaged"] and not sec["rebuilt"]:
                unrepaired.append(f"{name}/{part}")
    report["damaged"] = unrepaired
    report["ok"] = not unrepaired
    return report


def _check_namespace(view: Namespace, check_tokens, repair: bool) -> dict[str, Any]:
    rt = view.rt
    name = view.name
    with rt.lock.write():  # the rows verified and their derived rows repaired in one step
        out, dropped = _check_rows(view, check_tokens, repair)
    if dropped:
        rt.drop(name)  # forget state loaded from them (its background rebuilds read under the lock: not held here)
    return _check_index(view, out, repair)


def _check_rows(view: Namespace, check_tokens, repair: bool) -> tuple[dict[str, Any], bool]:
    """The sections of one namespace's stored rows and snapshots, repaired where derived; and whether damaged
    snapshots were dropped. Caller holds the write lock."""
    rt = view.rt
    store = rt.store
    name = view.name
    code_bytes = rt.config.embed_bits // 8
    v = store.verify_namespace(name, check_tokens, code_bytes)
    out = {part: {"verified": v[part]["verified"], "damaged": v[part]["damaged"], "rebuilt": []}
           for part in ("messages", "tail", "chunks", "text", "namespace_row", "codes")}
    if repair and out["namespace_row"]["damaged"]:
        store.repair_namespace_row(name, v["max_seq"])
        out["namespace_row"]["rebuilt"].append(f"next_seq set past seq {v['max_seq']}")
    if repair and out["codes"]["damaged"]:
        store.drop_codes(name, [d["id"] for d in out["codes"]["damaged"]])
        out["codes"]["rebuilt"].append(f"{len(out['codes']['damaged'])} code(s) dropped"
                                       + (", recomputed on the next load" if rt.embed is not None else ""))

    snaps = _section([])
    hcfg = rt.config.hierarchy
    for kind in (*persist.KINDS, *persist.LEGACY):
        blob = store.get_units(name, kind)
        if blob is None:
            continue
        snaps["verified"].append(kind)
        try:
            meta, _ = snapshot.load(blob)  # the container's checksum and structure
            if kind in persist.LEGACY:
                if kind == "hierarchy" and hcfg.enabled and meta.get("fingerprint") != fingerprint(hcfg):
                    # not damage: built with other settings, so the next load rebuilds it anyway
                    snaps.setdefault("stale", []).append(kind)
            elif meta.get("format") != persist.FORMAT or meta.get("kind") != kind:
                snaps.setdefault("stale", []).append(kind)  # another format: the next load rebuilds it
        except (CorruptData, KeyError, ValueError, TypeError, AttributeError) as exc:
            snaps["damaged"].append({"snapshot": kind, "problem": str(exc)})
    out["snapshots"] = snaps
    dropped = bool(repair and snaps["damaged"])
    if dropped:
        for d in snaps["damaged"]:
            store.drop_units(name, d["snapshot"])
        snaps["rebuilt"].append("damaged snapshot(s) dropped; rebuilt from the messages")
    return out, dropped


def _check_index(view: Namespace, out: dict[str, Any], repair: bool) -> dict[str, Any]:
    """The co-index of one namespace compared with its rows (rebuilt with ``repair``), and its derived state saved
    again when repaired. Takes the write lock for what it changes; waits for background rebuilds without it."""
    rt = view.rt
    store = rt.store
    name = view.name
    out["index"] = _section(0)
    if any(out[part]["damaged"] for part in DATA):
        out["index"]["damaged"].append({"problem": "not rebuilt: the namespace holds damaged messages"})
        return out
    if repair or out["namespace_row"]["rebuilt"] or out["codes"]["rebuilt"]:
        rt.drop(name)
    try:
        # The rows and the fingerprint are read in one snapshot, and a co-index is compared with them only when it
        # reflects that very fingerprint: other processes may write while this runs, and rows read a moment before
        # (or after) the co-index caught up would differ from it without anything being damaged.
        # Both comparisons hold the write lock: the handle's own writes would change the co-index under them.
        rows, fp = _rows_at(store, name)
        cached = rt.state(name)
        with rt.lock.write():
            drift = _drift(cached.index, rows) if cached.index is not None and cached.seen == fp else None
        if drift:
            out["index"]["damaged"].append({"problem": drift})
            rt.drop(name)
        for tries in range(_CHECK_TRIES):
            state = view.state()
            with rt.lock.write():
                # the co-index at the rows' very fingerprint, or, once other processes kept appending through half
                # the tries, one grown from it: their appends committed after the rows were read are at its end
                if state.seen == fp or (tries >= _CHECK_TRIES // 2 and _grown_from(state.seen, fp)):
                    out["index"]["verified"] = len(rows)
                    drift = _drift(state.index, rows, prefix=state.seen != fp)
                    break
            rows, fp = _rows_at(store, name)
        else:
            raise StoreBusy(f"namespace {name!r} changed during each of {_CHECK_TRIES} reads: its co-index could not "
                            "be compared with the store; check again when fewer writers are busy")
        if drift:
            raise CorruptData(f"a freshly built co-index disagrees with the store: {drift}")
    except HippoError as exc:
        out["index"]["damaged"].append({"problem": str(exc)})
        return out
    if out["index"]["damaged"] or repair:
        out["index"]["rebuilt"].append("co-index rebuilt from the store")
    if repair and state.writable:
        if state.lifecycle_active:
            state.life()  # loaded from a sound snapshot, or rebuilt from the messages (in the background)
        with rt.lock.write():
            state.save_derived(force=True)
    return out


def _rows_at(store, name: str) -> tuple[list[MessageRow], Any]:
    """Every row of namespace ``name`` and the store's fingerprint of it, read in one snapshot."""
    return store.read_consistently(lambda: (store.load(name), store.state(name)))


def _grown_from(seen: Any, fp: Any) -> bool:
    """Whether a co-index that reflects fingerprint ``seen`` holds the rows read at fingerprint ``fp`` as its first
    rows: the same fingerprint, or one the namespace reached from it by appends and metadata updates only (a deletion
    moves the generation; an update changes no tokens). A namespace another process appends to without a pause is
    then checked all the same, where waiting for a co-index at the very fingerprint of the rows never ended."""
    return seen == fp or (seen.generation == fp.generation and seen.next_seq >= fp.next_seq
                          and seen.version >= fp.version)


def _drift(idx: NamespaceIndex, rows: list[MessageRow], prefix: bool = False) -> str | None:
    """Where a co-index disagrees with the rows loaded from the store, or None. ``prefix``: the co-index may hold
    messages appended after the rows were read, after them."""
    if (len(idx) < len(rows)) if prefix else (len(idx) != len(rows)):
        return f"the co-index holds {len(idx)} messages, the store {len(rows)}"
    ids = idx.ids.view.tolist()
    for k, r in enumerate(rows):
        if ids[k] != r.id:
            return f"message {r.id} is at another position in the co-index"
        if not np.array_equal(idx.tokens_of(k), r.tokens):
            return f"the co-index holds other tokens for message {r.id}"
    return None
