"""``Memory.check`` / ``hippo check``: verify every structure of a store, report damage, rebuild what is derived.

What is verified, per namespace:

* ``messages``: every message row (metadata is a JSON object, times are times) and that a chunk or a tail row holds
  its tokens;
* ``tail``: every unsealed token row against its checksum (tokens, seq, n_tokens) and its length;
* ``chunks``: every sealed chunk: its checksum (blob, row, the seq / n_tokens of the messages it covers), its
  deflate stream and serialized wavelet matrix, its token count;
* ``text``: the tokens of every message are in the vocabulary and decode to UTF-8 text;
* ``namespace_row``: next_seq lies past every message (a reused seq would collide);
* ``codes``: every embedding code has the configured width and belongs to a message;
* ``snapshots``: the saved hierarchy and strength snapshots load (checksum, structure, settings);
* ``index``: the process's co-index holds exactly the store's messages and tokens.

And for the whole file: SQLite's ``integrity_check`` (b-trees, indexes, free list) and the write-ahead log (see
:mod:`hippo.store.wal`).

Messages, their tokens and metadata are the data; damage to them is reported (with message ids) and never
"repaired" by guessing. Everything else is derived from them and ``repair=True`` rebuilds it: SQLite indexes
(``REINDEX``), namespace rows, embedding codes (dropped, recomputed by the next load when an ``embed`` function is
configured), unit snapshots (dropped and rebuilt from the messages; a damaged strength snapshot loses its access
records, which nothing else holds) and the in-memory co-index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hippo import tokenizer
from hippo.errors import CorruptData, HippoError, ReadOnlyError
from hippo.hierarchy import lifecycle, snapshot
from hippo.hierarchy.state import fingerprint
from hippo.store import wal

if TYPE_CHECKING:  # pragma: no cover
    from hippo.memory import Memory

DATA = ("messages", "tail", "chunks", "text")          # damage here is reported, never rebuilt
DERIVED = ("namespace_row", "codes", "snapshots", "index")


def _section(verified: Any, damaged: list | None = None) -> dict[str, Any]:
    return {"verified": verified, "damaged": list(damaged or []), "rebuilt": []}


def check(mem: "Memory", repair: bool = False) -> dict[str, Any]:
    if not isinstance(repair, bool):
        from hippo.errors import InvalidInput

        raise InvalidInput(f"repair must be a bool, got {type(repair).__name__}")
    mem._live()
    if repair:
        mem._writable("check(repair=True)")
    s = mem._s
    store = s.store
    vocab = tokenizer.vocab_size()

    def check_tokens(mid: int, tokens: np.ndarray) -> str | None:
        if tokens.size and int(tokens.max()) >= vocab:
            return f"message {mid}: token ids outside the vocabulary"
        try:
            tokenizer.decode(tokens)
        except CorruptData as exc:
            return f"message {mid}: {exc}"
        return None

    report: dict[str, Any] = {"path": store.path, "read_only": store.read_only, "schema_version": store.version,
                              "repair": repair}
    with s.lock.write():
        problems = store.integrity_check()
        file_section = _section("sqlite integrity_check", problems)
        if problems and repair and all("index" in p for p in problems):
            store.reindex()  # index entries are derived from their tables
            if not store.integrity_check():
                file_section["rebuilt"].append("sqlite indexes")
        report["file"] = file_section
        wal_report = wal.analyze(store.path).as_dict() if store.path is not None else None
        report["wal"] = {"verified": wal_report, "damaged": [wal_report] if wal_report and wal_report["damaged"]
                         else [], "rebuilt": []}
        report["namespaces"] = {}
        for ns in store.all_namespaces():
            try:
                report["namespaces"][ns] = _check_namespace(mem, ns, check_tokens, repair)
            except HippoError as exc:
                if isinstance(exc, ReadOnlyError):
                    raise
                # rows so damaged that they cannot even be listed (a text column that is not UTF-8, say)
                report["namespaces"][ns] = {"messages": _section(0, [{"problem": str(exc)}])}
    unrepaired = []
    if report["file"]["damaged"] and not report["file"]["rebuilt"]:
        unrepaired.append("file")
    if report["wal"]["damaged"]:
        unrepaired.append("wal")
    for ns, sections in report["namespaces"].items():
        for name, sec in sections.items():
            if sec["damaged"] and not sec["rebuilt"]:
                unrepaired.append(f"{ns}/{name}")
    report["damaged"] = unrepaired
    report["ok"] = not unrepaired
    return report


def _check_namespace(mem: "Memory", ns: str, check_tokens, repair: bool) -> dict[str, Any]:
    s = mem._s
    store = s.store
    code_bytes = s.config.embed_bits // 8
    v = store.verify_namespace(ns, s.decode_chunk, check_tokens, code_bytes)
    out = {name: {"verified": v[name]["verified"], "damaged": v[name]["damaged"], "rebuilt": []}
           for name in ("messages", "tail", "chunks", "text", "namespace_row", "codes")}
    if repair and out["namespace_row"]["damaged"]:
        store.repair_namespace_row(ns, v["max_seq"])
        out["namespace_row"]["rebuilt"].append(f"next_seq set past seq {v['max_seq']}")
    if repair and out["codes"]["damaged"]:
        store.drop_codes(ns, [d["id"] for d in out["codes"]["damaged"]])
        s.codes.pop(ns, None)
        out["codes"]["rebuilt"].append(f"{len(out['codes']['damaged'])} code(s) dropped"
                                       + (", recomputed on the next load" if s.embed is not None else ""))

    snaps = _section([])
    hcfg = s.config.hierarchy
    for kind in ("decay", "hierarchy"):
        blob = store.get_units(ns, kind)
        if blob is None:
            continue
        snaps["verified"].append(kind)
        try:
            meta, _ = snapshot.load(blob)
            if kind == "hierarchy" and hcfg.enabled and meta.get("fingerprint") != fingerprint(hcfg):
                # not damage: built with other settings, so the next load rebuilds it anyway
                snaps.setdefault("stale", []).append(kind)
        except (CorruptData, KeyError, ValueError, TypeError) as exc:
            snaps["damaged"].append({"snapshot": kind, "problem": str(exc)})
    out["snapshots"] = snaps
    if repair and snaps["damaged"]:
        for d in snaps["damaged"]:
            store.drop_units(ns, d["snapshot"])
        lifecycle.on_drop_namespace(s, ns)  # forget state loaded from them; rebuilt below from the messages
        snaps["rebuilt"].append("damaged snapshot(s) dropped; rebuilt from the messages")

    data_ok = not any(out[name]["damaged"] for name in DATA)
    out["index"] = _section(0)
    if not data_ok:
        out["index"]["damaged"].append({"problem": "not rebuilt: the namespace holds damaged messages"})
        return out
    view = mem.using(ns)
    if repair:
        s.indexes.pop(ns, None)
        s.codes.pop(ns, None)
    cached = s.indexes.get(ns)
    try:
        rows = store.load(ns, s.decode_chunk)
        if cached is not None and cached.state == store.state(ns):
            drift = _drift(cached, rows)
            if drift:
                out["index"]["damaged"].append({"problem": drift})
                s.indexes.pop(ns, None)
        idx = view._index()
        out["index"]["verified"] = len(idx)
        drift = _drift(idx, rows)
        if drift:
            raise CorruptData(f"a freshly built co-index disagrees with the store: {drift}")
    except HippoError as exc:
        out["index"]["damaged"].append({"problem": str(exc)})
        return out
    if out["index"]["damaged"]:
        out["index"]["rebuilt"].append("co-index rebuilt from the store")
    if repair:
        out["index"]["rebuilt"].append("co-index rebuilt from the store")
        if lifecycle._active(view):
            life = lifecycle.ensure(view)
            if life.persistable:
                life.save(view)
    return out


def _drift(idx, rows) -> str | None:
    """Where a co-index disagrees with the rows loaded from the store, or None."""
    if len(idx) != len(rows):
        return f"the co-index holds {len(idx)} messages, the store {len(rows)}"
    ids = idx.ids.view.tolist()
    for k, r in enumerate(rows):
        if ids[k] != r.id:
            return f"message {r.id} is at another position in the co-index"
        if not np.array_equal(idx.tokens_of(k), r.tokens):
            return f"the co-index holds other tokens for message {r.id}"
    return None
