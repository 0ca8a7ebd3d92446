"""Configuration of a :class:`hippo.Memory`. Every knob has a default that works offline."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from hippo.errors import InvalidInput
from hippo.hierarchy.config import DecayConfig, GateConfig, HierarchyConfig


@dataclass(frozen=True)
class SignatureConfig:
    """Streaming random indexing (seed 000 §3.3): per-token binary signatures for the Signature DWM."""

    seed: int = 0x5EED_4170
    dim: int = 1024          # dimensionality d of the sparse ternary base vectors
    nnz: int = 8             # non-zeros per base vector (half +1, half -1)
    window: int = 2          # context tokens on each side (never across message boundaries)
    self_weight: int = 6     # weight of the token's own base vector in its context vector
    top_m: int = 16          # activations kept before hashing
    bits: int = 16           # signature width in bits (symbol width of the Signature DWM)
    radius: int = 2          # Hamming-ball radius for query keyword signatures


@dataclass(frozen=True)
class RetrievalConfig:
    bm25_k1: float = 1.2
    bm25_b: float = 0.3           # turns are short and similar in length: weak length normalization
    rrf_k: int = 60
    # Weighted RRF (seed 002 Eq. 3): lexical BM25, signature (Hamming-ball) and optional embedding channels.
    weight_lexical: float = 1.0
    weight_signature: float = 0.0   # measured neutral on LoCoMo dev at +45% latency; see README
    weight_embedding: float = 0.8
    # BM25 enumerates occurrences of rare terms first; terms past this many occurrences are only verified on
    # candidates already found (seed 000 §3.2.2: least frequent signature first, others checked by rank). At 4,000
    # a 1.2M-token history lost evidence that matched only its question's commoner words (BEAM 10 chats in one
    # store: 0.556 -> 0.593 at 2000 tokens with 50,000; recall p50 42 -> 45 ms; docs/retrieval.md, Growth).
    enumerate_limit: int = 50_000
    candidate_limit: int = 400
    neighbor_weight: float = 0.8  # share of a message's score lent to its conversational neighbours
    neighbor_span: int = 2        # how many turns away a neighbour may be (weight halves per step)
    speaker_boost: float = 0.15   # bounded boost for messages by a speaker the query names
    profile_prior: bool = True    # speaker-profile prior for preference / identity questions (hippo.profiles)


@dataclass(frozen=True)
class TemporalConfig:
    """Time and truth at query time (seed 002 §4.1 stages 3, 4 and 9). Factors multiply the fused RRF score and
    fire only when their condition holds; each is bounded."""

    enabled: bool = True
    temporal_boost: float = 1.1     # stage 9 f_t: temporal query x candidate that carries a time expression
    window_boost: float = 4.0       # stage 9 f_t: the query names a period x candidate dated or said in it
    surprise_alpha: float = 0.2     # stage 9: (1 + alpha * surprise)
    salience_beta: float = 0.02     # (1 + beta * (salience - 0.5)): a tie-breaker (0.1 measured neutral on dev data)
    fact_boost: float = 0.5         # the newest statement of the entity / attribute a query asks about
    recency_boost: float = 0.5      # "now" / "currently" about a named person: up to x1.5 for their newest candidates
    superseded_factor: float = 0.8  # an older statement a newer one updated (kept, ranked lower, marked)
    annotate: bool = True           # resolved event dates and "superseded" marks in recalled context
    chronological: bool = True      # order / progression queries: context laid out by event time


@dataclass(frozen=True)
class Config:
    signature: SignatureConfig = field(default_factory=SignatureConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    max_message_chars: int = 10_000_000
    seal_tokens: int = 4096          # tail tokens kept as raw rows before they are sealed into a chunk
    busy_timeout_s: float = 10.0     # how long a writer waits for a locked SQLite file before StoreBusy
    embed_bits: int = 256            # SimHash width for user-supplied embeddings
    timestamp_min_year: int = 1900
    timestamp_max_year: int = 2200
    hierarchy: HierarchyConfig = field(default_factory=HierarchyConfig)  # seed 001 §3
    decay: DecayConfig = field(default_factory=DecayConfig)              # seed 004 §8-10
    gate: GateConfig = field(default_factory=GateConfig)                 # seed 002 §4.1 stage 1
    temporal: TemporalConfig = field(default_factory=TemporalConfig)     # seed 002 §4.1 stages 3, 4, 9

    @classmethod
    def from_value(cls, value: "Config | dict[str, Any] | None") -> "Config":
        if value is None:
            return cls()
        if isinstance(value, Config):
            return value
        if not isinstance(value, dict):
            raise InvalidInput(f"config must be a hippo.Config, a dict or None, got {type(value).__name__}")
        return _from_dict(cls, value, "config")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def replace(self, **changes: Any) -> "Config":
        return replace(self, **changes)


def _from_dict(cls, data: dict[str, Any], path: str):
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, val in data.items():
        if key not in known:
            raise InvalidInput(f"{path}: unknown setting {key!r}; expected one of {sorted(known)}")
        default = getattr(cls(), key)
        if hasattr(default, "__dataclass_fields__"):
            if isinstance(val, type(default)):
                kwargs[key] = val
            elif isinstance(val, dict):
                kwargs[key] = _from_dict(type(default), val, f"{path}.{key}")
            else:
                raise InvalidInput(f"{path}.{key} must be a dict, got {type(val).__name__}")
            continue
        kwargs[key] = _coerce(val, default, f"{path}.{key}")
    obj = cls(**kwargs)
    _validate(obj, path)
    return obj


def _coerce(val: Any, default: Any, path: str) -> Any:
    if isinstance(default, bool):
        if not isinstance(val, bool):
            raise InvalidInput(f"{path} must be a bool")
        return val
    if isinstance(default, int):
        if isinstance(val, bool) or not isinstance(val, int):
            raise InvalidInput(f"{path} must be an int, got {val!r}")
        return val
    if isinstance(default, float):
        if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val):
            raise InvalidInput(f"{path} must be a finite number, got {val!r}")
        return float(val)
    return val


def _validate(obj: Any, path: str) -> None:
    if isinstance(obj, SignatureConfig):
        if not 1 <= obj.bits <= 32:
            raise InvalidInput(f"{path}.bits must be in 1..32")
        if obj.nnz < 2 or obj.nnz % 2 or obj.nnz > obj.dim:
            raise InvalidInput(f"{path}.nnz must be even, >= 2 and <= dim")
        if obj.window < 0 or obj.top_m < 1 or obj.self_weight < 0 or obj.radius < 0:
            raise InvalidInput(f"{path}: window, self_weight and radius must be >= 0, top_m >= 1")
    if isinstance(obj, TemporalConfig):
        if not 1 <= obj.temporal_boost <= 4 or not 1 <= obj.window_boost <= 16 or obj.fact_boost < 0 or obj.fact_boost > 4:
            raise InvalidInput(f"{path}: temporal_boost must be in 1..4, window_boost in 1..16 and fact_boost in 0..4")
        if not 0 < obj.superseded_factor <= 1 or not 0 <= obj.surprise_alpha <= 1 or not 0 <= obj.salience_beta <= 1 \
                or not 0 <= obj.recency_boost <= 4:
            raise InvalidInput(f"{path}: superseded_factor must be in (0, 1], surprise_alpha and salience_beta in 0..1, recency_boost in 0..4")
    if isinstance(obj, Config):
        if obj.max_message_chars < 1 or obj.seal_tokens < 1 or obj.busy_timeout_s < 0:
            raise InvalidInput(f"{path}: max_message_chars and seal_tokens must be >= 1, busy_timeout_s >= 0")
        if obj.embed_bits % 64 or not 64 <= obj.embed_bits <= 1024:
            raise InvalidInput(f"{path}.embed_bits must be a multiple of 64 in 64..1024")


# Configurations compared by ``hippo bench locomo --ablation`` (seed 001 §5.1, Fig. 3): the flat engine, the
# hierarchy with a plain similarity retriever (whole linked episodes), + Stage I representative selection,
# + Stage II uncertainty-gated expansion, and both stages. Decay runs in the hierarchical settings as it does by
# default; the flat setting is the engine alone.
ABLATIONS: dict[str, dict[str, Any]] = {
    "flat": {"hierarchy": {"recall": "flat"}, "decay": {"enabled": False}},
    "hierarchy-only": {"hierarchy": {"recall": "units"}},
    "+stage1": {"hierarchy": {"recall": "stage1"}},
    "+stage2": {"hierarchy": {"recall": "stage2"}},
    "full": {"hierarchy": {"recall": "full"}},
    "no-temporal": {"temporal": {"enabled": False}},  # the default before time and truth (seed 002 stages 3-9)
}
