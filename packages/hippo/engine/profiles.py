"""Speaker profiles (seed 002 §4.1 stage 5, the L0 speaker engram).

Stage 5 keeps, per speaker, an attribute map of preferences and identity built offline from the speaker's own
first-person statements ("I'm a nurse", "I live in Lyon", "my favourite colour is green", "I don't like jazz"), and
a character-n-gram style vector: hashed char-(3,4,5)-grams, L2-normalized per message and mean-pooled over the
speaker's messages. At query time (seed 002 §4.1 stage 9, the ``f_L0`` factor of Eq. 4) the engram is a prior:
when a question asks about a person's preferences or identity, candidate messages in which that person states the
asked attribute get a bounded multiplicative boost, so the prior informs but does not dominate lexical ranking.

Statements are read by the one attribute extractor of the text layer (:mod:`hippo.text.attributes`, shared with time
and truth); a profile keeps the speaker's own first-person statements that say a value holds. Every value keeps its
provenance (message id, timestamp) and all values are kept over time in time order, newest last; the newest is the
current one. Memory per speaker is bounded: at
most ``max_attributes`` attributes with at most ``max_values`` values each, one fixed-size style sum (exact), and the
arrival numbers of the speaker's messages that hold a statement (one integer each), which a deletion reads again.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from hippo.base.errors import InvalidInput, NotFound
from hippo.text import attributes, textnorm
from hippo.text.names import is_nickname_of_name
from hippo.text.attributes import Statement

__all__ = ["ProfileIndex", "style_vector", "check_speaker"]

# The style of a speaker is estimated well from a few thousand characters per message.
MAX_STYLE_CHARS = 20_000


# -- style vectors ----------------------------------------------------------------------------------------------

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_S63 = np.uint64(63)


def _style_counts(text: str, dim: int, ngrams: tuple[int, int]) -> np.ndarray:
    data = (" " + text[:MAX_STYLE_CHARS] + " ").encode("utf-8", "surrogatepass")
    b = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
    out = np.zeros(dim, dtype=np.float64)
    for n in range(ngrams[0], ngrams[1] + 1):
        m = b.size - n + 1
        if m <= 0:
            continue
        h = np.full(m, np.uint64(n), dtype=np.uint64)
        for j in range(n):
            h = h * np.uint64(0x100000001B3) + b[j : j + m]  # FNV-style polynomial; wraps mod 2**64
        # murmur3 fmix64: spreads the polynomial hash over all bits before bucketing
        h ^= h >> _S33
        h *= _M1
        h ^= h >> _S33
        h *= _M2
        h ^= h >> _S33
        bucket = (h % np.uint64(dim)).astype(np.int64)
        sign = 1.0 - 2.0 * (h >> _S63).astype(np.float64)  # signed feature hashing: collisions cancel on average
        out += np.bincount(bucket, weights=sign, minlength=dim)
    return out


def style_vector(text: str, *, dim: int = 512, ngrams: tuple[int, int] = (3, 5)) -> np.ndarray | None:
    """The L2-normalized hashed char-n-gram vector of one text (float32), or ``None`` if it has no n-gram.

    Seed 002 §4.1 stage 5: hashed char-(3,4,5)-grams, L2-normalized. Case and punctuation are kept: they are
    style. Only the first ``MAX_STYLE_CHARS`` characters are read. The hash is a fixed function of the UTF-8 bytes, so vectors are identical across processes.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a str, got {type(text).__name__}")
    v = _style_counts(text, dim, ngrams)
    norm = float(np.linalg.norm(v))
    if norm == 0.0:
        return None
    return (v / norm).astype(np.float32)


# -- query intent -----------------------------------------------------------------------------------------------

# question cue (stem) -> attributes it asks about: the one vocabulary of the text layer
_INTENT = attributes.CUES

# Patterns of identity/preference questions that name no cue above ("What kind of music does Tim ...?").
_EVENT_Q = re.compile(r"^\s*(?:when\b|how\s+long\b|(?:on\s+)?(?:what|which)\s+(?:day|date|year|month|week|time)\b|"
                      r"after\s+how\s+many\b|how\s+many\s+(?:days|weeks|months|years|times)\b)", re.I)
