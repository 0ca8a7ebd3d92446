"""Optional embedding channel: user embeddings turned into SimHash codes (random hyperplanes, Charikar 2002).

Only the binary codes are kept (``Config.embed_bits`` bits per message, 256 by default), never dense floats; they
are searched with the XOR-popcount kernels of :class:`hippo.BinaryIndex`.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from hippo.base.errors import HippoError, InvalidInput, LLMError
from hippo.native import BinaryIndex

EmbedFn = Callable[[list[str]], Sequence[Sequence[float]]]


def as_embed_fn(embed: Any) -> EmbedFn | None:
    """Accept a callable ``texts -> vectors``, or an object with ``embed_documents`` (LangChain) or
    ``get_text_embedding_batch`` (LlamaIndex)."""
    if embed is None:
        return None
    if hasattr(embed, "embed_documents"):
        fn = lambda texts: embed.embed_documents(list(texts))  # noqa: E731
    elif hasattr(embed, "get_text_embedding_batch"):
        fn = lambda texts: embed.get_text_embedding_batch(list(texts))  # noqa: E731
    elif callable(embed):
        fn = embed
    else:
        raise InvalidInput(f"embed must be a callable or an embeddings object, got {type(embed).__name__}")

    return _guarded(fn)


def _guarded(fn: EmbedFn) -> EmbedFn:
    """``fn`` with every failure reported as :class:`~hippo.base.errors.LLMError`: the user's function may fail in
    any way (network, model, bug), callers see one error type."""

    def guarded(texts: list[str]) -> Sequence[Sequence[float]]:
        try:
            return fn(texts)
        except HippoError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise LLMError(f"the embed function failed: {type(exc).__name__}: {exc}") from exc

    return guarded


def as_query_fn(embed: Any) -> EmbedFn | None:
    """The function embedding search queries: LangChain's ``embed_query`` and LlamaIndex's
    ``get_query_embedding`` when the object has them (models may embed a query differently from a document),
    otherwise the document function."""
    if embed is None:
        return None
    if hasattr(embed, "embed_query"):
        return _guarded(lambda texts: [embed.embed_query(t) for t in texts])
    if hasattr(embed, "get_query_embedding"):
        return _guarded(lambda texts: [embed.get_query_embedding(t) for t in texts])
    return as_embed_fn(embed)


class SimHasher:
    def __init__(self, bits: int, seed: int = 0x51A4) -> None:
        self.bits = bits
        self.seed = seed
        self._planes: np.ndarray | None = None

    def _planes_for(self, dim: int) -> np.ndarray:
        if self._planes is None or self._planes.shape[1] != dim:
            rng = np.random.default_rng(self.seed + dim)
            self._planes = rng.standard_normal((self.bits, dim)).astype(np.float32)
        return self._planes

    def codes(self, vectors: Sequence[Sequence[float]], n_expected: int) -> np.ndarray:
        try:
            mat = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise LLMError(f"embed returned something that is not a list of equal-length vectors: {exc}") from exc
        if mat.ndim != 2 or mat.shape[0] != n_expected or mat.shape[1] == 0:
            raise LLMError(f"embed returned shape {mat.shape}, expected ({n_expected}, dim)")
        if not np.isfinite(mat).all():
            raise LLMError("embed returned NaN or infinite values")
        proj = mat @ self._planes_for(mat.shape[1]).T
        return np.packbits(proj > 0, axis=1, bitorder="little")


def hamming_similarity(d: np.ndarray, bits: int) -> np.ndarray:
    return 1.0 - d.astype(np.float64) / float(bits)


def check_dim(bits: int) -> None:
    if bits % 64 or not 64 <= bits <= 1024 or not math.isfinite(bits):
        raise InvalidInput("embed_bits must be a multiple of 64 in 64..1024")


def quantize(vectors: Any) -> np.ndarray:
    """int8 rows of ``vectors``, each scaled by its own largest component (a cosine needs no scale back)."""
    mat = np.asarray(vectors, dtype=np.float32)
    if mat.ndim != 2 or not np.isfinite(mat).all():
        raise LLMError(f"embed returned shape {mat.shape} or non-finite values; expected finite (n, dim) vectors")
    peak = np.abs(mat).max(axis=1, keepdims=True)
    peak[peak == 0] = 1.0
    return np.rint(mat / peak * 127.0).astype(np.int8)


def line(speaker: str | None, role: str, text: str) -> str:
    """The text a message is embedded as: the line a reader sees, ``"<speaker>: <text>"``, so a question naming a
    person matches that person's messages in the embedding too."""
    return f"{speaker or role}: {text}"


