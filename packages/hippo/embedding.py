"""Optional embedding channel: user embeddings turned into SimHash codes (random hyperplanes, Charikar 2002).

Only the binary codes are kept (``Config.embed_bits`` bits per message, 256 by default), never dense floats; they
are searched with the XOR-popcount kernels of :class:`hippo.BinaryIndex`.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from hippo.errors import InvalidInput, LLMError

EmbedFn = Callable[[list[str]], Sequence[Sequence[float]]]


def as_embed_fn(embed: Any) -> EmbedFn | None:
    """Accept a callable ``texts -> vectors``, or an object with ``embed_documents`` (LangChain) or
    ``get_text_embedding_batch`` (LlamaIndex)."""
    if embed is None:
        return None
    if hasattr(embed, "embed_documents"):
        return lambda texts: embed.embed_documents(list(texts))
    if hasattr(embed, "get_text_embedding_batch"):
        return lambda texts: embed.get_text_embedding_batch(list(texts))
    if callable(embed):
        return embed
    raise InvalidInput(f"embed must be a callable or an embeddings object, got {type(embed).__name__}")


def as_query_fn(embed: Any) -> EmbedFn | None:
    """The function embedding search queries: LangChain's ``embed_query`` and LlamaIndex's
    ``get_query_embedding`` when the object has them (models may embed a query differently from a document),
    otherwise the document function."""
    if embed is None:
        return None
    if hasattr(embed, "embed_query"):
        return lambda texts: [embed.embed_query(t) for t in texts]
    if hasattr(embed, "get_query_embedding"):
        return lambda texts: [embed.get_query_embedding(t) for t in texts]
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
