"""A context holds each text once (hippo.engine.pack): the copies of one text collapse into the line packed first,
which says how many times and over which days the text was written. Checked against hand-written cases, against
the equality of the messages' tokens (the digests that find copies), and against the context's own token count."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import numpy as np
import pytest

from hippo import Memory
from hippo.text import tokenizer


def _ts(day: int) -> float:
    return datetime(2024, 3, day, 9, 0, tzinfo=timezone.utc).timestamp()


def _dentist(mem: Memory, days: int = 20) -> None:
    for d in range(1, days + 1):
        mem.add("Can you remind me when my dentist appointment is?", role="user", session_id=f"s{d}", timestamp=_ts(d))
        mem.add("Your dentist appointment is on May 3 at 10 AM.", role="assistant", session_id=f"s{d}",
                timestamp=_ts(d) + 5)
    mem.add("I moved my dentist appointment to May 10, the clinic called.", role="user", session_id="s30",
            timestamp=_ts(30))


def _line(text: str, body: str) -> str:
    return next(line for line in text.splitlines() if line.endswith(body))


def test_copies_collapse_into_one_line_with_their_count_and_days():
    with Memory(None) as mem:
        _dentist(mem)
        rc = mem.recall("When is my dentist appointment?", budget_tokens=300)
        assert _line(rc.text, "Can you remind me when my dentist appointment is?") == \
            "user (20 times, 1 March 2024 to 20 March 2024): Can you remind me when my dentist appointment is?"
        assert rc.text.count("Can you remind me") == 1
        assert rc.text.count("Your dentist appointment is on May 3") == 1
        asked = [m for m in rc.messages if m.text.startswith("Can you remind me")]
        assert len(asked) == 1  # the messages returned are the lines shown
        answer = next(m for m in rc.messages if m.text.startswith("Your dentist appointment"))
        assert rc.repeats == {asked[0].id: 20, answer.id: 20}


def test_the_room_copies_leave_goes_to_the_next_distinct_message():
    # Each copy ranks like the others; without the collapse, 300 tokens held fourteen copies of the question and
    # never the message that moved the appointment.
    with Memory(None) as mem:
        _dentist(mem)
        rc = mem.recall("When is my dentist appointment?", budget_tokens=300)
        assert "I moved my dentist appointment to May 10" in rc.text
        assert rc.tokens == tokenizer.count_tokens(rc.text) <= 300


def test_a_text_one_character_apart_is_not_a_copy():
    with Memory(None) as mem:
        mem.add('{"city": "Dublin", "temp_c": 11}', role="tool", session_id="a", timestamp=_ts(1))
        mem.add('{"city": "Dublin", "temp_c": 12}', role="tool", session_id="a", timestamp=_ts(2))
        mem.add('{"city": "Dublin", "temp_c": 11}', role="tool", session_id="a", timestamp=_ts(3))
        rc = mem.recall("Dublin temp_c", budget_tokens=200)
        assert 'tool (2 times, 1 March 2024 to 3 March 2024): {"city": "Dublin", "temp_c": 11}' in rc.text
        assert 'tool: {"city": "Dublin", "temp_c": 12}' in rc.text


def test_copies_said_on_one_day_give_their_count_only():
    with Memory(None) as mem:
        for k in range(3):
            mem.add("build failed: missing semicolon in main.c", role="tool", session_id="a", timestamp=_ts(5) + k)
        rc = mem.recall("why did the build fail?", budget_tokens=200)
        assert "tool (3 times): build failed: missing semicolon in main.c" in rc.text


def test_a_filter_counts_only_the_copies_it_admits():
    with Memory(None) as mem:
        _dentist(mem)
        rc = mem.recall("When is my dentist appointment?", budget_tokens=300,
                        filter={"session_id": {"$in": ["s2", "s3", "s4"]}})
        assert _line(rc.text, "Can you remind me when my dentist appointment is?") == \
            "user (3 times, 2 March 2024 to 4 March 2024): Can you remind me when my dentist appointment is?"
        assert "May 10" not in rc.text


def _classes(values) -> list[frozenset[int]]:
    groups: dict = {}
    for i, v in enumerate(values):
        groups.setdefault(v, set()).add(i)
    return sorted((frozenset(g) for g in groups.values()), key=min)


def test_digests_follow_the_tokens_through_deletes_and_reopening(tmp_path):
    """Two messages share a digest exactly when their tokens are the same, after appends, after a delete rebuilt
    the index and after the store was reopened from its snapshot."""
    rng = random.Random(7)
    pool = ["ok", "done", "build failed", "weather: 11C light rain", "  ok ", "🙂", "北京", "It is 11 degrees.",
            "It is 12 degrees.", "x" * 300]
    texts = [rng.choice(pool) + (" again" if rng.random() < 0.2 else "") for _ in range(200)]
    path = str(tmp_path / "m.db")

    def check(mem: Memory) -> None:
        idx = mem.engine.state().index
        kept = [mem.get(int(i)).text for i in idx.ids.view]
        want = _classes(tuple(tokenizer.encode(t)) for t in kept)
        assert _classes(idx.digests.tolist()) == want
        for row in range(0, len(kept), 17):
            same = [r for r, t in enumerate(kept) if t == kept[row]]
            assert idx.copies_of(row).tolist() == same

    with Memory(path) as mem:
        items = mem.add_many({"text": t} for t in texts[:120])
        mem.add_many({"text": t} for t in texts[120:])
        check(mem)
        mem.delete([it.id for it in items[::3]])
        check(mem)
    with Memory(path) as mem:
        check(mem)


@pytest.mark.parametrize("budget", [40, 90, 160, 333, 700])
def test_contexts_with_copies_stay_within_budget_and_count_every_copy(budget):
    rng = random.Random(budget)
    lines = ["status: ok", "status: degraded", "deploy finished in 42s", "deploy failed: timeout",
             "rolling back to v1.2", "all checks green"]
    written = []
    with Memory(None) as mem:
        for k in range(120):
            written.append(rng.choice(lines))
            mem.add(written[-1], role="tool", session_id=f"s{k // 7}", timestamp=_ts(1 + k // 7))
        rc = mem.recall("did the deploy fail or finish, and what was the status?", budget_tokens=budget)
        assert rc.tokens == tokenizer.count_tokens(rc.text) <= budget
        shown = [line.split(": ", 1) for line in rc.text.splitlines() if not line.startswith("[")]
        assert len(shown) == len({body for _, body in shown}) == len(rc.messages)
        noted = 0
        for prefix, body in shown:
            times = written.count(body)
            if prefix != "tool":  # a copy competed for the context: the count is every copy's
                assert times > 1 and prefix.startswith(f"tool ({times} times, ")
                noted += 1
        assert noted or budget < 100


def test_digests_are_the_same_in_blocks_as_message_by_message(monkeypatch):
    """The digest of each message computed in one pass over many messages, in blocks of a few tokens (as a large
    append or a load hashes them), equals the digest written out message by message."""
    from hippo.index import coindex

    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 5000, size=300)
    lengths[::7] = 0
    tokens = rng.integers(0, 100_000, size=int(lengths.sum())).astype(np.uint32)
    ends = np.cumsum(lengths)
    mult = [int(x) for x in coindex._DIGEST_MULTIPLIERS]
    want = []
    for end, n in zip(ends.tolist(), lengths.tolist()):
        h = 0
        for k, t in enumerate(tokens[end - n:end].tolist()):
            h = (h + (t + 1) * mult[k % 4096]) % 2**64
        want.append(h ^ (n * 0x9E3779B97F4A7C15) % 2**64)
    for block in (1, 97, 1 << 20):
        monkeypatch.setattr(coindex, "_DIGEST_BLOCK", block)
        assert coindex.NamespaceIndex._digests_of(tokens, ends).tolist() == want


def test_a_copy_is_the_same_text_in_the_same_voice():
    with Memory(None) as mem:
        for d in (1, 2, 3):
            mem.add("Always answer in metric units.", role="user", speaker="Ana", session_id="a", timestamp=_ts(d))
        mem.add("Always answer in metric units.", role="assistant", session_id="a", timestamp=_ts(4))
        mem.add("Always answer in metric units.", role="user", speaker="Ben", session_id="a", timestamp=_ts(5))
        rc = mem.recall("metric units", budget_tokens=300)
        assert "Ana (3 times, 1 March 2024 to 3 March 2024): Always answer in metric units." in rc.text
        assert "assistant: Always answer in metric units." in rc.text
        assert "Ben: Always answer in metric units." in rc.text
        assert len(rc.messages) == 3


def test_copies_another_handle_wrote_are_counted(tmp_path):
    path = str(tmp_path / "shared.db")
    with Memory(path) as reader, Memory(path) as writer:
        reader.add("status: degraded", role="tool", session_id="a", timestamp=_ts(1))
        assert "tool: status: degraded" in reader.recall("status", budget_tokens=100).text
        for d in (2, 3):  # appended through the other handle: the reader's index follows them
            writer.add("status: degraded", role="tool", session_id="a", timestamp=_ts(d))
        rc = reader.recall("status", budget_tokens=100)
        assert "tool (3 times, 1 March 2024 to 3 March 2024): status: degraded" in rc.text


def test_a_deletion_keeps_the_survivors_glue_and_digests_without_reading_them_again(monkeypatch):
    """Each message's word-glue flags and digest are of its own tokens: after a deletion they are those computed
    afresh over the surviving messages (the reference), and are not computed again over the whole stream."""
    from hippo.index import coindex

    texts = ["了iPhone15 arrived ⭐ today", "Always answer in metric units.", "Medellín, then 我去了Medellín旅游",
             "Always answer in metric units.", "ｉＰｈｏｎｅ１５ is new", "ok", "The 🐕 ran", "one more line"]
    with Memory(None) as mem:
        items = mem.add_many({"text": t, "speaker": "Ann"} for t in texts)
        idx = mem.engine.state().index
        called: list[int] = []
        for name in ("_glue_of", "_digests_of"):
            real = getattr(coindex.NamespaceIndex, name)
            monkeypatch.setattr(coindex.NamespaceIndex, name, staticmethod(
                lambda tokens, ends, real=real: called.append(len(tokens)) or real(tokens, ends)))
        mem.delete([items[0].id, items[3].id, items[6].id])
        assert called == []
        monkeypatch.undo()
        idx = mem.engine.state().index
        tokens = idx.content.access_range(0, len(idx.content))
        assert np.array_equal(idx.glue, coindex.NamespaceIndex._glue_of(tokens, idx.ends.view))
        assert idx.digests.tolist() == coindex.NamespaceIndex._digests_of(tokens, idx.ends.view).tolist()


@pytest.mark.parametrize("copies", [10, 60, 300, 1000, 3000])
def test_copies_do_not_keep_a_distinct_message_out_of_a_context_with_room(copies):
    """The shortlist of candidates that can reach a context stops once their estimated cost reaches a few budgets,
    and every copy of a status line counted its own cost: 60 copies of a CI result filled it, and the one distinct
    message about the build, ranked after them, was left out of a 200-token context holding a 22-token line. Copies
    after the first take none of the shortlist's reach, as the packer gives them none of the budget. Past the
    channels' candidate limit (400) the copies filled the candidate lists themselves, and the message was left out
    again (1,000 copies); a text now takes at most four places in a list."""
    mem = Memory(None)
    mem.add_many({"text": "Build succeeded: 0 errors, 0 warnings", "speaker": "ci", "role": "tool",
                  "session_id": f"s{i // 50}", "timestamp": 1_700_000_000 + i * 60} for i in range(copies))
    failed = mem.add("The build failed yesterday with 3 errors in the parser", speaker="user",
                     timestamp=1_700_000_000 + (copies + 100) * 60)
    alone = Memory(None)  # the same history with the status line written once
    alone.add("Build succeeded: 0 errors, 0 warnings", speaker="ci", role="tool", session_id="s0",
              timestamp=1_700_000_000)
    alone.add("The build failed yesterday with 3 errors in the parser", speaker="user",
              timestamp=1_700_000_000 + (copies + 100) * 60)
    r = mem.recall("build errors", budget_tokens=200)
    assert [m.text for m in alone.recall("build errors", budget_tokens=200).messages] == [m.text for m in r.messages]
    assert failed.id in [m.id for m in r.messages] and r.repeats == {1: copies}
    assert tokenizer.count_tokens(r.text) == r.tokens <= 200
    mem.close()
    alone.close()


def _top_texts_reference(rows, scores, keys, limit, left_out):
    """:func:`hippo.index.channels.top_texts` written out: walk the rows best first (ties: earlier row first),
    counting each text's copies; a copy after its text's fourth takes no place."""
    order = sorted(range(len(rows)), key=lambda j: (-scores[j], rows[j]))
    seen: dict[int, int] = {}
    places, end = [], len(order)
    for pos, j in enumerate(order):
        k = keys[j]
        seen[k] = seen.get(k, 0) + 1
        if seen[k] <= 4:
            if len(places) == limit:
                end = pos
                seen[k] -= 1
                break
            places.append(pos)
    before = [keys[j] for j in order[:end]]
    stands = [p for p in places if before.count(keys[order[p]]) > 4]
    kept_shown = {keys[order[p]] for p in places if rows[order[p]] not in left_out}
    lost = {keys[order[p]] for p in places} - kept_shown
    for k in sorted(lost, key=lambda k: min(p for p in places if keys[order[p]] == k)):
        extra = [pos for pos in range(end) if keys[order[pos]] == k and rows[order[pos]] not in left_out]
        if extra:
            places.append(extra[0])
            stands.append(extra[0])
    return [rows[order[p]] for p in sorted(places)], [rows[order[p]] for p in sorted(set(stands))]


def _assert_top_texts(idx, rows, scores, keys, left_out, limits) -> None:
    """``channels.top_texts`` of the scored ``rows`` (``left_out`` rejected) equals the walk over the ranking at each
    of ``limits``."""
    from hippo.index import channels
    from hippo.index.coindex import Scored

    for limit in limits:
        got_rows, got_stands = channels.top_texts(Scored(rows, scores), limit, idx,
                                                  (lambda c: np.isin(c, left_out)) if left_out.size else None)
        want_rows, want_stands = _top_texts_reference(rows.tolist(), scores.tolist(), keys, limit,
                                                      set(left_out.tolist()))
        assert got_rows.tolist() == want_rows
        assert got_stands.tolist() == want_stands


@pytest.mark.parametrize("seed", range(40))
def test_each_text_takes_at_most_four_places_in_a_channel_list(seed):
    """Against a walk over the ranking: random scores (many ties) over texts written up to 60 times, some copies
    left out (excluded by the recall)."""
    rng = random.Random(seed)
    n_texts = rng.choice([1, 3, 20, 200])
    texts = [f"status {k}" for k in range(n_texts)]
    with Memory(None) as mem:
        mem.add_many({"text": rng.choice(texts), "role": rng.choice(["tool", "user"])}
                     for _ in range(rng.randint(1, 600)))
        idx = mem.engine.state().index
        n = len(idx)
        rows = np.asarray(sorted(rng.sample(range(n), rng.randint(1, n))), dtype=np.int64)
        scores = np.asarray([rng.choice([1.0, 2.0, 3.0, rng.random()]) for _ in rows])
        keys = idx.copy_keys(rows).tolist()
        left_out = np.asarray(sorted(rng.sample(rows.tolist(), rng.randint(0, rows.size // 2))), dtype=np.int64)
        _assert_top_texts(idx, rows, scores, keys, left_out, (1, 5, 50, 400))
        # copies are the same text in the same voice: the keys group exactly the rows of equal (text, role)
        voice = [(mem.get(int(idx.ids.a[r])).text, int(idx.role.a[r])) for r in rows.tolist()]
        assert len(set(keys)) == len(set(voice))
        assert all((keys[a] == keys[b]) == (voice[a] == voice[b]) for a in range(0, len(rows), 7)
                   for b in range(len(rows)))


@pytest.mark.parametrize("seed", range(12))
def test_a_list_of_distinct_texts_is_the_best_rows(seed):
    """Where no text has a copy among the best rows, the list is the best ``limit`` rows (ties: earlier row first)
    and nothing stands for copies, even when later rows are copies of listed ones: against the walk over the
    ranking, with limits at, below and above the number of distinct texts."""
    rng = random.Random(seed)
    n_texts = rng.randint(5, 120)
    with Memory(None) as mem:
        mem.add_many({"text": f"note {k}", "role": "user"} for k in range(n_texts))
        mem.add_many({"text": f"note {rng.randrange(n_texts)}", "role": "user"} for _ in range(rng.randint(0, 40)))
        idx = mem.engine.state().index
        rows = np.arange(len(idx), dtype=np.int64)
        # the copies (the later rows) score below every original, so the best rows are distinct texts
        scores = np.asarray([rng.choice([2.0, 3.0, 2.0 + rng.random()]) if r < n_texts else rng.random()
                             for r in rows.tolist()])
        keys = idx.copy_keys(rows).tolist()
        left_out = np.asarray(sorted(rng.sample(rows.tolist(), rng.randint(0, rows.size // 3))), dtype=np.int64)
        _assert_top_texts(idx, rows, scores, keys, left_out,
                          sorted({1, n_texts // 2, n_texts - 1, n_texts, n_texts + 1, rows.size} - {0}))


def test_a_line_of_many_copies_is_shown_where_a_filter_a_period_or_exclude_leaves_some():
    """The candidate lists keep a text's best copies; when a recall's filter, time scope or ``exclude`` leaves out
    those, a copy it admits stands for the text, counting the copies it admits (hand-counted: 50 a session)."""
    day = 86_400
    mem = Memory(None)
    items = mem.add_many({"text": "Build succeeded: 0 errors, 0 warnings", "speaker": "ci", "role": "tool",
                          "session_id": f"s{i // 50}", "timestamp": 1_700_006_400 + (i // 50) * day + i}
                         for i in range(1000))
    mem.add("The build failed yesterday with 3 errors in the parser", speaker="user", session_id="s30",
            timestamp=1_700_006_400 + 30 * day)
    line = "ci ({} times, {}): Build succeeded: 0 errors, 0 warnings"
    got = mem.recall("build errors", budget_tokens=200, filter={"session_id": "s19"})
    assert "ci (50 times): Build succeeded: 0 errors, 0 warnings" in got.text.splitlines()  # all on 4 December
    (shown,) = [m.id for m in got.messages]
    assert got.repeats == {shown: 50} and shown in [it.id for it in items[950:]]
    got = mem.recall("build errors", budget_tokens=200, since=1_700_006_400 + 18 * day)
    assert line.format(100, "3 December 2023 to 4 December 2023") in got.text.splitlines()
    got = mem.recall("build errors", budget_tokens=200, exclude=[it.id for it in items[:10]])
    assert line.format(990, "15 November 2023 to 4 December 2023") in got.text.splitlines()
    assert not {m.id for m in got.messages} & {it.id for it in items[:10]}
    assert "The build failed yesterday" in got.text
    mem.close()


_CONCEPTS = (("build", "compil"), ("fail", "problem", "error", "broke"), ("succeed", "success"), ("parser",),
             ("lunch", "food"), ("rain",))


def _concepts(texts):
    """A toy embedding: which of a few concepts a text names (the query's words need not be the message's)."""
    return [[1.0 if any(w in t.lower() for w in c) else 0.0 for c in _CONCEPTS] + [0.1] for t in texts]


@pytest.mark.parametrize("copies", [10, 300, 1000])
def test_copies_do_not_fill_the_embedding_channel(copies):
    """A message only the embedding finds (no word of the question) is recalled past a status line written
    hundreds of times, as in the same history with the line written once. The copies filled the embedding
    channel's list past 400, and below that their cosines made the candidates' median, which the embedding's
    evidence is measured from: 300 copies already left the message out."""
    def history(n):
        mem = Memory(None, embed=_concepts)
        mem.add_many({"text": "Build succeeded: 0 errors, 0 warnings", "speaker": "ci", "role": "tool",
                      "session_id": f"s{i // 50}", "timestamp": 1_700_000_000 + i * 60} for i in range(n))
        mem.add_many({"text": f"We had lunch at the food court number {k} and it started to rain", "speaker": "user",
                      "timestamp": 1_700_000_000 + (n + k) * 60} for k in range(30))
        mem.add("The compiler broke yesterday in the parser", speaker="user", timestamp=1_700_000_000 + (n + 100) * 60)
        return mem

    with history(copies) as mem, history(1) as alone:
        r = mem.recall("what build problems did we have?", budget_tokens=200)
        want = alone.recall("what build problems did we have?", budget_tokens=200)
        assert "The compiler broke yesterday in the parser" in [m.text for m in r.messages]
        # the same lines, less what the count on the status line's takes from the budget
        assert set(m.text for m in r.messages) <= set(m.text for m in want.messages)
        assert len(r.messages) >= len(want.messages) - 1 and list(r.repeats.values()) == [copies]


def test_copies_do_not_fill_the_rows_a_named_period_adds():
    """A question made of a period ("last week") adds the period's messages, newest first, to the candidates: a
    heartbeat written 2,000 times that week filled them, and the one thing the user did was left out of a context
    holding a 29-token line. The period's texts are added once each, the newest copy standing for the others."""
    from datetime import timedelta

    now = datetime(2024, 6, 14, 12, tzinfo=timezone.utc)
    start = now - timedelta(days=9)
    with Memory(None) as mem:
        lease = mem.add("I signed the lease for the new flat in Leeds", role="user",
                        timestamp=start + timedelta(hours=1))
        beats = mem.add_many({"text": "heartbeat ok", "role": "tool",
                              "timestamp": (start + timedelta(hours=2, seconds=150 * i)).timestamp()}
                             for i in range(2000))
        r = mem.recall("What did I do last week?", budget_tokens=300, asked_at=now)
        assert lease.id in [m.id for m in r.messages]
        assert "tool (2000 times, 5 June 2024 to 9 June 2024): heartbeat ok" in r.text.splitlines()
        assert r.repeats == {beats[-1].id: 2000}  # the newest copy