_WORD = re.compile(r"[^\W\d_]+")
_FAMILY_Q = re.compile(r"\bhow\s+many\s+(?:kids|children|sons|daughters|siblings|brothers|sisters|pets)\b", re.I)
_WHAT_IS_X = re.compile(r"\bwhat\s+(?:is|was|are)\s+(?P<who>[\w' -]+?)'s\s+(?P<n>[a-z]+(?:\s+[a-z]+)?)\s*\??$", re.I)
_PROFILE_WORDS = frozenset(_INTENT) | {textnorm.stem(w) for w in ("personality", "describe", "trait", "type",
                                                                     "pet", "dog", "cat")}
_ACTION_VERBS = frozenset(textnorm.stem(w) for w in (
    "go", "went", "visit", "attend", "buy", "bought", "make", "made", "do", "did", "happen", "see", "saw", "meet",
    "start", "take", "give", "get", "receive", "paint", "read", "research", "plan", "decide"))
_GENERIC_TOPIC = frozenset(textnorm.stem(w) for w in (
    "kind", "type", "sort", "genre", "thing", "activity", "activities", "something", "stuff", "person", "does", "do"))


_S = textnorm.stem
_NOT_LIKE_BEFORE = frozenset(_S(w) for w in ("look", "looks", "feel", "feels", "sound", "sounds", "seem", "seems",
                                               "would", "i'd", "be", "just", "is", "was"))


def _is_cue(stems: list[str], k: int) -> bool:
    """Whether ``stems[k]`` is a trait cue where it stands ("where is she from?" but not "a gift from her")."""
    s = stems[k]
    prev = stems[k - 1] if k else ""
    if s == _S("from"):
        return k == len(stems) - 1 and _S("where") in stems
    if s == _S("old"):
        return prev == _S("how")
    if s == _S("like"):
        return prev not in _NOT_LIKE_BEFORE
    return True


_attr_matches = attributes.matches


@dataclass
class _Entry:
    value: str
    message_id: int
    timestamp: float | None
    key: tuple[float, int]  # (effective time, arrival number): the time order of values
    norm: str               # value folded for equality


# A style vector's components are float32 values of magnitude at least 2**-18 (a text of MAX_STYLE_CHARS characters
# of four UTF-8 bytes holds under 2**18 n-grams), so each is a whole number of 2**-41: the style sums are kept in
# those units, as integers, exactly. A sum is then the same in any order, and taking a message out of it leaves
# exactly the sum of the others. A component of a unit vector is at most 1 (2**41 units), so an int64 sum holds
# fewer than 2**22 messages' vectors; a speaker with more has their sum kept in Python integers.
_STYLE_BITS = 41
_LOW_BITS = 21   # saved as high and low parts, two int64 columns whatever the sum
_LOW_MASK = (1 << _LOW_BITS) - 1
_INT64_STYLES = (1 << 22) - 1
_UNIT = np.float32(2.0 ** _STYLE_BITS)


def _style_units(v: np.ndarray) -> np.ndarray:
    """A style vector (float32) as its exact count of 2**-41 units: scaling by a power of two is exact in float32,
    and gives whole numbers."""
    return (v * _UNIT).astype(np.int64)


class _Speaker:
    __slots__ = ("n_messages", "attributes", "style", "n_style", "said")

    def __init__(self, dim: int) -> None:
        self.n_messages = 0
        self.attributes: dict[str, list[_Entry]] = {}
        self.style = np.zeros(dim, dtype=np.int64)  # the sum of the style vectors, in 2**-41 units
        self.n_style = 0
        # arrival numbers of the speaker's messages that hold a first-person statement of a value that holds: the
        # only messages whose reading can change the speaker's values (a deletion reads these again, not the rest)
        self.said: list[int] = []

    def add_style(self, v: np.ndarray) -> None:
        units = _style_units(v)
        if self.n_style >= _INT64_STYLES and self.style.dtype != object:
            self.style = self.style.astype(object)
        self.style += units.astype(object) if self.style.dtype == object else units

    def style_parts(self) -> tuple[np.ndarray, np.ndarray]:
        """The sum as int64 high and low parts (``sum == high * 2**21 + low``, ``0 <= low < 2**21``)."""
        hi, lo = self.style >> _LOW_BITS, self.style & _LOW_MASK
        return np.asarray(hi, dtype=np.int64), np.asarray(lo, dtype=np.int64)

    def set_style(self, hi: np.ndarray, lo: np.ndarray) -> None:
        if hi.size and int(np.abs(hi).max()) >= 1 << (62 - _LOW_BITS):
            self.style = hi.astype(object) * (1 << _LOW_BITS) + lo.astype(object)
        else:
            self.style = hi * (1 << _LOW_BITS) + lo

    @property
    def style_sum(self) -> np.ndarray:
        """The sum of the speaker's style vectors, rounded once to float64."""
        hi, lo = self.style_parts()
        total = hi.astype(np.float64) * float(1 << _LOW_BITS) + lo.astype(np.float64)
        return total * (2.0 ** -_STYLE_BITS)


