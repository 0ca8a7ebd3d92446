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

import hashlib
import math
from collections import Counter

import numpy as np

from hippo import textnorm

_TIE_SEED = b"hippo-tie"


def idf(n_docs: int, df: int) -> float:
    """BM25's idf (always > 0), so a term seen in every message still carries a little weight."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


class Coder:
    """Builds ``bits``-bit codes (as ``bits // 64`` uint64 words) from weighted terms."""

    def __init__(self, bits: int = 256, seed: int = 0x41E6) -> None:
        if bits % 64 or bits <= 0:
            raise ValueError("bits must be a positive multiple of 64")
        self.bits = bits
        self.words = bits // 64
        self._key = seed.to_bytes(8, "little")
        self._cache: dict[str, int] = {}
        self._mat = np.zeros((1024, bits), dtype=np.int8)  # +-1 index vectors of recent terms
        self._n = 0
        self._gen = 0
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

    def _row(self, term: str) -> int:
        row = self._cache.get(term)
        if row is None:
            if self._n == self._mat.shape[0]:
                if self._n >= 65_536:  # bound the cache (16 MB at 256 bits); patterns are recomputed on demand
                    self._cache.clear()
                    self._n = 0
                    self._gen += 1
                else:
                    grown = np.zeros((2 * self._mat.shape[0], self.bits), dtype=np.int8)
                    grown[: self._n] = self._mat[: self._n]
                    self._mat = grown
            bits = self._pattern_bits(term.encode("utf-8", "surrogatepass"))
            self._mat[self._n] = np.where(bits, 1, -1)
            row = self._cache[term] = self._n
            self._n += 1
        return row

    def index_vector(self, term: str) -> np.ndarray:
        """The term's +-1 random index vector (float32, length ``bits``)."""
        return self._mat[self._row(term)].astype(np.float32)

    def accumulate(self, weights: dict[str, float]) -> np.ndarray:
        """The random-indexing vector of a bag of weighted terms."""
        if not weights:
            return np.zeros(self.bits, dtype=np.float32)
        gen = self._gen
        rows = [self._row(t) for t in weights]
        if gen != self._gen:  # the cache was reset half-way: earlier rows may be stale
            rows = [self._row(t) for t in weights]
        w = np.fromiter(weights.values(), dtype=np.float32, count=len(rows))
        return w @ self._mat[rows].astype(np.float32)

    def sign(self, acc: np.ndarray) -> np.ndarray:
        """SimHash: the sign bits of a vector; exact zeros take a fixed pseudo-random bit (no bias towards 0)."""
        bits = np.where(acc == 0, self.tie, acc > 0)
        return pack(bits)

    def code(self, weights: dict[str, float]) -> np.ndarray:
        return self.sign(self.accumulate(weights))


def pack(bits: np.ndarray) -> np.ndarray:
    """Bool array (..., bits) -> uint64 words (..., bits // 64), bit i of the code in word i // 64."""
    packed = np.packbits(np.ascontiguousarray(bits, dtype=bool), axis=-1, bitorder="little")
    return np.ascontiguousarray(packed).view(np.uint64)


def unpack(codes: np.ndarray) -> np.ndarray:
    """uint64 words (..., w) -> bool array (..., 64 * w)."""
    raw = np.ascontiguousarray(codes, dtype=np.uint64).view(np.uint8)
    return np.unpackbits(raw, axis=-1, bitorder="little").astype(bool)


def hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamming distances between code ``a`` (w,) or codes (n, w) and codes ``b`` (m, w), broadcasting."""
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
    """idf * (1 + log tf) per distinct term."""
    counts = Counter(terms)
    return {t: idf(n_docs, df.get(t, 0)) * (1.0 + math.log(c)) for t, c in counts.items()}


def content_terms(text: str) -> list[str]:
    return textnorm.terms(text)


class CodeSet:
    """A growable matrix of codes addressed by slot; dead slots are skipped by searches."""

    def __init__(self, words: int, cap: int = 64) -> None:
        self.words = words
        self.codes = np.zeros((cap, words), dtype=np.uint64)
        self.alive = np.zeros(cap, dtype=bool)
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def _grow(self, need: int) -> None:
        if need <= self.codes.shape[0]:
            return
        cap = max(need, 2 * self.codes.shape[0])
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

    def set(self, slot: int, code: np.ndarray) -> None:
        self.codes[slot] = code
        self.alive[slot] = True

    def kill(self, slot: int) -> None:
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
