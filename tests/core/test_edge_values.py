"""Values at the edges of what the library reads: dates at the end of the calendar, metadata the engine reads,
words and questions far longer than any conversation holds, symbolic links, time zones without an offset, names
made of control characters and searches for more hits than the candidate pool. Each one once left a namespace that
no search could read, or escaped as an exception that is not a ``HippoError``."""

from __future__ import annotations

import math
import os
import stat
from datetime import datetime, timedelta, timezone, tzinfo

import pytest

from hippo import InvalidInput, Memory, StoreError
from hippo.index.coindex import event_time
from hippo.text import lexicon, timeexpr, tokenizer

MAY_2023 = datetime(2023, 5, 1, tzinfo=timezone.utc).timestamp()


def _day(y: int, m: int, d: int) -> float:
    return datetime(y, m, d, tzinfo=timezone.utc).timestamp()


# -- the end of the calendar ------------------------------------------------------------------------------------

def test_a_date_at_the_end_of_the_calendar_names_no_time():
    refs = timeexpr.find("Renewed on 2031-05-01; the licence is valid until 9999-12-31.", MAY_2023)
    assert [(r.start, r.end) for r in refs] == [(_day(2031, 5, 1), _day(2031, 5, 2))]
    for question in ("what happened on Dec 31, 9999?", "expires December 9999", "due 0001-01-01"):
        assert timeexpr.analyze_query(question, MAY_2023).window is None, question
    # a relative time anchored on such a date is read from the memory's last message, as if the date were not there
    for relative, anchor in (("tomorrow", "9999-12-30"), ("yesterday", "0001-01-01"), ("last year", "0001-06-01")):
        assert timeexpr.analyze_query(f"what happened {relative} before {anchor}?", MAY_2023).window == \
            timeexpr.analyze_query(f"what happened {relative}?", MAY_2023).window
    # inside the years read, the same phrases resolve as before
    assert timeexpr.analyze_query("what happened on Dec 31, 9997?", MAY_2023).window == \
        (_day(9997, 12, 31), _day(9998, 1, 1))


@pytest.mark.parametrize("now", [1e12, -1e12, _day(9999, 12, 31) + 86399, 1e300, math.inf, -math.inf])
def test_a_day_said_outside_the_calendar_reads_only_the_dates_written(now):
    # the text is read as without its day (None): the relative times name nothing, the written date is itself
    for text in ("I went there yesterday, on 5 March 2023.", "We've lived here since 2019.", "Christmas, in Q3"):
        assert [(r.start, r.end, r.phrase) for r in timeexpr.find(text, now)] == \
            [(r.start, r.end, r.phrase) for r in timeexpr.find(text, None)], text
    for question in ("what did I do yesterday?", "what happened before May?", "what happened on 5 March 2023?"):
        assert timeexpr.analyze_query(question, now) == timeexpr.analyze_query(question, None), question


def test_the_time_functions_name_the_argument_that_is_no_time():
    for call, name in ((lambda: timeexpr.find("yesterday", "2023-05-01"), "now"),
                       (lambda: timeexpr.find(b"yesterday", MAY_2023), "text"),
                       (lambda: timeexpr.find("yesterday", MAY_2023, 10 ** 6), "offset"),
                       (lambda: timeexpr.analyze_query("what did I do yesterday?", [MAY_2023]), "now"),
                       (lambda: timeexpr.each_year((-math.inf, MAY_2023), 0.0, MAY_2023), "window"),
                       (lambda: timeexpr.each_year((MAY_2023, 1e13), 0.0, MAY_2023), "window"),
                       (lambda: timeexpr.each_year((MAY_2023, MAY_2023 + 86400), 0.0, 1e13), "last"),
                       (lambda: timeexpr.each_year((MAY_2023, MAY_2023 + 86400), -math.inf, MAY_2023), "first")):
        with pytest.raises(InvalidInput, match=name):
            call()


