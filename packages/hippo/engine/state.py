"""Every process-local follower of one namespace, owned by one object.

A :class:`NamespaceState` holds what the engine derives from a namespace's messages: the co-index (Content and
Signature DWMs, span table), the binary codes of user embeddings, the time-and-truth annotations, the lifecycle
(hierarchy and strengths), the speaker profiles and the index-entry registry.

It follows the store like a replica follows a log. ``seen`` is the store fingerprint the followers reflect; when the
store's differs, the state reads the namespace's change feed after ``seen.version`` (:meth:`Store.changes`) and
applies exactly that: deleted messages are dropped from every follower, updated metadata re-derived, appended rows
loaded and applied. Nothing else is read, so catching up costs what changed, whatever the size of the namespace.
A backlog of more than :data:`SYNC_ROWS` appended messages is caught up as an open does when another handle saved
snapshots covering it (:meth:`NamespaceState._reopen`): reading them costs less than annotating and consolidating
the messages again.

Derived state is saved with the store (:mod:`hippo.engine.persist`): on open the co-index and the annotations come
from their snapshot plus the changes after it; the lifecycle and the profiles are loaded the first time they are
needed, each from its own snapshot plus the changes after that one. A follower with no usable snapshot, or one that
lags by more than :data:`SYNC_ROWS` messages, is rebuilt in a background thread while reads go on without it
(recall answers with the flat engine, ranking without annotations or profile prior) and is swapped in when done.

The speaker profiles also follow appends off the request path (this process's own, and those it reads from the
change feed): once :data:`PROFILE_LAG` appended messages are past them, a background thread reads those messages'
statements a few at a time while no message has been appended for :data:`PROFILE_IDLE` seconds (a bulk import is
not slowed; an agent's pauses between turns are used). An import of more than :data:`SYNC_ROWS` messages that
nothing has asked about is left to the first question that does, as before. A recall that asks about a person reads
whatever is still left itself, so its answer is the same whether the thread got there first or not; what the thread
saves is the wait (reading the statements of a whole chat takes a quarter of a second per few hundred messages).
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Iterator, Protocol

import numpy as np

from hippo.base.config import Config
from hippo.base.errors import CorruptData, HippoError, StoreError
from hippo.base.locks import RWLock
from hippo.engine import persist
from hippo.engine.lifecycle import Life
from hippo.engine.profiles import ProfileIndex
from hippo.engine.truth.state import Truth
from hippo.index.coindex import PROGRAM_MARKS, ROLES, NamespaceIndex, written_by_programs
from hippo.index.embedding import EmbeddingCodes, SimHasher, encode, line
from hippo.native import DynamicWaveletMatrix
from hippo.store import snapshot
from hippo.store.base import Change, MessageRow, Store
from hippo.store.base import NamespaceState as StoreFingerprint
from hippo.text import timeexpr, tokenizer

log = logging.getLogger("hippo.engine")

SYNC_ROWS = 2048       # a follower this far behind (or rebuilding from nothing) catches up in the background
SAVE_SHARE = 8         # snapshots are rewritten once this share of the namespace changed (1/8), at least every
                       # ``hierarchy.persist_every`` messages: amortized O(1) bytes written per message
CLOSE_SLACK = 256       # close() leaves at most this many appended messages to the change feed (see save_derived)
CLOSE_SLACK_TOKENS = 1 << 14  # ... holding at most this many tokens: what the next open applies from the feed
                              # costs a few microseconds a token, at every open until a handle saves
RETAIN_CHANGES = 10_000  # changes kept in the feed behind the oldest saved snapshot, for handles that lag
_CHUNK = 512           # rows a background rebuild reads per hold of the read lock
_TALLY_ROWS = 512      # messages a deletion reads at once for the speaker profiles (the deleted, the statements)
PROFILE_LAG = 32       # appended messages past the speaker profiles before they catch up in the background
_PROFILE_CHUNK = 16    # messages the profiles' catch-up reads per hold of their lock (what a recall may wait for)
PROFILE_IDLE = 0.25    # seconds without an append before the profiles' catch-up reads on
_CATCH_UP = "profiles-catch-up"
_WORDS = "words-catch-up"
_WORDS_CHUNK = 1 << 16  # stream tokens the misspellings' word reader takes per step (about 10 ms)
WORDS_LAG = 1 << 14     # unread stream tokens before it starts (a question reads a shorter tail in a few ms itself)
WORDS_IDLE = 0.25       # seconds without an append before it reads on
# Rebuilds of whole followers that a closing handle lets run to the end (without resting) and saves: otherwise the next
# process, finding no snapshot, would rebuild them again, and one that closes as quickly would never save one. The
# catch-ups that wait for a pause in the appends are stopped: what they leave is read by the next question.
_FINISH_AT_CLOSE = {"life": "lifecycle", "truth": "annotations", "profiles": "speaker profiles"}
CLOSE_WAIT = 600.0     # seconds a closing handle waits for them at most (then they are stopped, as before)
_ROW_CACHE = 4096      # store rows kept per namespace (a recall's messages; a context holds a few dozen)
_UNREADABLE = (CorruptData, ValueError, KeyError, TypeError, IndexError)


class _Later(Exception):
    """A snapshot that cannot be used right here (missing, or too far behind): the follower catches up in the
    background."""


class Host(Protocol):
    """What a namespace state needs of the runtime that owns it."""

    config: Config
    store: Store
    lock: RWLock
    llm: Any
    embed: Any
    embed_query: Any
    hasher: SimHasher | None

    def loaded_one(self, state: "NamespaceState") -> None: ...

    def state(self, namespace: str) -> "NamespaceState": ...


class _nolock:
    """A stand-in for a lock guard when the caller already holds the lock."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _build_content(tokens: np.ndarray):
    """Start filling a Content DWM with ``tokens`` in a helper thread; returns ``ready``: calling it waits for the
    build (raising what it raised), and ``ready.content`` is the matrix."""
    content = DynamicWaveletMatrix(tokenizer.token_bits())
    failed: list[BaseException] = []

    def work() -> None:
        try:
            content.extend(tokens)
        except BaseException as exc:  # noqa: BLE001 - raised by ready()
            failed.append(exc)

    thread = threading.Thread(target=work, name="hippo-content", daemon=True)
    thread.start()

    def ready() -> None:
        thread.join()
        if failed:
            raise failed[0]

    ready.content = content
    return ready


class _Feed:
    """What a run of changes amounts to for a follower."""

    def __init__(self, feed: list[Change], upto: int | None = None) -> None:
        self.deleted: set[int] = set()
        self.updated: set[int] = set()
        self.deletes = 0
        self.last_seq = -1
        for c in feed:
            if upto is not None and c.version > upto:
                break
            if c.kind == "append":
                self.last_seq = max(self.last_seq, c.last_seq)
            elif c.kind == "delete":
                self.deleted.update(c.ids)
                self.deletes += 1
            else:
                self.updated.update(c.ids)


def _runs(feed: list[Change], upto: int | None = None) -> list[tuple[str, Any]]:
    """The changes as runs of one kind, in order: ``("append", (first_seq, last_seq))``, ``("delete", ids)``,
    ``("update", ids)`` (ids as sets); changes past version ``upto`` are left out."""
    out: list[tuple[str, Any]] = []
    for c in feed:
        if upto is not None and c.version > upto:
            break
        if out and out[-1][0] == c.kind:
            kind, arg = out[-1]
            if kind == "append":
                out[-1] = (kind, (arg[0], max(arg[1], c.last_seq)))
            else:
                arg.update(c.ids)
        else:
            out.append((c.kind, (c.first_seq, c.last_seq) if c.kind == "append" else set(c.ids)))
    return out


class _Warm(threading.Thread):
    """A follower being rebuilt off the request path (see the module docstring)."""

    def __init__(self, state: "NamespaceState", what: str, work: Callable[["_Warm"], None]) -> None:
        super().__init__(name=f"hippo-warm-{what}-{state.name}", daemon=True)
        self.state, self.what, self.work = state, what, work
        self.stop = threading.Event()
        self.hurry = threading.Event()  # set by a closing handle: no reads left to keep fast, no more rests
        self.follows = False  # a loaded lifecycle following appends it fell behind: calls needing it wait for it
        self.error: BaseException | None = None
        self.progress: tuple[int, int] | None = None  # (rows done, rows in all) of a rebuild that counts them

    def breathe(self, since: float) -> None:
        """Rest as long as the work since ``since`` took (at most 0.2 s): a rebuild takes at most half of the
        interpreter, so the reads it stands in for keep their latency (Python threads share one lock)."""
        if not self.hurry.is_set():
            self.stop.wait(min(0.2, time.perf_counter() - since))

    def run(self) -> None:
        try:
            self.work(self)
        except BaseException as exc:  # noqa: BLE001 - reported, the follower stays unavailable until retried
            self.error = exc
            log.warning("rebuilding the %s of namespace %r failed: %s", self.what, self.state.name, exc)
        finally:
            with self.state._warm_lock:
                if self.state._warming.get(self.what) is self:
                    del self.state._warming[self.what]


