"""Time and truth: event times, temporal filters, surprise, updates, contradictions, timelines."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

import hippo
from hippo.base.errors import InvalidInput
from hippo.text import attributes, fingerprints, timeexpr


def utc(*a) -> datetime:
    return datetime(*a, tzinfo=timezone.utc)


MONDAY = utc(2023, 5, 8, 13, 56).timestamp()  # Monday 8 May 2023


@pytest.mark.parametrize("text, label, granularity", [
    ("I went to a support group yesterday.", "7 May 2023", "day"),
    ("the day before yesterday I met her", "6 May 2023", "day"),
    ("I ran a charity race last Saturday", "6 May 2023", "day"),
    ("On Monday we talked", "1 May 2023", "day"),              # a weekday names the previous one
    ("two weeks ago we adopted a puppy", "week of 24 April 2023", "week"),
    ("last week I ran my first marathon", "week of 1 May 2023", "week"),
    ("We went camping last month", "April 2023", "month"),
    ("we met 3 years ago", "2020", "year"),
    ("I painted that in 2022", "2022", "year"),
    ("On May 3rd I saw it", "3 May 2023", "day"),
    ("on December 20 we married", "20 December 2022", "day"),   # a date far ahead means the last one
    ("It's due on June 12, 2023", "12 June 2023", "day"),
    ("It happened 2021-11-02 at noon", "2 November 2021", "day"),
    ("Since 14 February 2020 we are together", "14 February 2020", "day"),
    ("Next month we fly out", "June 2023", "month"),
    ("last weekend was fun", "weekend of 6 May 2023", "weekend"),
    ("I started piano a few days ago", "5 May 2023", "day"),
    ("I went there on the 31st", "31 March 2023", "day"),      # April has no 31st: the latest month that has one
])
def test_time_expressions_resolve_against_the_message_time(text, label, granularity):
    ref = timeexpr.event_time(text, MONDAY)
    assert ref is not None
    assert (ref.label(), ref.granularity) == (label, granularity)
    assert ref.start < ref.end


def test_a_day_of_the_month_skips_the_months_without_it():
    jan31 = utc(2023, 1, 31, 9).timestamp()
    assert timeexpr.event_time("I'll see you on the 30th", jan31).label() == "30 March 2023"  # no 30 February
    assert timeexpr.event_time("I went there on the 30th", utc(2023, 3, 2).timestamp()).label() == "30 January 2023"
    assert timeexpr.event_time("I went there on the 32nd", jan31) is None


def test_without_a_reference_time_only_absolute_dates_resolve():
    assert timeexpr.event_time("I went there yesterday", None) is None
    assert timeexpr.event_time("We moved in May 2021", None).label() == "May 2021"
    assert timeexpr.find("I may 3 times try", MONDAY) == []  # "may" the verb is not a month


def test_query_intent():
    q = timeexpr.analyze_query("When did Caroline go to the support group?")
    assert q.temporal and not q.ordering and q.window is None
    assert timeexpr.analyze_query("In what order did Tom do these things?").ordering
    assert timeexpr.analyze_query("Where does Maya live now?").current
    q = timeexpr.analyze_query("What did Mel do in May 2023?")
    assert q.window == (utc(2023, 5, 1).timestamp(), utc(2023, 6, 1).timestamp())
    q = timeexpr.analyze_query("What did Mel do last month?", MONDAY)
    assert q.window == (utc(2023, 4, 1).timestamp(), utc(2023, 5, 1).timestamp())
    assert not timeexpr.analyze_query("What is Caroline's identity?").temporal


def test_attribute_statements_name_subject_attribute_value_and_cue():
    got = {(s.entity, s.attribute, s.value, s.update) for s in
           attributes.extract("I live in Boston with my sister.", "Maya")}
    assert got == {("maya", "residence", "Boston", False)}
    got = {(s.entity, s.attribute, s.value, s.update) for s in
           attributes.extract("We finally relocated to Denver last month!", "Maya")}
    assert got == {("maya", "residence", "Denver", True)}
    got = {(s.attribute, s.value) for s in attributes.extract("I joined Acme Robotics as an engineer.", "Tom")}
    assert ("employer", "Acme Robotics") in got
    assert attributes.extract("What a lovely day.", "Tom") == []
    assert attributes.query_targets("Where does Maya live now?") == (["residence"], {"maya"})


def test_surprise_is_the_share_of_new_fingerprints():
    fp = fingerprints.fingerprints("Then Maya moved to Denver in 2023", ["2023"])
    assert fp == {"p:maya", "p:denver", "n:2023", "d:2023", "e:moved"}
    text = "x" * 30
    assert fingerprints.surprise(fp, set(), text) == pytest.approx(0.8 + 0.1 * 30 / 300 + 0.1)
    assert fingerprints.surprise(fp, {"p:maya", "p:denver"}, text) == pytest.approx(0.8 * 3 / 5 + 0.01 + 0.1)
    assert fingerprints.surprise(set(), set(), text) == 0.0


def _maya(mem: hippo.Memory) -> list:
    return mem.add_many([
        {"text": "I live in Boston with my sister.", "speaker": "Maya", "timestamp": utc(2023, 1, 5), "session_id": "s1"},
        {"text": "Boston winters are brutal, honestly.", "speaker": "Tom", "timestamp": utc(2023, 1, 5), "session_id": "s1"},
        {"text": "I started piano lessons yesterday!", "speaker": "Maya", "timestamp": utc(2023, 2, 5), "session_id": "s2"},
        {"text": "Last week I ran my first marathon.", "speaker": "Maya", "timestamp": utc(2023, 4, 20), "session_id": "s3"},
        {"text": "Two weeks ago we adopted a puppy.", "speaker": "Maya", "timestamp": utc(2023, 4, 22), "session_id": "s4"},
        {"text": "We finally relocated to Denver last month!", "speaker": "Maya", "timestamp": utc(2023, 6, 10),
         "session_id": "s6"},
    ])


def test_newest_value_ranks_first_and_the_old_one_is_marked():
    mem = hippo.Memory()
    items = _maya(mem)
    boston, denver = items[0].id, items[5].id
    hits = mem.search("Where does Maya live now?", k=5)
    ids = [h.id for h in hits]
    assert ids.index(denver) < ids.index(boston)
    by_id = {h.id: h for h in hits}
    assert by_id[boston].superseded_by == denver and by_id[denver].superseded_by is None
    assert by_id[denver].event_time == utc(2023, 5, 16, 12)  # mid-May: "last month" said on 10 June
    text = mem.recall("Where does Maya live now?", budget_tokens=300).text
    assert "Maya (superseded 10 June 2023): I live in Boston" in text
    assert "Maya (May 2023): We finally relocated to Denver" in text
    upd = mem.contradictions(include_updates=True)
    assert [(c["old_id"], c["new_id"], c["kind"], c["old_value"], c["new_value"]) for c in upd] == \
        [(boston, denver, "update", "boston", "denver")]
    assert mem.contradictions() == []  # an update is not an open conflict


def test_contradiction_without_update_cue_is_open_until_settled():
    mem = hippo.Memory()
    a = mem.add("I work at Globex.", speaker="Ann", timestamp=utc(2023, 1, 1))
    b = mem.add("I work at Initech.", speaker="Ann", timestamp=utc(2023, 2, 1))
    open_ = mem.contradictions()
    assert [(c["old_id"], c["new_id"], c["kind"]) for c in open_] == [(a.id, b.id, "contradiction")]
    mem.add("I switched jobs, now I work at Hooli.", speaker="Ann", timestamp=utc(2023, 3, 1))
    assert mem.contradictions() == []
    assert len(mem.contradictions(include_updates=True)) == 2


def test_timeline_orders_by_event_time_not_by_when_it_was_said():
    mem = hippo.Memory()
    _maya(mem)
    tl = mem.timeline("Maya")
    texts = [e["text"] for e in tl]
    # the puppy (told 22 April, "two weeks ago" = week of 3 April) comes before the marathon (told earlier, on 20
    # April: "last week" = week of 10 April), both after piano (4 February)
    assert texts.index("I started piano lessons yesterday!") < texts.index("Two weeks ago we adopted a puppy.") \
        < texts.index("Last week I ran my first marathon.")
    assert [e["event_time"] for e in tl] == sorted(e["event_time"] for e in tl)
    piano = next(e for e in tl if e["text"].startswith("I started piano"))
    assert piano["event"] == "4 February 2023" and piano["timestamp"] == utc(2023, 2, 5)


def test_order_queries_get_a_chronological_context():
    mem = hippo.Memory()
    _maya(mem)
    text = mem.recall("In what order did Maya adopt a puppy, run a marathon and start piano?",
                      budget_tokens=400).text
    pos = [text.index(s) for s in ("piano", "puppy", "marathon")]
    assert pos == sorted(pos)
    plain = hippo.Memory(config={"temporal": {"enabled": False}})
    _maya(plain)
    text = plain.recall("In what order did Maya adopt a puppy, run a marathon and start piano?",
                        budget_tokens=400).text
    assert text.index("marathon") < text.index("puppy")  # by session date, the told order
    assert "superseded" not in text


def test_since_until_filter_on_event_time():
    mem = hippo.Memory()
    _maya(mem)
    hits = mem.search("Maya", k=10, since=utc(2023, 4, 1), until=utc(2023, 5, 1))
    assert {h.text for h in hits} == {"Last week I ran my first marathon.", "Two weeks ago we adopted a puppy."}
    rec = mem.recall("What did Maya do?", since="2023-04-01", until="2023-05-01", budget_tokens=500)
    assert {m.text for m in rec.messages} == {h.text for h in hits}
    with pytest.raises(InvalidInput, match="since"):
        mem.search("Maya", since=utc(2023, 5, 1), until=utc(2023, 4, 1))
    with pytest.raises(InvalidInput, match="until"):
        mem.search("Maya", until=[2023])


def test_since_excludes_an_event_that_ends_where_the_scope_begins():
    # "yesterday" said on 15 March 2023 is the day [14 March, 15 March): it ends where since=15 March begins
    mem = hippo.Memory()
    mem.add("I went to the dentist yesterday.", timestamp=utc(2023, 3, 15, 10))
    mem.add("The dentist said my teeth are fine.", timestamp=utc(2023, 3, 15, 11))
    later = {"The dentist said my teeth are fine."}
    assert {h.text for h in mem.search("dentist", since=utc(2023, 3, 15))} == later
    assert {m.text for m in mem.recall("dentist", since="2023-03-15", budget_tokens=500).messages} == later
    assert {e["text"] for e in mem.timeline("dentist", since=utc(2023, 3, 15))} == later
    assert {h.text for h in mem.search_many(["default"], "dentist", since=utc(2023, 3, 15), priors=False)} == later
    assert len(mem.search("dentist", since=utc(2023, 3, 14, 23, 59))) == 2
    assert {h.text for h in mem.search("dentist", until=utc(2023, 3, 15))} == {"I went to the dentist yesterday."}


def test_a_change_supersedes_the_value_and_each_restatement_of_it(tmp_path):
    path = str(tmp_path / "m.db")
    mem = hippo.Memory(path)
    first = mem.add("I live in Oslo.", speaker="Ann", timestamp=utc(2023, 1, 1))
    again = mem.add("I still live in Oslo.", speaker="Ann", timestamp=utc(2023, 2, 1))
    dog = mem.add("My dog's name is Rex.", speaker="Ann", timestamp=utc(2023, 2, 15))
    moved = mem.add("I moved to Rome.", speaker="Ann", timestamp=utc(2023, 3, 1))
    expected = {first.id: moved.id, again.id: moved.id}

    def marks(m: hippo.Memory) -> dict[int, int | None]:
        return {h.id: h.superseded_by for h in m.search("Where does Ann live now? Oslo Rome Rex", k=10)}

    assert {(c["old_id"], c["new_id"]) for c in mem.contradictions(include_updates=True)} == set(expected.items())
    got = marks(mem)
    assert {i: got[i] for i in (first.id, again.id)} == expected and got[dog.id] is None and got[moved.id] is None
    text = mem.recall("Where does Ann live now?", budget_tokens=300).text
    assert text.count("(superseded 1 March 2023)") == 2
    mem.close()
    mem = hippo.Memory(path)
    assert marks(mem) == got
    mem.delete(dog.id)  # a removal links the surviving rows again
    assert {(c["old_id"], c["new_id"]) for c in mem.contradictions(include_updates=True)} == set(expected.items())
    gone = hippo.Memory()
    a = gone.add("I live in Lyon.", speaker="Bo", timestamp=utc(2023, 1, 1))
    b = gone.add("Yes, I live in Lyon.", speaker="Bo", timestamp=utc(2023, 2, 1))
    c = gone.add("I'm not in Lyon anymore.", speaker="Bo", timestamp=utc(2023, 3, 1))
    assert {(x["old_id"], x["new_id"]) for x in gone.contradictions(include_updates=True)} == {(a.id, c.id),
                                                                                                (b.id, c.id)}


def test_a_message_stating_two_values_is_not_superseded_by_itself(tmp_path, caplog):
    """"I moved to Denver. Actually I now live in Seattle." supersedes the earlier Boston and says Seattle holds:
    the message is the latest word, never marked superseded by itself, and its snapshot reads back as saved."""
    path = str(tmp_path / "m.db")
    mem = hippo.Memory(path)
    boston = mem.add("I live in Boston.", speaker="Ann", timestamp=utc(2023, 1, 1))
    both = mem.add("I moved to Denver in May. Actually I now live in Seattle.", speaker="Ann",
                   timestamp=utc(2023, 6, 1))
    links = {(c["old_id"], c["new_id"]) for c in mem.contradictions(include_updates=True)}
    assert links == {(boston.id, both.id)}
    marks = {h.id: h.superseded_by for h in mem.search("Where does Ann live?")}
    assert marks == {boston.id: both.id, both.id: None}
    text = mem.recall("Where does Ann live?", budget_tokens=300).text
    assert text.count("superseded") == 1 and "I live in Boston." in text
    mem.close()
    with caplog.at_level("WARNING", logger="hippo"):
        mem = hippo.Memory(path)
        assert {h.id: h.superseded_by for h in mem.search("Where does Ann live?")} == marks
    assert "rebuilding" not in caplog.text  # the saved annotations were used, not made again
    mem.close()


HISTORY = [("I live in Boston.", (2023, 1, 5)), ("My dog's name is Rex.", (2023, 2, 1)),
           ("I moved to Denver!", (2023, 3, 10)), ("I moved to Seattle.", (2023, 5, 1)),
           ("I've budgeted $3,000 for relocation expenses.", (2023, 5, 2)),
           ("I've adjusted my relocation budget to $3,500.", (2023, 6, 1))]


def _links_by_text(mem: hippo.Memory) -> set[tuple[str, str]]:
    return {(c["old_text"], c["new_text"]) for c in mem.contradictions(include_updates=True)}


@pytest.mark.parametrize("order", [[1, 0, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [3, 0, 5, 2, 4, 1]])
@pytest.mark.parametrize("batch", [True, False])
def test_links_follow_the_order_things_were_said_not_added(tmp_path, order, batch):
    """A history added out of order (a backfill, two importers) links as the same history added in order (the
    reference): a statement is superseded by the one said after it, never by an older one added later, and an
    update finds its earlier value said in other words ("I've budgeted $3,000 for relocation") added after it."""
    ref = hippo.Memory()
    for text, day in HISTORY:
        ref.add(text, speaker="Maya", timestamp=utc(*day))
    want = _links_by_text(ref)
    assert ("I live in Boston.", "I moved to Denver!") in want and ("I moved to Denver!", "I moved to Seattle.") in want
    assert len(want) == 3  # the relocation budget read again in its earlier words
    path = str(tmp_path / "m.db")
    mem = hippo.Memory(path)
    items = [{"text": HISTORY[k][0], "speaker": "Maya", "timestamp": utc(*HISTORY[k][1])} for k in order]
    if batch:
        mem.add_many(items)
    else:
        for it in items:
            mem.add(**it)
    assert _links_by_text(mem) == want
    marks = {h.text: h.superseded_by is not None for h in mem.search("Where does Maya live? Boston Denver Seattle")}
    assert {t: marks[t] for t in ("I live in Boston.", "I moved to Denver!", "I moved to Seattle.")} == {
        "I live in Boston.": True, "I moved to Denver!": True, "I moved to Seattle.": False}
    mem.close()
    mem = hippo.Memory(path)
    assert _links_by_text(mem) == want  # the links of the snapshot
    dog = mem.search("Rex", k=1)[0].id
    mem.delete(dog)  # a removal links the surviving rows again, in the order they were said
    assert _links_by_text(mem) == want
    mem.add("I moved to Austin.", speaker="Maya", timestamp=utc(2023, 4, 1))  # between Denver and Seattle
    ref.add("I moved to Austin.", speaker="Maya", timestamp=utc(2023, 4, 1))
    assert _links_by_text(mem) == _links_by_text(ref) - {("I moved to Denver!", "I moved to Seattle.")} | {
        ("I moved to Denver!", "I moved to Austin."), ("I moved to Austin.", "I moved to Seattle.")}
    mem.close()


def test_as_of_answers_as_the_memory_stood():
    mem = hippo.Memory()
    old = mem.add("I live in Boston.", speaker="Maya", timestamp=utc(2023, 1, 5))
    time.sleep(0.01)
    moment = time.time()
    time.sleep(0.01)
    new = mem.add("I moved to Denver.", speaker="Maya", timestamp=utc(2023, 6, 5))
    then = mem.search("Where does Maya live?", k=5, as_of=moment)
    assert [h.id for h in then] == [old.id] and then[0].superseded_by is None
    now = mem.search("Where does Maya live?", k=5)
    assert now[0].id == new.id and {h.id: h.superseded_by for h in now}[old.id] == new.id
    assert "superseded" not in mem.recall("Where does Maya live?", as_of=moment).text


def test_caller_event_time_wins_over_the_text():
    mem = hippo.Memory()
    item = mem.add("We signed the lease yesterday.", timestamp=utc(2023, 3, 3), event_time=utc(2022, 12, 24))
    hit = mem.search("lease")[0]
    assert hit.id == item.id and hit.event_time.date() == utc(2022, 12, 24).date()
    assert mem.get(item.id).metadata["event_time"] == utc(2022, 12, 24).timestamp()
    with pytest.raises(InvalidInput, match="event_time"):
        mem.add("bad", event_time="not a date")
    assert mem.count() == 1


def test_a_caller_event_time_reads_back_as_the_instant_given(tmp_path):
    path = str(tmp_path / "m.db")
    given = datetime.fromisoformat("2023-04-01T20:00:00+02:00")  # 18:00 UTC
    with hippo.Memory(path) as mem:
        concert = mem.add("The concert at the arena was loud.", speaker="Ann", timestamp="2023-05-08",
                          event_time=given)
        mem.add("The dinner after the concert was late.", speaker="Ann", timestamp="2023-05-08",
                event_time="2023-04-01T23:00:00+00:00")
    for _ in range(2):  # as added, and after a reopen
        with hippo.Memory(path) as mem:
            hits = {h.id: h.event_time for h in mem.search("concert", k=5)}
            assert hits[concert.id] == given
            assert {e["id"]: e["event_time"] for e in mem.timeline("Ann")}[concert.id] == given
            # event time overlaps [since, until): an instant of 1 April is not in 2 April
            assert [h.id for h in mem.search("concert", k=5, since="2023-04-02", until="2023-04-03")] == []
            assert concert.id in {h.id for h in mem.search("concert", k=5, since=given, until="2023-04-02")}
            assert [e["id"] for e in mem.timeline("Ann")][0] == concert.id  # 18:00 before 23:00


def test_annotations_survive_reopen(tmp_path):
    path = tmp_path / "m.db"
    with hippo.Memory(path) as mem:
        _maya(mem)
        before = [(h.id, h.event_time, h.superseded_by, h.surprise) for h in mem.search("Where does Maya live?")]
    with hippo.Memory(path) as mem:
        after = [(h.id, h.event_time, h.superseded_by, h.surprise) for h in mem.search("Where does Maya live?")]
    assert before == after


def test_temporal_query_prefers_dated_statements_in_the_named_period():
    mem = hippo.Memory()
    mem.add_many([
        {"text": "I painted a sunset with my kids.", "speaker": "Mel", "timestamp": utc(2023, 5, 20), "session_id": "a"},
        {"text": "I painted a lake scene, it was relaxing.", "speaker": "Mel", "timestamp": utc(2023, 8, 2),
         "session_id": "b"},
    ])
    hits = mem.search("What did Mel paint in May 2023?", k=2)
    assert hits[0].text.startswith("I painted a sunset")
    hits = mem.search("What did Mel paint in August 2023?", k=2)
    assert hits[0].text.startswith("I painted a lake")


@pytest.mark.parametrize("text, expected, negated", [
    ("I moved in with my new partner Felix.", {("partner", "Felix")}, set()),    # a partner, not a residence
    ("They bumped my pay from 55,000 to 92,500.", {("salary", "92,500")}, set()),  # the new value, not the old
    ("I'm not in Melbourne anymore, we moved to Lyon.", {("residence", "Lyon")}, {("residence", "Melbourne")}),
    ("Got a raise! I'm on 64,000 now.", {("salary", "64,000")}, set()),          # the raise gives the context
    ("Sold the Kuga and bought a Sandero.", {("car", "Sandero")}, set()),
    ("My favourite food is ramen, I could eat it every day.", {("favorite_food", "ramen")}, set()),
])
def test_attribute_values(text, expected, negated):
    got = attributes.extract(text, "Priya")
    assert {(s.attribute, s.value) for s in got if not s.negated} == expected
    assert {(s.attribute, s.value) for s in got if s.negated} == negated


def test_favourite_questions_target_the_favourite_attribute():
    assert attributes.query_targets("What food does Callum like best these days?") == (["favorite_food"], {"callum"})
    assert attributes.query_targets("What is Kwame's favourite food now?")[0] == ["favorite_food"]


@pytest.mark.parametrize("text, label", [
    ("a fortnight ago we met", "week of 24 April 2023"),
    ("on the 3rd we met", "3 May 2023"),
    ("on the 20th we met", "20 April 2023"),   # a day of the month still to come is last month's
])
def test_more_time_expressions(text, label):
    assert timeexpr.event_time(text, MONDAY).label() == label


def test_an_update_said_after_until_does_not_supersede():
    mem = hippo.Memory()
    old = mem.add("I live in Boston.", speaker="Maya", timestamp=utc(2023, 1, 5))
    mem.add("I moved to Denver.", speaker="Maya", timestamp=utc(2023, 6, 5))
    then = mem.search("Where does Maya live?", k=5, until=utc(2023, 3, 1))
    assert [(h.id, h.superseded_by) for h in then] == [(old.id, None)]


def test_units_carry_the_event_span_of_their_messages():
    mem = hippo.Memory()
    mem.add_many([{"text": f"I went hiking yesterday in the Alps, trip number {i}", "speaker": "A",
                   "timestamp": utc(2023, 5, i + 2), "session_id": f"s{i}"} for i in range(12)])
    mem.consolidate("deep")
    units = mem.recall("hiking in the Alps", budget_tokens=300).units
    assert units
    for u in units:
        ids = set(u["message_ids"])
        days = [utc(2023, 5, i + 1) for i, it in enumerate(mem.list()) if it.id in ids]  # "yesterday"
        assert u["event_start"] == min(days) and u["event_end"] == max(days) + (utc(2023, 1, 2) - utc(2023, 1, 1))


def test_a_favourite_without_its_noun_updates_the_last_favourite_thing():
    mem = hippo.Memory()
    a = mem.add("My favourite food is ramen, I could eat it every day.", speaker="Cal", timestamp=utc(2023, 1, 1))
    b = mem.add("I've gone off ramen; falafel is my favourite now.", speaker="Cal", timestamp=utc(2023, 3, 1))
    assert [(c["old_id"], c["new_id"], c["attribute"], c["new_value"]) for c in
            mem.contradictions(include_updates=True)] == [(a.id, b.id, "favorite_food", "falafel")]
    assert mem.search("What food does Cal like best these days?", k=2)[0].id == b.id


def test_deadlines_belong_to_their_project():
    mem = hippo.Memory()
    o1 = mem.add("The Orion project is due on March 18.", speaker="Ann", timestamp=utc(2023, 1, 1))
    mem.add("Our deadline for Cobalt is May 11.", speaker="Ann", timestamp=utc(2023, 1, 2))
    o2 = mem.add("Good news, Orion is now due June 28 instead of March 18.", speaker="Ann", timestamp=utc(2023, 2, 1))
    links = mem.contradictions(include_updates=True)
    assert [(c["old_id"], c["new_id"], c["entity"], c["new_value"]) for c in links] == [(o1.id, o2.id, "orion", "june 28")]


@pytest.mark.parametrize("text", [
    "Moved in yesterday! The flat has a tiny balcony facing the Douro river.",   # no place after in/to/at
    "A dog after May 27, then.",                                                 # a date is not a pet
    "The movers are Atlas Removals, booking reference AR-7741.",                 # movers are not a home
])
def test_no_fact_where_there_is_none(text):
    assert attributes.extract(text, "Maya") == []


def test_another_persons_move_is_not_the_speakers():
    got = {(s.entity, s.attribute, s.value) for s in
           attributes.extract("My lead is now Oren, since Priya moved to Berlin.", "Maya")}
    assert ("maya", "residence", "Berlin") not in got


def test_an_unannounced_different_value_is_not_marked_unless_the_current_value_is_asked():
    mem = hippo.Memory()
    mem.add("I work at Globex.", speaker="Ann", timestamp=utc(2023, 1, 1))
    mem.add("I work at Initech.", speaker="Ann", timestamp=utc(2023, 2, 1))
    assert "superseded" not in mem.recall("Where does Ann work?", budget_tokens=100).text
    assert "Ann (superseded 1 February 2023): I work at Globex." in \
        mem.recall("Where does Ann work now?", budget_tokens=100).text


def test_spans_of_many_groups_match_one_group_at_a_time():
    mem = hippo.Memory()
    items = mem.add_many([{"text": t, "speaker": "A", "timestamp": utc(2023, 5, 10 + i)} for i, t in enumerate([
        "I went hiking yesterday.", "No date here at all.", "The concert is next Friday.",
        "We met on 3 March 2021.", "Just chatting.", "Last week I painted the fence."])])
    st = mem.engine.state()
    st.truth.sync(st.index)
    ids = [it.id for it in items]
    groups = [[], [ids[1]], [ids[1], ids[4]], ids, [ids[0], ids[2]], [ids[3], 999_999], [999_999], ids[::-1]]
    truth, idx = st.truth, st.index

    def naive(g):  # the definition: rows known to the annotations, earliest start, latest end (start if none)
        rows = [idx.row_of[i] for i in g if i in idx.row_of and idx.row_of[i] < truth.done]
        starts = [float(truth.event_start.a[r]) for r in rows]
        ends = [float(truth.event_end.a[r]) if truth.event_end.a[r] == truth.event_end.a[r]
                else float(truth.event_start.a[r]) for r in rows]
        starts = [s for s in starts if s == s]
        ends = [e for e in ends if e == e]
        return (min(starts), max(ends)) if starts else None

    assert truth.spans(idx, groups) == [naive(g) for g in groups]
    assert [truth.span(idx, g) for g in groups] == [naive(g) for g in groups]
    assert naive([999_999]) is None and naive([]) is None and naive(ids) != naive([ids[1]])


def test_a_rebuild_read_a_chunk_at_a_time_links_as_one_read_of_everything():
    """The statement an update restates was said earlier but added after the chunk the update is read in (a history
    imported out of order); a background rebuild reads 512 rows at a time and must link as one pass does."""
    from hippo.engine.truth.state import Truth

    mem = hippo.Memory()
    items = [{"text": "I've adjusted my relocation budget to $3,500 to cover the visa fees.",
              "timestamp": utc(2024, 5, 1)}]
    items += [{"text": f"Filler message number {i}.", "timestamp": utc(2024, 5, 2)} for i in range(700)]
    items += [{"text": "I've budgeted $3,000 for relocation expenses, including visa and flights.",
               "timestamp": utc(2024, 3, 1)}]
    mem.add_many(items)
    st = mem.engine.state()
    full = Truth()
    full.sync(st.index)
    chunked = Truth()
    while chunked.done < len(st.index):
        chunked.sync(st.index, upto=chunked.done + 512)
    assert full.link_rows == chunked.link_rows == [(701, 0)]
    assert (full.superseded_by.view == chunked.superseded_by.view).all()


def test_a_link_to_a_statement_added_later_survives_a_snapshot(tmp_path):
    """A link from a statement added later (said earlier) is kept by the snapshot: a reopen loads it instead of
    refusing the snapshot and rebuilding the co-index."""
    from hippo.engine.truth.state import Truth

    mem = hippo.Memory()
    mem.add("I work at Initech.", speaker="Ann", timestamp=utc(2023, 2, 1))
    mem.add("I work at Globex.", speaker="Ann", timestamp=utc(2023, 1, 1))  # said earlier, added later
    st = mem.engine.state()
    st.truth.sync(st.index)
    assert st.truth.link_rows == [(1, 0)]
    meta, arrays = st.truth.to_snapshot()
    back = Truth.from_snapshot(meta, arrays, st.index)
    assert back.link_rows == [(1, 0)] and int(back.superseded_by.a[1]) == 0
    path = str(tmp_path / "m.db")
    with hippo.Memory(path) as disk:
        disk.add_many([{"text": "I work at Initech.", "speaker": "Ann", "timestamp": utc(2023, 2, 1)},
                       {"text": "I work at Globex.", "speaker": "Ann", "timestamp": utc(2023, 1, 1)}])
    with hippo.Memory(path) as disk:
        state = disk.engine.state()
        assert state.saved.get("derived.index") is not None  # loaded from the snapshot, not rebuilt
        assert [(c["old_text"], c["new_text"]) for c in disk.contradictions()] == [
            ("I work at Globex.", "I work at Initech.")]


def test_contradictions_and_timeline_wait_for_a_background_annotation(tmp_path, monkeypatch):
    """A history longer than SYNC_ROWS opened without its saved annotations (its writer was killed before it saved
    any) is annotated in the background while a neutral stand-in serves the ranker; contradictions() and timeline()
    ask about the annotations themselves and answer as if every message had been annotated in the call (the
    reference: the same messages in a memory that annotated them as they came)."""
    import sqlite3

    from hippo.engine import state as state_mod

    path = tmp_path / "m.db"
    with hippo.Memory(path) as mem:
        _maya(mem)
        want_links = mem.contradictions(include_updates=True)
        want_timeline = mem.timeline("Maya")
    assert want_links and any(e["superseded_by"] for e in want_timeline)
    db = sqlite3.connect(path)
    with db:
        db.execute("DELETE FROM units")  # no snapshot: as after a kill -9 before the first save
    db.close()

    build = state_mod.NamespaceState._build_truth

    def held(self, warm):  # the background annotation starts only once someone asks it to hurry (or stops it)
        for _ in range(3000):
            if warm.hurry.is_set() or warm.stop.is_set():
                break
            time.sleep(0.01)
        build(self, warm)

    monkeypatch.setattr(state_mod.NamespaceState, "_build_truth", held)
    monkeypatch.setattr(state_mod, "SYNC_ROWS", 3)  # six messages: annotated in the background
    with hippo.Memory(path) as mem:
        assert mem.contradictions(include_updates=True) == want_links
    with hippo.Memory(path) as mem:
        assert mem.timeline("Maya") == want_timeline


def test_a_clock_set_back_between_two_runs_keeps_the_order_of_the_adds(tmp_path, monkeypatch):
    from hippo.engine import prepare as prepare_mod

    clock = [1_780_000_000.0]

    class Clock:
        @staticmethod
        def time() -> float:
            return clock[0]

    monkeypatch.setattr(prepare_mod, "time", Clock)
    path = str(tmp_path / "m.db")
    with hippo.Memory(path) as mem:
        boston = mem.add("I live in Boston with my sister.", speaker="Maya")
    clock[0] -= 3600.0  # the system clock is stepped back an hour before the next run
    with hippo.Memory(path) as mem:
        denver = mem.add("We finally moved to Denver!", speaker="Maya")
        both = mem.add_many([{"text": "Hello again.", "speaker": "Maya"}, {"text": "Hi!", "speaker": "Ann"}])
    with hippo.Memory(path) as mem:
        times = [m.created_at for m in mem.list()]
        assert times == sorted(times) and len(set(times)) == 4
        assert [m.created_at for m in both] == times[2:]
        # the memory as it stood when Boston was said holds Boston alone, and Denver, said after it, supersedes it
        assert [h.id for h in mem.search("Where does Maya live?", k=5, as_of=boston.created_at)] == [boston.id]
        assert {h.id: h.superseded_by for h in mem.search("Where does Maya live?", k=2)} == \
            {boston.id: denver.id, denver.id: None}
        assert [(c["old_id"], c["new_id"]) for c in mem.contradictions(include_updates=True)] == \
            [(boston.id, denver.id)]