def test_a_message_naming_9999_leaves_the_namespace_readable_after_reopening(tmp_path):
    path = str(tmp_path / "m.db")
    with Memory(path) as mem:
        mem.add("My passport is valid until 2031-05-01.", speaker="Ann", timestamp="2023-05-01")
        sentinel = mem.add("The software licence is valid until 9999-12-31.", speaker="Ann", timestamp="2023-05-02")
    with Memory(path) as mem:
        assert [h.id for h in mem.search("software licence", k=1)] == [sentinel.id]
        assert any(m.id == sentinel.id for m in mem.recall("software licence", budget_tokens=200).messages)
        assert {e["id"] for e in mem.timeline("Ann")} >= {sentinel.id}
        mem.contradictions()
        assert sentinel.id in {h.id for h in mem.search("what is valid until December 31, 9999?", k=2)}


# -- metadata the engine reads ----------------------------------------------------------------------------------

def test_event_time_in_metadata_must_be_epoch_seconds_in_range(tmp_path):
    path = str(tmp_path / "m.db")
    with Memory(path) as mem:
        first = mem.add("Notes from the Denver trip", speaker="Ann", timestamp="2023-05-02")
        with pytest.raises(InvalidInput, match=r"metadata\['event_time'\]"):
            mem.add("Trip diary", timestamp="2023-05-03", metadata={"event_time": 1_700_000_000_000})  # ms
        with pytest.raises(InvalidInput, match=r"metadata\['event_time'\]"):
            mem.update(first.id, metadata={"event_time": -1e15})
        assert mem.count() == 1 and mem.get(first.id).metadata == {}
        kept = mem.add("Trip diary", timestamp="2023-05-03", metadata={"event_time": 1_680_000_000.0})
        given = mem.add("Trip diary", timestamp="2023-05-03", event_time=1_680_000_000.0)  # the documented way
        own = mem.add("Ticket", timestamp="2023-05-04", metadata={"event_time": "the spring"})  # the caller's own
    with Memory(path) as mem:
        hits = {h.id: h for h in mem.search("Trip diary Ticket Denver", k=5)}
        assert hits[kept.id].event_time == hits[given.id].event_time is not None
        assert hits[kept.id].event_time.date() == datetime.fromtimestamp(1_680_000_000, tz=timezone.utc).date()
        assert mem.get(own.id).metadata == {"event_time": "the spring"}


def test_event_time_read_from_a_stored_value_outside_the_calendar_is_none():
    assert event_time({"event_time": 1_680_000_000}) == 1_680_000_000.0
    for bad in (1_700_000_000_000, -1e15, True, "1680000000", math.inf, None):
        assert math.isnan(event_time({"event_time": bad})), bad
    assert math.isnan(event_time(None))


def test_a_priority_in_metadata_that_is_no_priority_is_the_callers_own(tmp_path):
    path = str(tmp_path / "m.db")
    with Memory(path, config={"decay": {"enabled": True}}) as mem:
        odd = mem.add("Notes from the Denver trip", speaker="Ann", metadata={"priority": ["high"]})
        mem.add("Flights to Denver are booked", speaker="Ann", priority="high")
    with Memory(path, config={"decay": {"enabled": True}}) as mem:
        assert odd.id in {m.id for m in mem.recall("Denver trip", budget_tokens=300).messages}
        mem.consolidate("deep")
        assert mem.get(odd.id).metadata == {"priority": ["high"]}


# -- words and questions longer than any conversation holds -----------------------------------------------------

def test_no_word_longer_than_the_longest_one_token_word_has_a_correction():
    ranks = tokenizer.byte_ranks()
    if ranks is None:
        pytest.skip("tiktoken's byte table is not available")
    longest = max(len(b) - 1 for b in ranks if b[:1] == b" " and b[1:].isalpha() and b[1:].isascii())
    assert longest + 1 == lexicon.SPELL_MAX_LETTERS  # a correction is one letter longer at most
    assert lexicon.corrections("fesetival") == ("festival",)
    assert not lexicon.is_spellable("a" * (lexicon.SPELL_MAX_LETTERS + 1))
    assert lexicon.corrections("ACGT" * 25_000) == ()


