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


class EmbeddingCodes:
    """The SimHash codes of one namespace's messages in a :class:`hippo.BinaryIndex`, with their message ids."""

    def __init__(self, bits: int) -> None:
        self.index = BinaryIndex(bits)
        self.owners: list[int] = []
        self._pos: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.owners)

    def add(self, ids: Sequence[int], codes: np.ndarray) -> None:
        self.index.add(np.ascontiguousarray(codes))
        for i in ids:
            self._pos[int(i)] = len(self.owners)
            self.owners.append(int(i))

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
