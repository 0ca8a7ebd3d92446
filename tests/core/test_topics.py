"""Topic documents (seed 003 §3.2) and the CURRENT buffer (§3.3)."""

from __future__ import annotations

import re

import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput, NotFound

SIG = re.compile(r"^- <seq=(\d+), time=([0-9-]+ [0-9:]+|unknown), source=([^>]+)> (.+)$")

LINES = [
    ("user", "Ann", "I adopted a border collie named Pixel from the shelter in Portland."),
    ("assistant", None, "Border collies need lots of exercise; Pixel will love long hikes."),
    ("user", "Ann", "Pixel already chewed my hiking boots and the garden hose."),
    ("user", "Ann", "The vet said Pixel needs her second vaccine in three weeks."),
    ("user", "Ann", "My pottery class at the community center starts on Monday."),
    ("assistant", None, "Pottery is relaxing; wheel throwing takes a few sessions to learn."),
    ("user", "Ann", "I glazed my first teapot in blue enamel but it cracked in the kiln."),
]


@pytest.fixture
def mem():
    m = Memory(None)
    m.add_many({"text": t, "role": r, "speaker": sp, "session_id": f"s{k // 4}",
                "timestamp": f"2024-05-0{1 + k // 4}T10:0{k}:00"} for k, (r, sp, t) in enumerate(LINES))
    m.add("A new unconsolidated note about the garden fence.", speaker="Ann", session_id="s9",
          timestamp="2024-06-01T09:00:00")
    m.consolidate("light")  # too few messages for a consolidation batch: fold the complete flush units in now
    yield m
    m.close()


def test_topics_list_themes_and_the_current_buffer(mem):
    topics = mem.topics()
    assert topics[0]["id"] == "current" and topics[0]["size"] == 1
    themes = [t for t in topics if t["id"] != "current"]
    assert themes and all(isinstance(t["id"], int) and t["summary"] and t["size"] >= 1 for t in themes)
    assert all({"title", "n_messages", "first_time", "last_time", "strength"} <= set(t) for t in themes)


def test_topic_documents_carry_parsable_entry_signatures(mem):
    ids = {i.seq: i for i in mem.list()}
    seen = 0
    for t in mem.topics():
        doc = mem.topic(t["id"])
        assert doc.startswith(f"# Topic {t['id']}")
        for line in doc.splitlines():
            m = SIG.match(line)
            if not m:
                continue
            seen += 1
            seq, time, source, body = int(m.group(1)), m.group(2), m.group(3), m.group(4)
            item = ids[seq]
            assert source == ("AI" if item.role == "assistant" else item.speaker)
            assert time == item.timestamp.strftime("%Y-%m-%d %H:%M")
            assert body.rstrip(" …") in item.text                        # verbatim sentence of its source
    assert seen >= 4
    assert mem.topic(str(mem.topics()[1]["id"])) == mem.topic(mem.topics()[1]["id"])  # ids as text work too


def test_current_topic_lists_unconsolidated_messages_until_deep_consolidation(mem):
    doc = mem.topic("current")
    assert "garden fence" in doc and SIG.match(doc.splitlines()[-1])
    mem.consolidate("deep")
    assert mem.topics()[0]["id"] != "current"
    with pytest.raises(NotFound):
        mem.topic("current")


def test_unknown_and_bad_topic_ids(mem):
    with pytest.raises(NotFound):
        mem.topic(10_000)
    with pytest.raises(InvalidInput):
        mem.topic(1.5)
    with pytest.raises(InvalidInput):
        mem.topic(None)
    # digits int() cannot read were taken for an id and raised ValueError; digits of another script are an id
    for text in ("²", "①", "3²"):
        with pytest.raises(InvalidInput, match="topic_id"):
            mem.topic(text)
    theme = next(t["id"] for t in mem.topics() if t["id"] != "current")
    assert mem.topic(str(theme).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))) == mem.topic(theme)


def test_read_returns_a_message_with_its_neighbours(mem):
    items = mem.list()
    window = mem.read(items[2].id, before=1, after=1)
    assert [i.id for i in window] == [items[1].id, items[2].id, items[3].id]


def test_docs_hierarchy_example_runs_as_written(tmp_path, monkeypatch, capsys):
    """docs/hierarchy.md's opening example runs from a fresh namespace: the topic it prints is one that exists
    (its only message waits in the CURRENT buffer), rendered with the entry format the comment shows."""
    from tests.readme_examples import examples, run

    monkeypatch.chdir(tmp_path)  # the example creates agent.db in the working directory
    (where, code), = examples("hierarchy")
    mem = run(code, where)["mem"]
    entries = [line for line in capsys.readouterr().out.splitlines() if line.startswith("- <")]
    assert [SIG.match(line).groups() for line in entries] == [
        ("0", "unknown", "Ann", "Remember: the demo moved to Friday.")]
    assert [m.text for m in mem.recall("When is the demo?").messages] == ["Remember: the demo moved to Friday."]
    mem.close()


@pytest.mark.parametrize("timestamp, shown", [(None, None), ("2024-05-02T10:03:00", "2024-05-02 10:03")])
def test_topic_times_read_the_same_before_and_after_consolidation(timestamp, shown):
    """A topic's ``first_time`` / ``last_time`` name its messages' time the same way in the CURRENT entry and in the
    theme it becomes: the time as "YYYY-MM-DD HH:MM", or None for messages without one (never the word "undated" in
    one place and None in the other, which the MCP schema and the command line read as different things)."""
    mem = Memory(None)
    mem.add("Remember: the demo moved to Friday.", speaker="Ann", session_id="s1", timestamp=timestamp)
    (current,) = mem.topics()
    mem.consolidate("deep")
    (theme,) = mem.topics()
    assert (current["id"], theme["id"]) == ("current", 0)
    assert (current["first_time"], current["last_time"]) == (theme["first_time"], theme["last_time"]) == (shown, shown)


def test_a_topic_spans_the_times_of_all_its_messages():
    """A status an agent's tool reports every hour is one fact read from many messages: its semantic keeps the time
    of the first, and the theme's span read only that, so 120 messages over five days read as one minute. The span
    is the times of the theme's messages, as its message count is."""
    m = Memory(None)
    m.add_many({"text": f"The billing service reported status healthy with {k % 3} open incidents.", "speaker": "monitor",
                "role": "tool", "session_id": f"s{k // 10}", "timestamp": 1_700_000_000 + k * 3600}
               for k in range(120))
    m.consolidate("deep")
    themes = [t for t in m.topics() if t["id"] != "current"]
    assert themes
    for t in themes:
        ids = m._ns.state().life().hier.theme_messages(t["id"])
        times = sorted(m.get(i).timestamp for i in ids)
        assert (t["first_time"], t["last_time"]) == (f"{times[0]:%Y-%m-%d %H:%M}", f"{times[-1]:%Y-%m-%d %H:%M}")
        doc = m.topic(t["id"])
        assert f"span: {times[0]:%Y-%m-%d} – {times[-1]:%Y-%m-%d}" in doc
    assert any(t["first_time"] != t["last_time"] for t in themes)
    m.close()