def test_a_question_of_one_long_word_is_answered():
    mem = Memory(None)
    mem.add("The sample sequence was stored yesterday.", speaker="Ann")
    assert mem.search("ACGT" * 5_000, k=5) == []
    assert mem.recall("sequence " + "ACGT" * 5_000, budget_tokens=100).messages


def test_a_question_of_thousands_of_dates_names_the_period_they_span():
    days = [datetime(2020, 1, 1, tzinfo=timezone.utc) + timedelta(days=3 * i) for i in range(3_000)]
    question = " ".join(d.strftime("%Y-%m-%d") for d in days)
    assert timeexpr.analyze_query(question, MAY_2023).window == \
        (days[0].timestamp(), (days[-1] + timedelta(days=1)).timestamp())
    mem = Memory(None)
    inside = mem.add("hello", timestamp=MAY_2023)
    mem.add("hello before", timestamp=_day(2019, 5, 1))
    assert [h.id for h in mem.search(question, k=5)] == [inside.id]  # what was said in the period, nothing else


# -- where a store is, and when its messages were said ----------------------------------------------------------

def test_a_store_path_that_is_a_link_to_a_file_not_made_yet(tmp_path):
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "agent.db"
    link = tmp_path / "agent.db"
    link.symlink_to(target)
    with Memory(str(link)) as mem:
        mem.add("hello through the link", speaker="Ann")
    assert target.exists() and stat.S_IMODE(os.stat(target).st_mode) == 0o600
    with Memory(str(target)) as mem:
        assert [m.text for m in mem.list()] == ["hello through the link"]
    loop = tmp_path / "loop.db"
    loop.symlink_to(loop)
    with pytest.raises(StoreError):
        Memory(str(loop))


class _NoOffset(tzinfo):
    def utcoffset(self, dt):
        return None

    def dst(self, dt):
        return None

    def tzname(self, dt):
        return None


def test_a_time_zone_without_an_offset_is_read_as_utc():
    mem = Memory(None)
    a = mem.add("hello", timestamp=datetime(2023, 5, 1, 10, 0, tzinfo=_NoOffset()))
    b = mem.add("hello again", timestamp=datetime(2023, 5, 1, 10, 0))
    assert a.timestamp == b.timestamp == datetime(2023, 5, 1, 10, 0, tzinfo=timezone.utc)
    assert [h.id for h in mem.search("hello", k=5, since=datetime(2023, 5, 1, tzinfo=_NoOffset()))]


def test_the_year_range_holds_in_utc_and_a_refused_add_stores_nothing(tmp_path):
    path = str(tmp_path / "m.db")
    cfg = {"timestamp_min_year": 1, "timestamp_max_year": 9999}
    with Memory(path, config=cfg) as mem:
        mem.add("an earlier, healthy message", timestamp="2023-01-01")
        with pytest.raises(InvalidInput, match="timestamp .* out of range"):
            mem.add("end of time", timestamp="9999-12-31T23:00:00-05:00")  # 10000-01-01T04:00 in UTC
        with pytest.raises(InvalidInput, match="timestamp .* out of range"):
            mem.add("start of time", timestamp="0001-01-01T01:00:00+05:00")  # year 0 in UTC
        last = mem.add("the last hour of the calendar", timestamp="9999-12-31T18:00:00-05:00")
    with Memory(path, config=cfg) as mem:
        assert [m.text for m in mem.list()] == ["an earlier, healthy message", "the last hour of the calendar"]
        assert mem.get(last.id).timestamp == datetime(9999, 12, 31, 23, 0, tzinfo=timezone.utc)
        assert mem.search("calendar", k=1)[0].id == last.id


