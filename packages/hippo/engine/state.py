"""Every process-local follower of one namespace, owned by one object.

A :class:`NamespaceState` holds what the engine derives from a namespace's messages: the co-index (Content and
Signature DWMs, span table), the binary codes of user embeddings, the time-and-truth annotations, the lifecycle
(hierarchy and strengths), the speaker profiles and the index-entry registry. It has one staleness rule: the store's
namespace fingerprint (:class:`~hippo.store.base.NamespaceState`, which changes on every append and deletion).
The write path appends to the store (the log) and then lets every follower apply the new rows (:meth:`apply`);
rows appended by another process are applied the same way when a reader notices (:meth:`current`); a deletion
elsewhere rebuilds the followers from the store.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from typing import Any, Protocol

import numpy as np

from hippo.base.config import Config
from hippo.base.errors import CorruptData, HippoError, StoreError
from hippo.base.locks import RWLock
from hippo.engine.lifecycle import Life, snapshot_holds_text
from hippo.engine.profiles import ProfileIndex
from hippo.engine.truth.state import Truth
from hippo.index.coindex import NamespaceIndex
from hippo.index.embedding import EmbeddingCodes, SimHasher, encode, line
from hippo.store.base import MessageRow, Store
from hippo.store.base import NamespaceState as StoreFingerprint
from hippo.text import tokenizer

log = logging.getLogger("hippo.engine")


class Host(Protocol):
    """What a namespace state needs of the runtime that owns it."""

    config: Config
    store: Store
    lock: RWLock
    llm: Any
    embed: Any
    embed_query: Any
    hasher: SimHasher | None


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
        self.entries: Any = None  # the index-entry registry (hippo.engine.entries), created on first use
        self.verbosity: Any = None  # the evidence packer's verbosity statistics (hippo.engine.evidence)
        self.keyword_cache: OrderedDict[str, list[str] | None] = OrderedDict()  # LLM keywords by query
        self.keyword_lock = threading.Lock()
        self.llm_fallbacks = 0  # LLM calls that failed and fell back to the offline path

    @property
    def config(self) -> Config:
        return self.host.config

    @property
    def loaded(self) -> bool:
        return self.index is not None

    # -- staying current ------------------------------------------------------------------------------------
    def current(self) -> "NamespaceState":
        """This state, caught up with the store: rows appended elsewhere are applied, a deletion elsewhere
        (a new generation) rebuilds every follower. Takes the write lock only when there is something to apply."""
        store = self.host.store
        fp = store.state(self.name)
        if self.index is not None and self.seen == fp:
            return self
        with self.host.lock.write():
            fp = store.state(self.name)
            if self.index is not None and self.seen == fp:
                return self
            if self.index is not None and self.seen.generation == fp.generation:
                rows = store.load(self.name, after_seq=self.index.last_seq)  # appended elsewhere
                self._check_vocabulary(rows)
                self._apply(rows)
            else:
                rows = store.load(self.name)
                self._check_vocabulary(rows)
                self._reset()
                self._apply(rows)
            self.seen = fp
            self._follow_life(None)
        return self

    def _check_vocabulary(self, rows: list[MessageRow]) -> None:
        vocab = tokenizer.vocab_size()
        for r in rows:
            if r.tokens.size and int(r.tokens.max()) >= vocab:
                raise CorruptData(f"namespace {self.name!r}: message {r.id} holds token ids outside the vocabulary")

    def _reset(self) -> None:
        self.index = NamespaceIndex(self.name, self.config)
        self.truth = Truth()
        self.codes = None
        self._life = None
        self._drop_profiles()
        self.entries = None
        self.verbosity = None

    def _drop_profiles(self) -> None:
        with self._profiles_lock:
            self._profiles = None
            self._profiles_done = 0

    # -- the write path: followers apply rows ---------------------------------------------------------------
    def apply(self, rows: list[MessageRow], texts: list[str], codes: np.ndarray | None = None) -> None:
        """Rows this process just appended (``texts`` decoded from them, ``codes`` their embedding codes when the
        append stored them too): every follower applies them. Caller holds the write lock and has checked that
        nobody else appended in between (:meth:`expects`)."""
        first = len(self.index)
        self._apply(rows, codes)
        self._follow_life(rows)
        self.truth.sync(self.index, {first + k: t for k, t in enumerate(texts)})

    def expects(self, fp: StoreFingerprint, appended: int) -> bool:
        """Whether the store's fingerprint ``fp`` is exactly this state's plus ``appended`` own appends."""
        return fp.generation == self.seen.generation and fp.next_seq == self.seen.next_seq + appended

    def _apply(self, rows: list[MessageRow], codes: np.ndarray | None = None) -> None:
        self.index.append(rows)
        self.truth.observe(rows)
        if self.host.embed is not None and rows:
            self._sync_codes(rows, codes)

    def invalidate(self) -> None:
        """Forget everything: the next :meth:`current` rebuilds from the store."""
        self.index = None

    def remove(self, ids: list[int]) -> None:
        """Messages deleted by this process: every follower drops them. Caller holds the write lock."""
        idx = self.index
        idx.rebuild_without(ids)
        self.truth = Truth()  # row-indexed annotations: recomputed for the surviving rows on the next ranking
        self.truth.observe(self.host.store.rows(self.name, idx.ids.view.tolist()).values())
        if self.codes is not None:
            self._load_codes()  # the store dropped the deleted messages' codes with them
        self._drop_profiles()
        self.verbosity = None  # rows were renumbered
        life = self._life
        if life is not None and life.loaded:
            with life.lock:
                had_text = life.holds_llm_text()
                life.remove_messages(ids)
        elif self.lifecycle_active and self.host.store.path is not None and not self.host.store.read_only \
                and snapshot_holds_text(self.host.store.get_units(self.name, "hierarchy")):
            self._follow_life(None, force=True)  # load the snapshot (the index no longer holds the deleted rows)
            life = self._life
            with life.lock:
                life.remove_messages(ids)  # units the snapshot still ties to them go too
            had_text = True
        else:
            return
        if had_text and life.persistable:
            # A saved snapshot holds text an LLM wrote from the deleted messages: rewrite it now, so forgotten
            # content leaves the store when the delete returns rather than at the next periodic save.
            try:
                with life.lock:
                    life.save()
            except HippoError as exc:
                log.warning("namespace %r: unit snapshot not refreshed after a delete: %s", self.name, exc)

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

    def _sync_codes(self, rows: list[MessageRow], codes: np.ndarray | None = None) -> None:
        """Codes of ``rows`` into the in-memory index. ``codes`` are theirs when the append already stored them;
        otherwise missing codes are computed and saved, best effort: they are derived, so a busy or read-only store
        keeps them in memory only and a later load recomputes them."""
        if self.codes is None:
            stored = self._load_codes()
            rows = [r for r in rows if r.id not in stored]
            codes = None
        if rows and codes is None:
            host = self.host
            lines = [line(r.speaker, r.role, tokenizer.decode(r.tokens)) for r in rows]
            codes = encode(host.hasher, host.embed(lines), len(lines))
            if not host.store.read_only:
                try:
                    host.store.put_codes(self.name, [r.id for r in rows], codes)
                except StoreError as exc:
                    log.warning("embedding codes of namespace %r kept in memory only: %s", self.name, exc)
        if rows:
            self.codes.add([r.id for r in rows], codes)

    def embedding_codes(self, ids: list[int]) -> np.ndarray | None:
        """SimHash codes of the user embeddings of these messages as 64-bit words, or None (for the hierarchy)."""
        return None if self.codes is None else self.codes.words_of(ids)

    # -- lifecycle (hierarchy, strengths) -------------------------------------------------------------------
    @property
    def lifecycle_active(self) -> bool:
        return self.config.hierarchy.enabled or self.config.decay.enabled

    def life(self) -> Life | None:
        """The lifecycle follower, loaded and caught up (from its snapshot, then the rows it has not seen); None
        when neither the hierarchy nor decay is enabled."""
        if not self.lifecycle_active:
            return None
        life = self._life
        if life is not None and life.loaded and life.generation == self.seen.generation \
                and life.known() == len(self.index):
            return life
        with self.host.lock.write():
            self._follow_life(None, force=True)
            return self._life

    def current_life(self) -> Life | None:
        """The lifecycle follower if it is loaded (never loads it)."""
        life = self._life
        return life if life is not None and life.loaded else None

    def _follow_life(self, rows: list[MessageRow] | None, force: bool = False) -> None:
        if not self.lifecycle_active or self.index is None:
            return
        if self._life is None:
            if not (force or rows is not None):
                return  # loaded when first needed; a write loads it so that units follow every append
            codes = self.embedding_codes if (self.host.embed is not None
                                             and self.config.embed_bits == self.config.hierarchy.code_bits) else None
            self._life = Life(self.config, self.host.store, self.name, codes)
        with self._life.lock:
            self._life.sync(self.index, self.seen.generation, rows)

    def save_derived(self) -> None:
        """Persist the lifecycle snapshot when it changed (best effort: it is rebuildable from the messages)."""
        life = self._life
        if life is None or not life.loaded or not life.persistable or not life.dirty:
            return
        try:
            with life.lock:
                life.save()
        except HippoError as exc:
            log.warning("could not save the derived state of namespace %r: %s", self.name, exc)

    # -- speaker profiles -----------------------------------------------------------------------------------
    def profiles(self) -> ProfileIndex:
        """The namespace's speaker profiles, caught up with the co-index (built on first use; rebuilt after a
        deletion). Caller holds the read lock."""
        idx = self.index
        with self._profiles_lock:
            if self._profiles is None:
                self._profiles, self._profiles_done = ProfileIndex(), 0
            prof, done = self._profiles, self._profiles_done
            n = len(idx)
            if done < n:
                ids = idx.ids.view[done:n].tolist()
                speakers = [idx.speakers[c] for c in idx.speaker.a[done:n].tolist()]
                ts = [None if math.isnan(t) else float(t) for t in idx.ts.a[done:n].tolist()]
                texts = [t for _, t in idx.texts(done, n)]
                prof.append(ids, speakers, texts, ts)
                self._profiles_done = n
            return prof

    def profile_names(self) -> ProfileIndex:
        """A profile index that knows only the speakers' names: enough to tell whether a query asks about a
        person's traits, without reading every message."""
        idx = self.index
        with self._profiles_lock:
            probe = self._profile_names
            if probe is None or probe[0] != len(idx.speakers):
                names = ProfileIndex()
                names.know_speakers(s for s in idx.speakers if s)
                probe = self._profile_names = (len(idx.speakers), names)
            return probe[1]
