"""What every SQL store of hippo shares, whatever its engine: the checksums of tail rows and chunks (schema 3 of the
SQLite store, schema 1 of the PostgreSQL store), the validation of message rows as they come back from a database,
and the walk that gives each message its tokens from the unsealed tail or from the sealed chunks.

Everything here works on plain tuples in one column layout, so both stores read rows with their own driver and hand
them over unchanged:

    message row:  id, namespace, seq, n_tokens, speaker, role, ts, session_id, metadata (JSON text), created_at,
                  utc_offset (seconds east of UTC the timestamp was given with, None when unknown),
                  tail tokens (bytes, None once sealed), tail checksum
    chunk row:    :class:`~hippo.store.base.Chunk`

A *member* of a chunk is the ``(id, seq, n_tokens)`` of a sealed message in the chunk's seq range, in seq order.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from hippo.base import timeutil
from hippo.base.errors import CorruptData, InvalidInput
from hippo.store.base import Chunk, MessageRow, NamespaceState, Replace
from hippo.store.codec import ChunkCodec

# epoch seconds a datetime can be read back from (0001-01-01T00:00 up to, not including, 10000-01-01T00:00: the last
# second of the year 9999 with its fractions): anything else in a time column is damage
EPOCH_MIN, EPOCH_END = timeutil.EPOCH_MIN, timeutil.EPOCH_END

# Where a message row's columns end, and the tail's token blob and checksum that may follow them.
ROW_WIDTH = 11
TAIL_TOKENS, TAIL_SUM = ROW_WIDTH, ROW_WIDTH + 1

Members = Sequence[tuple[int, int, int]]


# -- which code may use a store of a newer schema ---------------------------------------------------------------------
# Every creation and upgrade of a store writes meta 'compatible' = "<schema version>:<oldest schema version whose
# code may use the store as it is>". Code that finds a schema newer than its own uses the store as it is when that
# oldest version is at most its own (a newer version's migration that older code can live with: a column it does not
# name and may leave empty, an index), so app servers of an older version keep working while a newer one rolls out,
# and after a rollback. The value names the schema version it was written for: one left by code that upgraded the
# store without knowing this key is not the store's, and counts as "only code of the store's own version".
COMPATIBLE_KEY = "compatible"


def compatible_value(version: int, compatible_from: int) -> str:
    return f"{int(version)}:{int(compatible_from)}"


def compatible_from(stored: Any, version: int) -> int:
    """The oldest schema version whose code may use a store of schema ``version`` whose meta 'compatible' is
    ``stored`` (None when absent)."""
    parts = str(stored).split(":") if stored is not None else []
    if len(parts) == 2 and all(p.isdigit() for p in parts) and int(parts[0]) == version:
        return min(int(parts[1]), version)
    return version


# -- checksums ----------------------------------------------------------------------------------------------------
# A database checks the structure of its own pages, not the bytes of a value: a flipped bit in a token blob, or an
# edited n_tokens / seq that moves a message boundary inside a chunk, reads back as text that was never added. Every
# tail row carries a checksum of its tokens and of the message fields that locate them; every chunk one of its own
# fields, its blob and the (id, seq, n_tokens) of each message it covers. 64-bit BLAKE2b: a random change goes
# unnoticed with probability 2^-64.
def _digest(*parts: bytes) -> bytes:
    h = hashlib.blake2b(digest_size=8)
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.digest()


def _ints(*values: int) -> bytes:
    return np.asarray(values, dtype="<i8").tobytes()


def _matches(stored: Any, expected: bytes) -> bool:
    """Whether a checksum read back (bytes, or whatever a damaged column holds) equals ``expected``."""
    return isinstance(stored, (bytes, bytearray, memoryview)) and bytes(stored) == expected


def bad_int(value: Any) -> bool:
    """Whether a value read from a count column (seq, n_tokens, generation, ...) is not a count."""
    return isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 62


def still_at(now: NamespaceState, generation: int | None, version: int | None, stamp: str | None = None) -> bool:
    """Whether a namespace whose state is ``now`` is still at ``generation`` and ``version``, and, with ``version``
    and a ``stamp``, at the change that carried that stamp (a None asks nothing): :meth:`Store.put_units_many` writes
    derived blobs only then."""
    return (generation is None or now.generation == generation) and (version is None or now.version == version) \
        and (version is None or stamp is None or now.stamp == stamp)


def holds(stored: dict[str, bytes | None], expect: dict[str, bytes | None]) -> bool:
    """Whether the blobs ``stored`` (kind -> the first bytes of the stored blob, at least ``len(expect[kind])`` of
    them when it has as many; a kind without a blob is absent) are what ``expect`` names (kind -> the bytes the
    stored blob begins with, None: none stored): :meth:`Store.put_units_many` writes derived blobs only then."""
    for kind, want in expect.items():
        got = stored.get(kind)
        if (got is None) != (want is None) or (want is not None and bytes(got[: len(want)]) != bytes(want)):
            return False
    return True


def checked_parts(parts: Sequence[Replace]) -> list[Replace]:
    """The parts of a :meth:`Store.replace_many`, checked before its transaction: each namespace once, one row of
    codes per message."""
    parts = list(parts)
    seen: set[str] = set()
    for k, p in enumerate(parts):
        if not isinstance(p, Replace):
            raise InvalidInput(f"parts[{k}] must be a Replace, got {type(p).__name__}")
        if p.namespace in seen:
            raise InvalidInput(f"parts[{k}]: namespace {p.namespace!r} is written by an earlier part; a namespace is "
                               "one part")
        seen.add(p.namespace)
        if p.codes is not None and len(p.codes) != len(p.messages):
            raise InvalidInput(f"parts[{k}].codes: {len(p.codes)} rows for {len(p.messages)} messages")
    return parts


def tail_checksum(namespace: str, id: int, seq: int, n_tokens: int, tokens: bytes) -> bytes:
    """Checksum of an unsealed message's token blob together with its id, seq and n_tokens."""
    return _digest(b"hippo-tail-1", namespace.encode("utf-8", "surrogatepass"), _ints(id, seq, n_tokens),
                   bytes(tokens))


