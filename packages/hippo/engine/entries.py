"""Index entries for the live context window (seed 004 §5-9): large content stored losslessly outside the
prompt, a compact entry in it, re-fetched on demand by pattern completion.

An entry is written as ordinary hippo messages in the memory's namespace: a *header* message whose text is the
entry's static rendering (summary, key data, source) and whose metadata holds the entry record, followed by the
content itself split at line boundaries into *part* messages of about :data:`PART_TOKENS` tokens. So the content is
searchable, recallable and decays like every other message, and ``"".join(parts)`` is the original text byte for
byte. The entry id is ``"ctx_<header message id>"``.

Entries decay on their own clock of agent *turns* (``turn=`` arguments; the clock is the largest turn seen), with
the closed-form power law, priorities, encoding and association modifiers of :mod:`hippo.engine.hierarchy.decay` (seed 004
§8, §14.2) and the lifecycle policy format of :mod:`hippo.base.policies` (§10). What gets indexed at all is a
policy decision too (``action: {index: true}``, §6.1): :data:`DEFAULT_INDEX_POLICIES`.

Entry records and their strength state live in the header's metadata, so a reopened store knows its entries; the
in-process table is rebuilt from the store on first use.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from hippo.base.checks import (
    check_bool,
    check_choice,
    check_int,
    check_iterable,
    check_metadata,
    check_namespace,
    check_optional_int,
    is_one_of,
)
from hippo.base.errors import HippoError, InvalidInput, LLMError, NotFound, ReadOnlyError
from hippo.base.policies import Entry as PolicyEntry
from hippo.base.policies import MAX_TURNS, Outcome, compile_policies
from hippo.engine.hierarchy.decay import F_ASSOC, F_PERSIST, DecayTable
from hippo.engine.namespace import Namespace, write_many
from hippo.engine.prepare import prepare
from hippo.engine.scope import scope_of
from hippo.text import complete as completion
from hippo.text import textnorm, tokenizer
from hippo.text.extract import _CODE_ID, _EMAIL, _URL, _UUID, extract, looks_like_error

ENTRY_TYPES = ("tool_result", "message", "state", "memory")
PRIORITIES = ("critical", "high", "normal", "low")
PART_TOKENS = 512            # target size of one stored part (whole lines; a longer line is cut by characters)
_HEADER_KEY = "hippo_entry"
_PART_KEY = "hippo_entry_part"
_ROLE_OF_TYPE = {"tool_result": "tool", "message": "user", "state": "system", "memory": "assistant"}

#: What to index (seed 004 §6.1, §10): tool results over 1,000 tokens, error dumps (over 200 tokens: a short error
#: is cheaper verbatim than as an entry, and errors expire after 50 turns as in the seed's example), and user
#: messages only when they carry instructions (kept at high priority and marked persist-worthy). Assistant answers
#: and system prompts are never indexed. Later rules override earlier ones field by field.
DEFAULT_INDEX_POLICIES: tuple[dict, ...] = (
    {"name": "large tool results", "match": {"type": "tool_result", "min_tokens": 1000},
     "action": {"index": True}},
    {"name": "error dumps", "match": {"type": "tool_result", "source.type": "error", "min_tokens": 200},
     "action": {"index": True, "expires_after_turns": 50}},
    {"name": "user instructions",
     "match": {"type": "message", "role": "user",
               "contains": ["remember", "always", "never", "important", "must", "don't", "do not"]},
     "action": {"index": True, "priority": "high", "persist": True}},
)


@dataclass(frozen=True)
class IndexEntry:
    """A sparse pointer to stored content (seed 004 §14.1), with its strength at ``turn``."""

    id: str
    type: str
    source: dict[str, Any]
    summary: str
    key_data: dict[str, Any]
    strength: float
    decay: dict[str, Any]
    priority: str
    encoding: str
    associations: tuple[str, ...]
    lifecycle: dict[str, Any]
    n_tokens: int                 # size of the stored content in cl100k tokens
    format: str                   # json / html / log / text
    message_ids: tuple[int, ...]  # the header, then the content parts
    namespace: str
    turn: int                     # the turn the strength is evaluated at
    accesses: int = 0
    stale: bool = False           # the stored content is gone (seed 004 §7.3 step 4)
    dormant: bool = False         # strength below the dormant threshold, or expired (§8.3)
    summary_by: str = "extractive"
    _static: str = field(default="", repr=False, compare=False)  # cached head, summary and key data lines

    def render(self) -> str:
        """The compact block that stands in for the content in the prompt (seed 004 §1.4)."""
        return render_entry(self)

    @property
    def tokens(self) -> int:
        """Size of :meth:`render` in cl100k tokens."""
        return tokenizer.count_tokens(self.render())

    @property
    def compression(self) -> float:
        """Content tokens per rendered entry token."""
        return self.n_tokens / max(1, self.tokens)

    def to_dict(self) -> dict[str, Any]:
        """The seed's normative record (§14.1) plus hippo's fields."""
        return {
            "id": self.id, "type": self.type, "source": dict(self.source), "summary": self.summary,
            "key_data": dict(self.key_data), "strength": self.strength, "decay": dict(self.decay),
            "modifiers": {"priority": self.priority, "encoding": self.encoding,
                          "associations": list(self.associations)},
            "lifecycle": dict(self.lifecycle), "n_tokens": self.n_tokens, "format": self.format,
            "message_ids": list(self.message_ids), "namespace": self.namespace, "turn": self.turn,
            "accesses": self.accesses, "stale": self.stale, "dormant": self.dormant,
        }

    def __str__(self) -> str:
        return self.render()


# Exact identifiers that make a direct reference to stored content (seed 004 §7.1).
_CUE_PATTERNS = (_CODE_ID, _UUID, _URL, _EMAIL)


def cues_in(text: str, limit: int = 8) -> list[str]:
    """The exact identifiers in ``text`` that can point into stored content: code-like ids, UUIDs, URLs, e-mails."""
    return list(dict.fromkeys(m.group(0) for rx in _CUE_PATTERNS for m in rx.finditer(text)))[:limit]


@dataclass(frozen=True)
class Completion:
    """What pattern completion returned for an entry (seed 004 §7)."""

    entry_id: str
    text: str
    complete: bool        # the whole content (not a query's part, not cut by the budget)
    stale: bool           # the content is gone: ``text`` is the summary and key data behind a stale marker
    matched_lines: int    # lines that matched the query's terms (0 without a query)
    tokens: int
    refetched: bool = False

    def __str__(self) -> str:
        return self.text


def _value(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(v)
    return json.dumps(v, ensure_ascii=False)


def render_key_data(key_data: Mapping[str, Any]) -> str:
    return "; ".join(f"{k}={_value(v)}" for k, v in key_data.items())


def _source_text(source: Mapping[str, Any]) -> str:
    out = str(source.get("type") or "content")
    if source.get("ref"):
        out += f" ref={source['ref']}"
    if source.get("turn") is not None:
        out += f" @ turn {source['turn']}"
    return out


def _entry_head(e: IndexEntry) -> str:
    return f"[context_index: {e.id}] {e.type} · {_source_text(e.source)} · {e.n_tokens} tokens stored"


def _entry_static(e: IndexEntry) -> str:
    """The lines of a live entry's block that do not change with its strength."""
    if e._static:
        return e._static
    return f"{_entry_head(e)}\nsummary: {e.summary}" + (f"\nkey_data: {render_key_data(e.key_data)}"
                                                       if e.key_data else "")


