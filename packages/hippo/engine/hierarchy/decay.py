"""Strength of memories (seed 004 §8 and the normative §14.2).

    effective_rate = base_rate(type) * priority_mod * encoding_mod * association_mod          (§8.2)
    strength(t)    = max(floor, min(1, s0 * (1 + effective_rate * dt) ** -exponent))         (§8.1, §14.2)

``dt`` is the time since the last access (creation counts as the first access), measured in turns (one added
message is one turn) and in wall-clock time (``time_unit_s`` seconds count as ``time_weight`` turns); either clock
can be switched off. Accessing an entry resets ``s0`` to 1 and restarts its clock (§4.1 principle 3).

Decay changes ranking only. An entry is dormant when its strength falls below ``dormant_threshold`` times the
strength a message written at the namespace's latest add would have now: while the memory is in use that reference
is 1 and the threshold is the absolute one of §8.3; a store left alone ages as a whole and keeps its internal
order instead of falling silent (every strength falls, none relative to the others). Dormant entries are left out
of normal recall and stay recoverable (§7, pattern completion). Strengths are closed-form, so nothing is updated
per turn: they are evaluated for the candidates of a query, and bulk statistics are one vectorized pass.
"""

from __future__ import annotations

import copy
import time
from typing import Iterable

import numpy as np

from hippo.base.arrays import filled_copy, grown
from hippo.base.config import PRIORITIES, DecayConfig
from hippo.engine.hierarchy.lazy import IntMap, find_sorted

TYPES = ("message", "tool_result", "state", "memory", "episode", "semantic", "theme")
_TYPE_CODE = {t: i for i, t in enumerate(TYPES)}
_PRIORITY_CODE = {p: i for i, p in enumerate(PRIORITIES)}

F_MANUAL = 1
F_ASSOC = 2
F_PERSIST = 4


def now() -> float:
    """Wall-clock time used by decay (tests replace it to age a store)."""
    return time.time()


def message_type(role: str, metadata: dict) -> str:
    """seed 004 §5.1 entry types: an explicit ``metadata["type"]``, else by role (tool -> tool_result,
    system -> state, user / assistant -> message)."""
    t = metadata.get("type") if isinstance(metadata, dict) else None
    if isinstance(t, str) and t in ("message", "tool_result", "state", "memory"):
        return t
    return {"tool": "tool_result", "system": "state"}.get(role, "message")