def chunk_checksum(namespace: str, first_seq: int, last_seq: int, n_messages: int, n_tokens: int,
                   members: Members, blob: bytes) -> bytes:
    """Checksum of a chunk row, its blob and the ``(id, seq, n_tokens)`` of the messages it covers, in seq order
    (the id too: two messages of equal length that swapped seqs would otherwise swap texts unnoticed)."""
    layout = np.asarray(members, dtype="<i8").reshape(-1, 3).tobytes()
    return _digest(b"hippo-chunk-1", namespace.encode("utf-8", "surrogatepass"),
                   _ints(first_seq, last_seq, n_messages, n_tokens), layout, bytes(blob))


def chunk_sum(namespace: str, ch: Chunk, members: Members) -> bytes:
    return chunk_checksum(namespace, ch.first_seq, ch.last_seq, ch.n_messages, ch.n_tokens, members, ch.blob)


def verify_chunk(namespace: str, ch: Chunk, members: Members, checked: bool = True) -> None:
    """Refuse a chunk whose checksum does not cover exactly its row, its blob and ``members``."""
    if not checked:
        return
    if not _matches(ch.checksum, chunk_sum(namespace, ch, members)):
        raise CorruptData(f"chunk {ch.id} of namespace {namespace!r} (seq {ch.first_seq}..{ch.last_seq}) fails its "
                          "checksum: its blob, its row or the seq / n_tokens of a message it covers was changed "
                          "outside hippo")


# -- message rows -------------------------------------------------------------------------------------------------
def message_row(r: Sequence[Any], tokens: np.ndarray | None = None) -> MessageRow:
    """A :class:`MessageRow` from a message row tuple, refusing damaged metadata and times."""
    try:
        meta = json.loads(r[8])
    except (TypeError, ValueError, RecursionError) as exc:
        raise CorruptData(f"message {r[0]}: metadata is not valid JSON") from exc
    if not isinstance(meta, dict):
        raise CorruptData(f"message {r[0]}: metadata is not a JSON object")
    for name, value, optional in (("created_at", r[9], False), ("timestamp", r[6], True)):
        if value is None and optional:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                value == value and not EPOCH_MIN <= value < EPOCH_END) or (value != value and not optional):
            raise CorruptData(f"message {r[0]}: {name} {value!r} is not a time")
    offset = r[10]
    if offset is not None and not timeutil.is_utc_offset(offset):
        raise CorruptData(f"message {r[0]}: utc_offset {offset!r} is not an offset from UTC in seconds")
    return MessageRow(
        id=r[0], namespace=r[1], seq=r[2], n_tokens=r[3], speaker=r[4], role=r[5], ts=r[6],
        session_id=r[7], metadata=meta, created_at=r[9], tokens=tokens,
        utc_offset=None if offset is None else float(offset),
    )