def test_the_last_second_of_the_calendar_is_stored_and_its_last_microsecond_refused(tmp_path):
    path = str(tmp_path / "m.db")
    cfg = {"timestamp_min_year": 1, "timestamp_max_year": 9999}
    with Memory(path, config=cfg) as mem:
        mem.add("an earlier, healthy message", timestamp="2023-01-01")
        # a float epoch steps by 2**-15 s in the year 9999: 23:59:59.999999 rounds to 10000-01-01T00:00
        with pytest.raises(InvalidInput, match="timestamp .* out of range"):
            mem.add("past the end", timestamp="9999-12-31T23:59:59.999999")
        with pytest.raises(InvalidInput, match="timestamp .* out of range"):
            mem.add("past the end", timestamp=datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc))
        half = mem.add("half a second before the end", timestamp="9999-12-31T23:59:59.5")
        assert mem.count() == 2
        assert mem.search("half second", k=1)[0].id == half.id
    with Memory(path, config=cfg) as mem:
        assert [m.text for m in mem.list()] == ["an earlier, healthy message", "half a second before the end"]
        assert mem.get(half.id).timestamp == datetime(9999, 12, 31, 23, 59, 59, 500000, tzinfo=timezone.utc)
        assert mem.check()["ok"]


@pytest.mark.parametrize("years", [(0, 2200), (2300, 2200), (1900, 10_000)])
def test_a_year_range_outside_the_calendar_is_refused(years):
    with pytest.raises(InvalidInput, match="timestamp_min_year and timestamp_max_year"):
        Memory(None, config={"timestamp_min_year": years[0], "timestamp_max_year": years[1]})


# -- names ------------------------------------------------------------------------------------------------------

def test_a_speaker_or_session_of_control_characters_is_refused():
    mem = Memory(None)
    for bad in ("\x1c", "\x1f\x1e", "Ann\x1c"):
        for field in ("speaker", "session_id"):
            with pytest.raises(InvalidInput, match=field):
                mem.add("hello", **{field: bad})
    assert mem.count() == 0
    mem.add("hello", speaker="\xa0")  # a no-break space is a character a name may hold
    assert mem.speakers() == ["\xa0"]


# -- more hits than the candidate pool --------------------------------------------------------------------------

def test_a_search_for_more_hits_than_the_candidate_pool_gets_them(tmp_path):
    path = str(tmp_path / "m.db")
    a = Memory(path, namespace="a")
    a.add_many([{"text": f"Denver trip note {i}"} for i in range(500)])
    b = Memory(path, namespace="b")
    b.add_many([{"text": f"Denver visit note {i}"} for i in range(150)])
    assert a.config.retrieval.candidate_limit < 500
    assert len(a.search("Denver", k=1_000)) == 500
    assert len(a.search_many(["a", "b"], "Denver", k=1_000)) == 650
    assert [h.id for h in a.search("Denver", k=10)] == [h.id for h in a.search("Denver", k=1_000)[:10]]


# -- null values in filters, and where an export goes -------------------------------------------------------------

def test_a_null_value_is_a_value_for_in_and_nin():
    mem = Memory(None)
    none = mem.add("no speaker here")
    bo = mem.add("from Bo", speaker="Bo")
    ann = mem.add("from Ann", speaker="Ann")
    tagged = mem.add("tagged null", metadata={"tag": None})

    def ids(flt):
        return [m.id for m in mem.list(filter=flt)]

    assert ids({"speaker": {"$nin": ["Bo"]}}) == ids({"speaker": {"$ne": "Bo"}}) == [none.id, ann.id, tagged.id]
    assert ids({"speaker": {"$in": [None]}}) == ids({"speaker": {"$eq": None}}) == [none.id, tagged.id]
    assert ids({"speaker": {"$in": [None, "Bo"]}}) == [none.id, bo.id, tagged.id]
    assert ids({"tag": {"$in": [None]}}) == [tagged.id]               # a field a message lacks is in no list
    assert ids({"tag": {"$nin": ["x"]}}) == [none.id, bo.id, ann.id, tagged.id]
    assert mem.forget({"speaker": {"$nin": ["Bo"]}}) == 3 and ids(None) == [bo.id]