def encode(hasher: SimHasher, vectors: Any, n_expected: int) -> np.ndarray:
    """What is stored per message for its user embedding: the SimHash code (``hasher.bits / 8`` bytes, searched by
    XOR-popcount), then the embedding quantized to int8 (one byte per dimension, for exact re-scoring)."""
    codes = hasher.codes(vectors, n_expected)
    return np.hstack([codes, quantize(vectors).view(np.uint8)])


class EmbeddingCodes:
    """The user embeddings of one namespace's messages: SimHash codes in a :class:`hippo.BinaryIndex` (candidates,
    by XOR-popcount) and their int8 vectors (exact cosine of those candidates), with their message ids.

    A 256-bit code estimates a cosine too coarsely to re-rank candidates; the int8 copy costs one byte per
    dimension (384 for all-MiniLM-L6-v2) and gives the cosine to within quantization error."""

    def __init__(self, bits: int) -> None:
        self.width = bits // 8
        self.index = BinaryIndex(bits)
        self.owners: list[int] = []
        self._pos: dict[int, int] = {}
        self._vectors: list[np.ndarray] = []   # int8 blocks, rows parallel to owners (absent for old stores)
        self._vector_pos: dict[int, int] = {}
        self._mat: np.ndarray | None = None
        self._norm: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.owners)

    @property
    def dims(self) -> set[int]:
        """The dimensions of the stored vectors (one per embedding model that wrote them; empty for codes alone)."""
        return {b.shape[1] for b in self._vectors}

    def add(self, ids: Sequence[int], blobs: np.ndarray) -> None:
        """``blobs`` rows as :func:`encode` makes them (a code alone, as older stores kept it, is accepted)."""
        blobs = np.ascontiguousarray(blobs, dtype=np.uint8)
        self.index.add(np.ascontiguousarray(blobs[:, : self.width]))
        base = sum(b.shape[0] for b in self._vectors)
        if blobs.shape[1] > self.width:
            self._vectors.append(np.ascontiguousarray(blobs[:, self.width:]).view(np.int8))
            for k, i in enumerate(ids):
                self._vector_pos[int(i)] = base + k
            self._mat = None
        for i in ids:
            self._pos[int(i)] = len(self.owners)
            self.owners.append(int(i))

    def without(self, ids: Sequence[int]) -> "EmbeddingCodes":
        """The same codes less those of ``ids`` (the native index only grows, so the survivors are copied)."""
        gone = {int(i) for i in ids}
        keep = [p for p, i in enumerate(self.owners) if i not in gone]
        out = EmbeddingCodes(self.index.bits)
        if keep:
            out.add([self.owners[p] for p in keep], self.index.get(np.asarray(keep, dtype=np.int64)))
        return out

    def nearest(self, qcode: np.ndarray, k: int) -> list[tuple[int, int]]:
        """``(message id, Hamming distance)`` of the ``k`` codes nearest ``qcode`` (XOR-popcount), nearest first."""
        k = min(k, len(self.owners))
        if k <= 0:
            return []
        dist, pos = self.index.search(np.ascontiguousarray(qcode), k)
        return [(self.owners[j], int(d)) for d, j in zip(dist[0].tolist(), pos[0].tolist()) if j >= 0]

    def search(self, qcode: np.ndarray, k: int) -> list[int]:
        """Message ids of the ``k`` codes nearest ``qcode``, nearest first."""
        return [i for i, _ in self.nearest(qcode, k)]

    def words_of(self, ids: Sequence[int]) -> np.ndarray | None:
        """The codes of these messages as 64-bit words (one row each), or None when one of them has no code."""
        pos = [self._pos.get(int(i)) for i in ids]
        if not ids or any(p is None for p in pos):
            return None
        raw = np.ascontiguousarray(self.index.get(np.asarray(pos, dtype=np.int64)))
        return raw.view(np.uint64).reshape(len(ids), -1)

    def cosines(self, ids: Sequence[int], query: np.ndarray) -> np.ndarray:
        """Cosine of each message's int8 vector with the float ``query``; NaN where a message has no vector."""
        out = np.full(len(ids), np.nan)
        if not self._vectors:
            return out
        if self._mat is None:
            if len(self.dims) != 1:
                return out  # vectors of several models: not comparable
            self._mat = np.concatenate(self._vectors).astype(np.float32)
            norm = np.linalg.norm(self._mat, axis=1)
            norm[norm == 0] = 1.0
            self._norm = norm
        mat, norm = self._mat, self._norm
        if mat.shape[1] != query.size:
            return out
        pos = np.fromiter((self._vector_pos.get(int(i), -1) for i in ids), dtype=np.int64, count=len(ids))
        ok = pos >= 0
        q = query / (float(np.linalg.norm(query)) or 1.0)
        out[ok] = (mat[pos[ok]] @ q) / norm[pos[ok]]
        return out