def chosen(rows: list[MessageRow], choose: Callable[[list[MessageRow]], Iterable[int]] | None) -> list[tuple[int, int]]:
    """The (id, seq) of the rows a deletion takes (``Store.delete``): all of ``rows``, or those whose ids ``choose``
    returns when given them in seq order (ids it returns that are no row of them are ignored)."""
    rows = sorted(rows, key=lambda r: r.seq)
    if choose is not None and rows:
        picked = set(choose(rows))
        rows = [r for r in rows if r.id in picked]
    return [(r.id, r.seq) for r in rows]


def tail_tokens(namespace: str, r: Sequence[Any], checked: bool = True) -> np.ndarray:
    """Tokens of an unsealed message row ``r`` (message columns, then tokens and checksum), verified."""
    mid, seq, n, blob = r[0], r[2], r[3], r[TAIL_TOKENS]
    if isinstance(blob, memoryview):
        blob = bytes(blob)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0 or not isinstance(blob, bytes) \
            or len(blob) != 4 * n:
        raise CorruptData(f"message {mid}: token blob holds {len(blob) if isinstance(blob, bytes) else blob!r} "
                          f"bytes, expected 4 x n_tokens = {n!r}")
    if checked and not _matches(r[TAIL_SUM], tail_checksum(namespace, mid, seq, n, blob)):
        raise CorruptData(f"message {mid}: its unsealed tokens fail their checksum (the token blob, n_tokens "
                          "or seq was changed outside hippo)")
    return np.frombuffer(blob, dtype="<u4").astype(np.uint32)


def _check_chunk_end(namespace: str, chunk: Chunk, tokens: np.ndarray | None, pos: int, members: list,
                     checked: bool) -> None:
    if tokens is not None and pos != tokens.size:
        raise CorruptData(f"chunk {chunk.id} holds {tokens.size} tokens but its messages cover {pos}")
    if tokens is None and not checked and not members:
        return
    verify_chunk(namespace, chunk, members, checked)


def iter_tokens(codec: ChunkCodec, namespace: str, raw: Sequence[Sequence[Any]], chunks: Sequence[Chunk],
                checked: bool = True) -> Iterator[tuple[Sequence[Any], np.ndarray]]:
    """``(row, tokens)`` for every row of ``raw`` (seq order), the tokens from its tail blob or from the chunk that
    covers it. ``raw`` must hold every sealed message of every chunk in ``chunks`` (rows that are only needed as
    members may carry just id, seq and n_tokens); each chunk is verified against its members."""
    ci = 0
    chunk_tokens: np.ndarray | None = None
    chunk_pos = 0
    members: list[tuple[int, int, int]] = []
    for r in raw:
        seq, n = r[2], r[3]
        if bad_int(seq) or bad_int(n):
            raise CorruptData(f"message {r[0]}: seq {seq!r} / n_tokens {n!r} are not counts")
        if r[TAIL_TOKENS] is not None:
            tokens = tail_tokens(namespace, r, checked)
        else:
            while ci < len(chunks) and chunks[ci].last_seq < seq:
                _check_chunk_end(namespace, chunks[ci], chunk_tokens, chunk_pos, members, checked)
                ci += 1
                chunk_tokens, chunk_pos, members = None, 0, []
            if ci >= len(chunks) or chunks[ci].first_seq > seq:
                raise CorruptData(f"message {r[0]} (seq {seq}) has no tokens in the store: no chunk covers it")
            if chunk_tokens is None:
                chunk_tokens = codec.decode(chunks[ci].blob)
                if chunk_tokens.size != chunks[ci].n_tokens:
                    raise CorruptData(f"chunk {chunks[ci].id}: holds {chunk_tokens.size} tokens, expected "
                                      f"{chunks[ci].n_tokens}")
            if chunk_pos + n > chunk_tokens.size:
                raise CorruptData(f"chunk {chunks[ci].id} is shorter than the messages it covers")
            tokens = chunk_tokens[chunk_pos:chunk_pos + n]
            chunk_pos += n
            members.append((r[0], seq, n))
        yield r, tokens
    for k in range(ci, len(chunks)):  # the last chunk with messages, then any that no message reaches
        _check_chunk_end(namespace, chunks[k], chunk_tokens if k == ci else None,
                         chunk_pos if k == ci else 0, members if k == ci else [], checked)