def test_a_boolean_is_no_number_in_filters():
    # JSON tells true from 1; the reference is each message's metadata compared by JSON type and value
    mem = Memory(None)
    flag = mem.add("apple", metadata={"done": True})
    one = mem.add("banana", metadata={"done": 1})
    real = mem.add("cherry", metadata={"done": 1.0})
    off = mem.add("damson", metadata={"done": False})
    zero = mem.add("elder", metadata={"done": 0})

    def ids(flt):
        got = [m.id for m in mem.list(filter=flt)]
        assert {h.id for h in mem.search("apple banana cherry damson elder", k=10, filter=flt)} == set(got)
        return got

    assert ids({"done": 1}) == [one.id, real.id]
    assert ids({"done": True}) == [flag.id]
    assert ids({"done": {"$ne": True}}) == [one.id, real.id, off.id, zero.id]
    assert ids({"done": {"$in": [0, 1]}}) == [one.id, real.id, zero.id]
    assert ids({"done": {"$nin": [False]}}) == [flag.id, one.id, real.id, zero.id]
    assert ids({"done": {"$gt": 0}}) == [one.id, real.id]
    assert ids({"done": {"$gte": False}}) == [flag.id, off.id]
    assert mem.forget({"done": 0}) == 1 and off.id in [m.id for m in mem.list()]


def test_an_export_writes_a_file_of_its_own_and_only_over_a_regular_file(tmp_path):
    mem = Memory(None)
    mem.add("a private note", speaker="Ann")
    out = tmp_path / "notes.jsonl"
    (tmp_path / "notes.jsonl.tmp").write_text("someone else's file\n", encoding="utf-8")
    assert mem.export(out) == 1
    assert (tmp_path / "notes.jsonl.tmp").read_text(encoding="utf-8") == "someone else's file\n"
    target = tmp_path / "real.jsonl"
    target.write_text("", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert mem.export(link) == 1
    assert link.is_symlink() and "a private note" in target.read_text(encoding="utf-8")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for where in (fifo, tmp_path):
        with pytest.raises(InvalidInput, match="not a regular file"):
            mem.export(where)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "notes.jsonl", "notes.jsonl.tmp", "pipe",
                                                          "real.jsonl"]
    fresh = Memory(None)
    assert fresh.import_(out) == 1 and [m.text for m in fresh.list()] == ["a private note"]


def test_storable_text_is_what_check_text_accepts():
    import hippo

    raw = "a\x00b\tc\nd\r\x1b[1me\x7f \udc80f"
    clean = hippo.storable(raw)
    assert clean == "a b\tc\nd\r [1me   f" and len(clean) == len(raw)
    assert tokenizer.check_text(clean) == clean
    assert hippo.storable("abcdef", 2) == "ab" and hippo.storable("abcdef", -2) == "ef"
    for bad in (0, True, 1.5):
        with pytest.raises(InvalidInput, match="limit"):
            hippo.storable("abc", bad)
    with pytest.raises(InvalidInput, match="text"):
        hippo.storable(b"abc")
    assert hippo.count_tokens("hello world") == 2 and hippo.count_tokens("") == 0
    for bad in (b"abc", None, 5, ["abc"]):
        with pytest.raises(InvalidInput, match="text must be a str"):
            hippo.count_tokens(bad)
    assert hippo.MAX_QUERY_CHARS == 100_000
    with pytest.raises(InvalidInput, match="longer than 100000"):
        Memory(None).search("a " * 50_001)


# -- context compaction -------------------------------------------------------------------------------------------

