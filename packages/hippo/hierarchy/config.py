"""Settings of the hierarchy, decay and encoding gate; nested in :class:`hippo.Config` as ``hierarchy``, ``decay``
and ``gate``. Every default works offline with zero LLM calls."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from hippo.errors import InvalidInput

RECALL_MODES = ("evidence", "flat", "units", "stage1", "stage2", "full")
MESSAGE_TYPES = ("message", "tool_result", "state", "memory")
UNIT_TYPES = ("episode", "semantic", "theme")
PRIORITIES = ("critical", "high", "normal", "low")
CLOCKS = ("turns", "time", "both")


def _unit(name: str, value: float, lo: float = 0.0, hi: float = 1.0) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and lo <= value <= hi):
        raise InvalidInput(f"{name} must be a number in [{lo}, {hi}], got {value!r}")


def _positive_int(name: str, value: int, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidInput(f"{name} must be an int >= {minimum}, got {value!r}")


@dataclass(frozen=True)
class HierarchyConfig:
    """Episodes / semantics / themes (seed 001 §3.2) and top-down recall (seed 001 §3.3)."""

    enabled: bool = True
    # How ``Memory.recall`` builds a context: "evidence" (the engine's candidates packed by expected evidence per
    # token, hippo.evidence), "flat" (the engine's ranked messages in rank order), "units" (hierarchy with a
    # plain similarity retriever), "stage1" (+ representative selection, Eq. 4), "stage2" (+ uncertainty-gated
    # expansion), "full" (both stages). The default wins on LoCoMo and BEAM in ``hippo bench locomo`` / ``hippo
    # bench beam`` (docs/retrieval.md); Stage II was the default before and is kept for comparison.
    recall: str = "evidence"
    code_bits: int = 256              # SimHash width of unit codes
    # CURRENT buffer (seed 003 §3.3, Eq. 1): a flush unit ends at a session change, a time gap, or size;
    # complete units are consolidated before the next read that needs the hierarchy (recall, topics, stats),
    # when ``max_pending`` messages wait, or on every add with ``consolidate_on_add``
    flush_tokens: int = 1200
    flush_gap_s: float = 3 * 3600.0
    max_pending: int = 2048
    consolidate_on_add: bool = False
    batch_messages: int = 32          # whole flush units are consolidated in batches of at least this many
    read_batches: int = 4             # at most this many batches consolidated by one recall; the rest stays in
                                      # CURRENT (still retrievable) for later reads, or ``max_pending`` on write
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
    neighbor_window: int = 1          # conversational neighbours of a strong hit considered as prerequisites
    summary_share: float = 0.0        # share of the budget for theme / semantic summaries ahead of the messages
    # LLM (only with Memory(..., llm=...)): query keywords; summaries and facts in deep consolidation
    llm_keywords: bool = True
    llm_on_write: bool = False        # also summarize / extract facts with the LLM when episodes are built
    llm_uncertainty: bool = False     # Stage II stops by the reader's token entropy (logprobs) instead of offline
    persist_every: int = 4096         # messages between unit snapshots (also saved on close / consolidate)

    def __post_init__(self) -> None:
        if self.recall not in RECALL_MODES:
            raise InvalidInput(f"config.hierarchy.recall must be one of {RECALL_MODES}, got {self.recall!r}")
        if self.code_bits % 64 or not 64 <= self.code_bits <= 1024:
            raise InvalidInput("config.hierarchy.code_bits must be a multiple of 64 in 64..1024")
        for name in ("flush_tokens", "max_pending", "batch_messages", "read_batches", "episode_min_messages",
                     "episode_max_messages", "episode_window",
                     "summary_tokens", "semantic_min_terms", "theme_cap", "merge_candidates", "split_trials", "knn_k",
                     "stage1_themes", "stage1_semantics", "candidate_themes", "candidate_semantics",
                     "stage2_patience", "persist_every"):
            _positive_int(f"config.hierarchy.{name}", getattr(self, name))
        _positive_int("config.hierarchy.theme_tiny", self.theme_tiny, 0)
        _positive_int("config.hierarchy.neighbor_window", self.neighbor_window, 0)
        if self.theme_cap < 2:
            raise InvalidInput("config.hierarchy.theme_cap must be >= 2")
        if self.episode_min_messages > self.episode_max_messages:
            raise InvalidInput("config.hierarchy.episode_min_messages must be <= episode_max_messages")
        for name in ("alpha", "stage1_coverage", "stage2_min_gain", "stage2_floor", "summary_share",
                     "semantics_per_message", "episode_depth"):
            _unit(f"config.hierarchy.{name}", getattr(self, name))
        for name in ("semantic_dedup", "theme_attach"):
            _unit(f"config.hierarchy.{name}", getattr(self, name), -1.0, 1.0)
        if not (math.isfinite(self.flush_gap_s) and self.flush_gap_s > 0):
            raise InvalidInput("config.hierarchy.flush_gap_s must be a positive number of seconds")
        if self.summary_share > 0.5:
            raise InvalidInput("config.hierarchy.summary_share must be at most 0.5")


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
    policies: tuple = ()              # declarative lifecycle policies (seed 004 §10), see hippo.hierarchy.policies

    def __post_init__(self) -> None:
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
            raise InvalidInput("config.decay.policies must be a list of policy dicts (see hippo.hierarchy.policies)")
        from hippo.hierarchy.policies import compile_policies  # validates every rule now, not at first use

        compile_policies(self.policies)
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