def attach_tokens(codec: ChunkCodec, namespace: str, raw: Sequence[Sequence[Any]], chunks: Sequence[Chunk],
                  after_seq: int = -1, upto_seq: int | None = None, checked: bool = True) -> list[MessageRow]:
    """The rows of ``raw`` with ``after_seq < seq <= upto_seq`` as :class:`MessageRow` with their tokens (see
    :func:`iter_tokens` for what ``raw`` must hold)."""
    upto = (1 << 62) if upto_seq is None else upto_seq
    return [message_row(r, tokens) for r, tokens in iter_tokens(codec, namespace, raw, chunks, checked)
            if after_seq < r[2] <= upto]


def member_row(id: int, seq: int, n_tokens: int) -> tuple:
    """A row that only takes part as a chunk member (its tokens are walked past, never returned)."""
    return (id, None, seq, n_tokens, None, None, None, None, None, None, None, None, None)


# -- rewriting chunks ---------------------------------------------------------------------------------------------
def chunk_without(codec: ChunkCodec, namespace: str, ch: Chunk, members: Members, dead_seqs: set[int],
                  checked: bool = True) -> tuple[list[tuple[int, int, int]], np.ndarray]:
    """The members a chunk keeps once the messages at ``dead_seqs`` are gone, and their tokens (verified first)."""
    verify_chunk(namespace, ch, members, checked)
    tokens = codec.decode(ch.blob)
    if tokens.size != ch.n_tokens or sum(n for _, _, n in members) != ch.n_tokens:
        raise CorruptData(f"chunk {ch.id} does not match the messages it covers")
    keep, kept, pos = [], [], 0
    for mid, seq, n in members:
        if seq not in dead_seqs:
            keep.append(tokens[pos:pos + n])
            kept.append((mid, seq, n))
        pos += n
    return kept, (np.concatenate(keep) if keep else np.zeros(0, np.uint32))


# The most tokens a seal or a merge puts in one chunk (a single longer message is a chunk of its own): a deletion
# rewrites the chunks holding its messages, so this bounds what one deleted message costs to re-encode.
CHUNK_TOKENS = 1 << 18


def should_merge(older: Chunk, newer: Chunk) -> bool:
    """Geometric merging (as in a log-structured merge tree) up to :data:`CHUNK_TOKENS`: sizes roughly double from
    newest to oldest below it, so there are O(log CHUNK_TOKENS) chunks under that size and each token is rewritten
    O(log CHUNK_TOKENS) times over the store's life; full chunks stay as they are."""
    return older.n_tokens <= 2 * newer.n_tokens and older.n_tokens + newer.n_tokens <= CHUNK_TOKENS


def chunk_parts(first_seq: int, last_seq: int, members: Members) -> list[tuple[int, int, int, int, int, int]]:
    """The chunks that messages ``members`` (``(id, seq, n_tokens)`` in seq order) covering seqs ``first_seq`` ..
    ``last_seq`` are written as: consecutive runs of messages of at most :data:`CHUNK_TOKENS` tokens (a longer
    message alone), as ``(first_seq, last_seq, first member, end member, first token, end token)``; the first part
    starts at ``first_seq``, the last ends at ``last_seq``, and each other part's range is its messages'."""
    parts: list[tuple[int, int, int, int, int, int]] = []
    start = tok = tok0 = 0
    for k, (_, _, n) in enumerate(members):
        if k > start and tok - tok0 + int(n) > CHUNK_TOKENS:
            parts.append((int(members[start][1]), int(members[k - 1][1]), start, k, tok0, tok))
            start, tok0 = k, tok
        tok += int(n)
    if members:
        parts.append((int(members[start][1]), int(members[-1][1]), start, len(members), tok0, tok))
        f, _, *rest = parts[0]
        parts[0] = (int(first_seq), parts[0][1], *rest)
        last = parts[-1]
        parts[-1] = (last[0], int(last_seq), *last[2:])
    return parts


def merged_tokens(codec: ChunkCodec, namespace: str, older: Chunk, newer: Chunk, m_old: Members, m_new: Members,
                  checked: bool = True) -> np.ndarray:
    """The tokens of two adjacent chunks, both verified, as one array."""
    verify_chunk(namespace, older, m_old, checked)
    verify_chunk(namespace, newer, m_new, checked)
    a, b = codec.decode(older.blob), codec.decode(newer.blob)
    if a.size != older.n_tokens or b.size != newer.n_tokens:
        raise CorruptData(f"namespace {namespace!r}: a chunk does not hold the tokens it declares")
    return np.concatenate([a, b])


