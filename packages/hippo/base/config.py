"""Configuration of a :class:`hippo.Memory`: retrieval, signatures, the hierarchy, decay, the encoding gate, time and
truth. Every knob has a default that works offline with zero LLM calls."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from hippo.base.checks import check_int, check_number
from hippo.base.errors import InvalidInput
from hippo.base.policies import compile_policies

RECALL_MODES = ("evidence", "flat", "units", "stage1", "stage2", "full")
MESSAGE_TYPES = ("message", "tool_result", "state", "memory")
UNIT_TYPES = ("episode", "semantic", "theme")
PRIORITIES = ("critical", "high", "normal", "low")
CLOCKS = ("turns", "time", "both")


def _unit(name: str, value: float, lo: float = 0.0, hi: float = 1.0) -> None:
    check_number(value, name, lo, hi)


def _positive_int(name: str, value: int, minimum: int = 1) -> None:
    check_int(value, name, minimum=minimum)


@dataclass(frozen=True)
class HierarchyConfig:
    """Episodes / semantics / themes (seed 001 §3.2) and top-down recall (seed 001 §3.3)."""

    enabled: bool = True
    # How ``Memory.recall`` builds a context: "evidence" (the engine's candidates packed by expected evidence per
    # token, hippo.engine.evidence), "flat" (the engine's ranked messages in rank order), "units" (hierarchy with a
    # plain similarity retriever), "stage1" (+ representative selection, Eq. 4), "stage2" (+ uncertainty-gated
    # expansion), "full" (both stages). The default wins on LoCoMo and BEAM in ``hippo bench locomo`` / ``hippo
    # bench beam`` (docs/retrieval.md); Stage II was the default before and is kept for comparison.
    recall: str = "evidence"
    code_bits: int = 256              # SimHash width of unit codes
    # CURRENT buffer (seed 003 §3.3, Eq. 1): a flush unit ends at a session change, a time gap, or size;
    # complete units are consolidated as their rows are applied (by the write, or when catching up with another
    # process) once they fill a batch, on every add with ``consolidate_on_add``, and by ``consolidate()``.
    # Reads never consolidate.
    flush_tokens: int = 1200
    flush_gap_s: float = 3 * 3600.0
    consolidate_on_add: bool = False
    batch_messages: int = 32          # whole flush units are consolidated in batches of at least this many
    # episodes: contiguous blocks split at cohesion valleys (topic shifts) of adjacent message windows
    episode_min_messages: int = 3
    episode_max_messages: int = 10
    episode_window: int = 2
    episode_depth: float = 0.15       # minimum valley depth of the cohesion curve that marks a topic shift
    summary_tokens: int = 48
    # semantics: salient de-duplicated sentences with provenance
    semantic_min_terms: int = 3
    semantics_per_message: float = 0.6
    semantic_dedup: float = 0.8       # code similarity at or above which a new semantic merges into an old one
    # themes: f(P) = SparsityScore + SemScore guides split / merge (seed 001 Eq. 1-3)
    theme_cap: int = 12               # seed 001 App. B: n_k <= 2^((B+1)/alpha) ~ 11.5 -> 12
    theme_attach: float = 0.12        # minimum similarity to the nearest theme code to attach instead of opening
    theme_tiny: int = 1               # themes this small are considered for merging
    merge_candidates: int = 3
    split_trials: int = 2
    knn_k: int = 6
    # Stage I (seed 001 Eq. 4)
    alpha: float = 0.35
    stage1_themes: int = 6
    stage1_semantics: int = 16
    stage1_coverage: float = 0.9
    candidate_themes: int = 24
    candidate_semantics: int = 96
    # Stage II: uncertainty-gated expansion under the token budget
    stage2_patience: int = 6          # consecutive candidates without gain before stopping early
    stage2_min_gain: float = 0.02
    stage2_floor: float = 0.25        # candidates below this share of the best relevance add no evidence
    # LLM (only with Memory(..., llm=...)): query keywords; summaries and facts in deep consolidation
    llm_keywords: bool = True
    llm_on_write: bool = False        # also summarize / extract facts with the LLM when episodes are built
    llm_uncertainty: bool = False     # Stage II stops by the reader's token entropy (logprobs) instead of offline
    persist_every: int = 4096         # messages between unit snapshots (also saved on close / consolidate)

    def __post_init__(self) -> None:
        _check_types(self, "config.hierarchy")
        if self.recall not in RECALL_MODES:
            raise InvalidInput(f"config.hierarchy.recall must be one of {RECALL_MODES}, got {self.recall!r}")
        if self.code_bits % 64 or not 64 <= self.code_bits <= 1024:
            raise InvalidInput("config.hierarchy.code_bits must be a multiple of 64 in 64..1024")
        for name in ("flush_tokens", "batch_messages", "episode_min_messages",
                     "episode_max_messages", "episode_window",
                     "summary_tokens", "semantic_min_terms", "theme_cap", "merge_candidates", "split_trials", "knn_k",
                     "stage1_themes", "stage1_semantics", "candidate_themes", "candidate_semantics",
                     "stage2_patience", "persist_every"):
            _positive_int(f"config.hierarchy.{name}", getattr(self, name))
        _positive_int("config.hierarchy.theme_tiny", self.theme_tiny, 0)
        if self.theme_cap < 2:
            raise InvalidInput("config.hierarchy.theme_cap must be >= 2")
        if self.episode_min_messages > self.episode_max_messages:
            raise InvalidInput("config.hierarchy.episode_min_messages must be <= episode_max_messages")
        for name in ("alpha", "stage1_coverage", "stage2_min_gain", "stage2_floor",
                     "semantics_per_message", "episode_depth"):
            _unit(f"config.hierarchy.{name}", getattr(self, name))
        for name in ("semantic_dedup", "theme_attach"):
            _unit(f"config.hierarchy.{name}", getattr(self, name), -1.0, 1.0)
        if not (math.isfinite(self.flush_gap_s) and self.flush_gap_s > 0):
            raise InvalidInput("config.hierarchy.flush_gap_s must be a positive number of seconds")


def _default_rates() -> dict[str, float]:
    # seed 004 §8.1 (tool_result 0.1, message 0.05, state 0.02) and §5.1 (memory: very low). Units distil
    # repeated evidence and decay more slowly than the messages they come from.
    return {"tool_result": 0.1, "message": 0.05, "state": 0.02, "memory": 0.01,
            "episode": 0.03, "semantic": 0.01, "theme": 0.005}


def _default_priority_mods() -> dict[str, float]:
    return {"critical": 0.0, "high": 0.3, "normal": 1.0, "low": 2.0}  # seed 004 §5.2, §14.2


@dataclass(frozen=True)
class DecayConfig:
    """Power-law strength (seed 004 §8, §14.2): ``s = max(floor, s0 * (1 + r_eff * dt) ** -exponent)``."""

    enabled: bool = True
    rates: dict = field(default_factory=_default_rates)
    priority_mods: dict = field(default_factory=_default_priority_mods)
    exponent: float = 0.5
    manual_mod: float = 0.5           # encoding: manual
    association_mod: float = 0.7      # connected to a strong entry
    floor: float = 0.0
    dormant_threshold: float = 0.1    # seed 004 §8.3
    # dt counts turns and wall-clock time; either weight may be 0. The seed's rates are per agent turn of a
    # context window; a long-term store sees many messages per such turn, so by default fifty added messages
    # count as one turn (and a day of wall-clock time as one more).
    clock: str = "both"
    turn_weight: float = 0.02
    time_unit_s: float = 86400.0      # one day of wall-clock time counts as ``time_weight`` turns
    time_weight: float = 1.0
    rank_weight: float = 0.1          # share of the final ranking given to relative strength
    fresh_level: float = 0.5          # relative strengths at or above this rank as fully fresh (no jitter)
    reinforce_on_recall: bool = True
    cue_ratio: float = 1.0            # pattern completion: a dormant item holding this share of the query's
                                      # term weight comes back (1.0: every query term, a strong exact cue)
    persist_accesses: int = 3         # deep consolidation marks units accessed this often as persist-worthy
    retention_s: float = 365 * 86400.0  # archival prunes units dormant and older than this
    policies: tuple = ()              # declarative lifecycle policies (seed 004 §10), see hippo.base.policies

    def __post_init__(self) -> None:
        _check_types(self, "config.decay")
        rates = _default_rates()
        if not isinstance(self.rates, dict):
            raise InvalidInput("config.decay.rates must be a dict of type -> rate")
        for k, v in self.rates.items():
            if k not in rates:
                raise InvalidInput(f"config.decay.rates: unknown type {k!r}; expected {sorted(rates)}")
            _unit(f"config.decay.rates[{k!r}]", v, 0.0, 1e6)
            rates[k] = float(v)
        object.__setattr__(self, "rates", rates)
        mods = _default_priority_mods()
        if not isinstance(self.priority_mods, dict):
            raise InvalidInput("config.decay.priority_mods must be a dict of priority -> modifier")
        for k, v in self.priority_mods.items():
            if k not in mods:
                raise InvalidInput(f"config.decay.priority_mods: unknown priority {k!r}; expected {PRIORITIES}")
            _unit(f"config.decay.priority_mods[{k!r}]", v, 0.0, 1e6)
            mods[k] = float(v)
        object.__setattr__(self, "priority_mods", mods)
        _unit("config.decay.exponent", self.exponent, 1e-6, 10.0)
        for name in ("manual_mod", "association_mod"):
            _unit(f"config.decay.{name}", getattr(self, name), 0.0, 10.0)
        for name in ("floor", "dormant_threshold", "rank_weight", "cue_ratio", "fresh_level"):
            _unit(f"config.decay.{name}", getattr(self, name))
        if self.clock not in CLOCKS:
            raise InvalidInput(f"config.decay.clock must be one of {CLOCKS}, got {self.clock!r}")
        for name in ("turn_weight", "time_weight"):
            _unit(f"config.decay.{name}", getattr(self, name), 0.0, 1e9)
        for name in ("time_unit_s", "retention_s"):
            _unit(f"config.decay.{name}", getattr(self, name), 1e-9, 1e13)
        _positive_int("config.decay.persist_accesses", self.persist_accesses)
        if isinstance(self.policies, (str, bytes)) or not isinstance(self.policies, (list, tuple)):
            raise InvalidInput("config.decay.policies must be a list of policy dicts (see hippo.base.policies)")
        compile_policies(self.policies)  # validates every rule now, not at first use
        object.__setattr__(self, "policies", tuple(self.policies))


def _default_offsets() -> dict[str, float]:
    return {"correction": -0.06, "decision": -0.04, "relationship": -0.04}  # seed 002 §4.1 Eq. 1


@dataclass(frozen=True)
class GateConfig:
    """Encoding gate (seed 002 §4.1 stage 1), off by default: admit iff the weighted mean of novelty, salience and
    prediction error reaches ``threshold + offset(category)`` and salience reaches ``salience_floor``."""

    enabled: bool = False
    w_novelty: float = 0.25
    w_salience: float = 0.20
    w_prediction: float = 0.30
    threshold: float = 0.30
    salience_floor: float = 0.10
    neighbors: int = 3                # stored messages compared against for novelty
    relevance_min: float = 0.1        # below this code similarity the nearest memory is off-topic: no prediction error
    category_offsets: dict = field(default_factory=_default_offsets)

    def __post_init__(self) -> None:
        _check_types(self, "config.gate")
        for name in ("w_novelty", "w_salience", "w_prediction"):
            _unit(f"config.gate.{name}", getattr(self, name), 0.0, 1e6)
        if self.w_novelty + self.w_salience + self.w_prediction <= 0:
            raise InvalidInput("config.gate: the three weights must not all be 0")
        _unit("config.gate.threshold", self.threshold, -1.0, 2.0)
        _unit("config.gate.salience_floor", self.salience_floor)
        _unit("config.gate.relevance_min", self.relevance_min, -1.0, 1.0)
        _positive_int("config.gate.neighbors", self.neighbors)
        offsets = _default_offsets()
        if not isinstance(self.category_offsets, dict):
            raise InvalidInput("config.gate.category_offsets must be a dict of category -> offset")
        for k, v in self.category_offsets.items():
            _unit(f"config.gate.category_offsets[{k!r}]", v, -1.0, 1.0)
            offsets[str(k)] = float(v)
        object.__setattr__(self, "category_offsets", offsets)


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

    def __post_init__(self) -> None:
        _check_section(self, "config.signature")


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
    # BM25's b for the score a message lends (standard BM25's 0.75): a long reply that matches a question's words by
    # its length lends its request less than its own score (hippo.index.channels.lexical; docs/retrieval.md)
    neighbor_b: float = 0.75
    profile_prior: bool = True    # speaker-profile prior for preference / identity questions (hippo.engine.profiles)
    # The user's standing instructions ("Always ... when I ask about ...", hippo.text.directives) are packed into a
    # recall context when the question shares their words or their session's subject (hippo.engine.evidence
    # .standing_weights), within this share of the budget (or what the other candidates leave of it, when that is
    # more); 0 turns that off.
    standing_share: float = 0.125
    # A message's value is lifted by how well its whole session matches the question (BM25 over sessions), up to
    # 1 + session_weight for the best session, scaled down where sessions are longer than the budget (see
    # hippo.engine.evidence.with_sessions); 0 turns that off.
    session_weight: float = 1.0
    # Messages without a session id more than this many seconds apart start a new sitting, which is read as a
    # session where two voices take turns (hippo.index.coindex.NamespaceIndex.units); 0 turns sittings off
    # (such messages never lend to each other nor are lifted together). Too short a gap cuts a conversation that
    # pauses, too long a one merges the day's separate conversations: two hours was the best worst case of 30
    # minutes, 2, 4 and 12 hours on LoCoMo's odd half re-timed as a messaging app's chat (docs/retrieval.md,
    # "Sittings").
    sitting_gap_s: float = 7200.0
    # A query word of five or more letters also matches the misspellings of it the namespace holds (words one
    # typing slip away that cl100k writes in several tokens), one of three or more the words that hold some of its
    # letters for emphasis ("birthdayyy"), and one of four or more the words written with accents in several tokens
    # whose letters without them are the word ("Medellín"), and any word the words written with optional marks
    # whose letters without them are one of its forms (Arabic's harakat, "المَدْرَسَةِ" for "مدرسة"):
    # hippo.index.coindex.NamespaceIndex.slips. A question's
    # own word that the namespace does not hold is read as the word it is a slip of, when the namespace holds that
    # ("fesetival" -> "festival"): hippo.engine.scope.spelled.
    misspellings: bool = True
    # A query word of four or more letters also matches its derivational relatives ("adopt" / "adoption", "suggest"
    # / "suggestion"), each occurrence counting as a misspelling's does: hippo.text.relatives.
    relatives: bool = True
    # A query word naming a kind of place ("cities", "countries", "states", "places") also matches the listed names
    # of that kind ("Seattle", "Spain", "Texas"), each occurrence counting as a misspelling's does: hippo.text.places.
    places: bool = True
    # A query word naming a speaker ("Melanie", "Mel") does not count in the messages of the other party of a
    # dialogue of two, where it addresses that speaker ("Thanks, Melanie!"); the speaker's own messages match
    # through the speaker field: hippo.index.coindex.NamespaceIndex.addressees. Questions in the first person keep
    # every occurrence ("What did I tell Sam?").
    addressed_names: bool = True
    # When a question names speakers of the namespace as names are written ("What did Caroline paint?", "Mel"),
    # the messages of the speakers it does not name are valued at this share: what a person did, said or likes is
    # told by that person (hippo.index.channels.lexical); not for a question in the first person, whose
    # asker is one of the people it is about. 1 turns that off. Chosen on LoCoMo's odd half
    # (0-0.85 tried; docs/retrieval.md, "The named speaker's messages first").
    unnamed_speakers: float = 0.5
    # When a question asks the assistant for advice ("Can you suggest some books for me?", "How should I ..."), the
    # user's messages that state a preference ("I prefer e-books for their portability") are valued at 1 + this
    # share of their score: a request is answered in the terms the user set, which it rarely repeats
    # (hippo.text.directives.states_preference / asks_for_advice; hippo.engine.rank.preference_factors). 0 turns
    # that off. Chosen on BEAM's odd half (0.3-1.5 tried; docs/retrieval.md, "The user's stated preferences").
    asker_preferences: float = 0.6

    def __post_init__(self) -> None:
        _check_section(self, "config.retrieval")


@dataclass(frozen=True)
class TemporalConfig:
    """Time and truth at query time (seed 002 §4.1 stages 3, 4 and 9). Factors multiply the fused RRF score and
    fire only when their condition holds; each is bounded."""

    enabled: bool = True
    temporal_boost: float = 1.1     # stage 9 f_t: temporal query x candidate that carries a time expression
    #                                 (or, for a question asking "how long", one that states a span of time)
    window_boost: float = 4.0       # stage 9 f_t: the query names a period x candidate dated or said in it
    surprise_alpha: float = 0.2     # stage 9: (1 + alpha * surprise)
    salience_beta: float = 0.02     # (1 + beta * (salience - 0.5)): a tie-breaker (0.1 measured neutral on dev data)
    fact_boost: float = 0.5         # the newest statement of the entity / attribute a query asks about
    recency_boost: float = 0.5      # "now" / "currently" about a named person: up to x1.5 for their newest candidates
    superseded_factor: float = 0.8  # an older statement a newer one updated (kept, ranked lower, marked)
    annotate: bool = True           # resolved event dates and "superseded" marks in recalled context
    chronological: bool = True      # order / progression queries: context laid out by event time

    def __post_init__(self) -> None:
        _check_section(self, "config.temporal")


@dataclass(frozen=True)
class Config:
    signature: SignatureConfig = field(default_factory=SignatureConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    max_message_chars: int = 10_000_000
    seal_tokens: int = 4096          # tail tokens kept as raw rows before they are sealed into a chunk
    busy_timeout_s: float = 10.0     # how long a writer waits for a locked SQLite file before StoreBusy
    # SQLite durability (PRAGMA synchronous, WAL mode). "NORMAL" (default): a crash of the process or of the OS loses
    # nothing that committed; a power loss may lose the last transactions, never the file's consistency. "FULL" /
    # "EXTRA": the log is synced on every commit, so committed data also survives power loss (slower writes).
    # "OFF": no syncs at all; a power loss may corrupt the file.
    synchronous: str = "NORMAL"
    embed_bits: int = 256            # SimHash width for user-supplied embeddings
    # Namespaces one open store keeps loaded in the process (co-index, annotations, lifecycle, profiles, caches): past
    # this many, the least recently used one is saved (as close() saves it) and its followers freed; its next use
    # loads it again from its snapshots plus the change feed. A server with one namespace per user otherwise holds
    # every user it ever served. A store whose derived state is not saved (in memory, read-only) keeps them all.
    max_loaded_namespaces: int = 256
    timestamp_min_year: int = 1900
    timestamp_max_year: int = 2200
    hierarchy: HierarchyConfig = field(default_factory=HierarchyConfig)  # seed 001 §3
    decay: DecayConfig = field(default_factory=DecayConfig)              # seed 004 §8-10
    gate: GateConfig = field(default_factory=GateConfig)                 # seed 002 §4.1 stage 1
    temporal: TemporalConfig = field(default_factory=TemporalConfig)     # seed 002 §4.1 stages 3, 4, 9

    def __post_init__(self) -> None:
        # A section given as a dict, Config(retrieval={"session_weight": 0.5}) as docs/api.md writes it, is read as
        # Config.from_value reads one: unknown keys and bad values raise InvalidInput.
        for f in fields(self):
            section = f.default_factory
            if not isinstance(section, type):
                continue
            value = getattr(self, f.name)
            if isinstance(value, dict):
                object.__setattr__(self, f.name, _from_dict(section, value, f"config.{f.name}"))
            elif not isinstance(value, section):
                raise InvalidInput(f"config.{f.name} must be a {section.__name__} or a dict, "
                                   f"got {type(value).__name__}")
        # Config(synchronous="FULL") is checked as Config.from_value({"synchronous": "FULL"}) is
        _check_section(self, "config")

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
    if isinstance(default, str):
        if not isinstance(val, str):
            raise InvalidInput(f"{path} must be a str, got {val!r}")
        return val
    return val


def _check_types(obj: Any, path: str) -> None:
    """Each setting of a section built directly (``RetrievalConfig(bm25_k1=...)``, ``Config(seal_tokens=...)``)
    of its default's type, as :func:`_from_dict` takes it from a dict: a bool for a bool, an int (not a bool) for an
    int, a finite number for a float (stored as a float), a str for a str. Sections and containers (rates,
    policies) are checked by their owners."""
    for name, default in _scalar_defaults(type(obj)):
        value = getattr(obj, name)
        if type(value) is not type(default) or (type(value) is float and not math.isfinite(value)):
            object.__setattr__(obj, name, _coerce(value, default, f"{path}.{name}"))


_SCALARS: dict[type, tuple[tuple[str, Any], ...]] = {}


def _scalar_defaults(cls: type) -> tuple[tuple[str, Any], ...]:
    """(name, default) of the settings of a section class whose defaults are bools, ints, floats or strs."""
    found = _SCALARS.get(cls)
    if found is None:
        found = _SCALARS[cls] = tuple((f.name, f.default) for f in fields(cls)
                                      if isinstance(f.default, (bool, int, float, str)))
    return found


def _check_section(obj: Any, path: str) -> None:
    _check_types(obj, path)
    _validate(obj, path)


SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")  # SQLite's PRAGMA synchronous levels, weakest first


def _validate(obj: Any, path: str) -> None:
    if isinstance(obj, SignatureConfig):
        if not 1 <= obj.bits <= 32:
            raise InvalidInput(f"{path}.bits must be in 1..32")
        if obj.nnz < 2 or obj.nnz % 2 or obj.nnz > obj.dim:
            raise InvalidInput(f"{path}.nnz must be even, >= 2 and <= dim")
        if obj.window < 0 or obj.top_m < 1 or obj.self_weight < 0 or obj.radius < 0:
            raise InvalidInput(f"{path}: window, self_weight and radius must be >= 0, top_m >= 1")
    if isinstance(obj, RetrievalConfig):
        # (each test below is false for NaN, so NaN is refused too)
        if not 0.0 <= obj.bm25_k1 <= 10.0 or not 0.0 <= obj.bm25_b <= 1.0:
            raise InvalidInput(f"{path}: bm25_k1 must be in 0..10 and bm25_b in 0..1, got {obj.bm25_k1!r} and "
                               f"{obj.bm25_b!r}")
        if obj.rrf_k < 1:
            raise InvalidInput(f"{path}.rrf_k must be >= 1, got {obj.rrf_k!r}")
        for name in ("weight_lexical", "weight_signature", "weight_embedding"):
            if not 0.0 <= getattr(obj, name) <= 16.0:
                raise InvalidInput(f"{path}.{name} must be in 0..16, got {getattr(obj, name)!r}")
        if obj.weight_lexical + obj.weight_signature + obj.weight_embedding <= 0.0:
            raise InvalidInput(f"{path}: at least one of weight_lexical, weight_signature and weight_embedding must "
                               f"be > 0 (with all three at 0 no message is ever found)")
        if obj.enumerate_limit < 1 or obj.candidate_limit < 1:
            raise InvalidInput(f"{path}: enumerate_limit and candidate_limit must be >= 1, got "
                               f"{obj.enumerate_limit!r} and {obj.candidate_limit!r}")
        if not 0.0 <= obj.neighbor_b <= 1.0:
            raise InvalidInput(f"{path}.neighbor_b must be in 0..1, got {obj.neighbor_b!r}")
        if not 0.0 <= obj.neighbor_weight <= 4.0 or not 0 <= obj.neighbor_span <= 16:
            raise InvalidInput(f"{path}: neighbor_weight must be in 0..4 and neighbor_span in 0..16, got "
                               f"{obj.neighbor_weight!r} and {obj.neighbor_span!r}")
        if not isinstance(obj.profile_prior, bool):
            raise InvalidInput(f"{path}.profile_prior must be true or false, got {obj.profile_prior!r}")
        if not 0.0 <= obj.standing_share <= 0.5:
            raise InvalidInput(f"{path}.standing_share must be in 0..0.5, got {obj.standing_share!r}")
        if not 0.0 <= obj.session_weight <= 4.0:
            raise InvalidInput(f"{path}.session_weight must be in 0..4, got {obj.session_weight!r}")
        if not 0.0 <= obj.asker_preferences <= 4.0:
            raise InvalidInput(f"{path}.asker_preferences must be in 0..4, got {obj.asker_preferences!r}")
        if not 0.0 <= obj.unnamed_speakers <= 1.0:
            raise InvalidInput(f"{path}.unnamed_speakers must be in 0..1, got {obj.unnamed_speakers!r}")
        if not isinstance(obj.misspellings, bool):
            raise InvalidInput(f"{path}.misspellings must be true or false, got {obj.misspellings!r}")
        if not isinstance(obj.relatives, bool):
            raise InvalidInput(f"{path}.relatives must be true or false, got {obj.relatives!r}")
        if not isinstance(obj.places, bool):
            raise InvalidInput(f"{path}.places must be true or false, got {obj.places!r}")
        if not isinstance(obj.addressed_names, bool):
            raise InvalidInput(f"{path}.addressed_names must be true or false, got {obj.addressed_names!r}")
        if not 0.0 <= obj.sitting_gap_s <= 30 * 86400.0:
            raise InvalidInput(f"{path}.sitting_gap_s must be in 0..2592000 seconds (30 days), "
                               f"got {obj.sitting_gap_s!r}")
    if isinstance(obj, TemporalConfig):
        if not 1 <= obj.temporal_boost <= 4 or not 1 <= obj.window_boost <= 16 or obj.fact_boost < 0 or obj.fact_boost > 4:
            raise InvalidInput(f"{path}: temporal_boost must be in 1..4, window_boost in 1..16 and fact_boost in 0..4")
        if not 0 < obj.superseded_factor <= 1 or not 0 <= obj.surprise_alpha <= 1 or not 0 <= obj.salience_beta <= 1 \
                or not 0 <= obj.recency_boost <= 4:
            raise InvalidInput(f"{path}: superseded_factor must be in (0, 1], surprise_alpha and salience_beta in 0..1, recency_boost in 0..4")
    if isinstance(obj, Config):
        if obj.synchronous not in SYNCHRONOUS:
            raise InvalidInput(f"{path}.synchronous must be one of {SYNCHRONOUS}, got {obj.synchronous!r}")
        for name in ("max_message_chars", "seal_tokens"):
            if getattr(obj, name) < 1:
                raise InvalidInput(f"{path}.{name} must be >= 1, got {getattr(obj, name)!r}")
        if obj.busy_timeout_s < 0:
            raise InvalidInput(f"{path}.busy_timeout_s must be >= 0, got {obj.busy_timeout_s!r}")
        if obj.embed_bits % 64 or not 64 <= obj.embed_bits <= 1024:
            raise InvalidInput(f"{path}.embed_bits must be a multiple of 64 in 64..1024")
        if isinstance(obj.max_loaded_namespaces, bool) or not isinstance(obj.max_loaded_namespaces, int) \
                or obj.max_loaded_namespaces < 1:
            raise InvalidInput(f"{path}.max_loaded_namespaces must be an int >= 1, got {obj.max_loaded_namespaces!r}")
        if not 1 <= obj.timestamp_min_year <= obj.timestamp_max_year <= 9999:
            raise InvalidInput(f"{path}: timestamp_min_year and timestamp_max_year must satisfy 1 <= min <= max <= "
                               f"9999, got {obj.timestamp_min_year!r} and {obj.timestamp_max_year!r}")


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
    "no-session-lift": {"retrieval": {"session_weight": 0.0}},
    "no-standing": {"retrieval": {"standing_share": 0.0}},
    "no-speaker-prior": {"retrieval": {"unnamed_speakers": 1.0}},
    "no-asker-preferences": {"retrieval": {"asker_preferences": 0.0}},
}
