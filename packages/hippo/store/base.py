"""The storage interface behind :class:`hippo.Memory`.

A store keeps, per namespace, the verbatim messages (metadata rows plus their token ids) and the sealed chunks of
the Content stream. Everything process-local (the wavelet matrices, signatures, span tables) is rebuildable from
what a store returns, so several processes (or several app servers on a shared SQL server) can use one store.

Token ids of a message live in exactly one place: in its row while it is in the unsealed tail, then inside one
sealed chunk (a serialized, checksummed static wavelet matrix over the tokens of a contiguous ``seq`` range).
Sealing and merging chunks happen in one transaction with clearing the rows' tokens, so a crash at any point
leaves every committed message's tokens in exactly one of the two places.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np


@dataclass
class MessageRow:
    id: int
    namespace: str
    seq: int
    n_tokens: int
    speaker: str | None
    role: str
    ts: float | None
    session_id: str | None
    metadata: dict[str, Any]
    created_at: float
    tokens: np.ndarray | None = None  # uint32 token ids while the row is in the unsealed tail


@dataclass
class NewMessage:
    tokens: np.ndarray
    speaker: str | None
    role: str
    ts: float | None
    session_id: str | None
    metadata: dict[str, Any]
    created_at: float


@dataclass
class Chunk:
    id: int
    first_seq: int
    last_seq: int
    n_messages: int
    n_tokens: int
    blob: bytes
    checksum: bytes | None = None  # over the row's fields, its blob and the (seq, n_tokens) of the messages it covers


@dataclass(frozen=True)
class NamespaceState:
    """Cheap fingerprint of a namespace: it changes on every append (next_seq) and every deletion (generation)."""

    generation: int
    next_seq: int


# Builds a chunk blob from the concatenated token ids of the messages it covers.
ChunkEncoder = Callable[[np.ndarray], bytes]
# Decodes a chunk blob back into its token ids (validating it).
ChunkDecoder = Callable[[bytes], np.ndarray]


class Store(abc.ABC):
    @abc.abstractmethod
    def state(self, namespace: str) -> NamespaceState: ...

    @abc.abstractmethod
    def namespaces(self) -> list[str]: ...

    @abc.abstractmethod
    def append(self, namespace: str, messages: Sequence[NewMessage], codes: Any = None) -> list[MessageRow]:
        """Store messages (and, when given, their embedding codes, one row of ``codes`` per message) in one
        transaction."""

    @abc.abstractmethod
    def load(self, namespace: str, decode: ChunkDecoder, after_seq: int = -1) -> list[MessageRow]:
        """Every message of ``namespace`` with ``seq > after_seq`` in seq order, each with its tokens."""

    @abc.abstractmethod
    def rows(self, namespace: str, ids: Iterable[int]) -> dict[int, MessageRow]: ...

    @abc.abstractmethod
    def scan(self, namespace: str) -> Iterable[MessageRow]:
        """Every message row (without tokens) in seq order."""

    @abc.abstractmethod
    def seal(self, namespace: str, encode: ChunkEncoder, decode: ChunkDecoder, min_tokens: int) -> int:
        """Move the unsealed tail into a chunk when it holds at least ``min_tokens``; merge chunks geometrically."""

    @abc.abstractmethod
    def delete(self, namespace: str, ids: Iterable[int], encode: ChunkEncoder, decode: ChunkDecoder) -> list[int]:
        """Delete messages, rewriting the chunks that held their tokens; returns the ids actually deleted."""

    @abc.abstractmethod
    def delete_namespace(self, namespace: str) -> int: ...

    @abc.abstractmethod
    def sizes(self) -> dict[str, int]: ...

    @abc.abstractmethod
    def vacuum(self) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...