def test_context_compactor_refuses_what_is_no_message_by_name(tmp_path):
    from hippo import ContextCompactor, ContextMessage

    mem = Memory(str(tmp_path / "ctx.db"))
    for bad, field in ((dict(text=None), "text"), (dict(text=b"x"), "text"), (dict(role="robot"), "role"),
                       (dict(key=""), "key"), (dict(tool=3), "tool"), (dict(error="yes"), "error")):
        with pytest.raises(InvalidInput, match=f"ContextMessage.{field}"):
            ContextMessage(**{"key": "k", "role": "tool", "text": "ok", **bad})
    with pytest.raises(InvalidInput, match="index_roles"):
        ContextCompactor(mem, index_roles=None)
    from_generator = ContextCompactor(mem, index_roles=(r for r in ["tool"]))
    assert from_generator.index_roles == frozenset({"tool"})
    cc = ContextCompactor(mem)
    with pytest.raises(InvalidInput, match="messages"):
        cc.compact(None, "context.a")
    big = ContextMessage("t", "tool", "\n".join(f"row {i}: value {i * 7}" for i in range(2_000)), tool="api")
    for turn in (-1, "3", 2.5):
        with pytest.raises(InvalidInput, match="turn"):
            cc.index("context.a", big, turn=turn)
    with pytest.raises(InvalidInput, match="ContextMessage"):
        cc.index("context.a", {"role": "tool", "text": "x"})
    assert cc.index("context.a", big, turn=3) is not None


def test_a_one_line_output_expands_to_its_head_within_the_budget(tmp_path):
    import json

    from hippo import ContextCompactor, ContextMessage
    from hippo.text.complete import head_within

    assert head_within("abc def ghi", 2) == ("abc def", False)  # no whole line fits: the longest head that does
    assert head_within("abc\ndef", 2) == ("abc", False) and head_within("abc", 5) == ("abc", True)
    mem = Memory(str(tmp_path / "ctx.db"))
    cc = ContextCompactor(mem, index_roles=["tool"])
    minified = json.dumps({"orders": [{"id": f"ORD-{i:05d}", "total": i * 1.5} for i in range(400)]})
    turn = [ContextMessage("u1", "user", "list my orders"), ContextMessage("t1", "tool", minified, tool="orders"),
            ContextMessage("u2", "user", "thanks")]
    block = cc.compact(turn, "context.a")[1]
    entry = block.split("]")[0].split()[-1]
    text = cc.expand("context.a", entry, max_tokens=300)
    assert '"id": "ORD-00000"' in text and "cut at 300 tokens" in text
    assert tokenizer.count_tokens(text.rsplit("\n[... cut", 1)[0]) <= 300
    assert cc.expand("context.a", entry, max_tokens=None) == minified


def test_an_identifier_of_several_numbered_parts_is_one_cue():
    from hippo.engine.entries import cues_in

    assert cues_in("Refund INV-2024-01042 and JIRA-123, not ABC-12-x") == ["INV-2024-01042", "JIRA-123", "ABC-12"]
    mem = Memory(None)
    a = mem.index_entry("invoice INV-2024-01042: total 120.00 EUR\ninvoice INV-2024-01043: total 75.50 EUR\n" * 40,
                        type="tool_result")
    b = mem.index_entry("invoice INV-2024-99999: total 9.99 EUR\n" * 80, type="tool_result")
    got = mem.complete_on_cue("What was the total of INV-2024-01042?")
    assert set(got) == {a.id} and "120.00" in got[a.id].text and b.id not in got


def test_a_pasted_run_of_letters_is_no_word_of_the_question():
    """A run of letters and digits longer than ``query.MAX_WORD_CHARS`` (a pasted blob) is not looked for: matching
    it against a message holding a long run of the same letters was quadratic in its length (minutes, gigabytes).
    A digest of 128 hex characters is still a word and finds its message."""
    from hippo.text import query

    digest = "9f" * 64
    assert query.analyze(f"which build had {digest}?").keywords == ["build", digest]
    assert query.analyze("which build had " + "9f" * 65 + "?").keywords == ["build"]
    with Memory(None) as mem:
        mem.add(f"build 12 had digest {digest}", role="tool")
        mem.add("a" * 40_000, role="tool")
        mem.add("the weather build is fine")
        assert [h.text for h in mem.search(digest, k=1)] == [f"build 12 had digest {digest}"]
        assert mem.search("a" * 20_000, k=3) == []
        got = mem.recall("a" * 20_000 + " weather", budget_tokens=50)
        assert [m.text for m in got.messages] == ["the weather build is fine"]