# -- verification (Memory.check) ----------------------------------------------------------------------------------
def verify_rows(codec: ChunkCodec, namespace: str, raw: list, chunks: list[Chunk], orphan_tail: list,
                codes: list, ns_row: Sequence[Any] | None, check_tokens: Callable[[int, np.ndarray], str | None],
                code_bytes: int | None, checked: bool = True) -> dict:
    """The report of ``Store.verify_namespace`` over what a store read in one transaction: every message row with
    its tail columns (seq order), the chunks, the ids of tail rows without a message, ``(code id, code length,
    message id or None)`` of every embedding code and the namespace row ``(generation, next_seq)``. Every row is
    verified; nothing stops at the first problem."""
    messages: list[dict] = []
    tail: list[dict] = []
    bad_chunks: list[dict] = []
    text: list[dict] = []
    n_tail = 0
    n_rows = len(raw)
    messages += [{"id": r[0], "problem": f"seq {r[2]!r} / n_tokens {r[3]!r} are not counts"}
                 for r in raw if bad_int(r[2]) or bad_int(r[3])]
    raw = [r for r in raw if not (bad_int(r[2]) or bad_int(r[3]))]
    for r in raw:
        try:
            message_row(r)
        except CorruptData as exc:
            messages.append({"id": r[0], "seq": r[2], "problem": str(exc)})
        if r[TAIL_TOKENS] is not None:
            n_tail += 1
            try:
                tokens = tail_tokens(namespace, r, checked)
            except CorruptData as exc:
                tail.append({"id": r[0], "seq": r[2], "problem": str(exc)})
                continue
            problem = check_tokens(r[0], tokens)
            if problem:
                text.append({"id": r[0], "seq": r[2], "problem": problem})
    tail.extend({"id": i, "problem": "a tail row whose message row is missing"} for (i,) in orphan_tail)
    sealed = [r for r in raw if r[TAIL_TOKENS] is None]
    covered: set[int] = set()
    for ch in chunks:
        mine = [r for r in sealed if ch.first_seq <= r[2] <= ch.last_seq]
        covered.update(r[0] for r in mine)
        where = {"chunk": ch.id, "first_seq": ch.first_seq, "last_seq": ch.last_seq,
                 "message_ids": [r[0] for r in mine][:50]}
        try:
            verify_chunk(namespace, ch, [(r[0], r[2], r[3]) for r in mine], checked)
            tokens = codec.decode(ch.blob)
            if tokens.size != ch.n_tokens:
                raise CorruptData(f"chunk {ch.id} holds {tokens.size} tokens, its row says {ch.n_tokens}")
            if len(mine) != ch.n_messages or sum(r[3] for r in mine) != tokens.size:
                raise CorruptData(f"chunk {ch.id} does not match the messages it covers")
        except CorruptData as exc:
            bad_chunks.append({**where, "problem": str(exc)})
            continue
        pos = 0
        for r in mine:
            problem = check_tokens(r[0], tokens[pos:pos + r[3]])
            pos += r[3]
            if problem:
                text.append({"id": r[0], "seq": r[2], "problem": problem})
    uncovered = [{"id": r[0], "seq": r[2], "problem": "no chunk covers this sealed message"}
                 for r in sealed if r[0] not in covered]
    max_seq = max((r[2] for r in raw if isinstance(r[2], int)), default=-1)
    ns_problems = []
    if raw and ns_row is None:
        ns_problems.append("the namespace has messages but no namespace row")
    elif ns_row is not None and (bad_int(ns_row[1]) or ns_row[1] <= max_seq):
        ns_problems.append(f"next_seq {ns_row[1]!r} is not past the last message's seq {max_seq}")
    if ns_row is not None and bad_int(ns_row[0]):
        ns_problems.append(f"generation {ns_row[0]!r} is not a count")
    # an embedding blob starts with the code of the configured width (an int8 vector may follow it)
    bad_codes = [{"id": i, "problem": "embedding code of a message that does not exist" if m is None
                  else f"embedding code of {n} bytes, expected at least {code_bytes}"}
                 for i, n, m in codes if m is None or (code_bytes is not None and n < code_bytes)]
    return {
        "messages": {"verified": n_rows, "damaged": messages + uncovered},
        "tail": {"verified": n_tail, "damaged": tail},
        "chunks": {"verified": len(chunks), "damaged": bad_chunks},
        "text": {"verified": n_rows, "damaged": text},
        "namespace_row": {"verified": 1, "damaged": [{"problem": p} for p in ns_problems]},
        "codes": {"verified": len(codes), "damaged": bad_codes},
        "max_seq": max_seq,
    }
