"""Declarative lifecycle policies (seed 004 §10), from Python dicts or YAML.

A policy is ``{"match": {...}, "action": {...}}``. Every policy whose ``match`` holds applies, in order, later
ones overriding earlier ones field by field. Match keys:

* ``type``: entry type (``message``, ``tool_result``, ``state``, ``memory``; ``episode``, ``semantic``, ``theme``
  for units: an episode's text is its summary, a semantic's its fact, and a theme has none, so word rules never
  match a theme);
* ``role``, ``speaker``, ``session_id``, ``priority``: fields of the message;
* ``contains``: a word or list of words, any of which occurs (case-insensitive, whole words);
  ``contains_all``: all of them;
* ``min_tokens`` / ``max_tokens``: size of the entry in cl100k tokens, inclusive bounds (seed 004 §6.1: index tool
  results over 1,000 tokens);
* any other key: a metadata value, dotted keys reaching into nested dicts (``source.type``).

A scalar value matches by equality, a list matches any of its members. Actions:

* ``priority``: critical / high / normal / low (an explicit ``add(..., priority=...)`` wins over a policy);
* ``decay_rate``: base rate replacing the per-type default; ``floor``: minimum strength;
* ``encoding``: ``manual`` (decays at half rate) or ``auto``;
* ``persist``: mark persist-worthy (deep consolidation promotes it to long-term memory);
* ``expires_after_turns`` / ``expires_after_seconds``: hard expiry, after which the entry is dormant;
* ``prune``: archival consolidation may delete the matching *messages* once dormant (messages are otherwise kept);
* ``index``: whether content of this kind becomes an index entry in the live context (``hippo.engine.entries``, seed 004
  §6.1); the store itself indexes every message whatever this says.

``compression`` from the seed's examples is accepted and has no effect (hippo never compresses the verbatim store).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from hippo.base.errors import InvalidInput

_MESSAGE_FIELDS = ("type", "role", "speaker", "session_id", "priority")
_SIZE_FIELDS = ("min_tokens", "max_tokens")
_ACTIONS = ("priority", "decay_rate", "floor", "encoding", "persist", "expires_after_turns", "expires_after_seconds",
            "prune", "index")
_IGNORED_ACTIONS = ("compression",)
_PRIORITIES = ("critical", "high", "normal", "low")
# Turns count messages and agent steps; the bound leaves room for expiry arithmetic in 64-bit columns.
MAX_TURNS = 2**53


@dataclass(frozen=True)
class Entry:
    """What a policy sees of a message or unit."""

    type: str
    text: str = ""
    role: str | None = None
    speaker: str | None = None
    session_id: str | None = None
    priority: str | None = None
    metadata: dict = field(default_factory=dict)
    n_tokens: int = 0


@dataclass
class Outcome:
    """The merged actions of every matching policy."""

    priority: str | None = None
    decay_rate: float | None = None
    floor: float | None = None
    manual: bool | None = None
    persist: bool | None = None
    expires_after_turns: int | None = None
    expires_after_seconds: float | None = None
    prune: bool | None = None
    index: bool | None = None
    matched: int = 0


def _words_re(words: list[str]) -> re.Pattern:
    return re.compile(r"(?<![\w])(" + "|".join(re.escape(w.lower()) for w in words) + r")(?![\w])")


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]


class Policy:
    def __init__(self, spec: Any, where: str) -> None:
        if not isinstance(spec, dict) or set(spec) - {"match", "action", "name"} or "action" not in spec:
            raise InvalidInput(f"{where} must be a dict with 'match' and 'action' (and optional 'name')")
        match = spec.get("match") or {}
        action = spec["action"]
        if not isinstance(match, dict) or not isinstance(action, dict):
            raise InvalidInput(f"{where}: 'match' and 'action' must be dicts")
        self.name = spec.get("name")
        self.fields: list[tuple[str, list]] = []
        self.meta: list[tuple[list[str], str, list]] = []
        self.any_words: re.Pattern | None = None
        self.all_words: list[re.Pattern] = []
        self.sizes: list[tuple[str, int]] = []
        for key, value in match.items():
            if not isinstance(key, str) or not key:
                raise InvalidInput(f"{where}.match keys must be non-empty str")
            if key == "contains" or key == "contains_all":
                words = [w for w in _as_list(value)]
                if not words or not all(isinstance(w, str) and w.strip() for w in words):
                    raise InvalidInput(f"{where}.match.{key} must be a word or a list of words")
                if key == "contains":
                    self.any_words = _words_re(words)
                else:
                    self.all_words = [_words_re([w]) for w in words]
            elif key in _SIZE_FIELDS:
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise InvalidInput(f"{where}.match.{key} must be an int >= 0")
                self.sizes.append((key, value))
            elif key in _MESSAGE_FIELDS:
                self.fields.append((key, _as_list(value)))
            else:
                self.meta.append((key.split("."), key, _as_list(value)))
        for key in action:
            if key not in _ACTIONS and key not in _IGNORED_ACTIONS:
                raise InvalidInput(f"{where}.action: unknown action {key!r}; expected one of {list(_ACTIONS)}")
        a = action
        if "priority" in a and a["priority"] not in _PRIORITIES:
            raise InvalidInput(f"{where}.action.priority must be one of {_PRIORITIES}")
        for key in ("decay_rate", "floor", "expires_after_seconds"):
            if key in a and (isinstance(a[key], bool) or not isinstance(a[key], (int, float)) or a[key] < 0
                             or a[key] != a[key]):
                raise InvalidInput(f"{where}.action.{key} must be a number >= 0")
        if "decay_rate" in a and not math.isfinite(a["decay_rate"]):
            raise InvalidInput(f"{where}.action.decay_rate must be finite")
        if "floor" in a and a["floor"] > 1:
            raise InvalidInput(f"{where}.action.floor must be <= 1")
        if "expires_after_turns" in a and (isinstance(a["expires_after_turns"], bool)
                                           or not isinstance(a["expires_after_turns"], int)
                                           or not 0 <= a["expires_after_turns"] <= MAX_TURNS):
            raise InvalidInput(f"{where}.action.expires_after_turns must be an int in 0..{MAX_TURNS}")
        if "encoding" in a and a["encoding"] not in ("manual", "auto"):
            raise InvalidInput(f"{where}.action.encoding must be 'manual' or 'auto'")
        for key in ("persist", "prune", "index"):
            if key in a and not isinstance(a[key], bool):
                raise InvalidInput(f"{where}.action.{key} must be a bool")
        self.action = dict(a)

    def matches(self, e: Entry) -> bool:
        for key, bound in self.sizes:
            if (e.n_tokens < bound) if key == "min_tokens" else (e.n_tokens > bound):
                return False
        for key, allowed in self.fields:
            have = getattr(e, key)
            if key == "priority" and have is None:
                have = "normal"
            if have not in allowed:
                return False
        for path, raw_key, allowed in self.meta:
            have: Any = e.metadata.get(raw_key, _MISSING)
            if have is _MISSING:
                have = e.metadata
                for part in path:
                    have = have.get(part, _MISSING) if isinstance(have, dict) else _MISSING
                    if have is _MISSING:
                        break
            if have is _MISSING or have not in allowed:
                return False
        if self.any_words is not None or self.all_words:
            low = e.text.lower()
            if self.any_words is not None and not self.any_words.search(low):
                return False
            if any(not p.search(low) for p in self.all_words):
                return False
        return True

    def apply(self, out: Outcome) -> None:
        a = self.action
        if "priority" in a:
            out.priority = a["priority"]
        if "decay_rate" in a:
            out.decay_rate = float(a["decay_rate"])
        if "floor" in a:
            out.floor = float(a["floor"])
        if "encoding" in a:
            out.manual = a["encoding"] == "manual"
        if "persist" in a:
            out.persist = a["persist"]
        if "expires_after_turns" in a:
            out.expires_after_turns = int(a["expires_after_turns"])
        if "expires_after_seconds" in a:
            out.expires_after_seconds = float(a["expires_after_seconds"])
        if "prune" in a:
            out.prune = a["prune"]
        if "index" in a:
            out.index = a["index"]
        out.matched += 1


_MISSING = object()


class Policies:
    def __init__(self, rules: list[Policy]) -> None:
        self.rules = rules

    def __len__(self) -> int:
        return len(self.rules)

    def evaluate(self, e: Entry) -> Outcome:
        out = Outcome()
        for rule in self.rules:
            if rule.matches(e):
                rule.apply(out)
        return out


def compile_policies(specs: Iterable[Any]) -> Policies:
    if isinstance(specs, (str, bytes, dict)):
        raise InvalidInput("policies must be a list of {'match': ..., 'action': ...} dicts")
    return Policies([Policy(s, f"policies[{i}]") for i, s in enumerate(specs)])


def load_policies(source: str | os.PathLike) -> list[dict]:
    """Policies from YAML text or a YAML file: a list of rules, or a mapping with a ``lifecycle_policies`` list
    (the layout of seed 004 §10). Validated before they are returned."""
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - pyyaml is a dev dependency
        raise InvalidInput("reading policies from YAML needs the 'pyyaml' package") from exc
    text = source
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                           and os.path.exists(source)):
        with open(source, encoding="utf-8") as f:
            text = f.read()
    if not isinstance(text, str):
        raise InvalidInput("source must be YAML text or a path")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidInput(f"policies are not valid YAML: {exc}") from exc
    if isinstance(data, dict):
        data = data.get("lifecycle_policies")
    if not isinstance(data, list):
        raise InvalidInput("policies YAML must be a list of rules or have a 'lifecycle_policies' list")
    compile_policies(data)
    return data
