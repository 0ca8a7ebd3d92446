"""Binary codes for messages and units, and their Hamming similarity.

A text's code is a SimHash (Charikar 2002) of its random-indexing vector: every stemmed content term owns a dense
pseudo-random +-1 index vector of ``bits`` dimensions (derived from a keyed hash of the stem, so nothing is
stored), the text's vector is the idf-weighted sum of its terms' index vectors, and the code keeps the sign of each
dimension. With user embeddings (``Memory(..., embed=...)``) the engine's SimHash codes of the embeddings can be
used instead; the rest of the hierarchy only sees codes.

Similarity between two codes is the cosine of the +-1 vectors they stand for, ``1 - 2 * hamming / bits`` in
[-1, 1]: no dense float vector is ever stored for a unit.
"""

from __future__ import annotations

import copy
import hashlib
import math
import weakref
from collections import Counter
from typing import Any

import numpy as np

from hippo.base.arrays import filled_copy, grown
from hippo.base.locks import ForkSafeLock
from hippo.native import hamming_cross
from hippo.text.vocab import Vocab, vocab

_TIE_SEED = b"hippo-tie"


def idf(n_docs: int, df: int) -> float:
    """BM25's idf (always > 0), so a term seen in every message still carries a little weight."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def idf_array(n_docs: int, df: np.ndarray) -> np.ndarray:
    df = np.asarray(df, dtype=np.float64)
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


#: Term weights are rounded to multiples of 1 / GRID and summed in float64, where sums of such multiples are exact
#: (they stay far below 2**53 / GRID): a vector then does not depend on the order its terms are added in. That order
#: follows stem ids, which are numbered in the order the process first read each stem; with float32 sums, a
#: component near zero could take either sign, so the same message got a different code in a process that had read
#: other text first, and the same store a different hierarchy.
GRID = float(2 ** 20)


def on_grid(weights: np.ndarray) -> np.ndarray:
    return np.rint(np.asarray(weights, dtype=np.float64) * GRID)


def exact_sum(weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``weights @ rows`` (+-1 index vectors) as float32, summed exactly on the grid (see :data:`GRID`)."""
    return ((on_grid(weights) @ rows.astype(np.float64)) / GRID).astype(np.float32)


class _IndexRows:
    """The +-1 index vectors of one vocabulary's stems for one ``(bits, key)``, by stem id, filled on demand.

    Stem ids are numbered for the whole process (:mod:`hippo.text.vocab`), so a table by id spans every stem the
    process has met; it is kept once per vocabulary and shared by every coder of those settings. A table per coder
    (per loaded namespace) grew with the process's whole vocabulary rather than with its namespace's: forty
    namespaces of 200 messages each held 211 MB of index vectors, 11 MB of them their own stems'."""

    def __init__(self, bits: int) -> None:
        # (rows, filled), replaced whole when grown; rows are written before their ``filled`` flag, so a reader that
        # sees a flag set reads a complete row
        self.table = (np.zeros((0, bits), dtype=np.int8), np.zeros(0, dtype=bool))


_index_rows: "weakref.WeakKeyDictionary[Vocab, dict[tuple[int, bytes], _IndexRows]]" = weakref.WeakKeyDictionary()
_index_lock = ForkSafeLock()


def _rows_of(v: Vocab, bits: int, key: bytes) -> _IndexRows:
    with _index_lock:
        by_setting = _index_rows.get(v)
        if by_setting is None:
            by_setting = _index_rows[v] = {}
        got = by_setting.get((bits, key))
        if got is None:
            got = by_setting[(bits, key)] = _IndexRows(bits)
        return got


