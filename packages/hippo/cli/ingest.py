"""Moving messages in and out: ``ingest`` (JSONL, OpenAI messages, chat app exports, BEAM, LoCoMo), ``import`` and
``export``.

``ingest`` and ``import`` are atomic per file. Every record of the file is read and validated (by the same checks
``Memory.add`` applies) before anything is written, so a bad line anywhere stores nothing and the error names the
file, the line and the field. A file of the formats read as streams (:func:`hippo.cli.sources.open_source`) is not
held: the check keeps only how many records there are, and the writes read the file again, refusing a file that
changed since its check. The writes then go in batches (so the progress bar moves); if one fails, or the user
interrupts, what this run already wrote is deleted again before the error is reported. A process killed between two
batches cannot undo anything, so a retry picks up where it stopped: when a namespace already ends with the first
``k * batch`` messages of the file (or all of them), those are not written again. A match shorter than
``RESUME_MIN`` messages (possible only with a tiny ``--batch``) is not trusted to be an earlier run: a namespace may
end with the file's first message by coincidence.

A record the namespace already holds is not written again either, each stored message standing for one record: a
chat exported again a month later, holding the old messages and the new, adds the new ones only, and a message the
file writes twice (an "ok" said twice in one minute) is kept twice. A chat app's message is stored with the digest of
its record as the export wrote it (:func:`hippo.cli.sources.source_digest`, ``metadata["source_digest"]``), and a
record whose digest the namespace holds is that message, however this version reads it. The others, and the messages
stored without a digest (by versions before it, or from JSONL), are matched as this version reads them: a message
with a time within the file's first and last (the same text, speaker, role, time, session and metadata), not one
whose digest the file has. Messages without a time are matched only by the resume above: two "ok" with no time, from
two files, are two messages.

A message an export names by an id (Telegram, Discord, Slack, Google Chat, ChatGPT, Claude.ai; Messenger by its
millisecond and words) is also stored with its identity
(:func:`hippo.cli.sources.source_id`, ``metadata["source_id"]``), which an edit keeps while its digest changes: a
stored message of a record's identity that has neither a digest nor the words of any of the file's records of that
identity is an earlier version of it, deleted in the transaction that stores the last of the file's records
(:func:`_add`), so a chat exported again after an edit holds the edited message once, and never neither version. The
new version is written with the metadata keys a user set on the earlier ones (:func:`_carried`). A stored message of
a record's identity that says what the record says is that record, with or without a time, though their digests
differ (a field the digest covers changed while the message did not): it counts as stored; one that says what it
says with other metadata (an edit of formatting alone) writes the file's metadata over the stored message's in place
(:func:`_refresh`), keeping its id and place and the keys a user set. A record not marked
edited is older than a stored version of its identity that is (an older export ingested after a newer one): it counts
as stored, replacing nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NamedTuple

from hippo import Config, HippoError, InvalidInput, NotFound, StoreError
from hippo.base.checks import check_namespace
from hippo.base.timeutil import with_utc_offset
from hippo.cli import progress
from hippo.cli._common import Aborted, add_store_args, messages, note_if_empty, open_store
from hippo.cli.sources import DIGEST_KEY, READ_KEYS, SOURCE_ID_KEY, Record, Source, open_source
from hippo.engine.prepare import prepare

__all__ = ["add_parsers", "cmd_export", "cmd_import", "cmd_ingest"]

RESUME_MIN = 20


@dataclass
class _Group:
    """The records of one target namespace: ``each()`` reads them, in the file's order, again for each pass."""

    namespace: str
    each: Callable[[], Iterator[Record]]
    n: int = 0                     # how many, once checked
    start: int = 0                 # records before this are already the namespace's last messages
    first: float | None = None     # the earliest and latest time of the records, once checked
    last: float | None = None
    held: int = 0                  # records after ``start`` with a time, skipped as messages the namespace holds
    outdated: tuple[int, ...] = ()  # stored messages an edited version of the file replaces, with its last batch
    carried: dict[str, dict[str, Any]] | None = None  # identity -> what a user set on its outdated versions
    # stored messages a record is, but for the metadata the file writes: (id, its metadata, the file's), once taken
    refreshed: list[tuple[int, dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    named: str | None = None       # with --split, the namespace named after it, when its records go to another
    found: bool = False            # ... where an earlier export stored the chat


def _key(text: str, speaker: Any, role: str, ts: float | None, session: Any, metadata: dict) -> tuple:
    # Timestamps round-trip through datetime at microsecond precision; a millisecond is far below any real gap. The
    # source digest and identity are no part of what a message says: a message stored without them is the same.
    if isinstance(metadata, dict) and (DIGEST_KEY in metadata or SOURCE_ID_KEY in metadata):
        metadata = {k: v for k, v in metadata.items() if k not in (DIGEST_KEY, SOURCE_ID_KEY)}
    return (text, speaker, role, None if ts is None else round(ts, 3), session,
            json.dumps(metadata, sort_keys=True, ensure_ascii=False))


def _stored_digest(metadata: Any) -> str | None:
    """The source digest a message's metadata carries, if any."""
    got = metadata.get(DIGEST_KEY) if isinstance(metadata, dict) else None
    return got if isinstance(got, str) else None


def _source_digest(rec: Record) -> str | None:
    """The record's digest as a chat app's export wrote it, or the one its metadata carries (a hippo export)."""
    return rec.digest if rec.digest is not None else _stored_digest(rec.item.get("metadata"))


def _stored_ident(metadata: Any) -> str | None:
    """The source identity a message's metadata carries, if any."""
    got = metadata.get(SOURCE_ID_KEY) if isinstance(metadata, dict) else None
    return got if isinstance(got, str) else None


def _source_ident(rec: Record) -> str | None:
    """The record's identity in a chat app's export (the same after an edit), or the one its metadata carries."""
    return rec.ident if rec.ident is not None else _stored_ident(rec.item.get("metadata"))


def _item(rec: Record) -> dict[str, Any]:
    """What ``add_many`` is given for a record: its item, with its digest and identity in its metadata."""
    if rec.digest is None:
        return rec.item
    metadata = rec.item.get("metadata")
    if isinstance(metadata, dict) and DIGEST_KEY in metadata:
        return rec.item
    extra = {DIGEST_KEY: rec.digest} if rec.ident is None else {DIGEST_KEY: rec.digest, SOURCE_ID_KEY: rec.ident}
    return {**rec.item, "metadata": {**(metadata if isinstance(metadata, dict) else {}), **extra}}


def _with_carried(item: dict[str, Any], rec: Record, carried: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
    """``item`` (:func:`_item`) with the metadata keys a user set on the earlier versions of its identity that it
    replaces (``carried``, by identity: :func:`_carried`) that its own metadata does not have."""
    user = carried.get(_source_ident(rec)) if carried else None
    if not user:
        return item
    metadata = item.get("metadata")
    return {**item, "metadata": {**user, **(metadata if isinstance(metadata, dict) else {})}}


def _checked(config: Config, source: Source, rec: Record) -> Any:
    """The record through the check add_many runs (hippo.engine.prepare), one record at a time so that a failure
    names its line."""
    try:
        return prepare(_item(rec), "message", config)
    except InvalidInput as exc:
        raise source.error(rec, str(exc)) from None
    except RecursionError:
        raise source.error(rec, "metadata is nested too deeply") from None


def _record_key(config: Config, source: Source, rec: Record) -> tuple:
    """A record as :func:`_key` compares it, after :func:`_checked`."""
    prepared = _checked(config, source, rec)
    return _key(rec.item["text"], prepared.speaker, prepared.role, prepared.ts, prepared.session_id,
                prepared.metadata)


def _validate(config: Config, source: Source, groups: list[_Group]) -> None:
    """Run every record through ``Memory``'s own input checks; the first failure names file, line and field. What
    they give is not kept, only how many records each group has: a file of millions of messages is not held (a
    resume reads the records it compares again)."""
    for g in groups:
        g.n = 0
        g.first = g.last = None
        for rec in g.each():
            ts = _checked(config, source, rec).ts
            g.n += 1
            if ts is not None:
                g.first = ts if g.first is None else min(g.first, ts)
                g.last = ts if g.last is None else max(g.last, ts)


def _resume_point(view, source: Source, g: _Group, batch: int) -> int:
    """How many leading records of the file the namespace already ends with: all of them, or a whole number of
    batches (what an earlier run killed between two batches left behind); 0 when it holds none of them. The file's
    records are read again, not held; the namespace's messages as an export reads them."""
    count = view.count()
    if count == 0:
        return 0
    n = g.n
    candidates = {m for m in range(batch, min(n, count) + 1, batch)} | ({n} if n <= count else set())
    candidates = {m for m in candidates if m >= min(n, RESUME_MIN)}
    if not candidates:
        return 0
    last = view.list(offset=count - 1)[-1]
    tail = _key(last.text, last.speaker, last.role, None if last.timestamp is None else last.timestamp.timestamp(),
                last.session_id, last.metadata)
    # a candidate m needs the file's record m - 1 to be the namespace's last message: one pass finds those
    ends = []
    for i, rec in enumerate(g.each(), 1):
        if i in candidates and _record_key(view.config, source, rec) == tail:
            ends.append(i)
    for m in sorted(ends, reverse=True):
        if _ends_with(view, source, g, count, m):
            return m
    return 0


def _ends_with(view, source: Source, g: _Group, count: int, m: int) -> bool:
    """Whether the namespace's last ``m`` messages (of ``count``) are the group's first ``m`` records."""
    records = g.each()
    stored = view.engine.records()
    try:
        for k, r in enumerate(stored):
            if k < count - m:
                continue
            rec = next(records, None)
            if rec is None or _key(r["text"], r["speaker"], r["role"], r["timestamp"], r["session_id"],
                                   r["metadata"]) != _record_key(view.config, source, rec):
                return False
            if k == count - 1:
                return True
        return False
    finally:
        stored.close()  # first: it holds the namespace's read lock, which closing the store waits for
        records.close()


def _digest(key: tuple) -> bytes:
    return hashlib.blake2b(repr(key).encode("utf-8", "surrogatepass"), digest_size=16).digest()


class _Held:
    """The namespace's messages that the group's records may repeat: the digests of those stored with a digest the
    file's records have, and, as digests of :func:`_key`, those stored with a time within the group's first and last
    time and no such digest; each counted."""

    def __init__(self) -> None:
        self.digests: Counter = Counter()
        self.keys: Counter = Counter()
        self.same: Counter = Counter()  # (identity, digest of _key): stored with a record's identity, saying what it says
        # (identity, digest of _key less the metadata) -> (id, metadata) of the stored messages of a record's identity
        # that say what it says, of other metadata
        self.refresh: dict[tuple[str, bytes], list[tuple[int, dict[str, Any]]]] = {}
        self.refreshed: list[tuple[int, dict[str, Any], dict[str, Any]]] = []  # (id, metadata, the file's), taken

    def __bool__(self) -> bool:
        return bool(self.digests) or bool(self.keys) or bool(self.same) or bool(self.refresh)

    def take(self, view, source: Source, rec: Record) -> bool:
        """Whether a stored message stands for ``rec``: its digest first, else its identity and what it says, else
        what it says; that one is used up."""
        digest = _source_digest(rec)
        if digest is not None and self.digests[digest] > 0:
            self.digests[digest] -= 1
            return True
        if not self.keys and not self.same and not self.refresh:
            return False
        key = _record_key(view.config, source, rec)
        d = _digest(key)
        ident = _source_ident(rec) if self.same or self.refresh else None
        if ident is not None and self.same[ident, d] > 0:
            self.same[ident, d] -= 1
            return True
        words = (ident, _digest(key[:5])) if self.refresh and ident is not None else None
        if words is not None and self.refresh.get(words):
            id_, metadata = self.refresh[words].pop()
            self.refreshed.append((id_, metadata, _refreshed(metadata, _checked(view.config, source, rec).metadata)))
            return True
        if key[3] is None:
            return False
        if self.keys[d] > 0:
            self.keys[d] -= 1
            return True
        return False


def _held(view, source: Source, g: _Group) -> _Held:
    """What the records after the group's first ``g.start`` may repeat (:class:`_Held`), less the messages the
    resume matched to those first ``g.start`` records."""
    held = _Held()
    g.outdated = ()
    if view.count() == 0:
        return held
    mine: set[str] = set()  # the digests of the file's records: a namespace's other messages are not held
    idents: set[str] = set()  # the identities of the file's messages (the same after an edit)
    records = g.each()
    try:
        for rec in records:
            digest = _source_digest(rec)
            if digest is not None:
                mine.add(digest)
                ident = _source_ident(rec)
                if ident is not None:
                    idents.add(ident)
    finally:
        records.close()
    if g.first is None and not mine:
        return held
    lo, hi = (None, None) if g.first is None else (round(g.first, 3), round(g.last, 3))
    earlier: dict[str, list[_Version]] = {}  # identity -> stored versions the file does not have
    stored = view.engine.records()
    try:
        for r in stored:
            digest = _stored_digest(r["metadata"])
            if digest is not None and digest in mine:
                held.digests[digest] += 1
                continue
            ident = _stored_ident(r["metadata"])
            ts = r["timestamp"]
            timed = ts is not None and lo is not None and lo <= round(ts, 3) <= hi
            of_file = digest is not None and ident is not None and ident in idents
            if not (timed or of_file):
                continue  # neither a record of the file's time nor of its identities: none of the file's records
            k = _key(r["text"], r["speaker"], r["role"], ts, r["session_id"], r["metadata"])
            key = _digest(k)
            if of_file:  # (what it says, ``k[:5]``, does not depend on the metadata)
                earlier.setdefault(ident, []).append(_Version(
                    r["id"], key, _edited(r["metadata"]), timed, _digest(k[:5]), r["metadata"]))
            if timed:
                held.keys[key] += 1
    finally:
        stored.close()
    del mine, idents
    if earlier:
        g.outdated, older, same, refresh = _outdated(view, source, g, earlier)
        for digest in older:  # a version before the one stored: held as that one
            held.digests[digest] += 1
        for ident, key, timed in same:  # held by its identity and what it says, whatever its time
            held.same[ident, key] += 1
            if timed:
                held.keys[key] -= 1
        for ident, v in refresh:  # held by its identity and what it says, its metadata the file's
            held.refresh.setdefault((ident, v.words), []).insert(0, (v.id, v.metadata))
            if v.timed:
                held.keys[v.key] -= 1
    if g.start and held:
        records = g.each()
        try:
            for i, rec in enumerate(records):
                if i >= g.start:
                    break
                held.take(view, source, rec)
        finally:
            records.close()
    held.digests, held.keys, held.same = +held.digests, +held.keys, +held.same
    return held


def _edited(metadata: Any) -> bool:
    """Whether a message's metadata says the export marked it edited (Telegram, Discord, Slack, WhatsApp)."""
    return isinstance(metadata, dict) and metadata.get("edited") is True


class _Version(NamedTuple):
    """A stored message of the identity of one of the file's records, of a digest none of them has."""

    id: int
    key: bytes        # digest of its _key
    edited: bool      # whether the export marked it edited
    timed: bool       # whether it is in _Held.keys
    words: bytes      # digest of its _key less the metadata
    metadata: dict[str, Any]


def _refreshed(stored: dict[str, Any], read: dict[str, Any]) -> dict[str, Any]:
    """The metadata of a stored message given the metadata the file writes for it now (``read``): the file's keys
    (``READ_KEYS``) as the file writes them, the others (a user's, the gate's) as they are."""
    return {**{k: v for k, v in stored.items() if k not in READ_KEYS}, **read}


def _outdated(view, source: Source, g: _Group, earlier: dict[str, list[_Version]]
              ) -> tuple[tuple[int, ...], list[str], list[tuple[str, bytes, bool]], list[tuple[str, _Version]]]:
    """The ids of the stored messages that a record of the file stands for in a later version (an edit): stored with
    a record's identity, but neither its digest nor what it says. A stored message that says what one of the file's
    records of its identity says is that record, not an earlier version of it: a field the digest covers changed
    while the message did not (a status, a count, a field one export writes and another leaves out), or a version
    of hippo took another digest. And the digests of the records that
    are an earlier version of a stored message: none of their identity's records is marked edited while a stored
    version is (an edit cannot be undone: the export of an older copy of the chat), which stay as they are. And
    those stored messages that are a record (identity, digest of :func:`_key`, whether in ``_Held.keys``), held as
    it whether or not they have a time. And those that say what a record of their identity says (its text, speaker,
    role, time and session) with other metadata (Telegram's ``edited`` on a change of formatting alone, a field the
    file writes now): the record, whose metadata is written over theirs in place, keeping their id and place."""
    says: dict[str, set[bytes]] = {}
    words: dict[str, set[bytes]] = {}
    edited: set[str] = set()  # identities of which the file has an edited version
    digests: dict[str, list[str]] = {}
    records = g.each()
    try:
        for rec in records:
            ident = _source_ident(rec)
            if ident is not None and ident in earlier:
                key = _record_key(view.config, source, rec)
                says.setdefault(ident, set()).add(_digest(key))
                words.setdefault(ident, set()).add(_digest(key[:5]))
                if _edited(rec.item.get("metadata")):
                    edited.add(ident)
                digest = _source_digest(rec)
                if digest is not None:
                    digests.setdefault(ident, []).append(digest)
    finally:
        records.close()
    newer = {ident for ident, versions in earlier.items() if ident not in edited and any(v.edited for v in versions)}
    current = [(ident, v) for ident, versions in earlier.items() if ident not in newer for v in versions]
    return (tuple(sorted(v.id for ident, v in current
                         if v.key not in says.get(ident, ()) and v.words not in words.get(ident, ()))),
            [digest for ident in newer for digest in digests.get(ident, ())],
            [(ident, v.key, v.timed) for ident, v in current if v.key in says.get(ident, ())],
            [(ident, v) for ident, v in current
             if v.key not in says.get(ident, ()) and v.words in words.get(ident, ())])


def _kept(view, g: _Group) -> list[dict[str, Any]]:
    """The messages :attr:`_Group.outdated` as ``add_many`` stores them again (text, speaker, role, time, session,
    metadata), as ``import`` stores an export's: what an undone run puts back once its replacement committed."""
    wanted = set(g.outdated)
    return [{"text": r["text"], "speaker": r["speaker"], "role": r["role"],
             "timestamp": r["timestamp"] if r.get("utc_offset") is None
             else with_utc_offset(r["timestamp"], r["utc_offset"]),
             "session_id": r["session_id"], "metadata": r["metadata"]}
            for r in view.engine.records() if r["id"] in wanted]


def _carried(kept: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """By identity, the metadata keys a user set on the stored messages an edited version replaces (:func:`_kept`):
    those no reader of an export writes (``READ_KEYS``) nor the encoding gate, later versions' over earlier ones'.
    The file's own keys are the file's: an attachment the edit removed is not carried."""
    out: dict[str, dict[str, Any]] = {}
    for m in kept:
        ident = _stored_ident(m["metadata"])
        user = {k: v for k, v in m["metadata"].items() if k not in READ_KEYS and k != "gate"}
        if ident is not None and user:
            out[ident] = {**out.get(ident, {}), **user}
    return out


class _Written:
    """What a run wrote in one namespace: the ids of its messages, and, once the batch that replaced the group's
    :attr:`_Group.outdated` committed, the messages it replaced (to put back when the run is undone)."""

    def __init__(self, view) -> None:
        self.view = view
        self.ids: list[int] = []
        self.replaced: list[dict[str, Any]] | None = None
        self.updated: list[tuple[int, dict[str, Any]]] = []  # (id, metadata before): messages whose metadata it wrote


def _refresh(w: _Written, refreshed: list[tuple[int, dict[str, Any], dict[str, Any]]]) -> None:
    """Write the file's metadata over that of the stored messages its records are (:attr:`_Group.refreshed`), each
    message keeping its id and place; after the group's last batch, so a run that fails before leaves them as they
    were, and one killed between does them when run again."""
    for id_, before, metadata in refreshed:
        if metadata != before:
            with _interrupt_after():
                try:
                    w.view.update(id_, metadata=metadata)
                except NotFound:  # deleted meanwhile (hippo forget in another process): nothing to write over
                    continue
                w.updated.append((id_, before))


def _undo(written: list[_Written]) -> str | None:
    """Delete what this run wrote in every namespace, putting back what it replaced, in one transaction
    (``Memory.write_many``); returns why that failed, or None. When it fails, every namespace holds what the run
    wrote there whole (the edited messages replaced)."""
    writes: dict[str, dict[str, list]] = {}
    for w in written:
        if w.ids or w.replaced:
            undo = writes.setdefault(w.view.namespace, {"items": [], "replacing": []})
            undo["items"] += w.replaced or []
            undo["replacing"] += w.ids
    try:
        if writes:
            written[0].view.write_many(writes)
        for w in written:
            while w.updated:
                id_, before = w.updated[-1]
                w.view.update(id_, metadata=before)
                w.updated.pop()
        return None
    except (HippoError, OSError) as exc:
        left = sum(len(w.ids) for w in written)
        if not left:
            kept = sum(len(w.updated) for w in written)
            return f"putting back the metadata it wrote failed too ({exc}): {messages(kept)} keep the file's"
        return (f"undoing it failed too ({exc}): up to {left} of its messages remain (an edited message stored "
                f"whole: its new version, or its earlier one); running the same command again resumes after them")


@contextlib.contextmanager
def _interrupt_after():
    """Ctrl-C inside the block takes effect when the block ends. ``add_many`` commits, then updates the index: an
    interrupt between the two would leave a stored batch whose ids this run never learnt, so its undo would miss
    it. A batch takes well under a second; in a thread other than the main one (no signal handlers there) the
    block runs as it is, and so it does in a process started with SIGINT ignored (a shell script's background job),
    which a Ctrl-C meant for the script must not stop."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _batches(view, source: Source, g: _Group, batch: int, held: _Held) -> Iterator[list[dict[str, Any]]]:
    """The items of the group's records after ``g.start``, ``batch`` at a time, read on as they are written; a record
    that one of ``held`` stands for is skipped (and that one used up), counted in ``g.held``."""
    items: list[dict[str, Any]] = []
    g.held = 0
    for i, rec in enumerate(g.each()):
        if i < g.start:
            continue
        if held and held.take(view, source, rec):
            g.held += 1
            continue
        items.append(_with_carried(_item(rec), rec, g.carried))
        if len(items) == batch:
            yield items
            items = []
    if items:
        yield items


def _add(w: _Written, items: list[dict[str, Any]], g: _Group, kept: list[dict[str, Any]] | None) -> list[Any]:
    """Store one batch of the group; with ``kept`` (the group's last batch), the earlier versions of its edited
    messages are deleted in the same transaction (a run killed before it deletes them when run again)."""
    with _interrupt_after():  # a batch committed is a batch whose ids the undo knows
        if kept is None:
            got = w.view.add_many(items)
        else:
            got = w.view.add_many(items, replacing=list(g.outdated))
            w.replaced = kept
        w.ids.extend(m.id for m in got)
    return got


def _store(mem, source: Source, groups: list[_Group], batch: int, label: str) -> None:
    for g in groups:
        g.start = _resume_point(mem.using(g.namespace), source, g, batch)
    todo = sum(g.n - g.start for g in groups)
    written: list[_Written] = []
    seconds: list[float] = []
    try:
        with progress.bar(todo, f"{label} {os.path.basename(source.file)}") as bar:
            for g in groups:
                started = time.perf_counter()
                view = mem.using(g.namespace)
                w = _Written(view)
                written.append(w)
                stored = g.start
                held = _held(view, source, g)
                kept = _kept(view, g) if g.outdated else None
                g.carried = _carried(kept) if kept else None
                batches = _batches(view, source, g, batch, held)
                items = next(batches, None)
                while items is not None:
                    after = next(batches, None)
                    if after is None and stored + len(items) + g.held != g.n:
                        # the file read otherwise than when it was checked: nothing of it replaces anything
                        raise InvalidInput(f"{source.file}: {stored + len(items) + g.held} messages read to store, "
                                           f"{g.n} when checked")
                    got = _add(w, items, g, kept if after is None else None)
                    bar.update(len(got))
                    stored += len(got)
                    items = after
                if kept is not None and w.replaced is None:  # no new message to store with the replacement
                    _add(w, [], g, kept)
                g.refreshed = held.refreshed
                _refresh(w, g.refreshed)
                bar.update(g.held)
                stored += g.held
                if stored != g.n:  # the file read otherwise than when it was checked
                    raise InvalidInput(f"{source.file}: {stored} messages read to store, {g.n} when checked")
                seconds.append(time.perf_counter() - started)
    except KeyboardInterrupt:
        why = _undo(written)
        raise Aborted(f"interrupted: nothing of {source.file} was stored" if why is None
                      else f"interrupted; {why}") from None
    except Exception as exc:  # noqa: BLE001 - whatever stopped the writes, what they did is undone
        why = _undo(written)
        detail = " ".join(str(exc).split()).removeprefix(f"{source.file}: ")
        if not isinstance(exc, (HippoError, OSError)):
            detail = f"{type(exc).__name__}: {detail}"
        raise StoreError(f"{source.file}: nothing was stored: {detail}" if why is None
                         else f"{source.file}: storing failed ({detail}); {why}") from None
    for g, sec in zip(groups, seconds):
        n, done = g.n, g.n - g.start
        if g.found:
            print(f"{g.named}: the chat is in {g.namespace}, where an earlier export put it under the name it had "
                  f"then; its messages are added there")
        elif g.named is not None:
            print(f"{g.named}: the chat is in {g.namespace}: {g.named} holds another chat, stored under this name by "
                  f"an earlier export")
        if g.refreshed:
            print(f"{g.namespace}: {messages(len(g.refreshed))} of the file's {n} stored with other metadata (a field "
                  f"the export writes differently now) took the file's, in place")
        if g.outdated:
            print(f"{g.namespace}: {messages(done - g.held)} added; {messages(g.start + g.held)} of the file's {n} "
                  f"were already stored; {messages(len(g.outdated))} stored before, whose edited version the file "
                  f"holds, replaced by it")
        elif g.held:
            print(f"{g.namespace}: {messages(done - g.held)} added; {messages(g.start + g.held)} of the file's {n} "
                  f"were already stored (an earlier run, or an earlier export of the same chat)")
        elif done == n:
            print(f"{g.namespace}: {messages(n)} in {sec:.2f} s")
        elif done == 0:
            print(f"{g.namespace}: already ends with these {messages(n)} (an earlier run stored them); nothing added")
        else:
            print(f"{g.namespace}: {messages(done)} added after the {g.start} an interrupted earlier run stored")


def _groups(source: Source, namespace: str, split: bool, each: Callable[[], Iterator[Record]]) -> list[_Group]:
    if not split:
        return [_Group(namespace, each)]
    by_ns: dict[str, list[Record]] = {}  # --split reads formats that are read whole (JSON documents, archives)
    for rec in each():
        ns = f"{namespace}.{rec.group}" if rec.group else namespace
        if ns not in by_ns and ns != namespace:
            # --namespace itself is checked as given; the one --split makes of it is named as such, not as -n
            what = {"slack-export": "channel", "telegram-export": "chat"}.get(source.format, "conversation")
            check_namespace(ns, f"the namespace --split makes for the {what} {rec.group[:40]!r} (--namespace plus "
                                f"'.{rec.group[:40]}')")
        by_ns.setdefault(ns, []).append(rec)
    # each pass a generator, as a file's own passes are: the passes close what they stop reading
    return [_Group(ns, lambda records=records: (rec for rec in records)) for ns, records in by_ns.items()]


def _route(mem, groups: list[_Group], namespace: str) -> None:
    """``--split``: a group whose namespace holds none of its messages, while another namespace of the split
    (``<namespace>.<x>``) holds some, is the chat stored there under the name it had then (a contact or a group
    renamed since, a chat of the same name now told apart by its id): its records go there, to the one holding most
    of them (ties: the first name), each namespace taking one group and none a group's own that holds its messages.
    A group whose own namespace another group's records go to gets ``<its namespace> (2)`` (or the first such name
    free) instead of mixing two chats. Messages are known by their digests; a format without them (LoCoMo) is split
    by name alone."""
    prefix = f"{namespace}."
    existing = {ns for ns in mem.namespaces() if ns.startswith(prefix)}
    owner: dict[str, int] = {}  # digest -> the group (index) whose namespace holds none of its messages
    fixed: set[str] = set()     # the namespaces of groups that hold their messages
    for k, g in enumerate(groups):
        digests = set()
        for rec in g.each():
            digest = _source_digest(rec)
            if digest is not None:
                digests.add(digest)
        if not digests or (g.namespace in existing and _holds_any(mem.using(g.namespace), digests)):
            fixed.add(g.namespace)
        else:
            owner.update(dict.fromkeys(digests, k))
    if not owner:
        return
    found: Counter = Counter()  # (group, namespace) -> how many of the group's messages the namespace holds
    for ns in sorted(existing - fixed):
        stored = mem.using(ns).engine.records()
        try:
            for r in stored:
                k = owner.get(_stored_digest(r["metadata"]))
                if k is not None:
                    found[k, ns] += 1
        finally:
            stored.close()
    taken: set[str] = set()
    for (k, ns), _n in sorted(found.items(), key=lambda item: (-item[1], item[0][1], item[0][0])):
        g = groups[k]
        if g.named is None and ns not in taken:
            g.named, g.namespace, g.found = g.namespace, ns, True
            taken.add(ns)
    names = existing | {g.namespace for g in groups}
    for k in sorted(set(owner.values())):
        g = groups[k]
        if g.named is None and g.namespace in taken:
            j = 2
            while f"{g.namespace} ({j})" in names:
                j += 1
            g.named, g.namespace = g.namespace, check_namespace(
                f"{g.namespace} ({j})", f"the namespace --split makes for {g.namespace!r}, taken by another chat")
            names.add(g.namespace)


def _holds_any(view, digests: set[str]) -> bool:
    """Whether the namespace holds a message of one of ``digests``."""
    stored = view.engine.records()
    try:
        return any(_stored_digest(r["metadata"]) in digests for r in stored)
    finally:
        stored.close()


def _check_batch(batch: int) -> int:
    if batch < 1:
        raise InvalidInput(f"--batch must be >= 1, got {batch}")
    return batch


def cmd_ingest(args: argparse.Namespace) -> int:
    batch = _check_batch(args.batch)
    with open_source(args.file, encoding=args.encoding, timezone=args.timezone) as source:
        if args.split and source.format not in ("locomo", "slack-export", "telegram-export", "chatgpt", "claude"):
            raise InvalidInput(f"--split applies to LoCoMo files (one namespace per conversation), Slack export "
                               f"archives (one per channel), Telegram account exports (one per chat) and ChatGPT "
                               f"and Claude.ai exports (one per conversation); "
                               f"{args.file} holds {source.format} messages")

        def each() -> Iterator[Record]:
            for rec in source.each():
                if args.session is not None and rec.item.get("session_id") is None:  # absent or null: it has none
                    rec.item["session_id"] = args.session
                yield rec

        groups = _groups(source, args.namespace, args.split, each)
        _validate(Config(), source, groups)  # before the store is opened (or created): a bad file creates nothing
        with open_store(args, create=True) as mem:
            if args.split:
                _route(mem, groups, args.namespace)
            _store(mem, source, groups, batch, "ingest")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    batch = _check_batch(args.batch)
    with open_source(args.file, encoding="utf-8") as source:
        if source.format != "export":
            raise InvalidInput(f"{args.file}: not a hippo export file (its first line is not the hippo-export "
                               f"header); `hippo ingest` reads other formats")
        groups = _groups(source, args.namespace, False, source.each)
        _validate(Config(), source, groups)
        with open_store(args, create=True) as mem:
            _store(mem, source, groups, batch, "import")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        with progress.bar(mem.count(), f"export {mem.namespace}") as bar:
            n = mem.export(args.out, progress=lambda done, total: bar.update(done - bar.n))
        if not n:
            note_if_empty(mem)
    print(f"exported {messages(n)} to {args.out}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    i = sub.add_parser("ingest", help="add messages from JSONL, OpenAI-style messages, an agent's history, a ChatGPT "
                                      "or Claude.ai data export, a WhatsApp, LINE, iMessage, Signal, Telegram, "
                                      "Messenger, Instagram, Discord, Slack or Google Chat export, BEAM chat.json or "
                                      "LoCoMo JSON",
                       description="Add the messages of a file: JSONL (hippo or OpenAI-style messages, one per line, "
                                   "or one conversation {messages: [...]} per line), an OpenAI-style message list "
                                   "([{role, content}] or {messages: [...]}), an agent's history (OpenAI Responses "
                                   "API items, a Claude Code session transcript, LangChain or LlamaIndex messages), "
                                   "the data export of ChatGPT or Claude.ai (the zip, or its conversations.json: the "
                                   "branch each conversation shows, a session per conversation), a WhatsApp chat "
                                   "exported as text (or "
                                   "the zip iOS exports), a LINE chat exported as text, an iMessage conversation "
                                   "written as text by imessage-exporter, a Signal chat's data.json or chat.md "
                                   "written by signal-export or its text written by signalbackup-tools, a Telegram "
                                   "result.json (of a chat or a whole account), a Facebook Messenger or Instagram "
                                   "message_<n>.json (one file at a time, the highest number first), a Discord "
                                   "channel exported as JSON by DiscordChatExporter, a day of a Slack channel "
                                   "(<channel>/<date>.json of a workspace export) or the whole export zip, a Google "
                                   "Chat conversation's messages.json from Google Takeout, a BEAM "
                                   "chat.json, a LoCoMo JSON file, or a hippo export. The format is told from the "
                                   "content. All or nothing per file: a bad record stores nothing and the error names "
                                   "the file, line and field; running the same command again after a failure does "
                                   "not duplicate messages.")
    i.add_argument("file", metavar="FILE", help="the file to read (a UTF-16 or UTF-32 file with its byte-order mark needs no "
                                "--encoding)")
    add_store_args(i)
    i.add_argument("--batch", type=int, default=500, help="messages per write (default 500)")
    i.add_argument("--split", action="store_true", help="LoCoMo: one namespace <namespace>.<sample_id> per "
                                                         "conversation; a Slack export: <namespace>.<channel> per "
                                                         "channel; a Telegram account's export: <namespace>.<chat> "
                                                         "per chat; a ChatGPT or Claude.ai export: "
                                                         "<namespace>.<title> per conversation")
    i.add_argument("--encoding", default="utf-8", help="text encoding of the file (default utf-8), e.g. latin-1")
    i.add_argument("--session", help="session_id for messages that do not carry one")
    i.add_argument("--timezone", metavar="ZONE",
                   help="the time zone a chat app export was written in: an IANA name (Europe/Lisbon, "
                        "America/New_York) or an offset (+05:30; a negative one as --timezone=-04:00 or "
                        "UTC-04:00). WhatsApp's, LINE's, iMessage's and Signal's times (and Telegram's without "
                        "date_unixtime) are read as that zone's clock, each with its offset of the day; the "
                        "instants of Telegram, Messenger, Discord, Slack, Google Chat, ChatGPT and Claude.ai take "
                        "it as the calendar "
                        "their days are read on. "
                        "Without it, times without an offset are read as UTC")
    i.set_defaults(func=cmd_ingest)

    e = sub.add_parser("export", help="write a namespace to a JSONL export file")
    e.add_argument("out", metavar="OUT")
    add_store_args(e)
    e.set_defaults(func=cmd_export, api_names={"path": "out"})  # Memory.export(path): the file OUT

    im = sub.add_parser("import", help="add the messages of a JSONL export file (all or nothing)")
    im.add_argument("file", metavar="FILE")
    add_store_args(im)
    im.add_argument("--batch", type=int, default=500, help="messages per write (default 500)")
    im.set_defaults(func=cmd_import)