def test_a_speaker_name_with_a_line_break_never_starts_a_line_of_its_own():
    """A speaker's name may hold tabs and line breaks (imports keep what files say). A context shows them as single
    spaces: "Ann\\nSystem" rendered as written made a line that reads as a speaker "System" of its own. By hand."""
    with Memory(None) as mem:
        a = mem.add("I booked the flight to Lisbon.", speaker="Ann\nSystem")
        mem.add("Nice, when do you leave?", speaker="Bo\t\tB")
        assert mem.get(a.id).speaker == "Ann\nSystem"  # stored as given
        rec = mem.recall("flight Lisbon", budget_tokens=200)
        assert rec.text == "[undated]\nAnn System: I booked the flight to Lisbon.\nBo B: Nice, when do you leave?"
        assert rec.tokens == tokenizer.count_tokens(rec.text)


_JSON_VALUES = [None, True, False, 0, 1, 1.0, 0.0, -2, 2.5, 10**20, "", "1", "true", "Bo", [1], [True], {"a": 1},
                {"a": True}, [], {}]


def test_in_and_nin_hold_what_a_scan_of_the_list_by_json_equality_holds():
    """``$in`` / ``$nin`` look their operand up in a set; the reference is the scan they replaced: JSON equality
    against each element in turn (a boolean is no number, 1 is 1.0, lists and dicts by value)."""
    import random

    from hippo.store.base import MessageRow
    from hippo.store.filters import _equal, compile_filter

    rng = random.Random(7)
    for _ in range(400):
        want = rng.sample(_JSON_VALUES, rng.randrange(0, 6))
        have = rng.choice(_JSON_VALUES)
        row = MessageRow(id=1, namespace="n", seq=1, n_tokens=1, speaker=None, role="user", ts=None, session_id=None,
                         metadata={"v": have}, created_at=0.0)
        inside = any(_equal(have, w) for w in want)
        assert compile_filter({"v": {"$in": want}})(row) is inside, (have, want)
        assert compile_filter({"v": {"$nin": want}})(row) is (not inside), (have, want)


def test_a_long_in_list_is_looked_up_not_scanned(monkeypatch):
    """``{"id": {"$in": ids}}`` over many messages compared each message with every id (a forget of 20,000 ids by
    ``hippo forget --id`` took minutes); scalars are now looked up, and only lists and dicts are compared."""
    from hippo.store import filters

    calls = []
    real = filters._equal
    monkeypatch.setattr(filters, "_equal", lambda a, b: calls.append(1) or real(a, b))
    mem = Memory(None)
    added = [mem.add(f"message {i}", metadata={"k": i}) for i in range(300)]
    wanted = [m.id for m in added[::3]] + list(range(10**6, 10**6 + 3000))
    got = [m.id for m in mem.list(filter={"id": {"$in": wanted}}, limit=1000)]
    assert got == [m.id for m in added[::3]]
    assert calls == []  # no element of a list of scalars is compared one by one
    got = [m.id for m in mem.list(filter={"k": {"$in": [[1], {"a": 1}, 4]}}, limit=1000)]
    assert got == [added[4].id] and calls == []  # a stored scalar equals no list or dict of the operand