class NamespaceState:
    def __init__(self, host: Host, name: str) -> None:
        self.host = host
        self.name = name
        self.index: NamespaceIndex | None = None
        self.truth = Truth()
        self.codes: EmbeddingCodes | None = None
        self.seen = StoreFingerprint(0, 0)
        self._life: Life | None = None
        self._profiles: ProfileIndex | None = None
        self._profiles_done = 0
        self._profile_names: tuple[int, ProfileIndex] | None = None
        self._profiles_lock = threading.Lock()
        # the names-only index has a lock of its own: a question's intent check never waits for a step of the
        # background reader of the full profiles (tens of milliseconds of statements under ``_profiles_lock``)
        self._names_lock = threading.Lock()
        self.entries: Any = None  # the index-entry registry (hippo.engine.entries), created on first use
        self.verbosity: Any = None  # the evidence packer's verbosity statistics (hippo.engine.evidence)
        self.standing: Any = None  # the evidence packer's standing instructions (hippo.engine.evidence)
        self.preferences: Any = None  # the user's stated preferences (hippo.engine.evidence.preference_rows)
        self.keyword_cache: OrderedDict[str, list[str] | None] = OrderedDict()  # LLM keywords by query
        self.keyword_lock = threading.Lock()
        self.llm_fallbacks = 0  # LLM calls that failed and fell back to the offline path
        self.changed = 0        # messages appended, deleted or updated since the derived state was last saved
        self.saved: dict[str, int] = {}  # kind -> store version of the snapshot this process last wrote or read
        # kind -> where the deflated pieces of the blob this state last wrote lie in it (snapshot.Pieces): the next
        # save copies the unchanged ones from the stored blob
        self._pieces: dict[str, snapshot.Pieces] = {}
        # the lifecycle and accesses saved were removed (a deletion while the lifecycle was rebuilt in the background):
        # the rebuilt one matches no stored blob
        self._life_removed = False
        self._warming: dict[str, _Warm] = {}
        self._warm_lock = threading.Lock()
        self._closed = False  # set by close(): no background work starts after it (the store closes next)
        self._truth_updates: list[int] = []  # message ids whose event time changed while annotations rebuild
        self._life_updates: list[int] = []  # message ids whose metadata changed while the lifecycle rebuilds
        self._truth_unsaved = False   # annotations completed since the co-index snapshot was written
        # messages other handles appended, deleted or updated, caught up from the change feed since the last save:
        # theirs to save; this state rewrites the co-index for them only once it holds their annotations
        self._foreign = 0
        self._life_prefetched: tuple | None = None
        self._eager_life = False
        self._profiles_unsaved = False
        self._profiles_asked = False  # whether anything read the profiles in this process (then they always follow)
        self._appended_at = 0.0  # time.monotonic() of the last append applied here (the profiles' catch-up waits)
        self._row_cache: OrderedDict[int, MessageRow] = OrderedDict()
        self._row_lock = threading.Lock()
        self._row_epoch = 0  # bumped whenever a kept row may have changed (an update, a deletion, a reset)
        self.detached = False  # unloaded and dropped by the runtime: the namespace's state is another object now

    @property
    def config(self) -> Config:
        return self.host.config

    @property
    def loaded(self) -> bool:
        return self.index is not None

    @property
    def persistable(self) -> bool:
        """Whether derived state is read from snapshots in the store (not for an in-memory store)."""
        return self.host.store.path is not None

    @property
    def holds_nothing(self) -> bool:
        """Loaded, and the namespace never held a message: nothing here is derived from anything, or lost when
        dropped."""
        return self.index is not None and len(self.index) == 0 and self.seen.next_seq == 0

    @property
    def writable(self) -> bool:
        """Whether derived state is saved to the store (a read-only store keeps it in memory only)."""
        return self.persistable and not self.host.store.read_only

    # -- staying current ------------------------------------------------------------------------------------
    def current(self, with_life: bool = False) -> "NamespaceState":
        """This state, caught up with the store (the change feed after ``seen``). Takes the write lock only when
        there is something to apply. ``with_life``: the caller needs the lifecycle next (a recall), so a first
        open loads it alongside the co-index."""
        if self.detached:  # held across an unload outside a public call: the runtime's state of the namespace
            return self.host.state(self.name).current(with_life)
        fp = self.host.store.state(self.name)
        if self.index is not None and self.seen == fp:
            return self
        with self.host.lock.write():
            if self.index is None:
                self._eager_life = with_life and self.lifecycle_active and self._life is None
                try:
                    self._open()
                finally:
                    self._eager_life = False
                self.host.loaded_one(self)  # the least recently used namespaces past the bound are unloaded
            self.catch_up()
        return self

    def catch_up(self) -> None:
        """Apply the changes made since ``seen`` (by anyone: applying is idempotent), in the order they were made:
        a follower whose state depends on the order (the hierarchy consolidates what was appended before a
        deletion) ends where a process that saw every change as it happened ended. Caller holds the write lock."""
        store = self.host.store

        def read(reopen: bool) -> tuple[StoreFingerprint, list[Change] | None, list[tuple[str, Any]] | None]:
            fp = store.state(self.name)
            if fp == self.seen:
                return fp, [], []
            # A state that holds no message of the namespace (it saw none: next_seq 0) reads it whole instead of
            # following the feed, which costs the same. On PostgreSQL a namespace created while another one was
            # deleted may start its feed at a version such a state has seen already: its creation read the epochs
            # before the deletion moved them, and the feed after that version would leave its first messages out.
            feed = store.changes(self.name, self.seen.version, self.seen.stamp) if self.seen.next_seq else None
            if feed is not None and fp.next_seq != max([self.seen.next_seq] + [c.last_seq + 1 for c in feed
                                                                                 if c.kind == "append"]):
                # messages were appended without their change (a process of hippo before the change feed still
                # writing to the upgraded store): the feed does not say what changed, so read the store again
                feed = None
            if reopen and feed is not None and self._backlog(feed) > SYNC_ROWS and self.persistable \
                    and not self._closed and "life" not in self._warming:
                return fp, feed, None  # rows not read yet: the snapshots other handles saved may cover them
            work: list[tuple[str, Any]] = []
            for kind, arg in _runs(feed or []):
                if kind == "append":
                    first, last = max(arg[0], self.seen.next_seq), arg[1]
                    arg = store.load(self.name, after_seq=first - 1, upto_seq=last) if last >= first else []
                elif kind == "update":
                    arg = list(store.rows(self.name, sorted(arg)).values())
                work.append((kind, arg))
            return fp, feed, work

        fp, feed, work = store.read_consistently(lambda: read(True))
        if fp == self.seen:
            return
        if work is None:
            if self._reopen(feed):
                return
            fp, feed, work = store.read_consistently(lambda: read(False))
            if fp == self.seen:
                return
        if feed is None:  # the feed no longer reaches back to what we saw: start again from the store
            self._reset()
            self._open()
            return
        # A loaded lifecycle more than SYNC_ROWS appended messages behind follows them in the background: consolidating
        # another handle's import here held every call up (count, search, list) for as long as the import's own
        # consolidation took. It keeps what only it holds (this process's reinforcements) and is swapped back in
        # once it has caught up; a call that needs it (recall, a reinforcing get) waits for it, hurried, and
        # answers as it did when the lifecycle followed them here.
        later = None
        life = self._life
        if life is not None and life.loaded and not self._closed and "life" not in self._warming \
                and sum(len(arg) for kind, arg in work if kind == "append") > SYNC_ROWS:
            later = (life, _runs(feed), self.seen.next_seq)
            self._life = None
        appended = False
        with self._others():
            for kind, arg in work:
                if kind == "append" and arg:
                    self._check_vocabulary(arg)
                    self._apply(arg, at=fp)
                    self._sync_followers(arg, load=False)
                    appended = True
                elif kind == "delete":
                    gone = [i for i in arg if i in self.index.row_of]
                    if gone:
                        self._remove(gone)
                elif kind == "update":
                    held = [r for r in arg if r.id in self.index.row_of]
                    if held:
                        self._update(held)
        self.seen = fp
        if later is not None and not self._start("life", lambda warm: self._build_life(warm, None, later),
                                                 follows=True):
            life, runs, next_seq = later  # no background work any more (the state is closing): follow them here
            self._replay_life(life, runs, next_seq)
            with life.lock:
                life.sync(self.index)
            self._life = life
        life = self._life
        if life is not None and life.loaded:
            life.version = fp.version
        elif appended:
            self._sync_followers([], load=True)
        if appended:  # another handle's messages: followed as this process's own are
            self._after_append()

    def _backlog(self, feed: list[Change]) -> int:
        """How many messages appended after ``seen`` the changes ``feed`` hold."""
        nxt = self.seen.next_seq
        return sum(max(0, c.last_seq - max(c.first_seq, nxt) + 1) for c in feed if c.kind == "append")

    def _reopen(self, feed: list[Change]) -> bool:
        """Catch up with a long backlog of other handles' changes (more than :data:`SYNC_ROWS` appended messages) as
        an open does, when the snapshots another handle saved cover most of it: the co-index and its annotations
        from the stored snapshot plus the changes after it, the lifecycle from its snapshot (with the accesses made
        here and not saved yet, :meth:`Life.take_own`), the speaker profiles kept (or the saved ones, when they read
        further) unless a message was deleted.
        Annotating and consolidating the backlog again, message by message, cost seconds of CPU per 10,000
        messages that the writer had already spent. False when no stored snapshot does better (nothing changed
        then): the feed is followed as usual. Caller holds the write lock."""
        life = self._life
        if life is not None and (not life.loaded or life.pending is not None or life.stamped):
            return False  # a save in flight, or units stamped here: followed by the lifecycle it holds
        deleted = _Feed(feed).deleted
        kept = (self.index, self.truth, self.seen, self.codes, self.changed, self._foreign,
                self.saved.get(persist.INDEX))
        self._stop_warming("truth")  # annotating rows of the co-index about to be replaced
        self.codes = None
        self.changed = self._foreign = 0  # the snapshot covers this state's own changes: the writer saved them
        opened = False
        try:
            with self._others():
                opened = self._open_snapshot(behind=self._backlog(feed))
        finally:
            if not opened:
                self.index, self.truth, self.seen, self.codes, self.changed, self._foreign, saved = kept
                if saved is not None:
                    self.saved[persist.INDEX] = saved
                if self.truth.deferred:
                    self._warm_truth()
        if not opened:
            return False
        if self.host.embed is not None and self.codes is None:
            self._load_all_codes()
        self.forget_rows()
        self._pieces.pop(persist.INDEX, None)
        self._truth_unsaved = False
        self._truth_updates = []
        self.verbosity = self.standing = self.preferences = None  # read again from the rows
        self.entries = None
        if deleted:  # as a deletion applied here: rebuilt from the surviving messages when next needed
            self._stop_warming("profiles")
            self._stop_warming(_CATCH_UP)
            self._drop_profiles()
        elif self._profiles is not None and "profiles" not in self._warming:
            with self._profiles_lock:  # the writer's saved profiles, when they read further than the ones held
                try:
                    prof, done = self._load_profiles()
                except HippoError as exc:
                    log.warning("namespace %r: the saved speaker profiles not read: %s", self.name, exc)
                    prof, done = None, 0
                if prof is not None and done > self._profiles_done:
                    self._profiles, self._profiles_done = prof, done
                    self._profiles_unsaved = False
        if life is not None:
            self._life = None
            fresh = self._load_life()
            if fresh is None:  # no stored lifecycle covers the backlog: the one held follows it in the background
                self._stop_warming("life")
                self._life = None
                runs = _runs(self.host.store.changes(self.name, kept[2].version) or [], upto=self.seen.version)
                if not self._start("life", lambda warm: self._build_life(warm, None, (life, runs, kept[2].next_seq)),
                                   follows=True):
                    self._replay_life(life, runs, kept[2].next_seq)
                    with life.lock:
                        life.sync(self.index)
                        life.version = self.seen.version
                    self._life = life
            else:
                with fresh.lock:
                    fresh.take_own(life)
                self._life = fresh
        self._after_append()
        return True

    @contextlib.contextmanager
    def _others(self) -> Iterator[None]:
        """Changes applied inside count as other handles' (:attr:`_foreign`), not this state's own (:attr:`changed`):
        what is read from the store, at an open or from the change feed, is saved by the handle that wrote it."""
        own = self.changed
        try:
            yield
        finally:
            self._foreign += self.changed - own
            self.changed = own

    def _check_vocabulary(self, rows: list[MessageRow]) -> None:
        vocab = tokenizer.vocab_size()
        for r in rows:
            if r.tokens.size and int(r.tokens.max()) >= vocab:
                raise CorruptData(f"namespace {self.name!r}: message {r.id} holds token ids outside the vocabulary")

    def rows(self, ids: list[int]) -> dict[int, MessageRow]:
        """The store rows of ``ids`` that are messages of this namespace (:meth:`Store.rows`), the rows read last
        kept: a recall returns its messages with their metadata, and consecutive contexts share most of them. A row
        changes only by a change this state applies (a metadata update, a deletion: the row is dropped) or by a
        reset; what another process changed is applied before the next call reads (:meth:`current`)."""
        out: dict[int, MessageRow] = {}
        missing: list[int] = []
        with self._row_lock:
            cache = self._row_cache
            for i in ids:
                row = cache.get(i)
                if row is None:
                    missing.append(i)
                else:
                    cache.move_to_end(i)
                    out[i] = row
            epoch = self._row_epoch
        if missing:
            got = self.host.store.rows(self.name, missing)
            out.update(got)
            with self._row_lock:
                if epoch == self._row_epoch:
                    cache.update((i, r) for i, r in got.items() if r.tokens is None)
                    while len(cache) > _ROW_CACHE:
                        cache.popitem(last=False)
        return out

    def forget_rows(self, ids: list[int] | None = None) -> None:
        """Drop kept rows (all of them without ``ids``)."""
        with self._row_lock:
            self._row_epoch += 1
            if ids is None:
                self._row_cache.clear()
            else:
                for i in ids:
                    self._row_cache.pop(i, None)

    def _reset(self) -> None:
        self.forget_rows()
        self._stop_warming()
        self.index = None
        self.truth = Truth()
        self.codes = None
        self._life = None
        self._drop_profiles()
        self.entries = None
        self.verbosity = None
        self.standing = None
        self.preferences = None
        self.saved = {}
        self._pieces = {}
        self._life_removed = False
        self._life_prefetched = None

    def unload(self, pinned: Callable[[], bool], guard: threading.Lock) -> bool:
        """Save what :meth:`Runtime.close` saves of this namespace (its derived snapshots, lifecycle and accesses,
        profiles; its tail sealed), then free every follower: the next :meth:`current` loads it again from the
        store, as a new process would. Nothing is freed (False) while a whole follower is rebuilt in the background,
        when the store keeps no derived state (in memory, read-only: it would be lost), when strength records of
        this process are not saved yet (the store was busy), or when ``pinned()``, asked under ``guard`` (the lock
        under which callers pin a state), says a running call uses the state. A namespace that never held a message
        (a read of a namespace no one wrote) has nothing to lose and goes from any store. Caller holds the write
        lock."""
        if self.index is None or not (self.writable or self.holds_nothing):
            return False
        with self._warm_lock:
            if any(k in _FINISH_AT_CLOSE for k in self._warming):
                return False
        # the catch-ups that wait for a pause in the appends are stopped, as at close: the next question reads what
        # they leave
        self._stop_warming(_CATCH_UP)
        self._stop_warming(_WORDS)
        if self.writable:
            self.save_derived()
            life = self._life
            if life is not None and (life.dirty or life.pending is not None
                                     or any(k.any() for k in life.own_accesses())):
                return False  # reinforcements held nowhere else
            try:
                self.host.store.seal(self.name, 1)
            except HippoError:
                pass  # the tail stays in its rows; nothing is lost
        with guard:
            with self._warm_lock:
                if any(k in _FINISH_AT_CLOSE for k in self._warming) or pinned():
                    return False
            self._reset()
            with self.keyword_lock:
                self.keyword_cache.clear()
            self._profile_names = None
            self._profiles_asked = False
            self._profiles_unsaved = self._truth_unsaved = False
            self._truth_updates, self._life_updates = [], []
            self.changed = self._foreign = 0
        return True

    def invalidate(self) -> None:
        """Forget everything derived: the next :meth:`current` opens the namespace again from the store (its
        snapshots and the change feed). Caller holds the write lock."""
        self._reset()

    def drop_snapshots(self) -> None:
        """Remove every saved snapshot of the namespace (best effort; they are rebuilt from the messages)."""
        if not self.writable:
            return
        try:
            self.host.store.put_units_many(self.name, {k: None for k in (*persist.KINDS, *persist.LEGACY)})
        except HippoError as exc:
            log.warning("could not remove the derived snapshots of namespace %r: %s", self.name, exc)

    def _drop_profiles(self) -> None:
        with self._profiles_lock:
            self._profiles = None
            self._profiles_done = 0

    # -- opening: the snapshot plus what changed after it, or every message ---------------------------------
    def _open(self) -> None:
        """Load the co-index, the annotations and the embedding codes. Caller holds the write lock."""
        with self._others():  # what is read at an open was written, and is saved, by others
            if not (self.persistable and self._open_snapshot()):
                self._open_rows()
        if self.host.embed is not None and self.codes is None:
            self._load_all_codes()

    def _open_rows(self) -> None:
        store = self.host.store
        # every row, also past a damaged next_seq (`hippo check` reports it)
        fp, rows = store.read_consistently(lambda: (store.state(self.name), store.load(self.name)))
        self._check_vocabulary(rows)
        self.index = NamespaceIndex(self.name, self.config)
        self.truth = Truth()
        self.seen = fp
        self._apply(rows)
        if len(rows) > SYNC_ROWS:
            self.truth.deferred = True  # annotating every message would hold this read up: done in the background
            self._warm_truth()

    def _open_snapshot(self, behind: int | None = None) -> bool:
        """Load the co-index and its annotations from the stored snapshot plus the changes after it; False (nothing
        changed) when there is no usable one. ``behind``: the state is loaded and that many appended messages
        behind the store (:meth:`_reopen`); the snapshot is used only if it covers a later change than ``seen`` and
        leaves fewer messages to apply and annotate."""
        store = self.host.store

        def read() -> tuple | None:
            blob = store.get_units(self.name, persist.INDEX)
            if blob is None:
                return None
            covers, meta, arrays = persist.decode(blob, persist.INDEX)
            fp = store.state(self.name)
            if behind is not None:
                if covers.version <= self.seen.version:
                    return None
                rows_in = int(persist.split(arrays, "index")["ids"].size)
                annotated = int(meta["truth"]["done"]) if meta.get("truth") else 0
                if max(0, fp.next_seq - covers.next_seq) + rows_in - annotated >= behind:
                    return None
            feed = store.changes(self.name, covers.version) if covers.version <= fp.version else None
            if feed is None:
                log.info("namespace %r: the derived snapshot is older than the change feed; rebuilding", self.name)
                return None
            f = _Feed(feed)
            tokens = store.load_tokens(self.name)
            rows = store.load(self.name, after_seq=covers.next_seq - 1, upto_seq=fp.next_seq - 1) \
                if fp.next_seq > covers.next_seq else []
            updated = store.rows(self.name, [i for i in f.updated if i not in f.deleted])
            # a span table saved before the messages written by programs were marked: the rows whose metadata may
            # mark one are read (not the whole namespace, nor its tokens) and the column is filled from them
            marked = None if "index.program" in arrays else store.rows_mentioning(self.name, PROGRAM_MARKS)
            return covers, meta, arrays, fp, f, tokens, rows, updated, marked

        try:
            got = store.read_consistently(read)
            if got is None:
                return False
            covers, meta, arrays, fp, f, tokens, rows, updated, marked = got
            ids = persist.split(arrays, "index")["ids"]
            if marked is not None:
                arrays = {**arrays, "index.program": written_by_programs(ids, marked)}
            keep = ~np.isin(ids, np.fromiter(f.deleted, dtype=np.int64, count=len(f.deleted)))
            self._prefetch_life()
            self._check_vocabulary(rows)
            appended = sum(r.n_tokens for r in rows)
            snap_tokens = tokens[: tokens.size - appended] if appended else tokens
            # The Content DWM is built (C, outside the interpreter lock) while the rest is read back
            ready = _build_content(snap_tokens)
            try:
                index = NamespaceIndex.from_snapshot(self.name, self.config, meta["index"],
                                                     persist.split(arrays, "index"), keep, int(snap_tokens.size),
                                                     ready.content, snap_tokens)
                truth = None
                # annotations saved under another time rule: what the rule reads of the messages (their times and
                # what holds them) is read again, and they are saved again; they stand in until then
                outdated = meta.get("truth") is not None and not Truth.current(meta["truth"])
                if meta.get("truth") is not None:
                    truth = Truth.from_snapshot(meta["truth"], persist.split(arrays, "truth"), ids)
                    truth.created.a[: truth.done] = np.asarray(persist.split(arrays, "index")["created"],
                                                               dtype=np.float64)[: truth.done]
                    if outdated:
                        truth.untimed, truth.untimed_rule = truth.done, meta["truth"].get("time_rule", 1)
                    if not keep.all():
                        truth.remove_rows(keep, index)
            except BaseException:
                ready()
                raise
        except _UNREADABLE as exc:
            log.warning("namespace %r: rebuilding the co-index from the messages (snapshot unusable: %s)", self.name,
                        exc)
            return False
        self.index = index
        self.truth = truth if truth is not None else Truth()
        # saved again (once the annotations are complete): annotations read by other time rules, or a span table of
        # an older form
        self._truth_unsaved = self._truth_unsaved or outdated or marked is not None
        if outdated:
            log.info("namespace %r: its annotations were saved under time rule %s, this version reads times by rule "
                     "%s: the times of its %d messages are read again%s", self.name, meta["truth"].get("time_rule", 1),
                     timeexpr.RULE, self.truth.untimed, " in the background" if self.truth.untimed > SYNC_ROWS else "")
        self.seen = fp
        self.saved[persist.INDEX] = covers.version
        if rows or updated or not self._eager_life:
            ready()
        else:  # a recall is waiting: the lifecycle loads while the Content DWM is still being built
            self._life = self._load_life(ready)
        ready()
        if 0 < self.truth.untimed <= SYNC_ROWS:
            self.truth.retime(index)  # a short history: its times read again here
        if rows:
            self._apply(rows)
        if updated:
            self._update(list(updated.values()))
        if len(index) - self.truth.done > SYNC_ROWS or self.truth.untimed:
            self.truth.deferred = True
            self._warm_truth()
        return True

    # -- applying changes -----------------------------------------------------------------------------------
    def apply(self, rows: list[MessageRow], texts: list[str], fp: StoreFingerprint,
              codes: np.ndarray | None = None) -> None:
        """Rows this process just appended (``texts`` decoded from them, ``codes`` their embedding codes when the
        append stored them too), which took the store to ``fp``: every follower applies them. Caller holds the write
        lock and has checked that nobody else changed the namespace in between (:meth:`expects`)."""
        first, tokens = len(self.index), len(self.index.content)
        self._apply(rows, codes)
        self.saw(fp)
        self._sync_followers(rows)
        self.truth.sync(self.index, {first + k: t for k, t in enumerate(texts)})
        self._after_append(len(self.index.content) - tokens)

    def expects(self, fp: StoreFingerprint, appended: int) -> bool:
        """Whether the store's fingerprint ``fp`` is exactly this state's plus one append of ``appended`` rows."""
        return (fp.generation == self.seen.generation and fp.next_seq == self.seen.next_seq + appended
                and fp.version == self.seen.version + 1 and fp.follows(self.seen))

    def _apply(self, rows: list[MessageRow], codes: np.ndarray | None = None,
               at: StoreFingerprint | None = None) -> None:
        """``at``: the fingerprint the rows were read at (``seen`` when None)."""
        self.index.append(rows)
        if self.host.embed is not None and rows:
            self._sync_codes(rows, codes, at)
        self.changed += len(rows)

    def _sync_followers(self, rows: list[MessageRow], load: bool = True) -> None:
        """The lifecycle and the entry registry follow the co-index (when they are loaded)."""
        life = self._life
        if life is not None and life.loaded:
            with life.lock:
                life.sync(self.index, rows)
                life.version = self.seen.version
        elif life is None and load and self.lifecycle_active and "life" not in self._warming:
            # a write loads the lifecycle, so that units follow every append (and consolidation stays on writes)
            self._life = self._load_life()
        if self.entries is not None and rows and getattr(self.entries, "touched_by", None) is not None \
                and self.entries.touched_by(rows, ()):
            self.entries = None

    def saw(self, fp: StoreFingerprint) -> None:
        """The followers now reflect the store at ``fp`` (after this process applied its own change)."""
        self.seen = fp
        life = self._life
        if life is not None and life.loaded:
            life.version = fp.version

    def remove(self, ids: list[int]) -> None:
        """Messages deleted by this process: every follower drops them. Caller holds the write lock."""
        self._remove(ids)

    def _remove(self, ids: list[int]) -> None:
        self.forget_rows(ids)
        idx = self.index
        before = None
        prof = self._profiles
        if prof is not None and "profiles" not in self._warming:
            rows = sorted(r for r in (idx.row_of.get(int(i)) for i in ids)
                          if r is not None and r < self._profiles_done)
            if 2 * len(rows) <= self._profiles_done:  # else a rebuild reads fewer messages than taking these out
                names = list(idx.speakers)
                parts: dict = {}
                for k in range(0, len(rows), _TALLY_ROWS):  # their texts read a few at a time, never all held
                    chunk = rows[k: k + _TALLY_ROWS]
                    who = [names[c] for c in idx.speaker.view[chunk].tolist()]
                    prof.tally(((n, t) for n, t in zip(who, idx.texts_of(chunk)) if n is not None), parts)
                before = (idx.speaker.view[: len(idx)].copy(), names, idx.ts.view[: len(idx)].copy(), set(rows), parts)
        keep = idx.rebuild_without(ids)
        if keep is None:
            return
        self.changed += int((~keep).sum())
        self.truth.remove_rows(keep, idx)
        self._truth_updates = [i for i in self._truth_updates if i in idx.row_of]
        if "truth" in self._warming:  # row numbers moved under the rebuild: start it again
            self._stop_warming("truth")
            self._warm_truth()
        self.verbosity = None  # rows were renumbered
        self.standing = None
        self.preferences = None
        if self.codes is not None:
            self.codes = self.codes.without(ids)
        redone = before is not None and self._profiles_without(keep, *before)  # the deleted messages taken out
        if not redone and (self._profiles is not None or "profiles" in self._warming or _CATCH_UP in self._warming):
            self._stop_warming("profiles")
            self._stop_warming(_CATCH_UP)
            self._drop_profiles()  # rebuilt from the surviving messages when next needed
        life = self._life
        if life is not None and life.loaded:
            with life.lock:
                life.remove_messages(ids, self.index)
        if self.entries is not None and getattr(self.entries, "touched_by", None) is not None \
                and self.entries.touched_by((), ids):
            self.entries = None

    def update(self, rows: list[MessageRow]) -> None:
        """New metadata of messages (read back after an update): every follower re-derives what depends on it.
        Caller holds the write lock."""
        self._update(rows)

    def _update(self, rows: list[MessageRow]) -> None:
        self.forget_rows([r.id for r in rows])
        idx = self.index
        changed = idx.update(rows)
        if changed:
            self.truth.update_rows(idx, changed)
            if "truth" in self._warming:
                self._truth_updates.extend(int(idx.ids.a[r]) for r in changed)
        self.changed += len(rows)
        life = self._life
        if life is not None and life.loaded:
            with life.lock:
                life.update_messages(rows, idx)
        elif "life" in self._warming:  # the rebuild may have read the old metadata: applied again when it is done
            self._life_updates.extend(r.id for r in rows)
        if self.entries is not None and getattr(self.entries, "touched_by", None) is not None \
                and self.entries.touched_by(rows, ()):
            self.entries = None

    # -- embedding codes ------------------------------------------------------------------------------------
    def _load_codes(self) -> set[int]:
        """The stored codes of the indexed messages; returns the ids that have one."""
        self.codes = EmbeddingCodes(self.config.embed_bits)
        width = self.config.embed_bits // 8
        stored = {i: c for i, c in self.host.store.get_codes(self.name).items() if isinstance(c, bytes)}
        # every blob is the code plus the int8 vector (one length for one model), or a code alone (older stores);
        # anything else (damaged, or saved with other settings) is recomputed like a missing code
        lengths = [len(c) for c in stored.values() if len(c) > width]
        full = max(set(lengths), key=lengths.count) if lengths else width
        stored = {i: c for i, c in stored.items() if len(c) in (width, full)}
        have = [i for i in self.index.ids.view.tolist() if i in stored]
        for n in sorted({len(stored[i]) for i in have}):
            part = [i for i in have if len(stored[i]) == n]
            self.codes.add(part, np.frombuffer(b"".join(stored[i] for i in part), dtype=np.uint8).reshape(
                len(part), n))
        return set(stored)

    def _sync_codes(self, rows: list[MessageRow], codes: np.ndarray | None = None,
                    at: StoreFingerprint | None = None) -> None:
        """Codes of ``rows`` into the in-memory index. ``codes`` are theirs when the append already stored them;
        otherwise missing codes are computed and saved, best effort: they are derived, so a busy or read-only store
        keeps them in memory only and a later load recomputes them. ``at``: the fingerprint the rows were read at
        (``seen`` when None); on a store that keeps stamps the codes are saved only while the namespace's history
        still holds that change, so that a data-only restore landing while the embedding ran (message ids of the
        history before given to other messages) does not get the old texts' codes."""
        if self.codes is None:
            stored = self._load_codes()
            rows = [r for r in rows if r.id not in stored]
            codes = None
        if rows and codes is None:
            host = self.host
            # another handle's messages: the codes it stored with them are used, as an open uses them; only messages
            # without a usable one are embedded here (every handle embedded every other handle's messages again)
            width = self.codes.width
            dims = self.codes.dims
            found = {i: c for i, c in host.store.codes_of(self.name, [r.id for r in rows]).items()
                     if isinstance(c, bytes) and (len(c) == width or (len(c) > width and (not dims
                                                                                          or len(c) - width in dims)))}
            if found:
                have = [r.id for r in rows if r.id in found]
                for n in sorted({len(found[i]) for i in have}):
                    part = [i for i in have if len(found[i]) == n]
                    self.codes.add(part, np.frombuffer(b"".join(found[i] for i in part), dtype=np.uint8).reshape(
                        len(part), n))
                rows = [r for r in rows if r.id not in found]
        if rows and codes is None:
            host = self.host
            lines = [line(r.speaker, r.role, tokenizer.decode(r.tokens)) for r in rows]
            codes = encode(host.hasher, host.embed(lines), len(lines))
            if not host.store.read_only:
                at = at if at is not None else self.seen
                try:
                    if at.stamp is not None:
                        if not host.store.put_codes(self.name, [r.id for r in rows], codes, version=at.version,
                                                    stamp=at.stamp):
                            log.info("embedding codes of namespace %r not saved: its history was rewritten while "
                                     "they were computed", self.name)
                    else:  # a store without stamps (a SQLite file: its history is not rewritten under a handle)
                        host.store.put_codes(self.name, [r.id for r in rows], codes)
                except StoreError as exc:
                    log.warning("embedding codes of namespace %r kept in memory only: %s", self.name, exc)
        if rows:
            self.codes.add([r.id for r in rows], codes)

    def _load_all_codes(self) -> None:
        """The codes of every indexed message: the stored ones, the missing ones computed from the co-index's text
        (a message stored without ``embed=``, or a damaged code dropped by ``hippo check --repair``)."""
        stored = self._load_codes()
        idx = self.index
        missing = [r for r, i in enumerate(idx.ids.view.tolist()) if i not in stored]
        if not missing:
            return
        rows = [MessageRow(id=int(idx.ids.a[r]), namespace=self.name, seq=int(idx.seqs.a[r]), n_tokens=0,
                           speaker=idx.speakers[int(idx.speaker.a[r])] or None, role=ROLES[int(idx.role.a[r])],
                           ts=None, session_id=None, metadata={}, created_at=0.0, tokens=idx.tokens_of(r))
                for r in missing]
        self._sync_codes(rows)

    def embedding_codes(self, ids: list[int]) -> np.ndarray | None:
        """SimHash codes of the user embeddings of these messages as 64-bit words, or None (for the hierarchy)."""
        return None if self.codes is None else self.codes.words_of(ids)

    def _external_codes(self):
        return self.embedding_codes if (self.host.embed is not None
                                        and self.config.embed_bits == self.config.hierarchy.code_bits) else None

    # -- lifecycle (hierarchy, strengths) -------------------------------------------------------------------
    @property
    def lifecycle_active(self) -> bool:
        return self.config.hierarchy.enabled or self.config.decay.enabled

    def life(self, wait: bool = True) -> Life | None:
        """The lifecycle follower, loaded and caught up: from its snapshot plus the changes after it, or rebuilt.
        A rebuild runs in the background; with ``wait=False`` this returns None until it is done (recall then
        answers with the flat engine), else it waits for it. A loaded lifecycle following appends it fell behind
        (:meth:`catch_up`) is waited for either way. None when neither the hierarchy nor decay is enabled."""
        if not self.lifecycle_active:
            return None
        life = self._life
        if life is not None and life.loaded and life.version == self.seen.version:
            return life
        while True:
            with self.host.lock.write():
                life = self._life
                if life is None and "life" not in self._warming:
                    self._life = life = self._load_life()
                if life is not None:
                    if life.version != self.seen.version or life.known() != len(self.index):
                        with life.lock:
                            life.sync(self.index)
                            life.version = self.seen.version
                    return life
                warm = self._warming.get("life")
            following = warm is not None and warm.follows
            if not wait and not following:
                return None
            if warm is not None:
                if following:  # the loaded lifecycle catching up with another handle's appends: waited for
                    warm.hurry.set()
                warm.join()
                if warm.error is not None:
                    raise warm.error

    def current_life(self) -> Life | None:
        """The lifecycle follower if it is loaded (never loads it)."""
        life = self._life
        return life if life is not None and life.loaded else None

    def _new_life(self) -> Life:
        life = Life(self.config, self.host.store, self.name, self._external_codes())
        # the turn clock is the namespace's next seq, which deletions do not turn back: a lifecycle rebuilt from
        # the surviving messages ages and expires them as the one it replaces did
        life.turn = self.seen.next_seq
        return life

    def _load_life(self, ready: Callable[[], None] | None = None) -> Life | None:
        """The lifecycle from its snapshot and the changes after it (caller holds the write lock); None when that
        is a long catch-up or a rebuild, started in the background. ``ready`` waits for the co-index's Content DWM
        (still being built when the lifecycle loads alongside it)."""
        ready = ready or (lambda: None)
        idx = self.index
        if not self.persistable or not len(idx):
            ready()
            return self._built_life()
        store = self.host.store
        snap = None
        got = None

        def load() -> Life:
            # run again from the start when the store's connection was lost in the middle (each run builds a new
            # Life; catching up applies only what the previous run did not)
            nonlocal snap
            snap = None
            if got is None:
                raise _Later("no snapshot")
            covers, meta, arrays, head = got
            if covers.version > self.seen.version:
                self.catch_up()  # saved by a process that is ahead of us: catch up first
            feed = store.changes(self.name, covers.version)
            if feed is None:
                raise _Later("older than the change feed")
            runs = _runs(feed, upto=self.seen.version)
            backlog = sum(len(a) for k, a in runs if k != "append") + \
                int((idx.seqs.view >= covers.next_seq).sum())
            snap = (covers, meta, arrays, runs, head)
            if backlog > SYNC_ROWS:
                raise _Later(f"{backlog} messages behind its snapshot")
            life = self._life_from(snap, ready)
            ready()
            self._replay_life(life, runs, covers.next_seq)
            return life

        try:
            # Taken before the block: the prefetching thread needs a connection of its own, which a pool of one
            # (or one that other threads hold) gives it only once this thread's block has returned its connection.
            got = self._life_blob()
            life = store.read_consistently(load)
            with life.lock:
                life.sync(idx)  # a safety net: the feed accounts for every message
                life.version = self.seen.version
            return life
        except _Later as exc:
            if snap is not None or len(idx) > SYNC_ROWS:
                log.info("namespace %r: the lifecycle catches up in the background (%s)", self.name, exc)
        except _UNREADABLE as exc:
            log.warning("namespace %r: rebuilding the lifecycle in the background (snapshot unusable: %s)",
                        self.name, exc)
            snap = None
        ready()
        if snap is None and len(idx) <= SYNC_ROWS:
            life = self._built_life()  # small enough to build from the messages right here
            with life.lock:
                self._carry_uses(life)
            return life
        self._start("life", lambda warm: self._build_life(warm, snap))
        return None

    def _carry_uses(self, life: Life) -> None:
        """A lifecycle rebuilt from the messages in place of a stored one it could not load (saved under other decay
        or hierarchy settings, or older than the change feed) keeps the stored one's uses of messages
        (:meth:`Life.carry_uses`); a damaged one is left behind. Caller holds ``life.lock``."""
        store = self.host.store
        try:
            blob, access = store.read_consistently(lambda: (store.get_units(self.name, persist.LIFE),
                                                            store.get_units(self.name, persist.ACCESS)))
            if blob is None:
                return
            saved = persist.decode(blob, persist.LIFE, any_settings=True)
            got = None
            if access is not None:
                try:
                    got = persist.decode(access, persist.ACCESS)[1:]
                except _UNREADABLE:
                    got = None  # only the latest accesses are lost
            n = life.carry_uses(saved, got)
            if n:
                log.info("namespace %r: the rebuilt lifecycle keeps the uses of %d messages", self.name, n)
        except _UNREADABLE as exc:
            log.warning("namespace %r: the uses the stored lifecycle recorded are lost (%s)", self.name, exc)

    def _prefetch_life(self) -> None:
        """Read and inflate the lifecycle snapshot in a helper thread while the co-index is built (both are mostly C
        work that releases the interpreter): the first recall after a restart needs both."""
        if not (self.persistable and self.lifecycle_active) or self._life is not None:
            return
        done = threading.Event()
        box: list = []

        def work() -> None:
            try:
                box.append(self._read_life_blob())
            except BaseException as exc:  # noqa: BLE001 - handed to the reader, which raises it
                box.append(exc)
            finally:
                done.set()

        self._life_prefetched = (done, box)
        threading.Thread(target=work, name=f"hippo-prefetch-{self.name}", daemon=True).start()

    def _read_life_blob(self):
        """``(covers, meta, arrays, head)`` of the stored lifecycle (``head``: :func:`snapshot.head` of the blob), or
        None."""
        blob = self.host.store.get_units(self.name, persist.LIFE)
        return None if blob is None else (*persist.decode(blob, persist.LIFE, self._new_life().settings()),
                                           snapshot.head(blob))

    def _life_blob(self):
        """The decoded lifecycle snapshot (prefetched when the co-index was opened), or None."""
        pre, self._life_prefetched = self._life_prefetched, None
        if pre is not None and pre[0].wait(60) and pre[1]:
            got = pre[1][0]
            if isinstance(got, BaseException):
                raise got
            return got
        return self._read_life_blob()

    def _built_life(self) -> Life:
        life = self._new_life()
        with life.lock:
            life.sync(self.index)
            life.version = self.seen.version
        return life

    def _life_from(self, snap: tuple, ready: Callable[[], None] | None = None) -> Life:
        """The lifecycle of a snapshot, with the accesses saved after it (caller holds a lock on the co-index)."""
        covers, meta, arrays, _runs_, head = snap
        life = Life.from_snapshot(self.config, self.host.store, self.name, meta, arrays, self.index,
                                  self._external_codes(), ready)
        access = self.host.store.get_units(self.name, persist.ACCESS)
        # what this state matches in the store: its first save writes over exactly these blobs, or merges
        life.stored = {persist.LIFE: head, persist.ACCESS: None}
        if access is not None:
            life.stored[persist.ACCESS] = snapshot.head(access)
            try:
                _, ameta, aarrays = persist.decode(access, persist.ACCESS)
                if not life.apply_access_snapshot(ameta, aarrays):
                    life.stored = None  # saved over another lifecycle: looked at again before the first save
            except _UNREADABLE as exc:  # only recent accesses are lost
                log.warning("namespace %r: ignoring the saved accesses (%s)", self.name, exc)
                life.stored = None
        self.saved[persist.LIFE] = covers.version
        return life

    def _replay_life(self, life: Life, runs: list[tuple[str, Any]], next_seq: int,
                     lock: RWLock | None = None, warm: _Warm | None = None) -> None:
        """Apply to a lifecycle snapshot the changes made after it, in order (messages appended then deleted in
        between are gone: the only case where the result may differ from what a live process built). With
        ``lock``, the co-index is read in pieces under it (a background catch-up)."""
        store = self.host.store
        for kind, arg in runs:
            if kind == "append":
                with lock.read() if lock is not None else _nolock():
                    seqs = self.index.seqs.view
                    lo, hi = max(arg[0], next_seq), arg[1]
                    rows = np.arange(int(np.searchsorted(seqs, lo)), int(np.searchsorted(seqs, hi, side="right")))
                    ids = [i for i in self.index.ids.view[rows].tolist() if i not in life.decay]
                step = _CHUNK if lock is not None else max(1, len(ids))
                for k in range(0, len(ids), step):
                    t0 = time.perf_counter()
                    with lock.read() if lock is not None else _nolock():
                        idx = self.index
                        positions = [idx.row_of[i] for i in ids[k: k + step] if i in idx.row_of]
                        with life.lock:
                            life._replay(idx, positions)
                    with life.lock:
                        life.consolidate_ready(partial=self.config.hierarchy.consolidate_on_add)
                    if warm is not None:
                        warm.breathe(t0)
            elif kind == "delete":
                with lock.read() if lock is not None else _nolock():
                    with life.lock:
                        life.remove_messages([i for i in arg if i in life.decay], self.index)
            else:
                rows = list(store.rows(self.name, sorted(i for i in arg if i in life.decay)).values())
                with lock.read() if lock is not None else _nolock():
                    with life.lock:
                        life.update_messages(rows, self.index)

    def _build_life(self, warm: _Warm, snap: tuple | None,
                    behind: tuple[Life, list[tuple[str, Any]], int] | None = None) -> None:
        """Bring the lifecycle up to date off the request path: from a snapshot that lags, from a loaded lifecycle
        that fell behind (``behind``: it, the changes it has not followed and the next seq it had seen), or from the
        messages (and a legacy snapshot); the co-index is read in small pieces under the read lock, the result
        swapped in under the write lock."""
        lock = self.host.lock
        life = None
        if behind is not None:
            life = behind[0]
            self._replay_life(life, behind[1], behind[2], lock, warm)
        elif snap is not None:
            with lock.read():
                if self.index is None:
                    return
                try:
                    life = self._life_from(snap)
                except _UNREADABLE as exc:
                    log.warning("namespace %r: rebuilding the lifecycle (snapshot unusable: %s)", self.name, exc)
            if life is not None:
                self._replay_life(life, snap[3], snap[0].next_seq, lock, warm)
        if life is None:
            life = self._new_life()
            msgs, meta, created = [], {}, {}
            pos = 0
            while True:
                if warm.stop.is_set():
                    return
                t0 = time.perf_counter()
                with lock.read():
                    idx = self.index
                    if idx is None:
                        return
                    part = list(range(pos, min(len(idx), pos + _CHUNK)))
                    got = life._msgs(idx, part) if part else ([], {}, {})
                if not part:
                    break
                msgs += got[0]
                meta.update(got[1])
                created.update(got[2])
                pos += len(part)
                warm.breathe(t0)
            with life.lock:
                life._load(None, (msgs, meta, created))
                self._carry_uses(life)
        partial = self.config.hierarchy.consolidate_on_add
        while not warm.stop.is_set():  # what was appended while the above ran
            t0 = time.perf_counter()
            with lock.read():
                idx = self.index
                if idx is None:
                    return
                known = life.decay.live_keys()
                todo = np.flatnonzero(~np.isin(idx.ids.view, known))[:_CHUNK * 4].tolist()
                if len(todo) <= _CHUNK:
                    break
                with life.lock:
                    life._replay(idx, todo)
            warm.breathe(t0)
        while not warm.stop.is_set():  # consolidation, a few batches at a time
            t0 = time.perf_counter()
            with life.lock:
                if not life.consolidate_ready(partial=partial, max_batches=2):
                    break
            warm.breathe(t0)
        with lock.write():
            if warm.stop.is_set() or self.index is None:
                return
            updated, self._life_updates = self._life_updates, []
            with life.lock:
                life._reconcile(self.index)  # by id: deletions and appends made meanwhile may balance in number
                life.sync(self.index)
                if updated:
                    life.update_messages(list(self.host.store.rows(self.name, updated).values()), self.index)
                life.version = self.seen.version
                if self._life_removed:  # its first save writes over nothing, without reading the store first
                    life.stored, self._life_removed = {persist.LIFE: None, persist.ACCESS: None}, False
            self._life = life

    def save_due(self) -> bool:
        """Whether enough changed since the last save (see :data:`SAVE_SHARE`)."""
        if not self.writable or self.index is None:
            return False
        life = self.current_life()
        changed = self.changed + (life.dirty if life is not None else 0)
        return changed >= max(self.config.hierarchy.persist_every, len(self.index) // SAVE_SHARE)

    def save_derived(self, *, force: bool = False, closing: bool = False) -> bool:
        """Save the snapshots of the loaded followers that changed since they were last saved (best effort: they
        are rebuildable from the messages); ``force`` rewrites them all. When only recall happened, only the
        accessed strength records are written. Returns False when nothing could be written. Caller holds the write
        lock.

        Snapshots are written only by a state that has seen the namespace's latest change, so none replaces a
        snapshot another handle saved, covering a later point of the change feed, with an older one (every other
        handle's next open would replay the difference). One behind another handle's appends or updates writes
        nothing when it has nothing of its own to save (what the other handle changed is that handle's to save);
        otherwise it first catches up with them (what its next read would do), and then rewrites the co-index only
        when its annotations are complete, as the other handle's snapshot may hold them and the next open would
        annotate every message again. One behind a deletion writes nothing (the deleting handle rewrote the
        snapshots without the deleted messages, or deleted the namespace, which must not come back) unless it holds
        accesses of its own, which nothing else holds: it then catches up with the deletion (its followers drop
        the deleted messages, as the deleting handle's did) and saves, its lifecycle merged with the stored one;
        when catching up reads the namespace again instead (deleted, or past the change feed), it writes nothing.

        ``closing`` (``close()``): when all that changed since the stored snapshots is a few appended messages
        (:meth:`_left_to_feed`), nothing is written: the next open applies them from the change feed."""
        # Another handle's change between the catch-up and the write: catch up again. A closed state (the save at
        # close, its last) keeps trying for busy_timeout_s: three attempts while another app server appended steadily
        # all lost, and close() dropped this process's reinforcements, which nothing else holds.
        deadline = time.monotonic() + (self.config.busy_timeout_s if self._closed else 0.0)
        attempt = 0
        while attempt < 3 or time.monotonic() < deadline:
            attempt += 1
            if not self.writable or self.index is None:
                return False
            now = self.host.store.state(self.name)
            life = self.current_life()
            deleted = now.generation != self.seen.generation
            if deleted and (life is None or not life.accessed):
                return False
            behind = now != self.seen
            if closing and not force and not behind and self._left_to_feed():
                return True
            if behind:
                if not force and not self._own_unsaved():
                    return True  # nothing of this handle's to save: a reader closing costs no catch-up
                self.catch_up()
                if self.index is None or self.seen.generation != now.generation:
                    return False
                if deleted and self.current_life() is not life:
                    return False  # the namespace was read again (deleted, or past the feed): nothing here to save
            written = self._save_derived(force, behind)
            if written is not None:
                return written
        if self._closed and self._own_unsaved():
            log.warning("namespace %r: other handles kept changing it; what this process derived and its "
                        "reinforcements were not saved at close", self.name)
        return False

    def _left_to_feed(self) -> bool:
        """Whether what changed since the snapshots this state loaded or wrote is only appended messages, at most
        :data:`CLOSE_SLACK` of them holding at most :data:`CLOSE_SLACK_TOKENS` tokens, and nothing else this state
        would save is pending (annotations or profiles completed, accesses, units recorded with the time of a
        call, an LLM's summaries): the next open applies those messages from the change feed, as it applies
        another handle's, and gets what this state holds. A close after a few adds then writes nothing sized by the
        history, and the next open (and every one after it that saves nothing, a search's or a reader's) applies
        a bounded number of tokens."""
        if CLOSE_SLACK <= 0 or self.truth.deferred or self._truth_unsaved:
            return False
        life = self.current_life()
        need = [persist.INDEX]
        if self._profiles_unsaved and len(self.index) > SYNC_ROWS:
            # followed the appends (read again at the next use) or built here (saved); a short namespace's profiles
            # are read from its messages at each open
            need.append(persist.PROFILES)
        if life is not None:
            if life.accessed or life.pending is not None or life.stamped or life.version != self.seen.version \
                    or "life" in self._warming:
                return False
            need.append(persist.LIFE)
        if any(k not in self.saved for k in need):
            return False
        try:
            changes = self.host.store.changes(self.name, min(self.saved[k] for k in need))
        except HippoError:
            return False
        if changes is None or any(c.kind != "append" for c in changes):
            return False
        if sum(c.last_seq - c.first_seq + 1 for c in changes) > CLOSE_SLACK:
            return False
        if not changes:
            return True
        # the appended messages are the rows from the first appended seq on (a namespace's seqs only grow)
        appended = self.index.seqs.view >= min(c.first_seq for c in changes)
        return float(self.index.doc_lengths()[appended].sum()) <= CLOSE_SLACK_TOKENS

    def _own_unsaved(self) -> bool:
        """Whether this state holds anything :meth:`save_derived` would write: changes, annotations, profiles or
        strength records not saved yet."""
        life = self.current_life()
        return bool(self.changed or self._truth_unsaved or self._profiles_unsaved
                    or (life is not None and (life.dirty or life.accessed)))

    def _save_derived(self, force: bool, behind: bool = False) -> bool | None:
        """One attempt of :meth:`save_derived`: None when the namespace changed before the write (nothing written).
        ``behind``: the state has just caught up with another handle's changes."""
        fp = self.seen
        payloads: dict[str, snapshot.Blob | None] = {}
        pieces: dict[str, snapshot.Pieces] = {}  # of the blobs written now, by kind
        opened: list[snapshot.Blob] = []  # blobs written before, read back to copy their unchanged pieces
        life = self.current_life()
        if life is not None and (life.version != fp.version or "life" in self._warming):
            life = None
        truth_ready = not self.truth.deferred and self.truth.done == len(self.index)
        try:
            write_index = force or self.changed or (truth_ready and (self._truth_unsaved or self._foreign))
            if not write_index and self._foreign and not self.host.store.has_units(self.name, persist.INDEX):
                write_index = True  # no one saved a co-index: one without annotations spares the next open a rebuild
            if write_index and (force or truth_ready or not behind):
                reuse = self._pieces_of(persist.INDEX, pieces, opened)  # read back before the arrays are made
                imeta, iarrays = self.index.to_snapshot()
                meta: dict[str, Any] = {"index": imeta, "truth": None}
                arrays = persist.join(index=iarrays)
                if truth_ready:
                    meta["truth"], tarrays = self.truth.to_snapshot()
                    arrays.update(persist.join(truth=tarrays))
                payloads[persist.INDEX] = persist.encode(persist.INDEX, fp, meta, arrays, pieces=reuse)
                del meta, arrays, imeta, iarrays  # not held through the lifecycle's save
                if truth_ready:
                    del tarrays
            expect: dict[str, bytes | None] | None = None
            if life is not None:
                with life.lock:
                    if (force or life.dirty or not life.save_id or life.accessed) and \
                            (life.stored is None or life.pending is not None):
                        self._merge_saved_life(life, fp)
                    sent = life.own_accesses()
                    if force or life.dirty or not life.save_id:
                        reuse = self._pieces_of(persist.LIFE, pieces, opened)
                        lmeta, larrays = life.to_snapshot()
                        payloads[persist.LIFE] = persist.encode(persist.LIFE, fp, lmeta, larrays, life.settings(),
                                                                pieces=reuse)
                        del lmeta, larrays
                        payloads.update({k: None for k in (persist.ACCESS, *persist.LEGACY)})
                    elif life.accessed:
                        ameta, aarrays = life.to_access_snapshot()
                        payloads[persist.ACCESS] = persist.encode(persist.ACCESS, fp, ameta, aarrays)
                    if persist.LIFE in payloads or persist.ACCESS in payloads:
                        # written only over the lifecycle and accesses this state merged: another handle's save
                        # in between (its reinforcements) is merged first, never replaced (see _merge_saved_life)
                        expect = {k: life.stored[k] for k in (persist.LIFE, persist.ACCESS)}
                        heads = {persist.LIFE: snapshot.head(payloads[persist.LIFE]) if persist.LIFE in payloads
                                 else life.stored[persist.LIFE],
                                 persist.ACCESS: None if payloads.get(persist.ACCESS) is None
                                 else snapshot.head(payloads[persist.ACCESS])}
                        life.pending = (heads, sent)
            prof = self._profiles
            if prof is not None and self._profiles_done == len(self.index) and "profiles" not in self._warming \
                    and (force or self._profiles_unsaved):
                with self._profiles_lock:
                    pmeta, parrays = prof.to_snapshot()
                    payloads[persist.PROFILES] = persist.encode(
                        persist.PROFILES, fp, {"profiles": pmeta, "last_id": self._last_id()}, parrays,
                        prof.settings())
            if not payloads:
                return True
            # not written once another handle changed the namespace after ``fp``: a deletion this state has not
            # applied (its derived text must not be written back), or an append or update that handle may have
            # saved in newer snapshots
            for kind in pieces:  # until the outcome is known, no stored blob is known to be this state's
                self._pieces.pop(kind, None)
            if not self.host.store.put_units_many(self.name, payloads, generation=fp.generation, version=fp.version,
                                                  expect=expect, stamp=fp.stamp):
                return None  # a lifecycle save left pending: merged with what is stored before the next attempt
        except HippoError as exc:
            log.warning("could not save the derived state of namespace %r: %s", self.name, exc)
            return False
        finally:  # each blob is written to a temporary file as it is encoded, and to the store from there
            for blob in (*payloads.values(), *opened):
                if blob is not None:
                    blob.close()
        self._pieces.update(pieces)
        self.saved.update({k: fp.version for k, v in payloads.items() if v is not None and k != persist.ACCESS})
        if persist.INDEX in payloads:
            self.changed = self._foreign = 0
            self._truth_unsaved = not truth_ready
        if persist.LIFE in payloads:
            life.dirty = life.stamped = 0
        if expect is not None:
            with life.lock:
                life.saved_as(*life.pending)
        if persist.PROFILES in payloads:
            self._profiles_unsaved = False
        self._trim()
        return True

    def _pieces_of(self, kind: str, made: dict[str, snapshot.Pieces], opened: list[snapshot.Blob]
                   ) -> persist.Pieces:
        """What :func:`persist.encode` needs to copy the unchanged pieces of the ``kind`` blob this state wrote last
        (read back from the store, to a temporary file appended to ``opened``, when that blob is large enough to pay
        for the read, and used only if it is still the stored one) and to record the pieces of the new blob in
        ``made``."""
        old = self._pieces.get(kind)
        blob = None
        if old is not None and old.size >= persist.REUSE_BYTES:
            try:
                blob = self.host.store.get_units_blob(self.name, kind)
            except HippoError:
                blob = None
            if blob is not None:
                opened.append(blob)
        return persist.Pieces(kind, None if blob is None else (old, blob), made)

    def _merge_saved_life(self, life: Life, fp: StoreFingerprint) -> None:
        """Read the stored lifecycle and accesses and fold them into ``life`` (:meth:`Life.merge_saved`): they are
        not, or may not be, what ``life`` last matched (another handle saved since, or ``life`` was rebuilt from the
        messages, or its last save's outcome is not known). Read only then: a single handle saving over its own
        blobs reads nothing. Caller holds the write lock and ``life.lock``."""
        store = self.host.store
        blob, access = store.read_consistently(lambda: (store.get_units(self.name, persist.LIFE),
                                                        store.get_units(self.name, persist.ACCESS)))
        heads = {persist.LIFE: None if blob is None else snapshot.head(blob),
                 persist.ACCESS: None if access is None else snapshot.head(access)}
        saved = got = None
        try:
            if blob is not None:
                saved = persist.decode(blob, persist.LIFE, life.settings())
            if access is not None:
                got = persist.decode(access, persist.ACCESS)[1:]
        except _UNREADABLE as exc:  # replaced by this state's save
            log.warning("namespace %r: the saved lifecycle cannot be merged (%s)", self.name, exc)
            saved = got = None
        try:
            life.merge_saved(saved, got, heads, fp.version)
        except _UNREADABLE as exc:
            log.warning("namespace %r: the saved lifecycle cannot be merged (%s)", self.name, exc)
            life.merge_saved(None, None, heads, fp.version)

    def scrub(self) -> None:
        """After a deletion: rewrite the saved snapshots, so no derived text of the deleted messages (facts,
        summaries, profile values) stays in the store. Caller holds the write lock."""
        if not self.writable or self.index is None:
            return
        if self._life is None and self.lifecycle_active and "life" not in self._warming:
            self._life = self._load_life()  # a snapshot not loaded yet is brought up to date and rewritten
        stale: dict[str, bytes | None] = {}
        if not self.save_derived(force=True):
            # not rewritten (other handles kept changing the namespace): the saved snapshots, which may hold
            # derived text of the deleted messages, are removed instead; they are rebuilt from the messages
            stale.update({k: None for k in (*persist.KINDS, *persist.LEGACY)})
        if self._profiles is None or self._profiles_done < len(self.index):
            # not rewritten above (dropped, or behind the last appends): the saved ones may hold a deleted value
            stale[persist.PROFILES] = None
        if self.current_life() is None or "life" in self._warming:
            # being rebuilt in the background, so not rewritten above: the rebuild saves its own later
            stale.update({k: None for k in (persist.LIFE, persist.ACCESS, *persist.LEGACY)})
        if stale:
            try:
                self.host.store.put_units_many(self.name, stale)
            except HippoError as exc:
                log.warning("could not remove the stale snapshots of namespace %r: %s", self.name, exc)
            else:
                for kind in stale:
                    self._pieces.pop(kind, None)
                if persist.LIFE in stale and "life" in self._warming:
                    self._life_removed = True

    def _last_id(self) -> int:
        return int(self.index.ids.a[len(self.index) - 1]) if len(self.index) else -1

    def _trim(self) -> None:
        """Drop the changes no saved snapshot and no lagging handle needs (best effort)."""
        store = self.host.store
        need = [persist.INDEX] + ([persist.LIFE] if self.lifecycle_active else [])
        if any(k not in self.saved for k in need):
            return  # a snapshot this process has not seen may still need the feed
        upto = min(self.saved[k] for k in need) - RETAIN_CHANGES
        if upto > 0:
            try:
                store.trim_changes(self.name, upto)
            except HippoError:
                pass

    # -- background rebuilds --------------------------------------------------------------------------------
    def _start(self, what: str, work: Callable[[_Warm], None], follows: bool = False) -> bool:
        """Run ``work`` in the background; False when it was not started (already running, or the state closed)."""
        with self._warm_lock:
            if what in self._warming or self._closed:
                return False
            warm = self._warming[what] = _Warm(self, what, work)
            warm.follows = follows
            warm.start()  # under the lock: a close() in another thread never finds it registered but not started
            return True

    def _stop_warming(self, what: str | None = None) -> None:
        with self._warm_lock:
            todo = [w for k, w in self._warming.items() if what is None or k == what]
            for w in todo:
                w.stop.set()
                self._warming.pop(w.what, None)

    def wait_warm(self, timeout: float | None = None) -> bool:
        """Wait until no follower is rebuilding in the background; False on timeout."""
        with self._warm_lock:
            todo = list(self._warming.values())
        for w in todo:
            w.join(timeout)
            if w.is_alive():
                return False
        return True

    def close(self, finish: bool = False) -> None:
        """Stop background rebuilds (they hold no store transaction between their steps). With ``finish`` (a
        writable store being closed) the rebuilds of whole followers (:data:`_FINISH_AT_CLOSE`) first run to their
        end without resting, for the caller to save what they built (at most :data:`CLOSE_WAIT` seconds)."""
        if finish:
            with self._warm_lock:
                ending = [w for k, w in self._warming.items() if k in _FINISH_AT_CLOSE]
                self._closed = True  # what is running finishes; the save at close starts nothing new
            for w in ending:
                done = w.progress
                log.info("namespace %r: finishing the rebuild of the %s before closing%s", self.name,
                         _FINISH_AT_CLOSE[w.what],
                         "" if done is None else f" ({done[0]:,} of {done[1]:,} messages done)")
                w.hurry.set()
            deadline = time.monotonic() + CLOSE_WAIT
            for w in ending:
                if w is not threading.current_thread():
                    w.join(max(0.0, deadline - time.monotonic()))
        with self._warm_lock:
            todo = list(self._warming.values())
            self._closed = True
        self._stop_warming()
        for w in todo:
            if w is not threading.current_thread():
                w.join(30)

    def _warm_truth(self) -> None:
        self._start("truth", self._build_truth)

    def wait_annotated(self) -> None:
        """Wait until a background annotation of the messages' time and truth (a long history opened without its
        annotations, or a long import) has ended, hurried (no rests): for a question about the annotations
        themselves (:func:`hippo.engine.timeline.contradictions`, :func:`~hippo.engine.timeline.timeline`), which
        the neutral stand-in would answer with no supersedes link and no event time. Caller holds no lock (the
        annotation swaps itself in under the write lock)."""
        while True:
            with self._warm_lock:
                warm = self._warming.get("truth")
            if warm is None or warm is threading.current_thread():
                return
            warm.hurry.set()
            warm.join()

    def _build_truth(self, warm: _Warm) -> None:
        """Annotate the rows the stand-in left neutral, on a copy, a piece at a time under the read lock."""
        lock = self.host.lock
        with lock.read():
            if self.index is None:
                return
            layout = self.index.layout
            truth = self.truth.copy(self.index, self.truth.annotated)
            first, began = truth.done - truth.untimed, time.perf_counter()
            warm.progress = (first, len(self.index))
        while not warm.stop.is_set():
            t0 = time.perf_counter()
            with lock.read():
                idx = self.index
                if idx is None or idx.layout != layout:
                    return  # rows moved: the remover started a new rebuild
                if truth.untimed:  # annotated under another time rule: what the rule reads is read first
                    truth.retime(idx, upto=truth.retimed + _CHUNK)
                elif truth.done >= len(idx):
                    break
                else:
                    truth.sync(idx, upto=truth.done + _CHUNK)
                warm.progress = (truth.retimed if truth.untimed else truth.done, len(idx))
            warm.breathe(t0)
        with lock.write():
            idx = self.index
            if warm.stop.is_set() or idx is None or idx.layout != layout:
                return
            truth.retime(idx)
            truth.sync(idx)
            truth.update_rows(idx, [idx.row_of[i] for i in self._truth_updates if i in idx.row_of])
            self._truth_updates = []
            self.truth = truth
            self._truth_unsaved = True
        log.info("namespace %r: annotated %d messages in the background in %.1f s", self.name, truth.done - first,
                 time.perf_counter() - began)

    # -- speaker profiles -----------------------------------------------------------------------------------
    def profiles(self, complete: bool = False) -> ProfileIndex:
        """The namespace's speaker profiles, caught up with the co-index: from their snapshot plus the messages
        after it, or rebuilt (in the background when that is long: an empty index stands in, whose prior is
        neutral). ``complete``: never the stand-in, the profiles are read here instead (a question about the
        speakers themselves, :meth:`Memory.speakers` / :meth:`Memory.profile`, which the empty index would answer
        with no speaker at all). Caller holds the read lock."""
        idx = self.index
        with self._profiles_lock:
            if self._profiles is not None and self._left_to_a_question(len(idx)):
                # started in the background for a short history that has grown long since: as if never started
                self._stop_warming(_CATCH_UP)
                self._profiles, self._profiles_done = None, 0
            self._profiles_asked = True
            if not self._open_profiles():
                if not complete:
                    return ProfileIndex()
                # the background rebuild is stopped (it swaps nothing in once stopped) and done here, in full
                self._stop_warming("profiles")
                self._profiles, self._profiles_done = ProfileIndex(), 0
            prof, done = self._profiles, self._profiles_done
            n = len(idx)
            if done < n:
                self._consume(prof, idx, done, n)
                self._profiles_done = n
                self._profiles_unsaved = True
            return prof

    @staticmethod
    def _consume(prof: ProfileIndex, idx: NamespaceIndex, lo: int, hi: int) -> None:
        ids = idx.ids.view[lo:hi].tolist()
        speakers = [idx.speakers[c] for c in idx.speaker.a[lo:hi].tolist()]
        ts = [None if math.isnan(t) else float(t) for t in idx.ts.a[lo:hi].tolist()]
        texts = [t for _, t in idx.texts(lo, hi)]
        prof.append(ids, speakers, texts, ts)

    def _profiles_without(self, keep: np.ndarray, speaker: np.ndarray, names: list[str | None], ts: np.ndarray,
                          rows: set[int], removed: dict) -> bool:
        """After a deletion (``keep``: the mask of surviving rows; ``speaker``, ``names``, ``ts``: the speaker codes,
        the speakers they stand for and the times of the rows before it; ``rows``: the deleted rows the profiles
        read, and ``removed`` their :meth:`ProfileIndex.tally`), leave the profiles held as a rebuild from the
        surviving messages would build them (:meth:`ProfileIndex.remove`: the deleted messages' counts and style
        vectors taken out of their speakers' exact sums, and the statements of the speakers whose values may change
        read again). False, with nothing changed, when the profiles do not cover the rows they say they read: they
        are then rebuilt from every message. Caller holds the write lock."""
        idx = self.index
        with self._profiles_lock:
            prof, done = self._profiles, self._profiles_done
            if prof is None or prof.arrivals != done or done > keep.size:
                return False
            kept = keep[:done]
            gone = np.flatnonzero(~kept)
            if not gone.size:
                return True  # only messages the profiles have not read yet
            if rows != set(gone.tolist()):
                return False
            codes = speaker[:done]
            seen, first_row = np.unique(codes, return_index=True)
            renamed = any(names[c] is not None for c in seen[np.isin(first_row, gone)].tolist())  # a first one gone
            t = np.where(np.isnan(ts[:done]), -np.inf, ts[:done])
            survivors = np.flatnonzero(kept)
            latest = np.maximum.accumulate(t[survivors]) if survivors.size else np.zeros(0)
            untimed = np.isnan(ts[:done][survivors])
            retimed = not np.array_equal(np.maximum.accumulate(t)[survivors][untimed], latest[untimed])
            new_codes = idx.speaker.view[: survivors.size]
            now_seen, now_first = np.unique(new_codes, return_index=True)
            now = idx.speakers  # the speakers only deleted messages had are gone from the codes
            first = {now[c]: r + 1 for c, r in zip(now_seen.tolist(), now_first.tolist()) if now[c] is not None}
            new_ts = idx.ts.view[: survivors.size]

            def read(arrivals: list[int]) -> Iterator[tuple[int, str, str, float | None, tuple[float, int]]]:
                for k in range(0, len(arrivals), _TALLY_ROWS):  # a few texts at a time
                    chunk = [a - 1 for a in arrivals[k: k + _TALLY_ROWS]]
                    for r, text in zip(chunk, idx.texts_of(chunk)):
                        yield (int(idx.ids.a[r]), now[int(new_codes[r])], text,
                               None if math.isnan(new_ts[r]) else float(new_ts[r]),
                               (float(new_ts[r]) if not math.isnan(new_ts[r]) else float(latest[r]), r + 1))

            prof.remove((gone + 1).tolist(), removed, first, float(latest[-1]) if latest.size else -math.inf, read,
                        renamed=renamed, retimed=retimed)
            self._profiles_done = int(survivors.size)
            self._profiles_unsaved = True
            return True

    def _load_profiles(self) -> tuple[ProfileIndex | None, int]:
        """Profiles from their snapshot when it is current enough, else (None, 0) to rebuild. Caller holds the
        profiles lock and the read lock."""
        idx = self.index
        if not self.persistable or len(idx) <= SYNC_ROWS:
            return ProfileIndex(), 0
        store = self.host.store
        try:
            blob = store.get_units(self.name, persist.PROFILES)
            if blob is None:
                return None, 0
            probe = ProfileIndex()
            covers, meta, arrays = persist.decode(blob, persist.PROFILES, probe.settings())
            feed = store.changes(self.name, covers.version)
            if feed is None or _Feed(feed, upto=self.seen.version).deleted:
                return None, 0  # profiles do not unlearn a statement: rebuilt without the deleted messages
            done = int(np.searchsorted(idx.ids.view, int(meta["last_id"]), side="right"))
            if len(idx) - done > SYNC_ROWS or (done and int(idx.ids.a[done - 1]) != int(meta["last_id"])):
                return None, 0
            prof = ProfileIndex.from_snapshot(probe.settings(), meta["profiles"], arrays)
        except HippoError as exc:
            if not isinstance(exc, CorruptData):
                raise
            log.warning("namespace %r: rebuilding the speaker profiles (snapshot unusable: %s)", self.name, exc)
            return None, 0
        except _UNREADABLE as exc:
            log.warning("namespace %r: rebuilding the speaker profiles (snapshot unusable: %s)", self.name, exc)
            return None, 0
        self.saved[persist.PROFILES] = covers.version
        return prof, done

    def _build_profiles(self, warm: _Warm) -> None:
        lock = self.host.lock
        prof, done = ProfileIndex(), 0
        while not warm.stop.is_set():
            t0 = time.perf_counter()
            with lock.read():
                idx = self.index
                if idx is None:
                    return
                layout = idx.layout
                if done >= len(idx):
                    break
                hi = min(len(idx), done + _CHUNK)
                self._consume(prof, idx, done, hi)
                done = hi
            warm.breathe(t0)
        with lock.write():
            if warm.stop.is_set() or self.index is None or self.index.layout != layout:
                return
            with self._profiles_lock:
                self._consume(prof, self.index, done, len(self.index))
                self._profiles, self._profiles_done = prof, len(self.index)
                self._profiles_unsaved = True

    def _after_append(self, own: int = 0) -> None:
        """Note the time of an append (this process's, of ``own`` tokens, or another's read from the change feed)
        and let the readers that follow appends in the background start. Caller holds the write lock."""
        self._appended_at = time.monotonic()
        self._follow_profiles()
        self._follow_words(own)

    def _while_idle(self, warm: _Warm, idle: float, step: Callable[[], bool]) -> None:
        """Run ``step`` under the read lock, again and again once no message has been appended for ``idle`` seconds
        (messages still coming are read once they stop), resting as long as each step worked, until it returns
        True (nothing left) or the reader is stopped."""
        lock = self.host.lock
        while not warm.stop.is_set():
            quiet = time.monotonic() - self._appended_at
            if quiet < idle:
                warm.stop.wait(idle - quiet)
                continue
            t0 = time.perf_counter()
            with lock.read():
                if step():
                    return
            warm.breathe(t0)

    def _follow_profiles(self) -> None:
        """After an append (this process's, or another's read from the change feed): once :data:`PROFILE_LAG`
        messages are past the speaker profiles, start reading them in the background (the profiles are loaded, or
        created, first; a long history without a usable snapshot is rebuilt in the background as :meth:`profiles`
        would). Caller holds the write lock."""
        if "profiles" in self._warming or _CATCH_UP in self._warming:
            return
        if len(self.index) - self._profiles_done < PROFILE_LAG:
            return
        with self._profiles_lock:
            if self._profiles is None and self._left_to_a_question(len(self.index)):
                return  # a long history's profiles are built when first asked for (in the background then)
            try:
                if not self._open_profiles():
                    return  # being rebuilt in the background
            except HippoError as exc:  # the append has committed: the profiles are loaded when asked for
                log.warning("namespace %r: speaker profiles not loaded after an append: %s", self.name, exc)
                return
        self._start(_CATCH_UP, self._catch_up_profiles)

    def _follow_words(self, own: int = 0) -> None:
        """After an append that left :data:`WORDS_LAG` tokens unread: read the new messages' words of several tokens
        (the words a question's misspellings are looked among, :meth:`NamespaceIndex.slips`) in the background once
        appends pause, so that the first question after an import does not read them. One write of
        :data:`WORDS_LAG` tokens or more (an import) into a store that keeps no snapshots (in memory) reads them in
        the write, as a file store's snapshot written at the end of such an import reads them: a question asked at
        once would otherwise read them itself (0.4-0.5 s of CPU at 2.6M tokens). Caller holds the write lock."""
        if not self.config.retrieval.misspellings:
            return
        unread = self.index.words_unread()
        if unread < WORDS_LAG:
            return
        if own >= WORDS_LAG and not self.persistable:
            self.index.read_words(unread)
        else:
            self._start(_WORDS, self._catch_up_words)

    def _catch_up_words(self, warm: _Warm) -> None:
        """Read the words past those read, :data:`_WORDS_CHUNK` tokens at a time under the read lock, once no
        message has been appended for :data:`WORDS_IDLE` seconds (a question meanwhile reads the rest itself)."""
        self._while_idle(warm, WORDS_IDLE, lambda: self.index is None or self.index.read_words(_WORDS_CHUNK))

    def _open_profiles(self) -> bool:
        """Hold the speaker profiles: those held, else loaded from their snapshot (or created, for a short or unsaved
        history); False while a rebuild of a long history runs in the background (started here when none is).
        Caller holds the profiles lock and the read or write lock."""
        if self._profiles is not None:
            return True
        if "profiles" in self._warming:
            return False
        self._profiles, self._profiles_done = self._load_profiles()
        if self._profiles is None:
            self._profiles_done = 0
            self._start("profiles", self._build_profiles)
            return False
        return True

    def _left_to_a_question(self, n: int) -> bool:
        """Whether the profiles' messages up to ``n`` are left to the first question that asks for them: more than
        :data:`SYNC_ROWS` past the profiles, and nothing in this process has asked yet (an import nobody asked about
        is not read through in the background). Caller holds the profiles lock."""
        return not self._profiles_asked and n - self._profiles_done > SYNC_ROWS

    def _catch_up_profiles(self, warm: _Warm) -> None:
        """Read the messages past the speaker profiles, :data:`_PROFILE_CHUNK` at a time once no message has been
        appended for :data:`PROFILE_IDLE` seconds, each step under the read lock and the profiles lock (a recall
        asking for the profiles meanwhile waits for one step, then reads the rest itself: the profiles consume
        messages in order, whoever reads them)."""
        def step() -> bool:
            idx = self.index
            if idx is None:
                return True
            with self._profiles_lock:
                prof, done = self._profiles, self._profiles_done
                if prof is None or done >= len(idx) or warm.stop.is_set():
                    return True
                if self._left_to_a_question(len(idx)):  # built when first asked for
                    self._profiles, self._profiles_done = None, 0
                    return True
                hi = min(len(idx), done + _PROFILE_CHUNK)
                self._consume(prof, idx, done, hi)
                self._profiles_done = hi
                self._profiles_unsaved = True
                return False

        self._while_idle(warm, PROFILE_IDLE, step)

    def profile_names(self) -> ProfileIndex:
        """A profile index that knows only the speakers' names: enough to tell whether a query asks about a
        person's traits, without reading every message."""
        idx = self.index
        with self._names_lock:
            probe = self._profile_names
            if probe is None or probe[0] != len(idx.speakers):
                names = ProfileIndex()
                names.know_speakers(s for s in idx.speakers if s)
                probe = self._profile_names = (len(idx.speakers), names)
            return probe[1]