class DecayTable:
    """Strength records of one level (messages, episodes, semantics or themes) keyed by integer id."""

    _FIELDS = {
        "key": np.int64, "type": np.int8, "priority": np.int8, "flags": np.uint8, "base_rate": np.float64,
        "s0": np.float64, "floor": np.float64, "last_turn": np.int64, "last_time": np.float64,
        "created_turn": np.int64, "created_time": np.float64, "accesses": np.int32,
        "expires_turn": np.int64, "expires_time": np.float64, "alive": np.bool_,
    }

    # what an access changes (:meth:`reinforce`, :meth:`set_flag`): saved apart, as a small delta, when nothing else
    # changed since the last full snapshot
    ACCESS_FIELDS = ("s0", "last_turn", "last_time", "accesses", "flags", "base_rate")
    # what tells a record from another of the same key (a unit id another handle's hierarchy gave to other
    # messages; a message id names one message for good): saved with the accesses of units, compared before they
    # are applied or merged
    IDENTITY_FIELDS = ("created_turn", "created_time")
    # the flags an access or a promotion sets (the others follow the message's metadata)
    MERGED_FLAGS = F_ASSOC | F_PERSIST

    def __init__(self, cap: int = 64) -> None:
        self.n = 0
        self.live = 0  # records alive
        # key -> slot. Keys arrive in increasing order (message and unit ids), so while they stay strictly
        # increasing in slot order a binary search over ``key`` finds a slot and the map is only built when a key
        # breaks that order or a caller asks for it (:attr:`slot_of`): a snapshot of a million records then loads,
        # and a million messages are added, without a million-entry map. The map is an IntMap (sorted arrays and a
        # dict of its latest entries), 16 bytes a record where a dict took about a hundred.
        self._slot_of: IntMap | None = None
        self._ordered = True
        for name, dt in self._FIELDS.items():
            setattr(self, name, np.zeros(cap, dtype=dt))
        self.touched = np.zeros(cap, dtype=bool)  # accessed since the last full snapshot (not saved)
        # accesses made here since the saved records this table last matched (its load, or its last save): what
        # :meth:`merge` adds to another handle's saved count (not saved)
        self.own = np.zeros(cap, dtype=np.int32)

    def __deepcopy__(self, memo: dict) -> "DecayTable":
        """A copy of the records it holds; the columns' room is left unwritten
        (:func:`hippo.base.arrays.filled_copy`), as here."""
        out = DecayTable.__new__(DecayTable)
        memo[id(self)] = out
        columns = (*self._FIELDS, "touched", "own")
        for name, value in self.__dict__.items():
            setattr(out, name, filled_copy(value, self.n) if name in columns else copy.deepcopy(value, memo))
        return out

    @property
    def slot_of(self) -> IntMap:
        """key -> slot of every live record (built on first use)."""
        if self._slot_of is None:
            live = self.live_slots()
            self._slot_of = IntMap(self.key[live], live)
        return self._slot_of

    def __len__(self) -> int:
        return self.live

    def __contains__(self, key: int) -> bool:
        return self.find(int(key)) >= 0

    def find(self, key: int) -> int:
        """The live slot of ``key``, or -1."""
        if self._slot_of is not None:
            return self._slot_of.get(key, -1)
        i = int(np.searchsorted(self.key[: self.n], key))
        return i if i < self.n and int(self.key[i]) == key and bool(self.alive[i]) else -1

    def live_keys(self) -> np.ndarray:
        """Keys of the live records, in slot order."""
        return self.key[self.live_slots()]

    def _grow(self, need: int) -> None:
        cap = self.key.size
        if need <= cap:
            return
        cap = grown(cap, need)
        for name, dt in self._FIELDS.items():
            old = getattr(self, name)
            new = np.zeros(cap, dtype=dt)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)
        touched = np.zeros(cap, dtype=bool)
        touched[: self.n] = self.touched[: self.n]
        self.touched = touched
        own = np.zeros(cap, dtype=np.int32)
        own[: self.n] = self.own[: self.n]
        self.own = own

    def add(self, key: int, *, type: str, priority: str = "normal", base_rate: float, floor: float = 0.0,
            manual: bool = False, persist: bool = False, turn: int, at: float,
            expires_turn: int = -1, expires_time: float = float("nan")) -> int:
        slot = self.find(key)
        if slot < 0:
            self._grow(self.n + 1)
            slot = self.n
            if self._ordered and slot and int(self.key[slot - 1]) >= key:
                self._ordered = False
                self.slot_of  # noqa: B018 - the binary search no longer holds: build the map
            self.n += 1
            self.live += 1
            self.own[slot] = 0
            if self._slot_of is not None:
                self._slot_of[key] = slot
        self.key[slot] = key
        self.type[slot] = _TYPE_CODE[type]
        self.priority[slot] = _PRIORITY_CODE[priority]
        self.flags[slot] = (F_MANUAL if manual else 0) | (F_PERSIST if persist else 0)
        self.base_rate[slot] = base_rate
        self.s0[slot] = 1.0
        self.floor[slot] = floor
        self.last_turn[slot] = turn
        self.last_time[slot] = at
        self.created_turn[slot] = turn
        self.created_time[slot] = at
        self.accesses[slot] = 0
        self.expires_turn[slot] = expires_turn
        self.expires_time[slot] = expires_time
        self.alive[slot] = True
        return slot

    def drop(self, keys: Iterable[int]) -> None:
        for k in keys:
            slot = self.find(int(k))
            if slot >= 0:
                self.alive[slot] = False
                self.live -= 1
                if self._slot_of is not None:
                    del self._slot_of[int(k)]

    def slots(self, keys: Iterable[int]) -> np.ndarray:
        """The live slot of each key, -1 for unknown or dropped keys."""
        if self._slot_of is not None:
            return np.asarray(self._slot_of.get_many([int(k) for k in keys], -1), dtype=np.int64)
        want = np.fromiter((int(k) for k in keys), dtype=np.int64) if not isinstance(keys, np.ndarray) \
            else keys.astype(np.int64, copy=False)
        i, hit = find_sorted(self.key[: self.n], self.alive[: self.n], want)
        return np.where(hit, i, -1).astype(np.int64, copy=False)

    def live_slots(self) -> np.ndarray:
        return np.flatnonzero(self.alive[: self.n])

    # -- strength -------------------------------------------------------------------------------------------
    def effective_rate(self, slots: np.ndarray, cfg: DecayConfig) -> np.ndarray:
        prio = np.array([cfg.priority_mods[p] for p in PRIORITIES])[self.priority[slots]]
        flags = self.flags[slots]
        enc = np.where(flags & F_MANUAL, cfg.manual_mod, 1.0)
        assoc = np.where(flags & F_ASSOC, cfg.association_mod, 1.0)
        return self.base_rate[slots] * prio * enc * assoc

    def elapsed(self, slots: np.ndarray, cfg: DecayConfig, turn: int, at: float) -> np.ndarray:
        dt = np.zeros(slots.size, dtype=np.float64)
        if cfg.clock in ("turns", "both"):
            dt += cfg.turn_weight * np.maximum(0, turn - self.last_turn[slots])
        if cfg.clock in ("time", "both"):
            dt += cfg.time_weight * np.maximum(0.0, at - self.last_time[slots]) / cfg.time_unit_s
        return dt

    def strength(self, slots: np.ndarray, cfg: DecayConfig, turn: int, at: float) -> np.ndarray:
        """Strengths in [0, 1] of the given slots (slot -1: unknown entry, strength 1)."""
        slots = np.asarray(slots, dtype=np.int64)
        out = np.ones(slots.size, dtype=np.float64)
        known = slots >= 0
        s = slots[known]
        if s.size == 0:
            return out
        rate = self.effective_rate(s, cfg)
        dt = self.elapsed(s, cfg, turn, at)
        val = self.s0[s] * np.power(1.0 + rate * dt, -cfg.exponent)
        val = np.minimum(1.0, np.maximum(np.maximum(self.floor[s], cfg.floor), val))
        expired = ((self.expires_turn[s] >= 0) & (turn >= self.expires_turn[s])) | (
            ~np.isnan(self.expires_time[s]) & (at >= np.nan_to_num(self.expires_time[s], nan=np.inf)))
        val[expired] = 0.0
        out[known] = val
        return out

    def expired(self, slots: np.ndarray, turn: int, at: float) -> np.ndarray:
        et = self.expires_time[slots]
        return ((self.expires_turn[slots] >= 0) & (turn >= self.expires_turn[slots])) | (
            ~np.isnan(et) & (at >= np.nan_to_num(et, nan=np.inf)))

    def reinforce(self, slots: np.ndarray, turn: int, at: float) -> None:
        """Access: strength back to 1 and the decay clock restarted (seed 004 §8.2, "Retrieved this turn")."""
        slots = np.asarray(slots, dtype=np.int64)
        slots = np.unique(slots[slots >= 0])  # an entry named twice in one access is used once
        if slots.size == 0:
            return
        self.s0[slots] = 1.0
        self.last_turn[slots] = np.maximum(self.last_turn[slots], turn)
        self.last_time[slots] = np.maximum(self.last_time[slots], at)
        np.add.at(self.accesses, slots, 1)
        np.add.at(self.own, slots, 1)
        self.touched[slots] = True

    def set_flag(self, slots: np.ndarray, flag: int, on: bool = True) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        slots = slots[slots >= 0]
        if on:
            self.flags[slots] |= flag
        else:
            self.flags[slots] &= ~np.uint8(flag)
        self.touched[slots] = True

    # -- persistence ----------------------------------------------------------------------------------------
    def arrays(self) -> dict[str, np.ndarray]:
        live = self.live_slots()
        return {name: getattr(self, name)[live].copy() for name in self._FIELDS if name != "alive"}

    def access_arrays(self, identity: bool = True) -> dict[str, np.ndarray]:
        """Keys and access columns (and with ``identity`` the identity columns) of the records touched since
        :meth:`arrays` was last saved."""
        slots = np.flatnonzero(self.touched[: self.n] & self.alive[: self.n])
        columns = (*self.ACCESS_FIELDS, *self.IDENTITY_FIELDS) if identity else self.ACCESS_FIELDS
        return {"key": self.key[slots].copy(), **{c: getattr(self, c)[slots].copy() for c in columns}}

    def _matching(self, arrays: dict[str, np.ndarray], columns: tuple[str, ...], identity: bool = True
                  ) -> tuple[np.ndarray, np.ndarray]:
        """``(slots, rows)``: the live slots of the saved records in ``arrays`` that are records of this table (same
        key and, with ``identity`` and where they were saved, same identity columns), and their rows in ``arrays``."""
        keys = np.asarray(arrays["key"], dtype=np.int64)
        if any(np.asarray(arrays[c]).shape != keys.shape for c in columns):
            raise ValueError("access columns disagree")
        slots = self.slots(keys)
        ok = slots >= 0
        for c in self.IDENTITY_FIELDS if identity else ():  # absent from deltas saved before they were
            if c in arrays:
                col = np.asarray(arrays[c])
                if col.shape != keys.shape:
                    raise ValueError("access columns disagree")
                ok[ok] = getattr(self, c)[slots[ok]] == col[ok]
        return slots[ok], np.flatnonzero(ok)

    def apply_access(self, arrays: dict[str, np.ndarray]) -> None:
        """Apply :meth:`access_arrays` saved over the snapshot this table was loaded from."""
        slots, rows = self._matching(arrays, self.ACCESS_FIELDS)
        for c in self.ACCESS_FIELDS:
            getattr(self, c)[slots] = np.asarray(arrays[c])[rows]
        self.touched[slots] = True

    def merge(self, arrays: dict[str, np.ndarray], identity: bool = True) -> np.ndarray:
        """Fold in the records another handle saved since this table last matched the store (the columns of
        :meth:`arrays` or :meth:`access_arrays`), so that a save keeps every handle's accesses: the later last access
        on either clock, the flags an access or a promotion set on either side, the promoted (lower) base rate, and
        the saved count plus this table's own accesses since it last matched (:attr:`own`: never counted twice,
        however often either handle saves). Records the saved ones do not hold (deleted here, or another unit of the
        same id) are left as they are; ``identity``: a saved record of the same key is another record when its
        identity columns differ (False for messages, whose ids are never reused). Returns the slots merged."""
        slots, rows = self._matching(arrays, self.ACCESS_FIELDS, identity)
        col = {c: np.asarray(arrays[c])[rows] for c in self.ACCESS_FIELDS}
        self.accesses[slots] = col["accesses"].astype(np.int64) + self.own[slots]
        self._later_uses(slots, col)
        self._merged_flags(slots, col)
        return slots

    def _later_uses(self, slots: np.ndarray, col: dict[str, np.ndarray]) -> None:
        """The later last access of ``slots`` and of the records ``col`` holds for them, on either clock, and the
        higher ``s0`` (an access sets 1, the most there is)."""
        self.last_turn[slots] = np.maximum(self.last_turn[slots], col["last_turn"])
        self.last_time[slots] = np.maximum(self.last_time[slots], col["last_time"])
        self.s0[slots] = np.maximum(self.s0[slots], col["s0"])

    def _merged_flags(self, slots: np.ndarray, col: dict[str, np.ndarray]) -> None:
        """The flags an access or a promotion set in ``col``'s records, and the promoted (lower) base rate: deep
        consolidation lowers a persist-worthy record's rate."""
        theirs = col["flags"].astype(np.uint8) & np.uint8(self.MERGED_FLAGS)
        self.flags[slots] |= theirs
        promoted = (theirs & np.uint8(F_PERSIST)) != 0
        self.base_rate[slots[promoted]] = np.minimum(self.base_rate[slots[promoted]], col["base_rate"][promoted])

    def take_own(self, other: "DecayTable", identity: bool = True) -> np.ndarray:
        """Fold in what ``other`` (this table's records as an older state of this process held them) changed since
        it last matched the store: its records touched since then, merged as :meth:`merge` merges a saved table
        (``other``'s own accesses added to the count, the later last access on either clock, ``s0``, the flags an
        access or a promotion set, the promoted base rate); the accesses stay this table's own and are saved by its
        next save. Records this table does not hold are left out. Returns the slots merged."""
        rows = np.flatnonzero(other.touched[: other.n] & other.alive[: other.n])
        if not rows.size:
            return np.zeros(0, dtype=np.int64)
        columns = {"key": other.key[rows], **{c: getattr(other, c)[rows]
                                              for c in (*self.ACCESS_FIELDS, *self.IDENTITY_FIELDS)}}
        slots, got = self._matching(columns, self.ACCESS_FIELDS, identity)
        col = {c: columns[c][got] for c in self.ACCESS_FIELDS}
        own = other.own[rows][got]
        self.accesses[slots] += own
        self.own[slots] += own
        self._later_uses(slots, col)
        self._merged_flags(slots, col)
        self.touched[slots] = True
        return slots

    def carry(self, arrays: dict[str, np.ndarray], persist_accesses: int, memory_rate: float) -> np.ndarray:
        """Take over the uses that records saved under other settings (the columns of :meth:`arrays` or
        :meth:`access_arrays`, keys only compared) hold for the same keys: the later last access on either clock, the
        saved access count plus this table's own accesses, the association flag; and the long-term promotion the
        uses earned (flagged by deep consolidation and used ``persist_accesses`` times: the ``memory_rate``). What
        the settings decide (rates, priorities, a policy's ``persist``) stays as this table has it. Returns the
        slots carried."""
        slots, rows = self._matching(arrays, self.ACCESS_FIELDS, identity=False)
        col = {c: np.asarray(arrays[c])[rows] for c in self.ACCESS_FIELDS}
        self.accesses[slots] = col["accesses"].astype(np.int64) + self.own[slots]
        self._later_uses(slots, col)
        theirs = col["flags"].astype(np.uint8)
        self.flags[slots] |= theirs & np.uint8(F_ASSOC)
        promoted = slots[((theirs & np.uint8(F_PERSIST)) != 0) & (self.accesses[slots] >= persist_accesses)]
        self.flags[promoted] |= np.uint8(F_PERSIST)
        self.base_rate[promoted] = np.minimum(self.base_rate[promoted], memory_rate)
        return slots

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "DecayTable":
        n = int(arrays["key"].size)
        t = cls(max(64, n))
        for name, dt in cls._FIELDS.items():
            if name == "alive":
                continue
            col = np.asarray(arrays[name], dtype=dt)
            if col.size != n:
                raise ValueError(f"decay column {name} has {col.size} entries, expected {n}")
            getattr(t, name)[:n] = col
        t.alive[:n] = True
        t.n = t.live = n
        keys = t.key[:n]
        t._ordered = bool(n < 2 or (keys[1:] > keys[:-1]).all())
        if not t._ordered:
            try:
                t._slot_of = IntMap(keys, np.arange(n, dtype=np.int64))
            except ValueError:
                raise ValueError("decay keys repeat") from None
        return t


def reference_strength(cfg: DecayConfig, last_add_time: float, at: float) -> float:
    """Strength, now, of a normal message written at the namespace's latest add: the yardstick of dormancy."""
    if cfg.clock == "turns":
        return 1.0
    dt = cfg.time_weight * max(0.0, at - last_add_time) / cfg.time_unit_s
    return float(min(1.0, (1.0 + cfg.rates["message"] * dt) ** -cfg.exponent))


def closed_form(rate: float, dt: float, *, s0: float = 1.0, exponent: float = 0.5, floor: float = 0.0) -> float:
    """The §14.2 curve for one entry (reference for tests and docs)."""
    return max(floor, min(1.0, s0 * (1.0 + rate * dt) ** -exponent))