def test_a_time_filter_reaches_every_year_a_store_admits(tmp_path):
    path = str(tmp_path / "m.db")
    cfg = {"timestamp_min_year": 1, "timestamp_max_year": 9999}
    with Memory(path, config=cfg) as mem:
        old = mem.add("the charter was signed", timestamp="1500-06-01")
        mem.add("the archive was scanned", timestamp="2023-06-01")
        far = mem.add("the capsule opens", timestamp="9000-01-01")
        assert [m.id for m in mem.list(filter={"timestamp": {"$lt": "1600-01-01"}})] == [old.id]
        assert [m.id for m in mem.list(filter={"timestamp": {"$gte": "8000-01-01"}})] == [far.id]
        assert [m.id for m in mem.list(filter={"timestamp": {"$in": ["1500-06-01"]}})] == [old.id]
        assert mem.forget({"timestamp": {"$lt": "1600-01-01"}}) == 1
    with Memory(path, config=cfg) as mem:
        assert [m.text for m in mem.list()] == ["the archive was scanned", "the capsule opens"]
    # under the default years a bound outside them is still a bound: it selects what the stored times say
    mem = Memory(None)
    mem.add("a message of 2023", timestamp="2023-06-01")
    assert mem.list(filter={"timestamp": {"$lt": "1800-01-01"}}) == []
    assert len(mem.list(filter={"timestamp": {"$gt": "0001-01-01T00:00:00"}})) == 1
    with pytest.raises(InvalidInput, match="filter"):
        mem.list(filter={"timestamp": {"$lt": "9999-12-31T23:00:00-05:00"}})  # the year 10000 in UTC


def test_dates_of_the_first_millennium_are_written_with_four_digit_years():
    mem = Memory(None, config={"timestamp_min_year": 1, "timestamp_max_year": 9999})
    mem.add("The harbour of Ostia was dredged again.", speaker="Ann", timestamp="0099-03-04T05:06:00")
    mem.add("The harbour of Ostia silted up.", speaker="Ann", timestamp="0999-12-31T23:00:00")
    current = mem.topics()[0]
    assert (current["first_time"], current["last_time"]) == ("0099-03-04 05:06", "0999-12-31 23:00")
    mem.consolidate("deep")
    themes = [t for t in mem.topics() if t["id"] != "current"]
    assert themes and all(t["first_time"][:5] in ("0099-", "0999-") for t in themes)
    docs = "\n".join(mem.topic(t["id"]) for t in themes)
    assert "span: 0099-03-04 – " in docs and "time=0099-03-04 05:06" in docs


def test_an_rfc_3339_time_in_lower_case_is_read():
    mem = Memory(None)
    lower = mem.add("hello", timestamp="2023-05-01t12:00:00.5z")
    assert lower.timestamp == datetime(2023, 5, 1, 12, 0, 0, 500000, tzinfo=timezone.utc)
    assert [h.id for h in mem.search("hello", since="2023-05-01t00:00:00z", until="2023-05-02T00:00:00Z")] == [lower.id]


def test_epoch_seconds_of_any_real_number_type_are_read_and_a_huge_one_refused():
    import numpy as np

    mem = Memory(None)
    when = datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)
    for seconds in (1_700_000_000, 1_700_000_000.0, np.int64(1_700_000_000), np.float32(1_700_000_000),
                    np.uint32(1_700_000_000)):
        assert mem.add("epoch", timestamp=seconds).timestamp == when, type(seconds)
    assert len(mem.list(filter={"timestamp": {"$gte": np.int64(1_700_000_000)}})) == 5
    assert len(mem.search("epoch", since=np.int64(1_699_999_999), until=np.float64(1_700_000_001))) == 5
    for huge in (10**400, -(10**400)):
        with pytest.raises(InvalidInput, match="timestamp"):
            mem.add("huge", timestamp=huge)
        with pytest.raises(InvalidInput, match="since"):
            mem.search("epoch", since=huge)
        with pytest.raises(InvalidInput, match="filter"):
            mem.list(filter={"timestamp": {"$lt": huge}})
        with pytest.raises(InvalidInput, match="event_time"):
            mem.add("huge", metadata={"event_time": huge})
    assert mem.count() == 5
