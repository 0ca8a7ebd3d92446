"""Every public method of ``Memory``, given any value for one of its arguments, answers or raises a ``HippoError``;
an ``InvalidInput`` names the argument it refuses, and a call that raised stored nothing (the namespace's export
reads the same before and after). docs/api.md, "Errors", states these rules; the values are the ones that slip
past checks: wrong types, NaN and infinities, bools for ints, huge ints, empty and long strings, lone surrogates,
NUL characters, naive and aware datetimes at and past the ends of the calendar, numpy scalars and arrays."""

from __future__ import annotations

import os
from datetime import date, datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hippo
from hippo import HippoError, InvalidInput, Memory

_DATETIMES = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30))
_ZONES = st.sampled_from([None, timezone.utc, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))])
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(["", " ", "\ud800", "a\udfffb", "a\x00b", "x" * 100_001, "9999-12-31T23:00-05:00", "0001-01-01",
                     "1969-07-20T20:17:00", "ctx_1", "current", "light", "user", "high"]),
    st.binary(max_size=8), st.builds(datetime.combine, _DATETIMES.map(datetime.date), st.just(datetime.min.time()),
                                     _ZONES),
    _DATETIMES, st.dates().map(lambda d: date(d.year, d.month, d.day)), st.just(timedelta(days=1)),
    st.integers(-(2**63), 2**63 - 1).map(np.int64), st.floats().map(np.float64), st.just(np.array(5)),
    st.just(np.array([1, 2])), st.just(object()), st.just(1 + 2j),
)
VALUES = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3), st.dictionaries(st.text(max_size=5), _SCALARS, max_size=3),
                   st.dictionaries(st.sampled_from(["$and", "$or", "speaker", "$gt", "timestamp"]), _SCALARS,
                                   max_size=2))

_ENTRY = "ctx_3"  # the index entry the store below holds (its header is message 3)

#: (method, positional arguments, keyword arguments): calls that answer with these values; the sweep puts a drawn
#: value in place of one of them at a time
CALLS = {
    "add": (("A note.",), dict(speaker="Ann", role="user", timestamp="2024-01-01", session_id="s", metadata={},
                               priority=None, event_time=None)),
    "add_many": (([{"text": "A note."}],), {"if_version": None, "replacing": None}),
    "search": (("Porto",), dict(k=3, filter=None, since=None, until=None, as_of=None, query_embedding=None,
                                asked_at=None)),
    "recall": (("Porto",), dict(budget_tokens=100, filter=None, include_dormant=False, since=None, until=None,
                                as_of=None, query_embedding=None, exclude=None, asked_at=None)),
    "search_many": ((["default"], "Porto"), dict(k=3, filter=None, since=None, until=None, as_of=None, priors=True,
                                                 query_embedding=None, asked_at=None)),
    "timeline": (("Ann",), dict(limit=5, since=None, until=None, as_of=None)),
    "contradictions": ((), dict(include_updates=False)),
    "get": ((1,), {}),
    "list": ((), dict(filter=None, limit=None, offset=0)),
    "read": ((1,), dict(before=1, after=1)),
    "episode": ((1,), {}),
    "update": ((2,), dict(metadata={"k": 1})),
    "delete": ((10**9,), {"choose": None, "filter": None}),
    "forget": (({"speaker": "Nobody"},), {}),
    "strength": (([1],), {}),
    "reinforce": (([1],), {}),
    "topic": (("current",), {}),
    "consolidate": (("light",), {}),
    "profile": (("Ann",), {}),
    "using": (("other",), {}),
    "delete_namespace": (("nothing-here",), {}),
    "delete_namespaces": ((["nothing-here", "nor-here"],), {}),
    "write_many": (({"other": {"items": [{"text": "A note."}], "replacing": None, "if_version": None}},), {}),
    "index_entry": (("Output of the tool.",), dict(type="tool_result", source=None, role=None, turn=None,
                                                   priority=None, persist=None, encoding="auto", associations=(),
                                                   expires_after_turns=None, session_id=None, metadata=None,
                                                   summary=None, policies=None)),
    "entries": ((), dict(turn=None, include_dormant=True, ids=None)),
    "entry": ((_ENTRY,), dict(turn=None)),
    "entry_blocks": (([_ENTRY],), dict(turn=None)),
    "complete": ((_ENTRY, None), dict(max_tokens=None, context_lines=2, turn=None)),
    "complete_on_cue": (("ORD-42",), dict(entry_ids=None, max_tokens=200, max_entries=4, context_lines=3, turn=None)),
    "blocks_on_cue": (("ORD-42", {_ENTRY: "block"}), dict(max_tokens=200, context_lines=3, turn=None)),
    "wants_index": (("Output of the tool.",), dict(type="tool_result", role=None, source=None, n_tokens=None,
                                                   policies=None)),
    "consolidate_entries": (("light",), dict(into=None, turn=None)),
    "with_embedding": ((None,), {}),
}
#: the parameter names of the positional arguments above
_POSITIONAL = {"add": ["text"], "add_many": ["items"], "search": ["query"], "recall": ["query"],
               "search_many": ["namespaces", "query"], "timeline": ["query_or_entity"], "get": ["id"],
               "read": ["message_id"], "episode": ["message_id"], "update": ["id"], "delete": ["ids"],
               "forget": ["filter"], "strength": ["ids"], "reinforce": ["ids"], "topic": ["topic_id"],
               "consolidate": ["level"], "profile": ["speaker"], "using": ["namespace"],
               "delete_namespace": ["namespace"], "delete_namespaces": ["namespaces"], "write_many": ["writes"],
               "index_entry": ["content"], "entry": ["entry_id"],
               "entry_blocks": ["ids"], "complete": ["entry_id", "query"], "complete_on_cue": ["text"],
               "blocks_on_cue": ["text", "blocks"], "wants_index": ["content"], "consolidate_entries": ["level"],
               "with_embedding": ["embed"]}