def render_entry(e: IndexEntry) -> str:
    """``[context_index: ctx_N]`` block: source and size, summary, key data, strength and how to expand.

    Strength is shown to one decimal, so a block changes only every few turns (stable prompt prefixes)."""
    expand = f'memory_expand("{e.id}", query)'
    if e.stale:
        return (f"{_entry_head(e)}\nSTALE: the stored content is gone; summary only (re-capture it if needed)\n"
                f"summary: {e.summary}" + (f"\nkey_data: {render_key_data(e.key_data)}" if e.key_data else ""))
    if e.dormant:
        return f"{_entry_head(e)} · dormant (strength {e.strength:.1f}); {expand} restores it"
    lines = [_entry_static(e)]
    tail = f"strength: {e.strength:.1f} · priority: {e.priority}"
    if e.associations:
        tail += " · associations: " + ", ".join(e.associations)
    if e.lifecycle.get("expires") is not None:
        tail += f" · expires turn {e.lifecycle['expires']}"
    if e.lifecycle.get("persist"):
        tail += " · persist"
    lines.append(tail + (f" · full content: {expand}" if e.source.get("retrievable", True) else ""))
    return "\n".join(lines)


# -- per-namespace state ------------------------------------------------------------------------------------------
@dataclass
class _Record:
    key: int                       # header message id
    uid: str                       # links the parts to the header
    type: str
    source: dict[str, Any]
    summary: str
    key_data: dict[str, Any]
    priority: str
    encoding: str
    persist: bool
    associations: tuple[str, ...]
    created: int
    expires: int | None
    rate: float
    floor: float
    n_tokens: int
    format: str
    summary_by: str
    part_ids: list[int] = field(default_factory=list)
    stale: bool = False
    promoted: bool = False
    static: str = ""               # cached static lines of the rendered block

    def meta(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d.pop("key")
        d.pop("part_ids")
        d.pop("static")
        d["associations"] = list(self.associations)
        return d


class _State:
    """Entries of one namespace of one store: records, their strength table, the turn clock."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.loaded = False
        self.records: dict[int, _Record] = {}
        self.table = DecayTable()
        self.clock = 0


def _entry_key(entry_id: object, name: str = "entry_id") -> int:
    digits = None
    if isinstance(entry_id, str) and entry_id.startswith("ctx_") and entry_id[4:].isdigit():
        digits = entry_id[4:]
    elif isinstance(entry_id, str) and entry_id.isdigit():
        digits = entry_id
    if digits is not None and len(digits) <= 19 and digits.isascii() and int(digits) <= 2**63 - 1:
        return int(digits)
    what = "entry_id" if name == "entry_id" else f"each of {name}"  # one id, or an item of a list of them
    raise InvalidInput(f"{what} must look like 'ctx_<n>' (n a message id), got {str(entry_id)[:60]!r}")


def _entry_id(entry_id: object, name: str) -> str:
    """An entry id of a list as ``entries(ids=...)`` takes it (``"ctx_<n>"`` or ``"<n>"``; an int ``n`` as ``"<n>"``),
    else :class:`InvalidInput` naming the list."""
    if isinstance(entry_id, int) and not isinstance(entry_id, bool):
        entry_id = str(entry_id)
    _entry_key(entry_id, name)
    return str(entry_id)


def _check_turn(turn: object) -> int | None:
    return None if turn is None else check_int(turn, "turn", maximum=MAX_TURNS)


def _check_source(source: object) -> dict[str, Any]:
    if source is None:
        return {"type": "content", "ref": None, "retrievable": True}
    if isinstance(source, str):
        if not source.strip():
            raise InvalidInput("source must not be empty")
        return {"type": tokenizer.check_text(source, "source").strip(), "ref": None, "retrievable": True}
    if not isinstance(source, Mapping):
        raise InvalidInput(f"source must be a str, a dict or None, got {type(source).__name__}")
    out = {str(k): v for k, v in source.items()}
    if not isinstance(out.get("type", "content"), str) or not str(out.get("type", "content")).strip():
        raise InvalidInput("source['type'] must be a non-empty str")
    out.setdefault("type", "content")
    out.setdefault("ref", None)
    for key in ("type", "ref"):  # written into the entry's stored header text
        if isinstance(out[key], str) and out[key].strip():
            tokenizer.check_text(out[key], f"source[{key!r}]")
    if not isinstance(out.setdefault("retrievable", True), bool):
        raise InvalidInput("source['retrievable'] must be a bool")
    return check_metadata(out, "source")  # stored in the entry's metadata: JSON without NaN or lone surrogates


# Where a line longer than a part is cut: after a space or a separator of records and fields. Each part is a message
# of its own, searched on its own: a word or an identifier cut in two ("ORD-00|243" in minified JSON) was found in
# neither part, by search nor by completion on a direct reference.
_SEPARATORS = frozenset(" \t\r\n,;{}[]()<>\"'|")


def _cut(line: str, cap: int) -> int:
    """Where a line longer than ``cap`` characters is cut: after its last space or separator in the second half of
    its first ``cap`` characters, else between two grapheme clusters (a blob without separators)."""
    k = cap
    while k > cap // 2 and line[k - 1] not in _SEPARATORS:
        k -= 1
    if k > cap // 2:
        return k
    return len(textnorm.grapheme_head(line, cap)) or cap


def split_parts(content: str, part_tokens: int = PART_TOKENS) -> list[str]:
    """Whole lines grouped into parts of about ``part_tokens`` tokens; ``"".join(parts) == content``.

    A line longer than a part is cut after a space or separator (:func:`_cut`); a whitespace-only piece joins its
    neighbour (hippo stores no blank messages)."""
    pieces: list[str] = []
    cur: list[str] = []
    used = 0
    char_cap = part_tokens * 4
    for line in content.splitlines(keepends=True):
        # a long line is read window by window: cutting the rest of it off at each part copied what was left, in
        # time quadratic in its length (a tool output of megabytes on one line)
        start = 0
        while len(line) - start > char_cap:
            if cur:
                pieces.append("".join(cur))
                cur, used = [], 0
            window = line[start:start + char_cap + 1]  # a character past the cap tells where its last cluster ends
            k = _cut(window, char_cap)
            pieces.append(window[:k])
            start += k
        if start:
            line = line[start:]
        cost = max(1, len(line) // 4)  # chars/4: the cut need not be exact, and tokenizing twice costs
        if cur and used + cost > part_tokens:
            pieces.append("".join(cur))
            cur, used = [], 0
        cur.append(line)
        used += cost
    if cur:
        pieces.append("".join(cur))
    merged: list[str] = []
    for p in pieces:
        if merged and (not p.strip() or not merged[-1].strip()):
            merged[-1] += p
        else:
            merged.append(p)
    if len(merged) > 1 and not merged[0].strip():
        merged[1] = merged[0] + merged[1]
        merged.pop(0)
    return merged


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _view(content: str, fmt: str) -> str:
    """Content laid out in lines for completion: minified JSON pretty-printed, one-line markup cut at tags."""
    lines = content.count("\n") + 1
    if len(content) / lines < 300:
        return content
    if fmt == "json":
        try:
            pretty = json.dumps(json.loads(content), indent=1, ensure_ascii=False)
        except (ValueError, RecursionError):
            return content
        # a lone surrogate the JSON escapes ("\\udcff") is written out raw, which is no text a caller can encode:
        # escaped again (it can only stand inside a JSON string)
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", pretty)
    if fmt == "html":
        return content.replace("><", ">\n<")
    return content


class Entries:
    """Index entries of one namespace (seed 004 §5-9); :class:`hippo.Memory` delegates its entry methods here."""

    def __init__(self, ns: Namespace) -> None:
        self.ns = ns
        self._decay_cfg: tuple[Any, Any] | None = None

    def _add(self, items: list[dict[str, Any]]) -> list[Any]:
        cfg = self.ns.config
        return self.ns.write([prepare(it, f"items[{k}]", cfg) for k, it in enumerate(items)])

    # -- state ----------------------------------------------------------------------------------------------
    def _entry_state(self) -> _State:
        state = self.ns.state()
        with state.keyword_lock:
            if state.entries is None:
                state.entries = _State()
            st = state.entries
        if not st.loaded:
            self._entries_load(st)
        return st

    def _entry_decay(self):
        cfg = self.ns.config.decay
        cached = self._decay_cfg
        if cached is None or cached[0] is not cfg:
            # entries count agent turns only (seed 004 §8.1: "turns_since_access"), one turn per turn
            cached = self._decay_cfg = (cfg, dataclasses.replace(cfg, clock="turns", turn_weight=1.0, policies=()))
        return cached[1]

    def _entries_load(self, st: _State) -> None:
        """Rebuild the namespace's entries from the store (headers' records, parts by their link)."""
        with st.lock:
            if st.loaded:
                return
            self.ns.rt.live()
            headers: list[tuple[int, dict]] = []
            parts: dict[str, list[tuple[int, int]]] = {}
            for row in self.ns.rt.store.scan(self.ns.name):
                md = row.metadata or {}
                h = md.get(_HEADER_KEY)
                if isinstance(h, dict) and "uid" in h:
                    headers.append((row.id, h))
                p = md.get(_PART_KEY)
                if isinstance(p, dict) and isinstance(p.get("uid"), str):
                    parts.setdefault(p["uid"], []).append((int(p.get("part", 0)), row.id))
            for key, h in headers:
                try:
                    state = h.get("state") or {}
                    rec = _Record(
                        key=key, uid=h["uid"], type=h["type"], source=dict(h["source"]), summary=h["summary"],
                        key_data=dict(h.get("key_data") or {}), priority=h["priority"], encoding=h["encoding"],
                        persist=bool(h["persist"]), associations=tuple(h.get("associations") or ()),
                        created=int(h["created"]), expires=h.get("expires"), rate=float(h["rate"]),
                        floor=float(h.get("floor", 0.0)), n_tokens=int(h["n_tokens"]), format=h.get("format", "text"),
                        summary_by=h.get("summary_by", "extractive"),
                        part_ids=[i for _, i in sorted(parts.get(h["uid"], []))],
                        stale=bool(h.get("stale", False)), promoted=bool(h.get("promoted", False)))
                except (KeyError, TypeError, ValueError):
                    continue  # a header written by hand or damaged: not an entry
                self._entries_track(st, rec)
                slot = st.table.find(key)
                st.table.s0[slot] = float(state.get("s0", 1.0))
                st.table.last_turn[slot] = int(state.get("last_turn", rec.created))
                st.table.accesses[slot] = int(state.get("accesses", 0))
                st.clock = max(st.clock, int(state.get("clock", 0)), rec.created)
            st.loaded = True

    def _entries_track(self, st: _State, rec: _Record) -> None:
        st.records[rec.key] = rec
        st.table.add(rec.key, type=rec.type, priority=rec.priority, base_rate=rec.rate, floor=rec.floor,
                     manual=rec.encoding == "manual", persist=rec.persist, turn=rec.created, at=0.0,
                     expires_turn=rec.expires if rec.expires is not None else -1)
        if rec.associations:
            keys = [_entry_key(a) for a in rec.associations if isinstance(a, str) and a[4:].isdigit()]
            slots = st.table.slots(k for k in keys if k in st.records)
            slots = slots[slots >= 0]
            if slots.size and (st.table.strength(slots, self._entry_decay(), rec.created, 0.0) >= 0.5).any():
                # connected to a strong entry: decays more slowly (seed 004 §8.2, x0.7)
                st.table.set_flag(st.table.slots([rec.key]), F_ASSOC)

    def _entries_save(self, st: _State, rec: _Record) -> None:
        """Write a record and its strength state back into its header's metadata (kept in memory only on a
        read-only store)."""
        if self.ns.rt.store.read_only:
            return
        with self.ns.rt.lock.write():
            self.ns.rt.store.update_metadata(self.ns.name, rec.key, self._header(st, rec))
            self.ns.rt.state(self.ns.name).forget_rows([rec.key])  # its kept row is stale from here on

    @staticmethod
    def _header(st: _State, rec: _Record, **changed: Any) -> dict[str, Any]:
        """The metadata of a record's header: the record (with ``changed`` fields) and its strength state."""
        slot = st.table.find(rec.key)
        meta = rec.meta()
        meta.update(changed)
        if slot >= 0:
            meta["state"] = {"s0": float(st.table.s0[slot]), "last_turn": int(st.table.last_turn[slot]),
                             "accesses": int(st.table.accesses[slot]), "clock": st.clock}
        return {"type": rec.type, _HEADER_KEY: meta}

    def _entry_view(self, st: _State, recs: list[_Record], turn: int) -> list[IndexEntry]:
        dcfg = self._entry_decay()
        if not recs:
            return []
        slots = st.table.slots(r.key for r in recs)
        if self.ns.config.decay.enabled:
            strengths = st.table.strength(slots, dcfg, turn, 0.0)
            rates = st.table.effective_rate(slots, dcfg)
        else:
            strengths = np.where(st.table.expired(slots, turn, 0.0), 0.0, 1.0)
            rates = np.zeros(len(recs))
        out = []
        for rec, slot, s, rate in zip(recs, slots.tolist(), strengths.tolist(), rates.tolist()):
            expired = rec.expires is not None and turn >= rec.expires
            out.append(IndexEntry(
                id=f"ctx_{rec.key}", type=rec.type, source=dict(rec.source), summary=rec.summary,
                key_data=dict(rec.key_data), strength=round(float(s), 4),
                decay={"rate": round(float(rate), 6), "base_rate": rec.rate, "floor": rec.floor,
                       "last_access": int(st.table.last_turn[slot])},
                priority=rec.priority, encoding=rec.encoding, associations=rec.associations,
                lifecycle={"created": rec.created, "expires": rec.expires, "persist": rec.persist,
                           "promoted": rec.promoted},
                n_tokens=rec.n_tokens, format=rec.format, message_ids=(rec.key, *rec.part_ids),
                namespace=self.ns.name, turn=turn, accesses=int(st.table.accesses[slot]), stale=rec.stale,
                dormant=expired or s < dcfg.dormant_threshold, summary_by=rec.summary_by, _static=rec.static))
            if not rec.static:
                rec.static = _entry_static(out[-1])
        return out

    def _clock(self, st: _State, turn: int | None) -> int:
        turn = _check_turn(turn)
        with st.lock:
            if turn is not None:
                st.clock = max(st.clock, turn)
                return turn
            return st.clock

    # -- policies -------------------------------------------------------------------------------------------
    def _entry_outcome(self, content: str, type: str, role: str | None, source: dict, priority: str | None,
                       metadata: Mapping[str, Any], n_tokens: int, policies: Iterable[Mapping] | None) -> Outcome:
        rules = list(DEFAULT_INDEX_POLICIES) + list(self.ns.config.decay.policies)
        if policies is not None:
            check_iterable(policies, "policies", "a list of {'match': ..., 'action': ...} dicts")
            rules += list(policies)
        compiled = _compiled(tuple(json.dumps(r, sort_keys=True, default=str) for r in rules), rules)
        return compiled.evaluate(PolicyEntry(type, content, role, None, None, priority,
                                             {**metadata, "source": source}, n_tokens))

    def wants_index(self, content: str, *, type: str = "tool_result", role: str | None = None,
                    source: str | Mapping[str, Any] | None = None, n_tokens: int | None = None,
                    policies: Iterable[Mapping] | None = None) -> bool:
        """Whether the index policies (:data:`DEFAULT_INDEX_POLICIES`, then ``config.decay.policies``, then
        ``policies``) say ``content`` should become an index entry (seed 004 §6.1). ``n_tokens`` saves counting."""
        content = tokenizer.check_text(content, "content", max_chars=self.ns.config.max_message_chars)
        type = _check_type(type)
        role = _check_role(role, type)
        src = _check_source(source)
        if src.get("type") == "content" and type == "tool_result" and looks_like_error(content):
            src["type"] = "error"
        if n_tokens is not None:
            check_int(n_tokens, "n_tokens", maximum=MAX_TURNS)
        n = tokenizer.count_tokens(content) if n_tokens is None else int(n_tokens)
        return bool(self._entry_outcome(content, type, role, src, None, {}, n, policies).index)

    # -- public API -----------------------------------------------------------------------------------------
    def index_entry(
        self,
        content: str,
        *,
        type: str = "tool_result",
        source: str | Mapping[str, Any] | None = None,
        role: str | None = None,
        turn: int | None = None,
        priority: str | None = None,
        persist: bool | None = None,
        encoding: str = "auto",
        associations: Iterable[str] = (),
        expires_after_turns: int | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        summary: str | None = None,
        policies: Iterable[Mapping] | None = None,
    ) -> IndexEntry:
        """Store ``content`` losslessly and return its index entry (seed 004 §6.2, §14.1).

        ``source`` says how the content was obtained: a type string (``"browser.snapshot"``) or a dict with
        ``type``, ``ref`` (an external reference such as a tool call id or URL) and ``retrievable`` (default
        True); tool results whose text reads as an error dump get ``source.type == "error"`` unless given.
        ``turn`` is the agent turn now (default: the namespace's entry clock). ``priority`` / ``persist`` /
        ``encoding`` / ``expires_after_turns`` override what the policies decide; ``summary`` replaces the
        computed one. The summary is extractive offline, or by ``Memory(llm=...)`` when configured (an LLM
        failure falls back to the extractive summary). Key data are always extracted offline."""
        self.ns.rt.live()
        if self.ns.rt.store.read_only:
            raise ReadOnlyError(f"index_entry: the store {self.ns.rt.store.path!r} is open read-only")
        content = tokenizer.check_text(content, "content", max_chars=self.ns.config.max_message_chars)
        type = _check_type(type)
        role = _check_role(role, type)
        src = _check_source(source)
        if "type" not in (source if isinstance(source, Mapping) else {}) and not isinstance(source, str) \
                and type == "tool_result" and looks_like_error(content):
            src["type"] = "error"
        check_choice(priority, "priority", PRIORITIES, optional=True)
        if persist is not None:
            check_bool(persist, "persist")
        check_choice(encoding, "encoding", ("auto", "manual"))
        check_iterable(associations, "associations", "an iterable of entry ids")
        assoc = tuple(f"ctx_{_entry_key(a, 'associations')}" for a in associations)
        expires_after_turns = (None if expires_after_turns is None
                               else check_int(expires_after_turns, "expires_after_turns", maximum=MAX_TURNS))
        if summary is not None:
            summary = " ".join(tokenizer.check_text(summary, "summary", max_chars=4000).split())
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInput(f"metadata must be a dict or None, got {metadata.__class__.__name__}")
        extra = dict(metadata or {})
        st = self._entry_state()
        now = self._clock(st, turn)
        src["turn"] = now

        n_tokens = tokenizer.count_tokens(content)
        out = self._entry_outcome(content, type, role, src, priority, extra, n_tokens, policies)
        auto_summary, key_data, fmt = extract(content)
        summary_by = "given" if summary is not None else "extractive"
        if summary is None:
            summary = auto_summary
            llm = self.ns.rt.llm
            if llm is not None:
                from hippo.engine import llm as llm_mod
                head, _ = completion.head_within(_view(content, fmt), 3000)
                try:
                    summary = llm_mod.as_llm(llm).summarize(head.splitlines() or [head], words=40)
                    summary_by = "llm"
                except LLMError:
                    summary = auto_summary  # offline fallback (the write never fails on the LLM)
        prio = priority or out.priority or "normal"
        rec = _Record(
            key=-1, uid=uuid.uuid4().hex, type=type, source=src, summary=summary, key_data=key_data,
            priority=prio, encoding=encoding if encoding == "manual" or out.manual is None
            else ("manual" if out.manual else "auto"),
            persist=persist if persist is not None else bool(out.persist), associations=assoc, created=now,
            expires=now + (expires_after_turns if expires_after_turns is not None else out.expires_after_turns)
            if (expires_after_turns is not None or out.expires_after_turns is not None) else None,
            rate=out.decay_rate if out.decay_rate is not None else self.ns.config.decay.rates[type],
            floor=out.floor or 0.0, n_tokens=n_tokens, format=fmt, summary_by=summary_by)
        header_view = IndexEntry(
            id="ctx_?", type=type, source=src, summary=summary, key_data=key_data, strength=1.0, decay={},
            priority=prio, encoding=rec.encoding, associations=assoc, lifecycle={"expires": rec.expires,
                                                                                  "persist": rec.persist},
            n_tokens=n_tokens, format=fmt, message_ids=(), namespace=self.ns.name, turn=now)
        header_text = render_entry(header_view).split("\n", 1)[1]  # summary and key data, without the id line
        base_meta = {k: v for k, v in extra.items() if k not in (_HEADER_KEY, _PART_KEY, "type")}
        msg_role = role or _ROLE_OF_TYPE[type]
        priority_arg = prio if prio != "normal" else None
        items = [{"text": f"[index entry · {type} · {_source_text(src)}]\n{header_text}", "role": msg_role,
                  "session_id": session_id, "priority": priority_arg,
                  "metadata": {**base_meta, "type": type, _HEADER_KEY: rec.meta()}}]
        for k, part in enumerate(split_parts(content)):
            items.append({"text": part, "role": msg_role, "session_id": session_id, "priority": priority_arg,
                          "metadata": {**base_meta, "type": type, _PART_KEY: {"uid": rec.uid, "part": k}}})
        written = self._add(items)
        if any(getattr(w, "id", -1) < 0 for w in written):
            raise InvalidInput("the encoding gate rejected part of an index entry; index entries need "
                               "config.gate.enabled=False or content the gate admits")
        rec.key = written[0].id
        rec.part_ids = [w.id for w in written[1:]]
        with st.lock:
            self._entries_track(st, rec)
            return self._entry_view(st, [rec], now)[0]

    def entries(self, *, turn: int | None = None, include_dormant: bool = True,
                ids: Iterable[str] | None = None) -> list[IndexEntry]:
        """Index entries of this namespace in creation order, with strengths at ``turn`` (default: the clock).
        ``ids`` restricts the list (unknown ids are left out); ``include_dormant=False`` drops dormant ones."""
        self.ns.rt.live()
        check_bool(include_dormant, "include_dormant")
        st = self._entry_state()
        now = self._clock(st, turn)
        idx = self.ns.state().index
        with st.lock:
            if ids is None:
                keys = sorted(st.records)
            else:
                check_iterable(ids, "ids", "an iterable of entry ids")
                keys = [k for k in (_entry_key(i, "ids") for i in ids) if k in st.records]
            gone = [k for k in keys if k not in idx.row_of]
            for k in gone:  # the header was deleted: the entry is gone with it
                st.records.pop(k, None)
                st.table.drop([k])
            recs = [st.records[k] for k in keys if k in st.records]
            views = self._entry_view(st, recs, now)
        return views if include_dormant else [v for v in views if not v.dormant]

    def entry(self, entry_id: str, *, turn: int | None = None) -> IndexEntry:
        """One index entry (no reinforcement: reading the pointer is not pattern completion); ``NotFound``."""
        key = _entry_key(entry_id)
        got = self.entries(ids=[f"ctx_{key}"], turn=turn)
        if not got:
            st = self._entry_state()
            with st.lock:  # written by another process since this one loaded: look again
                st.loaded = False
                st.records.clear()
                st.table = DecayTable()
            self._entries_load(st)
            got = self.entries(ids=[f"ctx_{key}"], turn=turn)
        if not got:
            raise NotFound(f"entry_id {entry_id!r} is not an index entry of namespace {self.ns.name!r}")
        return got[0]

    def entry_blocks(self, ids: Iterable[str], *, turn: int | None = None) -> dict[str, str | None]:
        """The prompt blocks (:meth:`IndexEntry.render`) of the given entries at ``turn``, by id; ``None`` for a
        critical entry (seed 004 §5.2: critical content stays in context verbatim). Unknown ids are left out."""
        return {e.id: (None if e.priority == "critical" else e.render())
                for e in self.entries(ids=ids, turn=turn)}

    def next_turn(self) -> int:
        """Advance this namespace's entry clock by one turn; returns the new turn."""
        self.ns.rt.live()
        st = self._entry_state()
        with st.lock:
            st.clock += 1
            return st.clock

    def complete(
        self,
        entry_id: str,
        query: str | None = None,
        *,
        max_tokens: int | None = None,
        context_lines: int = 2,
        turn: int | None = None,
        refetch: Callable[[dict[str, Any]], str] | None = None,
    ) -> Completion:
        """Pattern completion (seed 004 §7): the full content of an entry, or with ``query`` the lines around
        the lines that match its terms (numbered ``L<n>:``, within ``max_tokens``, default 2000). The entry is
        reinforced (strength back to 1 at ``turn``, its messages too).

        ``max_tokens`` also caps the full content (its leading lines are returned, ``complete=False``). It bounds
        every text returned, notes included: a note is left out where it leaves no room for content, and a budget
        too small for any content gives an empty text (as :meth:`Memory.recall` does). When the
        stored content is gone (its parts were deleted), ``refetch(source)`` is tried if given and the source is
        retrievable (the new content is stored and the entry updated, §7.2); otherwise the summary and key data
        come back behind a ``[stale ...]`` marker and the entry is marked stale (§7.3)."""
        self.ns.rt.live()
        key = _entry_key(entry_id)
        if query is not None:
            query = tokenizer.check_text(query, "query", max_chars=100_000)
        max_tokens = check_optional_int(max_tokens, "max_tokens", minimum=1)
        context_lines = check_int(context_lines, "context_lines")
        _check_turn(turn)
        if refetch is not None and not callable(refetch):
            raise InvalidInput("refetch must be callable or None")
        self.entry(f"ctx_{key}")  # NotFound for unknown ids
        st = self._entry_state()
        now = self._clock(st, turn)
        idx = self.ns.state().index
        with st.lock:
            rec = st.records[key]
            present = bool(rec.part_ids) and all(i in idx.row_of for i in rec.part_ids)
            parts = rec.part_ids if present else []
        content = None
        refetched = False
        if present:
            with self.ns.rt.lock.read():
                content = "".join(idx.text_of(idx.row_of[i]) for i in parts)
        elif refetch is not None and rec.source.get("retrievable", True):
            try:
                fresh = refetch(dict(rec.source))
            except HippoError:
                raise
            except Exception:  # the external source is unavailable: degrade to the summary (§7.3 step 2)
                fresh = None
            if isinstance(fresh, str) and fresh.strip():
                content = tokenizer.check_text(fresh, "refetched content", max_chars=self.ns.config.max_message_chars)
                self._entries_restore(st, rec, content)
                refetched = True
        if content is None:
            with st.lock:
                rec.stale = True
                st.table.reinforce(st.table.slots([key]), now, 0.0)
                self._entries_save(st, rec)
            text = (f"[stale: the content of ctx_{key} ({_source_text(rec.source)}) is no longer stored; "
                    f"summary only, re-capture it if the task needs the details]\nsummary: {rec.summary}")
            if rec.key_data:
                text += f"\nkey_data: {render_key_data(rec.key_data)}"
            if max_tokens is not None or query is not None:
                text, _ = completion.head_within(text, max_tokens or 2000)
            return Completion(f"ctx_{key}", text, False, True, 0, tokenizer.count_tokens(text))
        view = _view(content, rec.format)
        matched = 0
        # every text returned, notes included, is within the budget; a note that leaves no room for content is left
        # out (``complete`` and ``matched_lines`` still tell what happened), and a budget too small for any content
        # gives an empty text, as Memory.recall does
        if query is not None:
            budget = max_tokens or 2000
            text, matched = completion.relevant_lines(view, query, context_lines=context_lines, max_tokens=budget)
            whole = False
            if not matched:
                note = f"[no line of ctx_{key} matches {_quoted(query)}; "
                text = note + "the whole content follows]\n" + view
                if tokenizer.count_tokens(text) > budget:
                    text = completion.head_with_note(view, note + "its first lines follow]\n", budget,
                                                     note_first=True)
        elif max_tokens is not None:
            text, whole = completion.head_within(content, max_tokens)
            if not whole:  # the head of the readable view (minified JSON laid out one value a line)
                note = f"\n[... cut at {max_tokens} tokens of {rec.n_tokens}; ask with a query for a part]"
                text = completion.head_with_note(view, note, max_tokens, note_first=False)
        else:
            text, whole = content, True
        with st.lock:
            st.table.reinforce(st.table.slots([key]), now, 0.0)  # retrieval strengthens (seed 004 §4.1, §8.2)
            self._entries_save(st, rec)
        self.ns.reinforce([key, *rec.part_ids])
        return Completion(f"ctx_{key}", text, whole and query is None, False, matched,
                          tokenizer.count_tokens(text), refetched)

    def _entries_restore(self, st: _State, rec: _Record, content: str) -> None:
        """Store refetched content as the entry's new parts and refresh its key data (seed 004 §7.2)."""
        live = [i for i in rec.part_ids if i in self.ns.state().index.row_of]
        if live:
            self.ns.delete(live)
        items = [{"text": part, "role": _ROLE_OF_TYPE[rec.type],
                  "metadata": {"type": rec.type, _PART_KEY: {"uid": rec.uid, "part": k}}}
                 for k, part in enumerate(split_parts(content))]
        written = self._add(items)
        summary, key_data, fmt = extract(content)
        with st.lock:
            rec.part_ids = [w.id for w in written]
            rec.static = ""
            rec.stale = False
            rec.key_data = key_data
            rec.format = fmt
            rec.n_tokens = tokenizer.count_tokens(content)
            if rec.summary_by == "extractive":
                rec.summary = summary

    def consolidate_entries(self, level: str = "deep", *, into: str | None = None,
                            turn: int | None = None) -> dict[str, Any]:
        """Consolidation of index entries (seed 004 §9, §14.3).

        ``"light"`` (every turn): strengths at ``turn``; reports the live, dormant and expired entries.
        ``"deep"`` (session end): persist-worthy entries (``persist`` by policy or argument, or used at least
        ``config.decay.persist_accesses`` times) that are not dormant are written to long-term memory, the
        namespace ``into`` (default: this one), as ``type: memory`` messages holding summary, key data and
        source; each entry is promoted once. Then the namespace's own deep consolidation runs
        (:meth:`consolidate`), and the report lists what stays in context (``kept``) and what dropped out."""
        self.ns.rt.live()
        if not is_one_of(level, ("light", "deep")):
            raise InvalidInput(f"level must be 'light' or 'deep', got {level!r}")
        if level == "deep" and self.ns.rt.store.read_only:
            raise ReadOnlyError(f"consolidate_entries('deep'): the store {self.ns.rt.store.path!r} is open read-only")
        if into is not None:
            into = check_namespace(into, "into")  # a namespace the promoted memories are written to
        views = self.entries(turn=turn)
        report: dict[str, Any] = {
            "level": level, "turn": views[0].turn if views else self._clock(self._entry_state(), turn),
            "entries": len(views), "kept": [v.id for v in views if not v.dormant],
            "dormant": [v.id for v in views if v.dormant],
            "expired": [v.id for v in views if v.lifecycle.get("expires") is not None
                        and v.turn >= v.lifecycle["expires"]],
        }
        if level == "light":
            return report
        need = self.ns.config.decay.persist_accesses
        worthy = [v for v in views if not v.dormant and not v.stale and not v.lifecycle.get("promoted")
                  and (v.lifecycle.get("persist") or v.accesses >= need)]
        target = Entries(self.ns.sibling(into)) if into is not None else self
        items = []
        for v in worthy:
            text = f"{v.summary}"
            if v.key_data:
                text += f"\nkey data: {render_key_data(v.key_data)}"
            text += f"\n(from {v.type} {_source_text(v.source)}, entry {v.id} of namespace {self.ns.name})"
            items.append({"text": text, "role": "assistant", "speaker": "hippo",
                          "priority": v.priority if v.priority != "normal" else None,
                          "metadata": {"type": "memory", "from_entry": v.id, "from_namespace": self.ns.name,
                                       "source": v.source}})
        st = self._entry_state()
        with st.lock:
            recs = [rec for rec in (st.records.get(_entry_key(v.id)) for v in worthy) if rec is not None]
            headers = {rec.key: self._header(st, rec, promoted=True) for rec in recs}
        # the memories and the entries' promotion in one transaction: a call that raised stored neither, and an
        # entry promoted is never promoted again (its memory written twice) by a later process
        cfg = self.ns.config
        prepared = [prepare(it, f"items[{k}]", cfg) for k, it in enumerate(items)]
        parts = [(target.ns, prepared, None, None)]
        if target.ns.name != self.ns.name:
            parts.append((self.ns, [], None, None))
        written = write_many(self.ns.rt, parts, {self.ns.name: headers})[0] if items or headers else []
        with st.lock:
            for rec in recs:
                rec.promoted = True
                st.table.set_flag(st.table.slots([rec.key]), F_PERSIST)
        self.ns.rt.state(self.ns.name).forget_rows([rec.key for rec in recs])
        report["promoted"] = [v.id for v in worthy]
        report["memory_ids"] = [w.id for w in written]
        report["into"] = target.ns.name
        if self.ns.config.hierarchy.enabled or self.ns.config.decay.enabled:
            report["hierarchy"] = self.ns.consolidate("deep")
        return report




    def complete_on_cue(self, text: str, *, entry_ids: Iterable[str] | None = None,
                        max_tokens: int = 200, max_entries: int = 4, context_lines: int = 3,
                        turn: int | None = None) -> dict[str, Completion]:
        """Pattern completion triggered by a direct reference (seed 004 §7.1, case 1): every exact identifier in
        ``text`` (code-like ids such as ``ORD-00123`` or ``JIRA-42``, UUIDs, URLs, e-mail addresses) that occurs in
        the stored content of an entry (among ``entry_ids`` when given) completes that entry for the identifier:
        the lines around it, at most ``max_tokens`` per entry and ``max_entries`` entries per identifier. Returns ``{entry_id: Completion}``; empty when the
        text names no identifier. Entries whose rendered block already shows the identifier need no completion,
        so callers pass the ids of entries whose block lacks it."""
        self.ns.rt.live()
        text = tokenizer.check_text(text, "text", max_chars=100_000)
        max_tokens = check_int(max_tokens, "max_tokens", minimum=1)
        max_entries = check_int(max_entries, "max_entries", minimum=1)
        context_lines = check_int(context_lines, "context_lines")
        _check_turn(turn)
        if entry_ids is not None:
            check_iterable(entry_ids, "entry_ids", "an iterable of entry ids or None")
        allowed = None if entry_ids is None else {_entry_id(e, "entry_ids") for e in entry_ids}
        cues = cues_in(text)
        if not cues or (allowed is not None and not allowed):
            return {}
        owner: dict[int, str] = {}
        for e in self.entries(ids=allowed, include_dormant=True):
            for mid in e.message_ids[1:]:
                owner[mid] = e.id
        out: dict[str, Completion] = {}
        for cue in cues:
            # the same identifier may sit in several entries (two calls of one API): each of them, newest first,
            # up to ``max_entries``, so the reader can tell them apart by their head lines
            found = 0
            for hit in sorted(self.ns.search(cue, 50, None, scope_of(self.ns.config, cue)), key=lambda h: -h.id):
                eid = owner.get(hit.id)
                if eid is None or eid in out or cue not in hit.text:
                    continue
                got = self.complete(eid, cue, max_tokens=max_tokens, context_lines=context_lines, turn=turn)
                if got.matched_lines:
                    out[eid] = got
                    found += 1
                    if found >= max_entries:
                        break
        return out

    def blocks_on_cue(self, text: str, blocks: Mapping[str, str | None], *, max_tokens: int = 200,
                      context_lines: int = 3, turn: int | None = None) -> dict[str, str]:
        """Rendered entry ``blocks`` (``{entry_id: block}``, as :meth:`entry_blocks` returns them) that
        :meth:`complete_on_cue` extends for ``text`` (the user's latest message): each such block with the lines
        its content holds around an identifier of ``text`` that the block itself does not show. Only the changed
        blocks are returned; adapters put them in place of the plain ones."""
        self.ns.rt.live()
        text = tokenizer.check_text(text, "text", max_chars=100_000)
        check_int(max_tokens, "max_tokens", minimum=1)
        check_int(context_lines, "context_lines")
        _check_turn(turn)
        cues = cues_in(text)
        if not isinstance(blocks, Mapping) or not all(isinstance(b, str) or b is None for b in blocks.values()):
            raise InvalidInput("blocks must be a dict {entry_id: rendered block or None}, as entry_blocks returns")
        for eid in blocks:
            _entry_id(eid, "the keys of blocks")
        lacking = [eid for eid, block in blocks.items() if block is not None and any(c not in block for c in cues)]
        if not lacking:
            return {}
        got = self.complete_on_cue(text, entry_ids=lacking, max_tokens=max_tokens, context_lines=context_lines,
                                   turn=turn)
        return {eid: f"{blocks[eid]}\nrecalled for this question:\n{c.text}" for eid, c in got.items()
                if c.text and c.text not in (blocks[eid] or "")}








def _quoted(query: str, limit: int = 80) -> str:
    """``query`` as a note names it: quoted, its first ``limit`` characters (a pasted page is no part of a note)."""
    return repr(query) if len(query) <= limit else repr(query[:limit]) + "…"


def _check_type(value: object) -> str:
    return check_choice(value, "type", ENTRY_TYPES)


def _check_role(role: object, type: str) -> str | None:
    return check_choice(role, "role", ("user", "assistant", "system", "tool"), optional=True)


_compiled_cache: dict[tuple[str, ...], Any] = {}


def _compiled(key: tuple[str, ...], rules: list):
    got = _compiled_cache.get(key)
    if got is None:
        got = compile_policies(rules)
        if len(_compiled_cache) > 64:
            _compiled_cache.clear()
        _compiled_cache[key] = got
    return got


__all__ = ["IndexEntry", "Completion", "Entries", "DEFAULT_INDEX_POLICIES", "ENTRY_TYPES", "render_entry",
           "split_parts"]