class Coder:
    """Builds ``bits``-bit codes (as ``bits // 64`` uint64 words) from weighted stems.

    Index vectors are keyed by stem id (see :mod:`hippo.text.vocab`) but derived from the stem's text, so
    codes agree across processes whatever ids stems got. They are kept once per process for every coder of the same
    settings (:class:`_IndexRows`)."""

    def __init__(self, bits: int = 256, seed: int = 0x41E6) -> None:
        if bits % 64 or bits <= 0:
            raise ValueError("bits must be a positive multiple of 64")
        self.bits = bits
        self.words = bits // 64
        self._key = seed.to_bytes(8, "little")
        self.tie = self._pattern_bits(_TIE_SEED)

    def _pattern_bits(self, data: bytes) -> np.ndarray:
        out = bytearray()
        counter = 0
        while len(out) * 8 < self.bits:
            h = hashlib.blake2b(data + counter.to_bytes(2, "little"), digest_size=64, key=self._key)
            out += h.digest()
            counter += 1
        raw = np.frombuffer(bytes(out[: self.bits // 8]), dtype=np.uint8)
        return np.unpackbits(raw, bitorder="little").astype(bool)

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """Index vectors (int8 +-1) of the given stem ids."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size == 0:
            return np.zeros((0, self.bits), dtype=np.int8)
        v = vocab()
        shared = _rows_of(v, self.bits, self._key)
        rows, filled = shared.table
        need = int(ids.max()) + 1
        if need > filled.size or not filled[ids].all():
            with _index_lock:
                rows, filled = shared.table
                stems = v.stems
                if need > filled.size:
                    cap = max(need, len(stems), 2 * filled.size)
                    grown = np.zeros((cap, self.bits), dtype=np.int8)
                    grown[: filled.size] = rows
                    more = np.zeros(cap, dtype=bool)
                    more[: filled.size] = filled
                    rows, filled = grown, more
                for i in np.unique(ids[~filled[ids]]).tolist():
                    rows[i] = self._index_row(stems[i])
                    filled[i] = True
                shared.table = (rows, filled)
        return rows[ids]

    def stem_rows(self, stems: list[str]) -> np.ndarray:
        """Index vectors (int8 +-1) of stems given as text: those of stems the vocabulary holds from the shared
        table, the others computed from their text (the same vector: it is derived from the text) and not kept,
        so a question's new words give the process neither a stem id nor a row."""
        ids = np.asarray(vocab().known_ids(list(stems)), dtype=np.int64)
        out = np.zeros((ids.size, self.bits), dtype=np.int8)
        known = ids >= 0
        if known.any():
            out[known] = self.rows(ids[known])
        for j in np.flatnonzero(~known).tolist():
            out[j] = self._index_row(stems[j])
        return out

    def _index_row(self, stem: str) -> np.ndarray:
        """The +-1 index vector of ``stem``, from a keyed hash of its text."""
        return np.where(self._pattern_bits(stem.encode("utf-8", "surrogatepass")), 1, -1)

    def index_vector(self, term: str) -> np.ndarray:
        """The term's +-1 random index vector (float32, length ``bits``)."""
        return self.stem_rows([term])[0].astype(np.float32)

    def accumulate_ids(self, ids: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The random-indexing vector of weighted stem ids."""
        if len(ids) == 0:
            return np.zeros(self.bits, dtype=np.float32)
        return exact_sum(weights, self.rows(ids))

    def accumulate(self, weights: dict[str, float]) -> np.ndarray:
        """The random-indexing vector of a bag of weighted terms (stems as text)."""
        if not weights:
            return np.zeros(self.bits, dtype=np.float32)
        w = np.fromiter(weights.values(), dtype=np.float32, count=len(weights))
        return exact_sum(w, self.stem_rows(list(weights)))

    def sign(self, acc: np.ndarray) -> np.ndarray:
        """SimHash: the sign bits of a vector; exact zeros take a fixed pseudo-random bit (no bias towards 0)."""
        bits = np.where(acc == 0, self.tie, acc > 0)
        return pack(bits)

    def code(self, weights: dict[str, float]) -> np.ndarray:
        return self.sign(self.accumulate(weights))

    def code_ids(self, ids: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return self.sign(self.accumulate_ids(ids, weights))


def pack(bits: np.ndarray) -> np.ndarray:
    """Bool array (..., bits) -> uint64 words (..., bits // 64), bit i of the code in word i // 64."""
    packed = np.packbits(np.ascontiguousarray(bits, dtype=bool), axis=-1, bitorder="little")
    return np.ascontiguousarray(packed).view(np.uint64)


def unpack(codes: np.ndarray) -> np.ndarray:
    """uint64 words (..., w) -> bool array (..., 64 * w)."""
    raw = np.ascontiguousarray(codes, dtype=np.uint64).view(np.uint8)
    return np.unpackbits(raw, axis=-1, bitorder="little").astype(bool)


def hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamming distances between code ``a`` (w,) or codes (n, w) and codes ``b`` (m, w), broadcasting.

    The two shapes the hierarchy uses, one code against many (``(w,)`` x ``(m, w)``) and all pairs
    (``(n, 1, w)`` x ``(1, m, w)``), run in the C core's dispatched popcount kernel; others broadcast in numpy."""
    if a.dtype == np.uint64 and b.dtype == np.uint64 and 1 <= a.shape[-1] <= 16:
        if a.ndim == 1 and b.ndim == 2 and b.shape[1] == a.shape[0]:
            return hamming_cross(a, b).astype(np.int64)
        if a.ndim == 3 and b.ndim == 3 and a.shape[1] == 1 and b.shape[0] == 1 and a.shape[2] == b.shape[2]:
            return hamming_cross(a[:, 0, :], b[0]).astype(np.int64)
    return np.bitwise_count(np.bitwise_xor(a, b)).sum(axis=-1, dtype=np.int64)


def similarity(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    """Cosine of the +-1 vectors behind two codes: ``1 - 2 * hamming / bits``."""
    return 1.0 - 2.0 * hamming(a, b).astype(np.float64) / float(bits)


def majority(codes: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """The binarized centroid of codes (n, w): per bit the majority value, ties broken by ``tie`` bits."""
    codes = np.asarray(codes, dtype=np.uint64)
    if codes.ndim == 1:
        return codes.copy()
    bits = unpack(codes)
    ones = bits.sum(axis=0, dtype=np.int64) * 2
    n = codes.shape[0]
    return pack(np.where(ones == n, tie, ones > n))


def term_weights(terms: list[str], df: dict[str, int], n_docs: int) -> dict[str, float]:
    """idf * (1 + log tf) per distinct term (terms as text)."""
    counts = Counter(terms)
    return {t: idf(n_docs, df.get(t, 0)) * (1.0 + math.log(c)) for t, c in counts.items()}


class DocFreq:
    """Document frequencies of one namespace's stems, by stem id: the ids of the stems it counted, sorted, and their
    counts, 16 bytes a stem of its own. Stem ids are numbered for the whole process (:mod:`hippo.text.vocab`), so
    an array by id took 8 bytes for every stem the process had met, in every loaded namespace however few stems it
    held. Readers call :meth:`get` concurrently with each other, never with a writer: the two arrays are replaced
    together as one tuple."""

    def __init__(self) -> None:
        self.table = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.table[0].size)

    def get(self, ids) -> np.ndarray:
        """The counts of stem ids (0 for a stem not counted, and for negative ids: stems without an id)."""
        ids = np.asarray(ids, dtype=np.int64)
        held, counts = self.table
        if ids.size == 0 or held.size == 0:
            return np.zeros(ids.shape, dtype=np.int64)
        pos = np.minimum(np.searchsorted(held, ids), held.size - 1)
        return np.where(held[pos] == ids, counts[pos], 0)

    def _with(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The table with the sorted distinct ``ids`` in it (new ones counted 0), and the positions of ``ids``."""
        held, counts = self.table
        pos = np.searchsorted(held, ids)
        # an id past the last held one has ``pos == held.size``: the last held id differs from it
        new = held[np.minimum(pos, held.size - 1)] != ids if held.size else np.ones(ids.size, dtype=bool)
        if new.any():
            at = pos[new]
            held = np.insert(held, at, ids[new])
            counts = np.insert(counts, at, 0)
            pos = np.searchsorted(held, ids)
        return (held, counts), pos

    def add(self, ids) -> None:
        """Count one document for each id in ``ids`` (an id repeated counts its documents)."""
        u, c = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
        if u.size == 0:
            return
        (held, counts), pos = self._with(u)
        counts[pos] += c
        self.table = (held, counts)

    def assign(self, ids, counts) -> None:
        """Set the counts of distinct stem ids (a saved table read back); a count of 0 is not kept."""
        ids = np.asarray(ids, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        ids, counts = ids[order], counts[order]
        last = np.r_[ids[1:] != ids[:-1], True] if ids.size else np.zeros(0, dtype=bool)  # an id given twice: its last
        keep = last & (counts != 0)
        ids, counts = ids[keep], counts[keep]
        if ids.size == 0:
            return
        (held, cur), pos = self._with(ids)
        cur = cur.copy() if held is self.table[0] else cur
        cur[pos] = counts
        self.table = (held, cur)

    def held(self) -> np.ndarray:
        """The ids of the stems counted (count above 0), ascending."""
        held, counts = self.table
        return held[counts != 0]


def weigh_ids(stems: np.ndarray, df: DocFreq, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct stem ids of a bag (with repeats) and their weights idf * (1 + log tf)."""
    u, c = np.unique(np.asarray(stems, dtype=np.int64), return_counts=True)
    return u, idf_array(n_docs, df.get(u)) * (1.0 + np.log(c))


class CodeSet:
    """A growable matrix of codes addressed by slot; dead slots are skipped by searches."""

    def __init__(self, words: int, cap: int = 64) -> None:
        self.words = words
        self.codes = np.zeros((cap, words), dtype=np.uint64)
        self.alive = np.zeros(cap, dtype=bool)
        self.n = 0
        self._index = None        # optional native XOR-popcount mirror (append-only sets)
        self._indexed = 0
        self._dead = 0
        self._mirrored = False    # :meth:`enable_index` was called: the mirror is (re)built when first needed

    def __deepcopy__(self, memo: dict[int, Any]) -> "CodeSet":
        """A copy whose room is left unwritten (:func:`hippo.base.arrays.filled_copy`) and whose native mirror, which
        cannot be copied, is built from its codes when it is first searched: a consolidation keeps a copy to put
        back if it raises, and mostly never reads it."""
        out = CodeSet.__new__(CodeSet)
        memo[id(self)] = out
        for name, value in self.__dict__.items():
            if name in ("codes", "alive"):
                setattr(out, name, filled_copy(value, self.n))
            elif name != "_index":
                setattr(out, name, copy.deepcopy(value, memo))
        out._index, out._indexed = None, 0
        return out

    def enable_index(self) -> None:
        """Mirror the codes in a native :class:`hippo.BinaryIndex` for nearest-neighbour queries; the set must then
        only grow (slots are never overwritten, dead ones are filtered out of answers)."""
        from hippo.native import BinaryIndex

        self._mirrored = True
        self._index = BinaryIndex(self.words * 64)
        self._indexed = 0
        self._dead = int((~self.alive[: self.n]).sum())
        self._sync_index()

    def _sync_index(self) -> None:
        if self._index is not None and self._indexed < self.n:
            block = np.ascontiguousarray(self.codes[self._indexed : self.n]).view(np.uint8)
            self._index.add(block.reshape(self.n - self._indexed, -1))
            self._indexed = self.n

    def nearest(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest live slots of each query code (q, words): (distances, slots), rows sorted by
        (distance, slot), padded with -1 where fewer exist."""
        queries = np.asarray(queries, dtype=np.uint64).reshape(-1, self.words)
        q = queries.shape[0]
        out_d = np.full((q, k), -1, dtype=np.int64)
        out_i = np.full((q, k), -1, dtype=np.int64)
        if self.n == 0 or q == 0:
            return out_d, out_i
        if self._mirrored and self._index is None:
            self.enable_index()
        if self._index is not None and self._dead <= 64:
            self._sync_index()
            want = min(self.n, k + self._dead)
            d, ids = self._index.search(np.ascontiguousarray(queries).view(np.uint8).reshape(q, -1), want)
            for r in range(q):
                keep = (ids[r] >= 0) & self.alive[np.maximum(ids[r], 0)]
                got_i, got_d = ids[r][keep][:k], d[r][keep][:k]
                out_i[r, : got_i.size] = got_i
                out_d[r, : got_d.size] = got_d
            return out_d, out_i
        for r in range(q):
            slots, dist = self.top(queries[r], k)
            out_i[r, : slots.size] = slots
            out_d[r, : dist.size] = dist
        return out_d, out_i

    def __len__(self) -> int:
        return self.n

    def _grow(self, need: int) -> None:
        if need <= self.codes.shape[0]:
            return
        cap = grown(self.codes.shape[0], need)
        codes = np.zeros((cap, self.words), dtype=np.uint64)
        codes[: self.n] = self.codes[: self.n]
        alive = np.zeros(cap, dtype=bool)
        alive[: self.n] = self.alive[: self.n]
        self.codes, self.alive = codes, alive

    def append(self, code: np.ndarray) -> int:
        self._grow(self.n + 1)
        slot = self.n
        self.codes[slot] = code
        self.alive[slot] = True
        self.n += 1
        return slot

    def append_many(self, codes: np.ndarray) -> np.ndarray:
        codes = np.asarray(codes, dtype=np.uint64).reshape(-1, self.words)
        m = codes.shape[0]
        self._grow(self.n + m)
        slots = np.arange(self.n, self.n + m)
        self.codes[slots] = codes
        self.alive[slots] = True
        self.n += m
        return slots

    def set(self, slot: int, code: np.ndarray) -> None:
        self.codes[slot] = code
        self.alive[slot] = True

    def kill(self, slot: int) -> None:
        if self.alive[slot]:
            self._dead += 1
        self.alive[slot] = False

    def live(self) -> np.ndarray:
        return np.flatnonzero(self.alive[: self.n])

    def distances(self, code: np.ndarray) -> np.ndarray:
        """Hamming distance of ``code`` to every slot (dead slots get a distance above any real one)."""
        d = hamming(code, self.codes[: self.n])
        d[~self.alive[: self.n]] = 1 << 30
        return d

    def top(self, code: np.ndarray, k: int, exclude: int = -1) -> tuple[np.ndarray, np.ndarray]:
        """Slots and distances of the ``k`` nearest live codes, nearest first (ties: lower slot first)."""
        d = self.distances(code)
        if 0 <= exclude < self.n:
            d[exclude] = 1 << 30
        k = min(k, int((d < (1 << 30)).sum()))
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        part = np.argpartition(d, k - 1)[:k] if k < d.size else np.arange(d.size)
        order = part[np.lexsort((part, d[part]))]
        return order.astype(np.int64), d[order]


def bag_pairs(group: np.ndarray, stems: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (group, stem) pairs of parallel arrays, sorted by group, with their counts."""
    group = np.asarray(group, dtype=np.int64)
    stems = np.asarray(stems, dtype=np.int64)
    keep = stems >= 0
    key = (group[keep] << 32) | stems[keep]
    uk, cnt = np.unique(key, return_counts=True)
    return uk >> 32, uk & 0xFFFFFFFF, cnt


def bag_vectors(coder: Coder, pg: np.ndarray, ps: np.ndarray, weights: np.ndarray, m: int) -> np.ndarray:
    """Random-indexing vectors (m x bits, float32) of ``m`` bags given as sorted (group, stem, weight) pairs."""
    acc = np.zeros((m, coder.bits), dtype=np.float32)
    if pg.size == 0:
        return acc
    rows = coder.rows(ps).astype(np.float64) * on_grid(weights)[:, None]
    starts = np.flatnonzero(np.r_[True, pg[1:] != pg[:-1]])
    acc[pg[starts]] = np.add.reduceat(rows, starts, axis=0) / GRID
    return acc


def sign_many(coder: Coder, acc: np.ndarray) -> np.ndarray:
    """SimHash codes (m x words) of m vectors."""
    return pack(np.where(acc == 0, coder.tie[None, :], acc > 0))