ARGUMENTS = [(method, name) for method, (args, kwargs) in CALLS.items()
             for name in [*_POSITIONAL.get(method, []), *kwargs]]


def _store(tmp_path_factory) -> tuple[Memory, object]:
    mem = Memory(None)
    mem.add("I moved to Porto in April.", speaker="Ann", timestamp="2024-05-01", session_id="s1")
    mem.add("My cat is called Biscuit.", speaker="Ann", timestamp="2024-05-02", session_id="s1")
    assert mem.index_entry("order ORD-42 shipped " * 40, source="tool.orders").id == _ENTRY
    return mem, tmp_path_factory.mktemp("exports")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    mem, folder = _store(tmp_path_factory)
    yield mem, folder
    mem.close()


def _exported(mem: Memory, folder) -> list[str]:
    """Every namespace's export, line by line (ids, texts, times, metadata: what the store holds)."""
    out = []
    for ns in sorted(mem.namespaces()):
        path = folder / "fingerprint.jsonl"
        mem.using(ns).export(path)
        out += path.read_text(encoding="utf-8").splitlines()
    return out


def test_the_sweep_covers_every_public_method_of_memory():
    import inspect

    public = {n for n, v in vars(Memory).items() if callable(v) and not n.startswith("_") and not
              (n.startswith("a") and n[1:] in vars(Memory))}  # the async twins call the same code in a thread
    # not swept: calls of files and of an LLM (paths and clients have tests of their own), and ones without arguments
    elsewhere = {"export", "import_", "backup", "agentic_recall", "check", "close", "clear", "count", "flush",
                 "namespaces", "next_turn", "speakers", "stats", "topics", "vacuum", "version"}
    assert public - elsewhere == set(CALLS)
    for method, (args, kwargs) in CALLS.items():
        names = [n for n in inspect.signature(getattr(Memory, method)).parameters if n != "self"]
        assert [*_POSITIONAL.get(method, []), *kwargs] == [n for n in names if n != "refetch"], method