class _KnownAt:
    """The speakers known when the message of arrival number ``at`` arrived: those whose first message came no
    later."""

    __slots__ = ("first", "at")

    def __init__(self, first: dict[str, int]) -> None:
        self.first, self.at = first, 0

    def __contains__(self, name: object) -> bool:
        k = self.first.get(name)  # type: ignore[call-overload]
        return k is not None and k <= self.at


def _fold(value: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", value.lower()))


class ProfileIndex:
    """Per-speaker attribute maps and style vectors, built incrementally from a message stream.

    ``append(ids, speakers, texts, timestamps)`` consumes messages in arrival order; building is deterministic
    (the same stream gives the same index). Values of an attribute are kept in time order (by timestamp, and by
    arrival for equal or missing timestamps: a message without a timestamp counts as said at the latest time
    seen so far); a value equal to the one just before it in time is a repetition and is not stored again. Per
    speaker at most ``max_attributes`` attributes (later new attributes are ignored) and ``max_values`` values per
    attribute (the oldest is dropped) are kept, so memory is bounded whatever the length of the stream.
    """

    def __init__(self, *, dim: int = 512, ngrams: tuple[int, int] = (3, 5), max_values: int = 32,
                 max_attributes: int = 128, max_boost: float = 0.3) -> None:
        if not isinstance(dim, int) or isinstance(dim, bool) or not 16 <= dim <= 65536:
            raise InvalidInput(f"dim must be an int in [16, 65536], got {dim!r}")
        if (not isinstance(ngrams, tuple) or len(ngrams) != 2 or not all(isinstance(n, int) for n in ngrams)
                or not 1 <= ngrams[0] <= ngrams[1] <= 8):
            raise InvalidInput(f"ngrams must be a (low, high) tuple of ints with 1 <= low <= high <= 8, got {ngrams!r}")
        for name, v in (("max_values", max_values), ("max_attributes", max_attributes)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise InvalidInput(f"{name} must be a positive int, got {v!r}")
        if isinstance(max_boost, bool) or not isinstance(max_boost, (int, float)) or not 0 <= max_boost <= 10:
            raise InvalidInput(f"max_boost must be a number in [0, 10], got {max_boost!r}")
        self.dim = dim
        self.ngrams = ngrams
        self.max_values = max_values
        self.max_attributes = max_attributes
        self.max_boost = float(max_boost)
        self._speakers: dict[str, _Speaker] = {}
        self._arrivals = 0
        self._latest = -math.inf
        # message id -> [(speaker, attribute, folded value, stems of value and sentence)] for the boost
        self._by_message: dict[int, list[tuple[str, str, str, frozenset[str]]]] = {}
        self._name_re: re.Pattern | None = None
        self._alias: dict[str, str] = {}

    # -- building ---------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._speakers)

    def append(self, ids: Sequence[int], speakers: Sequence[str | None], texts: Sequence[str],
               timestamps: Sequence[float | None] | None = None) -> None:
        """Consume messages in arrival order. Messages without a speaker (``None``) are skipped."""
        ids = self._check_seq(ids, "ids")
        speakers = self._check_seq(speakers, "speakers")
        texts = self._check_seq(texts, "texts")
        if timestamps is None:
            timestamps = [None] * len(ids)
        timestamps = self._check_seq(timestamps, "timestamps")
        if not len(ids) == len(speakers) == len(texts) == len(timestamps):
            raise InvalidInput(f"ids, speakers, texts and timestamps must have one length, got {len(ids)}, "
                               f"{len(speakers)}, {len(texts)}, {len(timestamps)}")
        clean = []
        for k in range(len(ids)):
            i, sp, text, ts = ids[k], speakers[k], texts[k], timestamps[k]
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise InvalidInput(f"ids[{k}] must be an int, got {type(i).__name__}")
            if sp is not None and not isinstance(sp, str):
                raise InvalidInput(f"speakers[{k}] must be a str or None, got {type(sp).__name__}")
            if not isinstance(text, str):
                raise InvalidInput(f"texts[{k}] must be a str, got {type(text).__name__}")
            if ts is not None:
                if isinstance(ts, bool) or not isinstance(ts, (int, float, np.floating, np.integer)):
                    raise InvalidInput(f"timestamps[{k}] must be a number or None, got {type(ts).__name__}")
                ts = float(ts)
                if math.isnan(ts):
                    ts = None
                elif math.isinf(ts):
                    raise InvalidInput(f"timestamps[{k}] must be finite, got {ts}")
            clean.append((int(i), sp, text, ts))
        for i, sp, text, ts in clean:
            self._consume(i, sp, text, ts)

    @staticmethod
    def _check_seq(values: Any, name: str) -> Sequence:
        if isinstance(values, np.ndarray):
            return values.tolist()
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise InvalidInput(f"{name} must be a sequence, got {type(values).__name__}")
        return values

    def _consume(self, message_id: int, speaker: str | None, text: str, ts: float | None) -> None:
        self._arrivals += 1
        if ts is not None:
            self._latest = max(self._latest, ts)
        if speaker is None:
            return
        sp = self._speakers.get(speaker)
        if sp is None:
            sp = self._speakers[speaker] = _Speaker(self.dim)
            self._name_re = None
        self._read(sp, message_id, speaker, text, ts, (ts if ts is not None else self._latest, self._arrivals),
                   self._speakers)

    def _read(self, sp: _Speaker, message_id: int, speaker: str, text: str, ts: float | None,
              key: tuple[float, int], known: Any) -> None:
        """What one message of ``speaker`` adds to their profile; ``known``: the speakers known when it arrived."""
        sp.n_messages += 1
        v = style_vector(text, dim=self.dim, ngrams=self.ngrams)
        if v is not None:
            sp.add_style(v)
            sp.n_style += 1
        if self._statements(sp, message_id, speaker, text, ts, key, known):
            sp.said.append(key[1])

    def _statements(self, sp: _Speaker, message_id: int, speaker: str, text: str, ts: float | None,
                    key: tuple[float, int], known: Any) -> bool:
        """Add the values one message of ``speaker`` states; whether it holds a first-person statement of a value
        that holds (before the names known then are taken off its values)."""
        said = False
        for st in attributes.extract(text, speaker):
            if not st.first_person or st.negated:
                continue  # a profile holds what the speaker says of themselves, and what holds
            said = True
            st = self._unaddress(st, known)
            if st is None:
                continue
            self._add_value(speaker, sp, st, message_id, ts, key)
        return said

    def _unaddress(self, st: Statement, known: Any = None) -> Statement | None:
        """Drop a trailing vocative ("I love the thought, Nate" read as "the thought Nate"); ``known``: the speakers
        known then (a container of names; those known now by default)."""
        known = self._speakers if known is None else known
        words = st.value.split()
        if len(words) > 1 and words[-1] in known:
            return dataclasses.replace(st, value=" ".join(words[:-1]))
        if st.value in known and st.attribute not in ("name", "partner") and not st.attribute.endswith("_name"):
            return None
        return st

    @property
    def arrivals(self) -> int:
        """How many messages were consumed (speakerless ones included)."""
        return self._arrivals

    def tally(self, messages: Iterable[tuple[str, str]], into: dict[str, Any] | None = None) -> dict[str, Any]:
        """What ``messages`` (``(speaker, text)`` pairs) add to their speakers' message counts and style sums, added
        to ``into`` (a tally made by this method) and returned: for :meth:`remove`, taken before the messages are
        gone, a few at a time."""
        into = {} if into is None else into
        for name, text in messages:
            acc = into.get(name)
            if acc is None:
                acc = into[name] = _Speaker(self.dim)
            acc.n_messages += 1
            v = style_vector(text, dim=self.dim, ngrams=self.ngrams)
            if v is not None:
                acc.add_style(v)
                acc.n_style += 1
        return into

    def remove(self, gone: Sequence[int], removed: dict[str, Any], first: dict[str, int],
               latest: float, read: Callable[[list[int]], Iterable[tuple[int, str, str, float | None,
                                                                          tuple[float, int]]]],
               *, renamed: bool = False, retimed: bool = False) -> None:
        """Forget consumed messages, leaving exactly what consuming the surviving ones in order builds.

        ``gone``: the arrival numbers of the removed messages (their positions among those consumed, from 1);
        ``removed``: the removed messages' :meth:`tally` (their counts and style vectors are taken out of their
        speakers' sums, which are exact); ``first``: the arrival number of each speaker's first surviving message
        (a speaker without one is dropped, the others ordered by it); ``latest``: the
        latest timestamp of the survivors; ``read(arrivals)``: the surviving messages at these arrival numbers,
        in order, each ``(id, speaker, text, timestamp, key)`` with the key a rebuild gives it (its time, or the
        latest time before it, and its arrival number among the survivors). ``renamed``: a removed message was
        its speaker's first (the names known at the messages between it and the speaker's next one change);
        ``retimed``: a surviving message without a timestamp took its time from a removed one (its values move
        in time order).

        Only statements are read again: the messages that hold a first-person statement (each speaker's
        ``said``) of the speakers a removed one held a statement of, or of every speaker when ``renamed`` or
        ``retimed``. The values of the other speakers keep their order, their arrival numbers moved down by the
        removed messages before them. Values are capped (the oldest dropped) and a repetition is judged against
        the value before it, so a speaker's values are replayed from their statements rather than edited."""
        dead = np.unique(np.asarray(list(gone), dtype=np.int64))
        for name, acc in removed.items():
            sp = self._speakers[name]
            sp.n_messages -= acc.n_messages
            sp.n_style -= acc.n_style
            if acc.style.dtype == object and sp.style.dtype != object:
                sp.style = sp.style.astype(object)
            sp.style -= acc.style.astype(sp.style.dtype)
        redo: set[str] = set()
        for name, sp in self._speakers.items():
            if not sp.said:
                continue
            said = np.asarray(sp.said, dtype=np.int64)
            hit = np.isin(said, dead)
            if renamed or retimed or hit.any():
                redo.add(name)
            said = said[~hit]
            sp.said = (said - np.searchsorted(dead, said)).tolist()
        for name, sp in self._speakers.items():
            if name in redo:
                continue
            for values in sp.attributes.values():
                if not values:
                    continue
                shift = np.searchsorted(dead, np.asarray([e.key[1] for e in values], dtype=np.int64))
                for e, k in zip(values, shift.tolist()):
                    if k:
                        e.key = (e.key[0], e.key[1] - k)
        for mid in list(self._by_message):
            recs = [r for r in self._by_message[mid] if r[0] not in redo]
            if recs:
                self._by_message[mid] = recs
            else:
                del self._by_message[mid]
        order = sorted((n for n in self._speakers if n in first), key=first.__getitem__)
        if order != list(self._speakers):
            self._speakers = {n: self._speakers[n] for n in order}
            self._name_re = None
        todo: list[int] = []
        for name in redo:
            sp = self._speakers.get(name)
            if sp is not None:
                sp.attributes = {}
                todo.extend(sp.said)
        known = _KnownAt(first)
        for mid, speaker, text, ts, key in read(sorted(todo)):
            known.at = key[1]
            self._statements(self._speakers[speaker], mid, speaker, text, ts, key, known)
        self._by_message = dict(sorted(self._by_message.items()))  # by arrival, as consuming them fills it
        self._arrivals -= int(dead.size)
        self._latest = latest

    def _add_value(self, speaker: str, sp: _Speaker, st: Statement, message_id: int, ts: float | None,
                   key: tuple[float, int]) -> None:
        values = sp.attributes.get(st.attribute)
        if values is None:
            if len(sp.attributes) >= self.max_attributes:
                return
            values = sp.attributes[st.attribute] = []
        norm = _fold(st.value)
        pos = bisect.bisect_right([e.key for e in values], key)
        if pos > 0 and values[pos - 1].norm == norm:
            return  # a repetition of the value in force at that time
        values.insert(pos, _Entry(st.value, message_id, ts, key, norm))
        if pos < len(values) - 1 and values[pos + 1].norm == norm:
            self._drop(speaker, st.attribute, values.pop(pos + 1))  # the later copy now repeats this one
        while len(values) > self.max_values:
            self._drop(speaker, st.attribute, values.pop(0))
        if any(e.message_id == message_id and e.norm == norm for e in values):
            stems = frozenset(textnorm.terms(st.value)) | frozenset(textnorm.terms(st.sentence))
            self._by_message.setdefault(message_id, []).append((speaker, st.attribute, norm, stems))

    def _drop(self, speaker: str, attribute: str, entry: _Entry) -> None:
        recs = self._by_message.get(entry.message_id)
        if not recs:
            return
        recs[:] = [r for r in recs if not (r[0] == speaker and r[1] == attribute and r[2] == entry.norm)]
        if not recs:
            del self._by_message[entry.message_id]

    # -- snapshots ------------------------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        return {"dim": self.dim, "ngrams": list(self.ngrams), "max_values": self.max_values,
                "max_attributes": self.max_attributes, "style": "units-41", "said": True}

    def to_snapshot(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Every speaker's attribute values (with provenance and time order) and style sum, and the statements by
        message the query-time prior reads."""
        names = [n for n, sp in self._speakers.items() if sp is not None]
        code = {n: k for k, n in enumerate(names)}
        sps = [self._speakers[n] for n in names]
        parts = [sp.style_parts() for sp in sps]
        entries = [[code[n], attr, e.value, e.message_id, e.timestamp, e.key[0], e.key[1], e.norm]
                   for n, sp in zip(names, sps) for attr, vals in sp.attributes.items() for e in vals]
        by_message = [[mid, code[sp], attr, norm, sorted(stems)] for mid, recs in self._by_message.items()
                      for sp, attr, norm, stems in recs]
        bulk = {"speakers": names, "attributes": [list(sp.attributes) for sp in sps], "entries": entries,
                "by_message": by_message, "said": [sp.said for sp in sps]}
        arrays = {
            "style_hi": np.asarray([hi for hi, _ in parts], dtype=np.int64).reshape(len(sps), self.dim),
            "style_lo": np.asarray([lo for _, lo in parts], dtype=np.int64).reshape(len(sps), self.dim),
            "n_messages": np.asarray([sp.n_messages for sp in sps], dtype=np.int64),
            "n_style": np.asarray([sp.n_style for sp in sps], dtype=np.int64),
            "bulk": np.frombuffer(json.dumps(bulk, ensure_ascii=False, separators=(",", ":")).encode(), np.uint8),
        }
        return {"arrivals": self._arrivals, "latest": None if self._latest == -math.inf else self._latest}, arrays

    @classmethod
    def from_snapshot(cls, settings: dict[str, Any], meta: dict[str, Any], arrays: dict[str, np.ndarray]
                      ) -> "ProfileIndex":
        p = cls(dim=int(settings["dim"]), ngrams=tuple(settings["ngrams"]), max_values=int(settings["max_values"]),
                max_attributes=int(settings["max_attributes"]))
        bulk = json.loads(bytes(arrays["bulk"]).decode("utf-8"))
        names = [str(n) for n in bulk["speakers"]]
        k = len(names)
        hi = np.asarray(arrays["style_hi"], dtype=np.int64)
        lo = np.asarray(arrays["style_lo"], dtype=np.int64)
        if hi.shape != (k, p.dim) or lo.shape != (k, p.dim) or arrays["n_messages"].shape != (k,) \
                or len(bulk["attributes"]) != k or len(bulk["said"]) != k:
            raise ValueError("profile snapshot: speaker tables disagree")
        for j, name in enumerate(names):
            sp = p._speakers[name] = _Speaker(p.dim)
            sp.set_style(hi[j], lo[j])
            sp.said = [int(a) for a in bulk["said"][j]]
            sp.n_messages, sp.n_style = int(arrays["n_messages"][j]), int(arrays["n_style"][j])
            for attr in bulk["attributes"][j]:  # attribute order as built (max_attributes counts them)
                sp.attributes[str(attr)] = []
        for j, attr, value, mid, ts, k0, k1, norm in bulk["entries"]:
            p._speakers[names[j]].attributes[attr].append(
                _Entry(str(value), int(mid), None if ts is None else float(ts), (float(k0), int(k1)), str(norm)))
        for mid, j, attr, norm, stems in bulk["by_message"]:
            p._by_message.setdefault(int(mid), []).append((names[j], str(attr), str(norm), frozenset(stems)))
        p._arrivals = int(meta["arrivals"])
        p._latest = -math.inf if meta["latest"] is None else float(meta["latest"])
        return p

    # -- reading ----------------------------------------------------------------------------------------------
    def speakers(self) -> list[str]:
        """Speakers with at least one message, in order of first appearance."""
        return list(self._speakers)

    def _get(self, speaker: Any) -> _Speaker:
        if not isinstance(speaker, str) or not speaker.strip():
            raise InvalidInput(f"speaker must be a non-empty str, got {speaker!r}")
        sp = self._speakers.get(speaker)
        if sp is None:
            raise NotFound(f"speaker {speaker!r} has no messages")
        return sp

    def attributes(self, speaker: str) -> dict[str, list[dict[str, Any]]]:
        """``{attribute: [{"value", "message_id", "timestamp"}, ...]}``, each list oldest first."""
        sp = self._get(speaker)
        return {a: [{"value": e.value, "message_id": e.message_id, "timestamp": e.timestamp} for e in vals]
                for a, vals in sorted(sp.attributes.items())}

    def current(self, speaker: str) -> dict[str, str]:
        """The value in force now (the newest) of every attribute of ``speaker``."""
        sp = self._get(speaker)
        return {a: vals[-1].value for a, vals in sorted(sp.attributes.items()) if vals}

    def style(self, speaker: str) -> np.ndarray | None:
        """The speaker's style vector: mean of per-message vectors, L2-normalized (float32); ``None`` if empty."""
        sp = self._get(speaker)
        norm = float(np.linalg.norm(sp.style_sum))
        if sp.n_style == 0 or norm == 0.0:
            return None
        return (sp.style_sum / norm).astype(np.float32)

    def style_similarity(self, speaker: str, text: str) -> float:
        """Cosine between ``text``'s style vector and ``speaker``'s (seed 002 stage 5 retrieval prior); 0 if none."""
        s = self.style(speaker)
        v = style_vector(text, dim=self.dim, ngrams=self.ngrams)
        if s is None or v is None:
            return 0.0
        return float(np.dot(s, v))

    def profile(self, speaker: str) -> dict[str, Any]:
        """The public profile record of ``speaker`` (see ``Memory.profile``)."""
        sp = self._get(speaker)
        style = self.style(speaker)
        return {
            "speaker": speaker,
            "n_messages": sp.n_messages,
            "attributes": self.attributes(speaker),
            "current": self.current(speaker),
            "style": None if style is None else style.tolist(),
        }

    # -- query-time prior (seed 002 §4.1 stage 9, f_L0) -------------------------------------------------------
    def _names(self) -> re.Pattern | None:
        if self._name_re is None:
            alts: dict[str, str] = {}
            firsts: dict[str, list[str]] = {}
            for name in self._speakers:
                n = name.strip()
                if len(n) >= 2:
                    alts[n.lower()] = name
                parts = n.split()
                if len(parts) > 1 and len(parts[0]) >= 3:
                    firsts.setdefault(parts[0].lower(), []).append(name)
            for first, names in firsts.items():
                if len(names) == 1 and first not in alts:
                    alts[first] = names[0]
            if not alts:
                return None
            self._alias = alts
            body = "|".join(re.escape(a) for a in sorted(alts, key=len, reverse=True))
            self._name_re = re.compile(r"(?<![\w])(" + body + r")(?='s\b|s'|[^\w]|$)", re.I)
        return self._name_re

    def _speaker_in(self, query: str) -> tuple[str | None, tuple[int, int] | None]:
        pat = self._names()
        if pat is None:
            return None, None
        m = pat.search(query.replace("’", "'"))
        if m is not None:
            return self._alias[m.group(1).lower()], m.span()
        # a nickname ("What is Mel's job?"): a capitalised word after the first that names exactly one speaker
        for w in list(_WORD.finditer(query))[1:]:
            if not w.group(0)[0].isupper():
                continue
            named = [n for n in self._speakers if is_nickname_of_name(w.group(0), n.split())]
            if len(named) == 1:
                return named[0], w.span()
        return None, None

    def _intent(self, query: str) -> tuple[str | None, bool, tuple[str, ...], frozenset[str]]:
        """(speaker, is profile query, attributes asked, topic stems) of ``query``."""
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a str, got {type(query).__name__}")
        q = re.sub(r"\bfor\s+a\s+living\b", "as a job", query.replace("’", "'"), flags=re.I)
        speaker, span = self._speaker_in(q)
        rest = q if span is None else q[: span[0]] + " " + q[span[1]:]
        rest = re.sub(r"^'s\b", "", rest)
        raw = [textnorm.stem(w.lower()) for w in textnorm.words(rest)]
        stems = [s for k, s in enumerate(raw) if _is_cue(raw, k)]
        wanted: list[str] = []
        for s in stems:
            wanted.extend(_INTENT.get(s, ()))
        if _EVENT_Q.search(q):
            return speaker, False, (), frozenset()  # "When did ...", "What day ...": an event, not a trait
        m = _WHAT_IS_X.search(q)
        if m is not None and not wanted:
            noun = attributes.noun_key(m.group("n"))
            wanted.extend((noun, f"favorite_{noun}", f"{noun}_name"))
        if _FAMILY_Q.search(q):
            wanted.append("family")
        if not wanted:
            return speaker, False, (), frozenset()
        # "What did Caroline paint?" asks about an event, not a trait, unless a trait cue is also there
        strong = any(s in _INTENT for s in stems) or m is not None or "family" in wanted
        if not strong:
            return speaker, False, (), frozenset()
        cues = set(_INTENT) | set(textnorm.QUESTION_WORDS) | _GENERIC_TOPIC
        topic = frozenset(t for t in textnorm.terms(rest) if t not in cues and t not in _ACTION_VERBS)
        return speaker, True, tuple(dict.fromkeys(wanted)), topic

    def know_speakers(self, names: Iterable[str]) -> None:
        """Register speakers by name only (no statements): enough for :meth:`query_intent`."""
        for name in names:
            self._speakers.setdefault(name, None)

    def query_intent(self, query: str) -> tuple[str | None, bool]:
        """``(speaker the query is about or None, whether it asks about preferences or identity)``.

        The speaker is the first known speaker name in the query (a full name, or a first name that only one
        speaker has); the intent comes from trait cues ("like", "favourite", "from", "job", "name"...).
        """
        speaker, is_profile, _, _ = self._intent(query)
        return speaker, is_profile

    def boost(self, query: str, row_ids: np.ndarray) -> np.ndarray:
        """Multiplicative factors in ``[1, 1 + max_boost]`` for candidate messages (``row_ids`` = message ids).

        A candidate gets more than 1 only when the query asks about a known speaker's preferences or identity and
        the candidate is a statement by that speaker of an asked attribute: ``1 + max_boost`` if the statement
        shares a content term with the query's topic (or the query names no topic), ``1 + max_boost / 2``
        otherwise. Every other candidate gets exactly 1.0 (seed 002 Eq. 4: inactive factors are the identity).
        """
        ids = np.asarray(row_ids)
        if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
            raise InvalidInput(f"row_ids must be a 1-d array of int message ids, got dtype {ids.dtype} "
                               f"and shape {ids.shape}")
        out = np.ones(ids.size, dtype=np.float64)
        speaker, is_profile, wanted, topic = self._intent(query)
        if not is_profile or speaker is None or self.max_boost == 0.0:
            return out
        for k, i in enumerate(ids.tolist()):
            best = 0.0
            for sp, attr, _norm, stems in self._by_message.get(int(i), ()):
                if sp != speaker or not _attr_matches(attr, wanted):
                    continue
                w = 1.0 if (not topic or topic & stems) else 0.5
                best = max(best, w)
            if best:
                out[k] = 1.0 + self.max_boost * best
        return out


def check_speaker(speaker: Any) -> str:
    if not isinstance(speaker, str):
        raise InvalidInput(f"speaker must be a str, got {type(speaker).__name__}")
    if not speaker.strip():
        raise InvalidInput("speaker must be a non-empty str")
    return speaker