@pytest.mark.parametrize("method, name", ARGUMENTS)
@settings(max_examples=int(os.environ.get("SWEEP_EXAMPLES", "12")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(value=VALUES)
def test_any_value_is_answered_or_refused_naming_the_argument(store, method, name, value):
    mem, folder = store
    args, kwargs = CALLS[method]
    args, kwargs = list(args), dict(kwargs)
    if name in kwargs:
        kwargs[name] = value
    else:
        args[_POSITIONAL[method].index(name)] = value
    before = _exported(mem, folder)
    try:
        getattr(mem, method)(*args, **kwargs)
    except HippoError as exc:
        if isinstance(exc, InvalidInput):
            assert name in str(exc), f"{method}({name}={value!r:.60}): {exc}"
        assert _exported(mem, folder) == before, f"{method}({name}={value!r:.60}) raised {exc!r} and stored"


@pytest.mark.parametrize("method, name, value", [
    ("add", "role", np.array([1, 2])), ("add", "priority", np.array([1, 2])), ("add", "role", False),
    ("search_many", "namespaces", np.array(5)), ("topic", "topic_id", np.array([1, 2])),
    ("consolidate", "level", np.array([1, 2])), ("index_entry", "encoding", np.array([1, 2])),
    ("index_entry", "associations", np.array(5)), ("index_entry", "policies", np.array(5)),
    ("index_entry", "source", {"x": "\ud800"}), ("entries", "ids", np.array(5)), ("entry_blocks", "ids", np.array(5)),
    ("complete_on_cue", "entry_ids", np.array(5)), ("complete_on_cue", "entry_ids", [None]),
    ("blocks_on_cue", "blocks", {"x": "block"}), ("wants_index", "type", np.array([1, 2])),
    ("consolidate_entries", "level", np.array([1, 2])), ("add_many", "items", np.array(5)),
])
def test_values_that_escaped_as_other_exceptions_are_refused_naming_the_argument(store, method, name, value):
    """Each of these raised ValueError ("the truth value of an array ... is ambiguous"), TypeError ("iteration over
    a 0-d array"), named another argument than the one given, or (role=False) stored a user message."""
    mem, folder = store
    args, kwargs = CALLS[method]
    args, kwargs = list(args), dict(kwargs)
    if name in kwargs:
        kwargs[name] = value
    else:
        args[_POSITIONAL[method].index(name)] = value
    before = _exported(mem, folder)
    with pytest.raises(InvalidInput, match=name):
        getattr(mem, method)(*args, **kwargs)
    assert _exported(mem, folder) == before


@pytest.mark.parametrize("kw, name", [({"index_turns": "no"}, "index_turns"), ({"policies": np.array(5)}, "policies"),
                                      ({"index_roles": np.array(5)}, "index_roles"),
                                      ({"index_roles": [np.array(["user", "tool"])]}, "index_roles")])
def test_the_compactor_refuses_what_is_no_switch_or_list(kw, name):
    """``index_turns="no"`` was read as True; a 0-d array as a list raised TypeError, an array as a role
    ValueError."""
    from hippo import ContextCompactor

    with Memory(None) as mem, pytest.raises(InvalidInput, match=f"^{name} "):
        ContextCompactor(mem, **kw)


@pytest.mark.parametrize("call, name", [
    (lambda c, msgs: c.compact(np.array(5), "t1"), "messages"),
    (lambda c, msgs: c.compact(msgs, "t1", index_recent=np.array([1, 2])), "index_recent"),
    (lambda c, msgs: c.compact(msgs, "t1", index_recent="no"), "index_recent"),
    (lambda c, msgs: hippo.ContextMessage("k9", np.array(["user", "tool"]), "text"), "role"),
])
def test_compaction_calls_refuse_arrays_and_strings_by_name(call, name):
    from hippo import ContextCompactor, ContextMessage

    with Memory(None) as mem:
        compactor = ContextCompactor(mem)
        msgs = [ContextMessage("k1", "user", "Show the orders."),
                ContextMessage("k2", "tool", "order ORD-1 shipped\n" * 400, tool="orders", call_id="c1"),
                ContextMessage("k3", "user", "Thanks.")]
        with pytest.raises(InvalidInput, match=name):
            call(compactor, msgs)
        assert mem.namespaces() == []  # nothing indexed
