"""A machine output's near-duplicates (the same text once its times, counters and ids are masked: a health check
polled all day) are copies of one text: one line in a context, the newest of them shown with their count and days
(hippo.text.masking, NamespaceIndex.near_keys, hippo.engine.pack). Checked against hand-written cases, against
groups known by construction over random histories, and through deletions and snapshots with and without the
saved keys."""

from __future__ import annotations

import random
import re
import time
import uuid

import numpy as np
import pytest

from hippo import Memory
from hippo.index.coindex import NamespaceIndex
from hippo.native import DynamicWaveletMatrix
from hippo.store import snapshot
from hippo.text import masking, tokenizer

T0 = 1_772_359_200  # 1 March 2026 10:00:00 UTC


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _health(i: int, rng: random.Random, step: int = 30, start: float = T0) -> str:
    return '{"status":"ok","ts":"%s","uptime_s":%d,"req":"%08x"}' % (
        _iso(start + 7 + step * i), 3607 + step * i, rng.getrandbits(32))


def _checks(mem: Memory, n: int, step: int = 30, start: float = T0) -> list:
    rng = random.Random(1)
    return mem.add_many({"text": _health(i, rng, step, start), "role": "tool", "speaker": "health",
                         "session_id": "ops", "timestamp": start + 7 + step * i} for i in range(n))


def test_the_masked_text_of_a_machine_output_and_of_chat_lines():
    assert masking.masked('{"status":"ok","ts":"2026-03-01T10:00:07Z","uptime_s":3607,"req":"9f1c2ab3"}') == \
        '{"status":"ok","ts":"\x00T","uptime_s":\x00N,"req":"\x00N"}'
    assert masking.masked("backup done at 2026-03-01 02:00:13,123 with 4123 files") == \
        "backup done at \x00T with \x00N files"
    assert masking.masked("job 550e8400-e29b-41d4-a716-446655440000 finished, 1200 rows") == \
        "job \x00U finished, \x00N rows"
    # a whole number of one to three digits is a state, kept as written (and counted as a field)
    assert masking.masked("job 550e8400-e29b-41d4-a716-446655440000 finished, 12 rows") == \
        "job \x00U finished, 12 rows"
    assert masking.masked("[2026-03-01 10:00:07] GET /health 200 in 33ms, cpu 0.53") == \
        "[\x00T] GET /health 200 in \x00D, cpu \x00N"
    assert masking.masked("[2026-03-01 10:00:07] GET /health 500 in 1033ms, cpu 0.53") == \
        "[\x00T] GET /health 500 in \x00D, cpu \x00N"
    # a number written onto a name is the name's: web-3 and web-4, JIRA-4412 and JIRA-4413 are other outputs
    for name in ("web-3", "db_2", "s3", "JIRA-4412"):
        assert masking.masked(f'{{"host":"{name}","ts":"2026-03-01T10:00:07Z","uptime_s":3607}}') == \
            f'{{"host":"{name}","ts":"\x00T","uptime_s":\x00N}}'
    # chat lines: no time with seconds, no UUID, no hex id; or too few fields; or too short once masked
    for text in ("I ran 5 km", "I ran 5 km in 32 minutes on day 3 of 10", "my appointment is on 2024-05-10 at 10:30",
                 '{"city": "Dublin", "temp_c": 11}', "the deadbeef cafe opens at 10:00:00",
                 "ok 12:00:01 #4", "ok", "lol", ""):
        assert masking.masked(text) is None, text
    # the same output with other values has the same key; another text has another
    a = masking.key('{"status":"ok","ts":"2026-03-01T10:00:07Z","uptime_s":3607,"req":"9f1c2ab3"}')
    b = masking.key('{"status":"ok","ts":"2026-03-02T23:59:59Z","uptime_s":9907,"req":"07923986"}')
    c = masking.key('{"status":"down","ts":"2026-03-02T23:59:59Z","uptime_s":9907,"req":"07923986"}')
    d = masking.key('{"status":"ok","ts":"2026-03-02T23:59:59Z","uptime_s":19,"req":"dfbaaafa"}')
    e = masking.key('{"status":"ok","ts":"2026-03-02T23:59:59Z","uptime_s":19,"req":"1f1c2ab3"}')
    assert a == b != d == e and a != c and None not in (a, b, c, d, e)


def test_a_state_written_as_a_small_number_keeps_its_outputs_apart():
    """A status or a count of one to three digits is what tells one state from another: health checks that went
    from 200 to 500 are two lines, each with its own count and newest copy, not one line showing the newest 200."""
    rng = random.Random(3)
    with Memory(None) as mem:
        logs = mem.add_many({"text": "[%s] GET /health %d req %08x" % (
            _iso(T0 + 60 * i).replace("T", " ")[:-1], 500 if 40 <= i < 52 else 200, rng.getrandbits(32)),
            "role": "tool", "speaker": "probe", "session_id": "ops", "timestamp": T0 + 60 * i} for i in range(100))
        rc = mem.recall("did the health check fail with 500?", budget_tokens=300)
        lines = rc.text.splitlines()
        assert f"probe (12 times): {logs[51].text}" in lines
        assert f"probe (88 times): {logs[-1].text}" in lines


def test_health_checks_take_one_line_the_newest_with_their_count():
    # 1,000 checks: before, a 500-token context held twelve of them, one line each
    with Memory(None) as mem:
        checks = _checks(mem, 1000)
        down = mem.add("The payments service went down at 11:40 because the database disk filled up", role="user",
                       session_id="ops2", timestamp=T0 + 40_000)
        rc = mem.recall("what is the status of the service health check?", budget_tokens=500)
        lines = [line for line in rc.text.splitlines() if not line.startswith("[")]
        assert lines == [f"health (1000 times): {checks[-1].text}", f"user: {down.text}"]
        assert rc.repeats == {checks[-1].id: 1000}
        assert [m.id for m in rc.messages] == [checks[-1].id, down.id]
        assert rc.tokens == tokenizer.count_tokens(rc.text) <= 500


def test_near_copies_do_not_crowd_out_the_message_that_answers():
    # before: 300 tokens held six health checks of db-2, and never the message saying what was wrong with it
    with Memory(None) as mem:
        disk = mem.add("The disk on db-2 filled up overnight, so writes fail", role="user", session_id="ops0",
                       timestamp=T0 - 100)
        rng = random.Random(2)
        checks = mem.add_many({"text": '{"status":"ok","service":"db-2","ts":"%s","uptime_s":%d,"req":"%08x"}' % (
            _iso(T0 + 30 * i), 3607 + 30 * i, rng.getrandbits(32)), "role": "tool", "speaker": "health",
            "session_id": "ops", "timestamp": T0 + 30 * i} for i in range(1000))
        for question in ("what is wrong with db-2?", "db-2 status"):
            rc = mem.recall(question, budget_tokens=300)
            assert sorted(m.id for m in rc.messages) == [disk.id, checks[-1].id]


def test_the_line_counts_the_days_and_what_the_recall_admits():
    day = 86_400
    with Memory(None) as mem:
        midnight = T0 - 36_000
        checks = _checks(mem, 90, step=day // 30, start=midnight)  # 1 to 3 March, thirty a day
        rc = mem.recall("health check status", budget_tokens=300, exclude=[checks[-1].id, checks[-2].id])
        assert f"health (88 times, 1 March 2026 to 3 March 2026): {checks[-3].text}" in rc.text.splitlines()
        rc = mem.recall("health check status", budget_tokens=300, until=midnight + day)
        assert f"health (30 times): {checks[29].text}" in rc.text.splitlines()
        rc = mem.recall("health check status", budget_tokens=300, filter={"session_id": "ops"})
        assert f"health (90 times, 1 March 2026 to 3 March 2026): {checks[-1].text}" in rc.text.splitlines()


def test_a_question_naming_a_value_of_one_copy_gets_that_copy():
    with Memory(None) as mem:
        checks = _checks(mem, 200)
        asked = checks[57]
        req = asked.text.rsplit('"req":"', 1)[1][:8]
        rc = mem.recall(f"what did the health check with request {req} report?", budget_tokens=300)
        assert f"health (200 times): {asked.text}" in rc.text.splitlines()
        assert rc.repeats == {asked.id: 200}


def test_chat_lines_with_other_numbers_are_not_copies():
    with Memory(None) as mem:
        texts = ["I ran 5 km in 32 minutes this morning", "I ran 7 km in 41 minutes this morning",
                 "my appointment is on 2024-05-10 at 10:30", "my appointment is on 2024-06-02 at 09:15"]
        for k, text in enumerate(texts):
            mem.add(text, role="user", session_id="a", timestamp=T0 + k)
        rc = mem.recall("how far did I run and when is my appointment?", budget_tokens=300)
        assert sorted(m.text for m in rc.messages) == sorted(texts) and rc.repeats == {}


def test_a_persons_messages_are_never_near_copies():
    """What a person says twice with another value is two statements: a password or an id written by the user is
    no machine output's changing field, and a question may ask for the first ("what was my old password?"). The
    same texts from a tool are one line showing the newest."""
    texts = ["my new wifi password is xKqPzRtYvWmNbHgF now", "my new wifi password is QwErTyUiOpAsDfGh now"]
    for role, lines in (("user", texts), ("tool", [texts[1]])):
        with Memory(None) as mem:
            for k, text in enumerate(texts):
                mem.add(text, role=role, speaker="Ann", session_id="a", timestamp=T0 + 86_400 * k)
            mem.add("Noted, I will remember it.", role="assistant", session_id="a", timestamp=T0 + 5)
            rc = mem.recall("what is my wifi password?", budget_tokens=300)
            assert [m.text for m in rc.messages if m.role == role] == lines, role
            idx = mem.engine.state().index
            assert (idx.copy_keys(np.array([0]))[0] == idx.copy_keys(np.array([1]))[0]) == (role == "tool")
    # a health check pasted by the user, twice: two statements too, while the tool's checks are one group
    with Memory(None) as mem:
        rng = random.Random(5)
        checks = [_health(k, rng) for k in range(4)]
        for k, text in enumerate(checks):
            mem.add(text, role="user" if k < 2 else "tool", session_id="a", timestamp=T0 + k)
        idx = mem.engine.state().index
        assert [len(idx.copies_of(k)) for k in range(4)] == [1, 1, 2, 2]


def test_near_copies_are_of_one_voice():
    with Memory(None) as mem:
        rng = random.Random(3)
        for k in range(4):
            mem.add(_health(k, rng), role="tool", speaker="health", session_id="a", timestamp=T0 + k)
        mem.add(_health(9, rng), role="tool", speaker="probe", session_id="a", timestamp=T0 + 9)
        rc = mem.recall("health status", budget_tokens=300)
        assert [line.split(":", 1)[0] for line in rc.text.splitlines()[1:]] == ["health (4 times)", "probe"]


_MACHINE = [  # (template, fields): each field a function of a random generator
    ('{"status":"ok","ts":"%s","uptime_s":%d,"req":"%s"}',
     (lambda r: _iso(T0 + r.randrange(10**6)), lambda r: r.randrange(1000, 10**7),
      lambda r: "%08x" % r.getrandbits(32))),
    ("[%s] GET /health 200 in %dus", (lambda r: _iso(T0 + r.randrange(10**6)).replace("T", " ")[:-1],
                                      lambda r: r.randrange(1000, 10**6))),
    ("job %s finished: %d rows, %d errors", (lambda r: str(uuid.UUID(int=r.getrandbits(128))),
                                             lambda r: r.randrange(1000, 10**5), lambda r: 0)),
    ("deploy %s of build %d done at %s", (lambda r: "%012x" % r.getrandbits(48), lambda r: r.randrange(1000, 10**4),
                                          lambda r: _iso(T0 + r.randrange(10**6))[11:19])),
    # no digit: a session token drawn from letters of both cases (one in twenty reads as words and joins the others)
    ("login ok: session %s issued for user alice", (lambda r: "".join(r.choice(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(20)),)),
    ("%s", (lambda r: (" 12 passed in %.2fs " % r.uniform(0.5, 500)).center(80, "="),)),
]
_CHAT = ["I ran %d km today", "we need %d chairs and %d tables", "my appointment is on 2024-05-%02d at 10:%02d",
         "ok", "lol", "see you at %d"]


def _history(rng: random.Random, n: int) -> list[tuple[str, str, str, tuple]]:
    """(text, role, speaker, group) with the group known by construction: a machine template and its voice, or
    the exact text and its voice (a person's text is never a machine output: a template's in the user's voice is
    grouped by its text)."""
    out = []
    for _ in range(n):
        role, speaker = rng.choice([("tool", "health"), ("tool", "ci"), ("user", "Ann")])
        if rng.random() < 0.6:
            k = rng.randrange(len(_MACHINE))
            template, fields = _MACHINE[k]
            text = template % tuple(f(rng) for f in fields)
            out.append((text, role, speaker, ("text" if role == "user" else "machine",
                                              text if role == "user" else k, role, speaker)))
        else:
            template = rng.choice(_CHAT)
            text = template % tuple(rng.randrange(1, 4) for _ in range(template.count("%")))
            out.append((text, role, speaker, ("text", text, role, speaker)))
    return out


def _check_groups(idx: NamespaceIndex, groups: list[tuple]) -> None:
    assert len(idx) == len(groups)
    by_group: dict[tuple, list[int]] = {}
    for row, g in enumerate(groups):
        by_group.setdefault(g, []).append(row)
    for row, g in enumerate(groups):
        assert idx.copies_of(row).tolist() == by_group[g], (row, g)
    keys = idx.copy_keys(np.arange(len(groups))).tolist()
    assert all((keys[a] == keys[b]) == (groups[a] == groups[b]) for a in range(len(groups))
               for b in range(a, len(groups)))


@pytest.mark.parametrize("seed", range(6))
def test_near_copies_match_groups_known_by_construction(seed, tmp_path):
    """Random histories of machine outputs (health checks, log lines, job and deploy reports with random times,
    counters, UUIDs and hex ids) and chat lines holding numbers: the rows the index calls copies of each row are
    exactly those of its template in its voice (machine outputs) or of its text in its voice (chat lines), after
    appends, after a deletion and after a reopening from the snapshots."""
    rng = random.Random(seed)
    history = _history(rng, rng.randint(20, 300))
    path = str(tmp_path / "m.db")
    with Memory(path) as mem:
        items = mem.add_many({"text": t, "role": r, "speaker": s, "timestamp": T0 + k}
                             for k, (t, r, s, _) in enumerate(history))
        idx = mem.engine.state().index
        _check_groups(idx, [g for *_, g in history])
        gone = set(rng.sample(range(len(items)), len(items) // 4))
        mem.delete([items[k].id for k in gone])
        kept = [g for k, (*_, g) in enumerate(history) if k not in gone]
        _check_groups(mem.engine.state().index, kept)
        with mem.engine.rt.lock.write():
            mem.engine.state().save_derived(force=True)
    with Memory(path) as mem:
        _check_groups(mem.engine.state().index, kept)


def _slow_groups(texts: list[str], voices: list[tuple]) -> list[tuple]:
    """The near-duplicate group of each text by a slow walk: its masked form (:func:`hippo.text.masking.form`) in
    its voice where it is a machine output, or where it has no machine field but a machine output of that form in
    its voice is among ``texts``; else the text itself in its voice. A person's text (role user) is itself; a tool's
    text whose only masked fields are durations is a machine output."""
    forms = [None if v[0] == "user" else masking.form(t) for t, v in zip(texts, voices)]
    machine = {(f[0], v) for f, v in zip(forms, voices) if f is not None and (
        f[1] == masking.MACHINE or f[1] == masking.TIMED and v[0] == "tool")}
    return [(True, f[0], v) if f is not None and (f[0], v) in machine else (False, t, v)
            for t, f, v in zip(texts, forms, voices)]


@pytest.mark.parametrize("seed", range(4))
def test_near_keys_group_as_the_masked_texts_do(seed, tmp_path):
    """Random strings of digits, hex letters, separators and words (times, ids and counters appear by chance):
    the index's near-duplicate groups, which decode and mask only the messages holding a digit token or a small
    letter before a capital (in a token or across two), are the
    groups of a slow walk masking every text (:func:`_slow_groups`), added in several batches, after deletions
    (which take the last machine output of some forms: the texts of that form without a machine field are
    themselves again) and after a reopening from the snapshots."""
    rng = random.Random(100 + seed)
    pieces = ["0", "7", "12", "2026-03-01", "T", " ", "10:00:07", "Z", ":", "-", "ab", "f3", "deadbeef", "9f1c2ab3",
              '"req":"', "ok", "status", ",", "550e8400-e29b-41d4-a716-446655440000", ".5", "x", "0x", "uptime",
              "10:07", "1772359207", '"ts":', "ts=", '"', "10.0.0.1", "33ms", "3 hours", "req-", "07923986", "/",
              "req=", "abcdef1a", "dfbaaafa", "job ", "xKqPzRtYvWmNbHgF", "getElementById", "q", "P", "Zk",
              "=====", " === ", "\n", "_", "3G5GzuUV0x", " passed in ", "3.41 s", "0.412s",
              "x2kqp", "v1stgxr8", "-pk2mz", "python3", "z5jdhi6bmyt", "7d4b9c8f6"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(300)]
    # outputs whose id was drawn as a hex id or as digits alone (a field of no machine kind)
    for _ in range(100):
        name = rng.choice(["req", "trace", "span"])
        texts.insert(rng.randrange(len(texts) + 1), f"GET /health 200 {name}=" + rng.choice(
            ["%08x" % rng.getrandbits(32), "%08d" % rng.randrange(10 ** 8)]) + " served ok in 12 steps")
    # outputs without a digit whose session id was drawn from letters of both cases, read as drawn or as words
    for _ in range(60):
        token = rng.choice(["".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
                                    for _ in range(rng.choice([10, 14]))), "getElementById", "fetchWeatherData"])
        texts.insert(rng.randrange(len(texts) + 1), f"login ok: session {token} issued for user alice")
    texts = [t if t.strip() else "ok" for t in texts]
    # test runs' summaries, whose only changing field is the time they took
    for _ in range(60):
        texts.insert(rng.randrange(len(texts) + 1), rng.choice(["12 passed in %.2fs", "ok  example.com/api\t%.3fs"])
                     % rng.uniform(0, 9))
    voices = [rng.choice([("tool", None), ("user", "Ann"), ("assistant", None)]) for _ in texts]
    groups = _slow_groups(texts, voices)
    assert any(g[0] for g in groups) and not all(g[0] for g in groups)
    assert any(g[0] and masking.form(t)[1] == masking.TIMED for g, t in zip(groups, texts))
    assert any(g[0] and "_" not in t and "v1stgxr8" in t for g, t in zip(groups, texts))
    assert any(g[0] and masking.masked(t) is None for g, t in zip(groups, texts))  # texts that join a group
    assert any(g[0] and not any(c.isdigit() for c in t) for g, t in zip(groups, texts))
    path = str(tmp_path / "m.db")
    with Memory(path) as mem:
        items = []
        for lo in range(0, len(texts), 97):
            items += mem.add_many({"text": t, "role": r, "speaker": s}
                                  for t, (r, s) in zip(texts[lo:lo + 97], voices[lo:lo + 97]))
        _check_groups(mem.engine.state().index, groups)
        # delete every machine output of some forms and a random share of the rest
        forms = sorted({g[1] for g, t in zip(groups, texts) if g[0] and masking.masked(t) is None})
        dropped = set(rng.sample(forms, max(1, len(forms) // 2)))
        gone = {k for k, t in enumerate(texts) if masking.masked(t) is not None and masking.masked(t) in dropped}
        gone |= set(rng.sample(range(len(texts)), len(texts) // 5))
        mem.delete([items[k].id for k in gone])
        kept = [k for k in range(len(texts)) if k not in gone]
        texts, voices = [texts[k] for k in kept], [voices[k] for k in kept]
        groups = _slow_groups(texts, voices)
        _check_groups(mem.engine.state().index, groups)
        with mem.engine.rt.lock.write():
            mem.engine.state().save_derived(force=True)
    with Memory(path) as mem:
        _check_groups(mem.engine.state().index, groups)


@pytest.mark.parametrize("saved", [True, False])
def test_a_snapshot_without_the_keys_makes_them_again(saved):
    """A snapshot saved before the near-duplicate keys were (or by another rule) gives the same keys, made from the
    tokens on the load; one that has them gives them without masking any text. Messages deleted since the snapshot
    are dropped from the keys as from every column."""
    from hippo.index import coindex

    rng = random.Random(11)
    history = _history(rng, 200)
    with Memory(None) as mem:
        mem.add_many({"text": t, "role": r, "speaker": s} for t, r, s, _ in history)
        idx = mem.engine.state().index
        meta, arrays = idx.to_snapshot()
        if not saved:
            meta = {k: v for k, v in meta.items() if k != "near_rule"}
            arrays = {k: v for k, v in arrays.items() if k not in ("near_rows", "near_keys", "near_kinds")}
        meta, arrays = snapshot.load(snapshot.dump(meta, arrays))
        keep = np.ones(len(idx), dtype=bool)
        keep[rng.sample(range(len(idx)), 50)] = False
        tokens = idx.content.access_range(0, len(idx.content))[np.repeat(keep, np.diff(idx.ends.view, prepend=0))]
        content = DynamicWaveletMatrix(idx.content.bits)
        content.extend(tokens)
        masked: list[int] = []
        real = coindex.NamespaceIndex._forms_of
        try:
            coindex.NamespaceIndex._forms_of = staticmethod(lambda t, e: masked.append(len(e)) or real(t, e))
            back = NamespaceIndex.from_snapshot("default", mem.config, meta, arrays, keep, tokens.size, content,
                                                tokens)
        finally:
            coindex.NamespaceIndex._forms_of = staticmethod(real)
        assert masked == ([] if saved else [int(keep.sum())])
        assert back.near_keys.tolist() == idx.near_keys[keep].tolist()
        _check_groups(back, [g for k, (*_, g) in enumerate(history) if keep[k]])


def test_a_store_whose_snapshot_has_no_keys_collapses_its_checks_on_open(tmp_path, monkeypatch):
    from hippo.index import coindex

    path = str(tmp_path / "old.db")
    real = coindex.NamespaceIndex.to_snapshot

    def old_snapshot(self):  # as a version that saved no near-duplicate keys wrote it
        meta, arrays = real(self)
        meta.pop("near_rule")
        arrays.pop("near_rows")
        arrays.pop("near_keys")
        arrays.pop("near_kinds")
        return meta, arrays

    monkeypatch.setattr(coindex.NamespaceIndex, "to_snapshot", old_snapshot)
    with Memory(path) as mem:
        checks = _checks(mem, 600)
        with mem.engine.rt.lock.write():
            mem.engine.state().save_derived(force=True)
    monkeypatch.undo()
    with Memory(path) as mem:
        rc = mem.recall("health check status", budget_tokens=300)
        assert f"health (600 times): {checks[-1].text}" in rc.text.splitlines()


def test_near_copies_do_not_fill_the_rows_a_named_period_adds():
    """A heartbeat stamped with its time and sequence number, 2,000 times in the week: the period's rows held
    heartbeats only, and "What did I do last week?" never got the lease. One row of the period stands for them."""
    from datetime import datetime, timedelta, timezone

    now = datetime(2024, 6, 14, 12, tzinfo=timezone.utc)
    start = now - timedelta(days=9)
    with Memory(None) as mem:
        lease = mem.add("I signed the lease for the new flat in Leeds", role="user",
                        timestamp=start + timedelta(hours=1))
        at = [start + timedelta(hours=2, seconds=150 * i) for i in range(2000)]
        beats = mem.add_many({"text": f"heartbeat ok at {t:%Y-%m-%dT%H:%M:%S} seq {i:05d}", "role": "tool",
                              "timestamp": t.timestamp()} for i, t in enumerate(at))
        r = mem.recall("What did I do last week?", budget_tokens=300, asked_at=now)
        assert lease.id in [m.id for m in r.messages]
        assert f"tool (2000 times, 5 June 2024 to 9 June 2024): {beats[-1].text}" in r.text.splitlines()


@pytest.mark.parametrize("budget", [30, 45, 60, 90, 160, 333, 700])
def test_contexts_with_near_copies_stay_within_budget_and_count_every_copy(budget):
    """Health checks of two hosts and job reports among chat lines: every context is within its budget (counted
    exactly), holds each output once, and a line standing for near-duplicates counts all of its output's; with
    room, it shows the newest."""
    rng = random.Random(budget)
    written: list[tuple[str, str]] = []
    with Memory(None) as mem:
        for k in range(150):
            kind = rng.choice(["web-3", "web-4", "job", "chat"])
            if kind == "job":
                rows = rng.randrange(1000, 10**5)
                text = f"job {uuid.UUID(int=rng.getrandbits(128))} finished at {_iso(T0 + k)}: {rows} rows"
            elif kind == "chat":
                text = rng.choice(["did the deploy finish?", "web-4 looks slow today", "the job is still running"])
            else:
                text = '{"host":"%s","status":"ok","ts":"%s","req":"%08x"}' % (kind, _iso(T0 + k), rng.getrandbits(32))
            written.append((kind, text))
            mem.add(text, role="user" if kind == "chat" else "tool", session_id=f"s{k // 40}", timestamp=T0 + k)
        rc = mem.recall("status of web-3, web-4 and the job", budget_tokens=budget)
        assert rc.tokens == tokenizer.count_tokens(rc.text) <= budget
        kinds = [next(kd for kd, t in written if t == m.text) for m in rc.messages]
        outputs = [kd for kd in kinds if kd != "chat"]
        assert len(outputs) == len(set(outputs))
        for m, kd in zip(rc.messages, kinds):
            n = sum(1 for k2, t in written if k2 == kd) if kd != "chat" else written.count((kd, m.text))
            assert rc.repeats.get(m.id, 1) in ((1, n) if kd != "chat" else (1, n))
            if kd != "chat" and rc.repeats.get(m.id) and budget >= 160:  # (a tight budget may lack the room)
                assert m.text == [t for k2, t in written if k2 == kd][-1]  # the newest


def test_messages_an_agent_chose_are_packed_as_chosen():
    """Agentic recall packs the messages its agent read and chose (Namespace.pack_ids): of two health checks it
    chose, the first stays, its line counting the others, and is not replaced by the newest."""
    with Memory(None) as mem:
        checks = _checks(mem, 50)
        rc = mem._ns.pack_ids("what did the checks report?", [checks[7].id, checks[9].id], 200, None)
        assert [m.id for m in rc.messages] == [checks[7].id] and rc.repeats == {checks[7].id: 50}
        rc = mem.recall("health check status", budget_tokens=200)
        assert [m.id for m in rc.messages] == [checks[-1].id]


def test_outputs_stamped_with_epoch_seconds_a_date_or_a_minute():
    """The value of a key of eight or more digits (epoch seconds or milliseconds: ``"ts": 1709287207``,
    ``ts=1709287207``; an id drawn without a letter: ``"req":"07923986"``) is a machine field like a time with seconds;
    a date and a time to the minute are masked in a machine output (the day or minute of a log line is a changing
    field), but a person writes them, so alone they make no machine output."""
    assert masking.masked('{"status":"ok","ts":1772359207,"uptime_s":3607}') == \
        '{"status":"ok","ts":\x00N,"uptime_s":\x00N}'
    assert masking.masked('{"status":"ok","ts": "1772359207123","latency_ms":12}') == \
        '{"status":"ok","ts": "\x00N","latency_ms":12}'
    assert masking.masked("ts=1772359207.25 level=info path=/health status=200") == \
        "ts=\x00N level=info path=/health status=200"
    assert masking.masked("[10:07] req=9f1c2ab3 GET /health 200 in 12ms") == \
        "[\x00T] req=\x00N GET /health 200 in \x00D"
    assert masking.masked("2026-03-01 req 9f1c2ab3 nightly backup ok, 3 errors") == \
        "\x00T req \x00N nightly backup ok, 3 errors"
    assert masking.masked("2026/03/01 23:59 req 9f1c2ab3 nightly backup ok") == "\x00T req \x00N nightly backup ok"
    assert masking.masked("2026-03-01T10:07Z backup completed: 1234 files, 3 errors") == \
        "\x00T backup completed: \x00N files, 3 errors"
    # outputs of two days, or two minutes, are near-duplicates; a state of another value is not
    assert masking.key("[10:07] req=9f1c2ab3 GET /health 200 in 12ms") == \
        masking.key("[23:59] req=a7923986 GET /health 200 in 12ms") != \
        masking.key("[23:59] req=a7923986 GET /health 500 in 12ms")
    assert masking.key('{"ok":1,"req":"07923986","ts":1772359207}') == \
        masking.key('{"ok":1,"req":"9f1c2ab3","ts":1772359999}')
    assert masking.key("2026-03-01 req 9f1c2ab3 nightly backup ok, 3 errors") == \
        masking.key("2027-12-31 req 1f1c2ab3 nightly backup ok, 3 errors")
    # what a person writes: an order number is no key's value, a date and a time to the minute no machine field
    for text in ("My order number: 1772359207, it arrives in 3 days", "order 1772359207 and 1772359208 are late",
                 "app.run(port=8000, max_age=31536000, workers=4)",
                 "2026-03-01 backup completed: 1234 files, 3 errors", "[10:07] backup completed: 1234 files",
                 "my appointment is on 2024-05-10 at 10:30", "the train leaves at 10:07 from platform 4, car 12",
                 '{"status":"ok","ts":1772359207}', "my PIN is 1234 and the code is 20260301 for 2 days"):
        assert masking.masked(text) is None, text


@pytest.mark.parametrize("form", ["epoch", "minute"])
def test_checks_stamped_with_epoch_seconds_or_a_minute_take_one_line(form):
    # before: 400 checks stamped '"ts": <epoch seconds>', or log lines stamped with the minute and a request id, were
    # each a text of its own, and a 300-token context held checks only, not the message that answers
    rng = random.Random(5)

    def check(i: int) -> str:
        t = T0 + 60 * i
        if form == "epoch":
            return '{"status":"ok","ts":%d,"uptime_s":%d,"db":"db-2"}' % (t, 3600 + 60 * i)
        return '[%s] req="%08x" GET /db-2/health 200' % (time.strftime("%H:%M", time.gmtime(t)), rng.getrandbits(32))

    with Memory(None) as mem:
        disk = mem.add("The disk on db-2 filled up overnight, so writes fail", role="user", session_id="ops0",
                       timestamp=T0 - 100)
        checks = mem.add_many({"text": check(i), "role": "tool", "speaker": "health", "session_id": "ops",
                               "timestamp": T0 + 60 * i} for i in range(400))
        rc = mem.recall("what is wrong with db-2?", budget_tokens=300)
        assert sorted(m.id for m in rc.messages) == [disk.id, checks[-1].id]
        assert f"health (400 times): {checks[-1].text}" in rc.text.splitlines()


def test_an_address_a_version_or_a_dotted_date_is_not_a_measured_number():
    """Three or more numbers joined by dots name what an output is about (a host's address, a version), as ``web-3``
    does: kept as written, not read as a measured number with a fraction (``10.0`` and ``0.1``), which made the
    checks of two hosts, or the deploys of 2.3.1 and 2.4.1, one line. A date written with dots or slashes is masked
    whole, as an ISO one is."""
    assert masking.masked('{"host":"10.0.0.1","ts":"2026-03-01T10:00:07Z","status":"ok","rtt_ms":12}') == \
        '{"host":"10.0.0.1","ts":"\x00T","status":"ok","rtt_ms":12}'
    assert masking.masked("deploy of api v2.3.1 finished at 2026-03-01T10:00:07Z, 3 pods ready") == \
        "deploy of api v2.3.1 finished at \x00T, 3 pods ready"
    assert masking.masked("connect 10.0.0.1:5432 at 9f1c2ab3 ok") == "connect 10.0.0.1:\x00N at \x00N ok"
    for date in ("01.03.2026", "1/3/2026", "2026-03-01"):
        assert masking.masked(f"backup {date} req 9f1c2ab3 ok 3 files") == "backup \x00T req \x00N ok 3 files"
    assert masking.key("uptime 3607.25 at 9f1c2ab3 ok") == masking.key("uptime 12.5 at 1f1c2ab3 ok")

    def ping(host: str, k: int) -> str:
        return '{"host":"%s","ts":"%s","status":"ok","rtt_ms":12}' % (host, _iso(T0 + 30 * k))

    with Memory(None) as mem:
        pings = mem.add_many({"text": ping(f"10.0.0.{1 + k % 2}", k), "role": "tool", "speaker": "ping",
                              "timestamp": T0 + 30 * k} for k in range(200))
        rc = mem.recall("ping status of the hosts", budget_tokens=300)
        # before: one line, "ping (200 times)", showing 10.0.0.2 alone
        assert f"ping (100 times): {pings[-2].text}" in rc.text.splitlines()
        assert f"ping (100 times): {pings[-1].text}" in rc.text.splitlines()
        deploys = mem.add_many({"text": "deploy of api v%s finished at %s, 3 pods ready" % (v, _iso(T0 + 9000 + k)),
                                "role": "tool", "speaker": "ci", "timestamp": T0 + 9000 + k}
                               for k, v in enumerate(["2.3.1", "2.4.1", "2.4.1"]))
        rc = mem.recall("which api versions were deployed?", budget_tokens=300)
        assert f"ci: {deploys[0].text}" in rc.text.splitlines()
        assert f"ci (2 times): {deploys[2].text}" in rc.text.splitlines()


def test_a_duration_is_masked_and_a_state_is_not():
    """A number with a unit of time (a latency ``33ms``, a pod's age ``12m`` or ``3h``, ``Up 3 hours``) is a measured
    or elapsed time, masked as an uptime is; a status, an exit code or a count written without one is kept."""
    assert masking.masked("job 9f1c2ab3 exited 3 after 5m30s, retry in 10s") == \
        masking.masked("job 1f1c2ab3 exited 3 after 2h, retry in 1.5 seconds") == \
        "job \x00N exited 3 after \x00D, retry in \x00D"
    assert masking.key("job 9f1c2ab3 exited 3 after 5m30s") != masking.key("job 9f1c2ab3 exited 1 after 5m30s")
    assert masking.masked("CONTAINER ID   IMAGE        STATUS\n3f2a9c1b7d4e   api:1.4.2    Up 3 hours") == \
        "CONTAINER ID IMAGE STATUS\n\x00N api:1.4.2 Up \x00D"

    def pods(k: int, status: str = "Running", restarts: int = 0) -> str:
        age = 600 + 60 * k
        return ("NAME                   READY   STATUS    RESTARTS   AGE\n"
                f"api-7d9f8c6b5-x2k4p    {int(status == 'Running')}/1     {status}   {restarts}          "
                + (f"{age // 60}m" if age < 3600 else f"{age // 3600}h"))

    with Memory(None) as mem:
        answer = mem.add("The api pod was crashlooping this morning because the DB_PASSWORD secret was missing",
                         role="user", timestamp=T0 - 100)
        polls = mem.add_many({"text": pods(k) if not 100 <= k < 110 else pods(k, "CrashLoopBackOff", k - 99),
                              "role": "tool", "speaker": "kubectl", "timestamp": T0 + 60 * k} for k in range(600))
        # before: every age of the pod was a text of its own, and 300 tokens held four tables of other ages
        rc = mem.recall("what was wrong with the api pod?", budget_tokens=300)
        assert answer.id in [m.id for m in rc.messages]
        assert f"kubectl (590 times): {polls[-1].text}\n" in rc.text + "\n"
        assert rc.repeats[polls[-1].id] == 590
        crash = [m.text for m in rc.messages if "CrashLoopBackOff" in m.text]
        assert len(crash) == len(set(crash))  # each count of restarts a state of its own, never folded into Running


def test_a_request_id_of_digits_written_onto_its_name_is_masked():
    """``req-9f1c2ab3`` is masked as a hex id; the same field drawn with no letter (``req-07923986``, 1 in 43) was
    kept as part of a name like ``JIRA-4412``, so 25 of 1,000 log lines were lines of their own and a 300-token
    context held seven of them beside the line standing for the other 975."""
    assert masking.key("2026-03-01 10:00:07 INFO [req-07923986] GET /health 200") == \
        masking.key("2026-03-01 10:00:37 INFO [req-9f1c2ab3] GET /health 200")
    assert masking.key('{"ticket":"JIRA-4412","ts":"2026-03-01T10:00:07Z","state":"open","votes":3}') != \
        masking.key('{"ticket":"JIRA-4413","ts":"2026-03-01T10:00:07Z","state":"open","votes":3}')
    rng = random.Random(4)
    with Memory(None) as mem:
        answer = mem.add("The disk on db-2 filled up overnight, so writes fail", role="user", timestamp=T0 - 100)
        ids = ["%08x" % rng.getrandbits(32) for _ in range(1000)]
        assert sum(i.isdigit() for i in ids) >= 10
        stamps = [_iso(T0 + 30 * k).replace("T", " ")[:-1] for k in range(1000)]
        logs = mem.add_many({"text": f"{t} INFO [req-{i}] GET /db-2/health 200", "role": "tool", "speaker": "nginx",
                             "timestamp": T0 + 30 * k} for k, (t, i) in enumerate(zip(stamps, ids)))
        rc = mem.recall("what is wrong with db-2?", budget_tokens=300)
        assert [m.id for m in rc.messages] == [answer.id, logs[-1].id] and rc.repeats == {logs[-1].id: 1000}


@pytest.mark.parametrize("form", ["req={}", "req {}"])
def test_an_output_whose_only_machine_field_was_drawn_without_a_letter_joins_its_group(form):
    """``GET /db-2/health 200 req=9f1c2ab3 in 33ms``: its request id is its only machine field, and 1 in 43 draws
    holds no letter (``req=07923986``), a number as a person writes one. Such an output was a line of its own: of
    1,000 polls, 25 were, and a 300-token context held eleven of them beside the line standing for the other 975.
    It is a near-duplicate of the outputs of its form now, with the count of all 1,000; a text of that form with no
    machine output of it beside it is itself, and is so again once those are deleted."""
    rng = random.Random(4)
    ids = ["%08x" % rng.getrandbits(32) for _ in range(1000)]
    plain = [k for k, i in enumerate(ids) if i.isdigit()]
    assert len(plain) >= 10
    lines = [f"GET /db-2/health 200 {form.format(i)} in {rng.randrange(5, 90)}ms" for i in ids]
    assert all(masking.masked(lines[k]) is None for k in plain)  # no machine output by itself
    with Memory(None) as mem:
        answer = mem.add("The disk on db-2 filled up overnight, so writes fail", role="user", timestamp=T0 - 100)
        alone = mem.add(lines[plain[0]], role="tool", speaker="nginx", timestamp=T0 - 50)
        assert mem.recall("db-2 health", budget_tokens=300).repeats == {}
        logs = mem.add_many({"text": t, "role": "tool", "speaker": "nginx", "timestamp": T0 + 30 * k}
                            for k, t in enumerate(lines))
        rc = mem.recall("what is wrong with db-2?", budget_tokens=300)
        assert [m.id for m in rc.messages] == [answer.id, logs[-1].id] and rc.repeats == {logs[-1].id: 1001}
        idx = mem.engine.state().index
        assert idx.copies_of(idx.row_of[alone.id]).size == 1001
        mem.delete([i.id for i in logs])  # the output alone again
        idx = mem.engine.state().index
        assert idx.copies_of(idx.row_of[alone.id]).tolist() == [idx.row_of[alone.id]]
        assert idx.near_keys[idx.row_of[alone.id]] == idx.digests[idx.row_of[alone.id]]


def test_a_context_folds_such_an_output_into_the_line_of_its_group():
    """The packer confirms a copy by its text: the output whose id holds no letter, found beside the others in a
    candidate list, was packed as a line of its own above the line counting it among its three."""
    with Memory(None) as mem:
        for k, i in enumerate(["9f1c2ab3", "07923986", "1a2b3c4d"]):
            mem.add(f"GET /db-2/health 200 req={i} in {12 + k}ms", role="tool", speaker="nginx", timestamp=T0 + 30 * k)
        rc = mem.recall("db-2 health", budget_tokens=300)
        assert rc.text.splitlines()[1:] == ["nginx (3 times): GET /db-2/health 200 req=1a2b3c4d in 14ms"]


def test_a_table_whose_columns_are_padded_to_another_width_is_the_same_output():
    """``docker ps`` pads its STATUS column to the widest value: "Up 3 hours" and "Up 12 minutes" move the columns
    after them, and the same container's polls were a text for each width."""
    def ps(k: int, up: str) -> str:
        cells = [("CONTAINER ID", "%012x" % (0x3f2a9c1b7d4e + 7919 * k)), ("IMAGE", "api:1.4.2"),
                 ("STATUS", f"Up {up}"), ("PORTS", "0.0.0.0:8080->80/tcp")]
        widths = [max(len(h), len(v)) + 3 for h, v in cells]
        return "\n".join("".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                         for row in ([h for h, _ in cells], [v for _, v in cells]))

    ups = ["3 seconds", "12 minutes", "About an hour", "3 hours", "12 hours", "2 days"]
    keys = [masking.key(ps(k, up)) for k, up in enumerate(ups)]
    assert None not in keys and keys[0] == keys[1] == keys[3] == keys[4] == keys[5] != keys[2]
    assert masking.key(ps(0, "3 hours").replace("api:1.4.2", "api:1.4.3")) != keys[3]
    assert masking.key(ps(0, "3 hours").replace("Up", "Exited (1)")) != keys[3]


def test_a_date_written_with_its_months_name_is_masked_whole():
    """Logs and headers write the date with the month's name (an access log's ``01/Mar/2026``, an HTTP Date header's
    ``Sun, 01 Mar 2026``, syslog's ``Mar  1``): its day was kept as a small number, so polls of one output were a
    line for each day (and each weekday). A latency in microseconds written with the Greek mu is a duration."""
    def clf(t: float) -> str:
        return '127.0.0.1 - - [%s +0000] "GET /health HTTP/1.1" 200 512' % time.strftime(
            "%d/%b/%Y:%H:%M:%S", time.gmtime(t))

    def head(t: float) -> str:
        return "HTTP/1.1 200 OK\nDate: %s\nServer: nginx" % time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(t))

    def syslog(t: float) -> str:
        return "%s web-3 sshd[%d]: Accepted publickey for ann" % (time.strftime("%b %e %H:%M:%S", time.gmtime(t)),
                                                                 int(t) % 50000 + 1000)

    for form in (clf, head, syslog):
        keys = {masking.key(form(T0 + 86_400 * d + 37 * d)) for d in range(40)}
        assert len(keys) == 1 and None not in keys, form.__name__
    assert masking.key(clf(T0).replace(" 200 ", " 500 ")) != masking.key(clf(T0))
    assert masking.key("job 9f1c2ab3 at 10:00:07 done in 12\u03bcs") == \
        masking.key("job 1f1c2ab3 at 10:00:09 done in 33\u00b5s")
    for text in ("I moved to Dublin on 1 March 2026 and start on Mar 12", "See you on Sun, 01 Mar 2026 at 5"):
        assert masking.masked(text) is None, text
    # a word that begins as a month's name does not make a date of the number after it
    assert masking.key("Market 12 opened at 10:00:07 with 3 stalls") != \
        masking.key("Market 13 opened at 10:00:07 with 3 stalls")
    assert masking.masked("Monitor Mayday 3 at 10:00:07 ok ok ok") == "Monitor Mayday 3 at \x00T ok ok ok"
    with Memory(None) as mem:
        logs = mem.add_many({"text": clf(T0 + 3_600 * k), "role": "tool", "speaker": "nginx",
                             "timestamp": T0 + 3_600 * k} for k in range(24 * 30))
        rc = mem.recall("health requests in the access log", budget_tokens=300)
        # before: a line for each of the 30 days
        assert [m.id for m in rc.messages] == [logs[-1].id] and rc.repeats == {logs[-1].id: 720}


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _drawn_id(rng: random.Random, n: int, alphabet: str = _LETTERS) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def test_an_id_drawn_from_letters_of_both_cases_is_masked_and_a_word_in_camel_case_is_not():
    """A base62 or base64 id, a session token (``xKqPzRtYvWmNbHgF``) is no word a person writes: an output that
    differs from another only in one is its near-duplicate, with or without a digit in the text. Words joined in camel
    case (identifiers, brand names) are kept as written."""
    assert masking.masked("session xKqPzRtYvWmNbHgF issued for user alice") == \
        "session \x00N issued for user alice"
    # with its digits, hyphens and underscores (a base64url id), and one that begins with digits
    assert masking.masked("charge ch_3MmlLrLkdIwHu7ix0snN0B15 succeeded at 10:00:07 amount 1200") == \
        "charge \x00N succeeded at \x00T amount \x00N"
    assert masking.masked("trace Kq9-PzRtYv_WmNbx: GET /api/orders ok") == "trace \x00N: GET /api/orders ok"
    assert masking.masked("object 74WIPmGpCl2N5ZNLWi3ljp stored in bucket media") == \
        "object \x00N stored in bucket media"
    for text in ("I use getElementById and addEventListener all the time",
                 "we moved to PostgreSQL and HtmlWebpackPlugin", "the backgroundColor of the loadingIndicator is wrong",
                 "She works at MyFitnessPal and RetailMeNot"):
        assert masking.masked(text) is None, text
    # a drawn id is a machine field beside the others: the same output with another id is the same
    assert masking.key("[10:00:07] token aGVsbG8gd29ybGQhIQ refreshed for 12 users") == \
        masking.key("[10:03:09] token QmFzZTY0IGlkcyBzdGF5 refreshed for 12 users")
    assert masking.key("[10:00:07] token aGVsbG8gd29ybGQhIQ refreshed for 12 users") != \
        masking.key("[10:00:07] token aGVsbG8gd29ybGQhIQ refreshed for 13 users")
    # drawn ids of 16 letters: most read as drawn; no word of a camel-case list does
    rng = random.Random(5)
    got = sum(masking.form(f"container {_drawn_id(rng, 16)} started on node east") is not None for _ in range(1000))
    assert got >= 850
    words = ["getElementById", "addEventListener", "JavaScript", "querySelectorAll", "localStorage", "ValidationError",
             "PostgreSQL", "HtmlWebpackPlugin", "MiniCssExtractPlugin", "toHaveBeenCalledWith", "backgroundColor",
             "constructEndpoint", "maxAttempts", "XMLHttpRequest", "isIntersecting", "AddOutputFilterByType"]
    assert [w for w in words if masking.masked(f"the function {w} was called by the worker thread") is not None] == []
    # such a word may be the one draw in ten that reads as words: a text that masks nothing else has the form of the
    # outputs with a drawn id there, and is one of them where one is held beside it, and only then
    assert masking.form("session getElementById issued for user alice") == \
        ("session \x00N issued for user alice", False)
    # a name read as words whole (a class, a service) stays as written there, as it does beside a drawn id
    assert masking.form("session aGetLoxaBuildMep issued by AuthService") == \
        ("session \x00N issued by AuthService", False)
    assert masking.form("session xKqPzRtYvWmNbHgF issued by AuthService") == \
        ("session \x00N issued by AuthService", True)
    assert masking.form("I like AuthService and OrderController a lot") is None
    with Memory(None) as mem:
        said = mem.add_many({"text": f"I use {w} all the time in the new frontend code", "role": "user",
                             "timestamp": T0 + k} for k, w in enumerate(words[:4]))
        rc = mem.recall("which functions do I use in the frontend code?", budget_tokens=300)
        assert sorted(m.id for m in rc.messages) == sorted(m.id for m in said) and rc.repeats == {}
        tool = mem.add_many({"text": f"session {w} issued for user alice", "role": "tool", "timestamp": T0 + 10 + k}
                            for k, w in enumerate(["getElementById", "xKqPzRtYvWmNbHgF"]))
        rc = mem.recall("which session was issued for alice?", budget_tokens=300)
        assert rc.repeats == {tool[1].id: 2}


def test_outputs_that_differ_only_in_a_drawn_id_take_one_line():
    """300 outputs that differ only in a session token drawn from letters, no digit in any of them: before, each was a
    line of its own and a 300-token context held ten of them beside the message that answers. Now they are one line,
    those whose token reads as words (one in twenty) joining it as a request id drawn without a letter does."""
    rng = random.Random(7)
    with Memory(None) as mem:
        fact = mem.add("The login service rejects every token issued before the key rotation on Monday", role="user",
                       session_id="a", timestamp=T0 - 100)
        outs = mem.add_many({"text": f"login ok: session {_drawn_id(rng, 20)} issued for user alice by the auth "
                                     "service", "role": "tool", "speaker": "auth", "session_id": "ops",
                             "timestamp": T0 + 30 * k} for k in range(300))
        assert any(not masking.form(m.text)[1] for m in outs)  # some tokens read as words
        rc = mem.recall("why are the login session tokens rejected?", budget_tokens=300)
        assert sorted(m.id for m in rc.messages) == sorted([fact.id, outs[-1].id])
        assert rc.repeats == {outs[-1].id: 300}
        assert f"auth (300 times): {outs[-1].text}" in rc.text.splitlines()


def test_pytests_short_summary_is_one_line_per_count_not_per_duration():
    """pytest centres its summary in a rule drawn to the terminal's width: ``12 passed in 3.41s`` and ``12 passed in
    13.41s`` are a character apart, so their rules were a character apart too, and neither held a machine field: a line
    per duration. The rule's length is padding, and a line framed by rules is a program's."""
    def summary(text: str, width: int = 80) -> str:
        return f" {text} ".center(width, "=")

    runs = [summary(f"12 passed in {s}s") for s in ("3.41", "13.41", "0.97", "103.20")]
    assert len({masking.key(r) for r in runs}) == 1 and None not in {masking.key(r) for r in runs}
    assert masking.key(summary("1 failed, 11 passed in 3.41s")) != masking.key(runs[0])
    assert masking.key(summary("13 passed in 3.41s")) != masking.key(runs[0])
    # a rule under a heading, a Markdown heading closed by its hashes, or one line framed by a person's two dashes, is
    # no program's frame
    for text in ("Results\n=======\n12 passed in 3.41s", "-- 12 passed in 3.41s --", "12 passed in 3.41s",
                 "### Results ###\n12 passed in 3.41s"):
        assert masking.masked(text) is None, text
    with Memory(None) as mem:
        outs = mem.add_many({"text": summary(f"12 passed in {1 + k * 0.37:.2f}s"), "role": "tool", "speaker": "pytest",
                             "timestamp": T0 + 60 * k} for k in range(200))
        rc = mem.recall("did the tests pass?", budget_tokens=300)
        assert [m.id for m in rc.messages] == [outs[-1].id] and rc.repeats == {outs[-1].id: 200}


def test_a_question_naming_an_id_drawn_from_letters_gets_that_copy():
    rng = random.Random(11)
    with Memory(None) as mem:
        outs = mem.add_many({"text": f"auth: session {_drawn_id(rng, 24)} issued for user alice, valid for one hour",
                             "role": "tool", "speaker": "auth", "timestamp": T0 + 30 * k} for k in range(200))
        asked = outs[57]
        token = asked.text.split()[2]
        assert masking.values(f"what about session {token}?") == {token.lower()}
        rc = mem.recall(f"what happened to session {token}?", budget_tokens=300)
        assert f"auth (200 times): {asked.text}" in rc.text.splitlines()


_RUNNERS = [  # test runners' summaries: the counts kept, the time the run took masked
    lambda r: "412 passed in %.2fs" % r.uniform(1, 9),                                      # pytest -q
    lambda r: "ok  \texample.com/shop/api\t%.3fs" % r.uniform(0, 2),                          # go test
    lambda r: "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in %.2fs"
              % r.uniform(0, 2),                                                             # cargo test
    lambda r: "Test Suites: 3 passed, 3 total\nTests:       41 passed, 41 total\nSnapshots:   0 total\n"
              "Time:        %.3f s\nRan all test suites." % r.uniform(1, 9),                  # jest
]


@pytest.mark.parametrize("k", range(len(_RUNNERS)))
def test_a_test_runs_summary_is_one_line_per_count(k):
    """A test runner prints its summary with the time the run took (``412 passed in 3.41s``): 200 runs from a tool
    are one line counting them, beside the message asked for; a run with another count of tests is a line of its own.
    A person's "I ran 5 km in 25 minutes" and "... in 28 minutes" stay two statements."""
    rng = random.Random(k)
    with Memory(None) as mem:
        runs = mem.add_many({"text": _RUNNERS[k](rng), "role": "tool", "session_id": "ci", "timestamp": T0 + 60 * i}
                            for i in range(200))
        other = mem.add(_RUNNERS[k](rng).replace("41", "40").replace("412", "411").replace("12 passed", "11 passed")
                        .replace("shop/api", "shop/web"), role="tool", session_id="ci", timestamp=T0 + 60 * 200)
        fact = mem.add("The flaky test is test_checkout_timeout; it fails about once in thirty runs.", role="user",
                       session_id="ci", timestamp=T0 + 5)
        idx = mem.engine.state().index
        rows = [idx.row_of[m.id] for m in runs]
        assert {len(idx.copies_of(r)) for r in rows} == {200}
        assert len(idx.copies_of(idx.row_of[other.id])) == 1
        rc = mem.recall("which test is flaky?", budget_tokens=300)
        assert fact.id in {m.id for m in rc.messages}
        shown = [m for m in rc.messages if m.role == "tool" and m.id != other.id]
        assert [m.id for m in shown] == [runs[-1].id]
        assert rc.repeats == {runs[-1].id: 200}
    with Memory(None) as mem:
        said = [mem.add(f"I ran 5 km in {m} minutes this morning along the canal", role="user", timestamp=T0 + k)
                for k, m in enumerate((25, 28))]
        told = [mem.add(f"You ran 5 km in {m} minutes this morning along the canal", role="assistant",
                        timestamp=T0 + 10 + k) for k, m in enumerate((25, 28))]
        idx = mem.engine.state().index
        assert [len(idx.copies_of(idx.row_of[m.id])) for m in said + told] == [1, 1, 1, 1]


_K8S = "bcdfghjklmnpqrstvwxz2456789"  # what Kubernetes draws a pod's hash and end from


def _small_id(rng: random.Random, n: int, alphabet: str = "abcdefghijklmnopqrstuvwxyz0123456789") -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def test_ids_drawn_from_small_letters_and_digits():
    """A pod's name (``web-6b7c9d8fgq-pk2mz``: its hash and end drawn by Kubernetes) and a nanoid drawn over small
    letters and digits are ids, machine fields; a word or a name with a number (``python3``, ``utf8mb4``,
    ``1200x800px``, ``320ms``) is not."""
    rng = random.Random(7)
    # a pod polled after each restart of its deployment: its name changes, its state does not
    pods = [f"web-{_small_id(rng, 10, _K8S)}-{_small_id(rng, 5, _K8S)}   1/1   Running   0   12m" for _ in range(200)]
    forms = [masking.masked(p) for p in pods]
    assert sum(f == "web-\x00N 1/1 Running 0 \x00D" for f in forms) >= 170
    assert masking.masked("web-7d4b9c8f6-x2kqp   0/1   CrashLoopBackOff   4   12m") == \
        "web-\x00N 0/1 CrashLoopBackOff 4 \x00D"
    ids = [_small_id(rng, 21) for _ in range(200)]
    assert sum(masking.masked(f"upload complete: object {i} stored in bucket media-prod") is not None
               for i in ids) >= 185
    words = ["python3", "utf8mb4", "x86_64", "aarch64", "ubuntu2204", "node18", "es2015", "webpack5", "html5",
             "log4j2", "amd64", "oauth2", "md5sum", "sha256sum", "gpt4o", "llama2", "mistral7b", "word2vec",
             "seq2seq", "covid19", "iphone15", "xbox360", "b64encode", "base64url", "1200x800px", "768x1024px",
             "12x8x3", "320ms", "1080v11", "password123", "psycopg2", "selector2", "keyword3", "hunter2", "blink182"]
    assert [w for w in words if masking._SMALL_RUN.fullmatch(w) and masking._drawn_small(w)] == []
    # a duration in its units is a duration, however its letters and digits alternate
    for d in ("2h3m4s", "1d2h3m", "12m30s"):
        assert masking.form(f"the nightly job finished in {d} after retry 3") == \
            ("the nightly job finished in \x00D after retry 3", masking.TIMED), d
    for w in words:
        if not re.search("[0-9]{4}|[0-9]ms$", w):  # (a number of four digits and a duration are masked)
            assert masking.masked(f"the worker built {w} at 10:00:07 for release 42") == \
                f"the worker built {w} at \x00T for release 42", w
    # 300 uploads whose ids are drawn over small letters and digits, and the message asked for
    with Memory(None) as mem:
        ups = mem.add_many({"text": f"upload complete: object {i} stored in bucket media-prod", "role": "tool",
                            "session_id": "ops", "timestamp": T0 + 30 * k}
                           for k, i in enumerate(ids + [_small_id(rng, 21) for _ in range(100)]))
        fact = mem.add("The media bucket is replicated to Frankfurt every night", role="user", session_id="ops",
                       timestamp=T0 + 5)
        rc = mem.recall("where is the media bucket replicated to?", budget_tokens=300)
        assert fact.id in {m.id for m in rc.messages}
        lines = [m for m in rc.messages if m.role == "tool"]
        assert max(rc.repeats.get(m.id, 1) for m in lines) >= 280 and ups[-1].id in {m.id for m in lines}


def test_a_short_git_hash_is_a_hex_id():
    """Git abbreviates a commit to seven hex digits: deploys of other commits are one output, a word of seven hex
    letters (``defaced``) is no id."""
    rng = random.Random(9)
    hashes = ["%07x" % rng.getrandbits(28) for _ in range(100)]
    with_both = [h for h in hashes if re.search("[0-9]", h) and re.search("[a-f]", h)]
    assert len(with_both) >= 90
    assert {masking.masked(f"deployed commit {h} to production: 3 services restarted") for h in with_both} == \
        {"deployed commit \x00N to production: 3 services restarted"}
    assert masking.masked("the defaced wall had 3 marks and 12 holes in it") is None
    with Memory(None) as mem:
        mem.add_many({"text": f"deployed commit {h} to production: 3 services restarted", "role": "tool",
                      "timestamp": T0 + 60 * k} for k, h in enumerate(with_both))
        rc = mem.recall("which commit is in production?", budget_tokens=300)
        assert [rc.repeats.get(m.id, 1) for m in rc.messages] == [len(with_both)]


def _deploys(n: int, rng: random.Random) -> list[str]:
    return ["Deploy %08x of api-gateway succeeded in %dm%02ds" % (rng.getrandbits(32), rng.randint(1, 9),
                                                                  rng.randint(0, 59)) for _ in range(n)]


@pytest.mark.parametrize("marked", [{"bot": True}, {"type": "tool_result"}, {}, {"bot": "yes"}])
def test_a_message_a_program_wrote_is_grouped_whatever_its_role(marked):
    """A chat import gives every speaker the role ``user``, bots too; an application may store its tools' results
    as the user's messages. Marked as a bot's (``metadata["bot"]``, as the importers mark it) or as a tool's result
    (``metadata["type"]``), its near-duplicates are its copies as a tool's are; unmarked, it is a person's. Before,
    200 notifications of a deploy bot took 13 of a 300-token context's 14 lines and left out the message about
    the deploys."""
    grouped = marked.get("bot") is True or marked.get("type") == "tool_result"
    texts = _deploys(200, random.Random(4))
    with Memory(None) as mem:
        items = mem.add_many({"text": t, "role": "user", "speaker": "deploybot", "timestamp": T0 + 600 * k,
                              "metadata": dict(marked)} for k, t in enumerate(texts))
        why = mem.add("The api-gateway deploys fail whenever the config map is missing the TLS section.",
                      role="user", speaker="ann", timestamp=T0 + 60_000)
        idx = mem.engine.state().index
        assert [len(idx.copies_of(k)) for k in (0, 199)] == ([200, 200] if grouped else [1, 1])
        rc = mem.recall("why do the api-gateway deploys fail?", budget_tokens=300)
        bot_lines = [line for line in rc.text.splitlines() if line.startswith("deploybot")]
        if grouped:
            assert bot_lines == [f"deploybot (200 times, 1 March 2026 to 2 March 2026): {items[-1].text}"]
            assert why.id in {m.id for m in rc.messages}
        else:
            assert len(bot_lines) > 1 and all(line.startswith("deploybot: ") for line in bot_lines)


def test_a_bots_run_summary_is_a_machine_output_as_a_tools_is():
    """A text whose only changing field is the time a run took is a machine output where a program wrote it: a CI
    bot's summaries in an imported chat are one line per count of tests, a person's stay their own."""
    rng = random.Random(6)
    texts = ["412 passed in %.2fs" % rng.uniform(60, 300) for _ in range(6)]
    with Memory(None) as mem:
        mem.add_many({"text": t, "role": "user", "speaker": "ci", "metadata": {"bot": True}} for t in texts)
        mem.add_many({"text": t, "role": "user", "speaker": "ann"} for t in texts)
        idx = mem.engine.state().index
        assert [len(idx.copies_of(k)) for k in range(12)] == [6] * 6 + [1] * 6


def test_marking_a_message_a_bots_later_groups_it_and_unmarking_parts_it():
    rng = random.Random(8)
    texts = _deploys(5, rng)
    with Memory(None) as mem:
        items = mem.add_many({"text": t, "role": "user", "speaker": "deploybot"} for t in texts)
        idx = mem.engine.state().index
        assert [len(idx.copies_of(k)) for k in range(5)] == [1] * 5
        for it in items:
            mem.update(it.id, metadata={"bot": True})
        idx = mem.engine.state().index
        assert [len(idx.copies_of(k)) for k in range(5)] == [5] * 5
        mem.update(items[2].id, metadata={"bot": False})
        idx = mem.engine.state().index
        assert [len(idx.copies_of(k)) for k in range(5)] == [4, 4, 1, 4, 4]


def test_the_mark_of_a_programs_messages_survives_a_snapshot_and_one_without_it_is_made_again(tmp_path, monkeypatch):
    """The index keeps which messages a program wrote in its snapshot; a snapshot saved before it did is not used
    (the metadata says which they are: the index is made again from the messages) and gives the same groups."""
    from hippo.index import coindex

    rng = random.Random(9)
    texts = _deploys(40, rng)
    people = ["we shipped build %d today, all good" % k for k in range(10)]
    for older in (False, True):
        path = str(tmp_path / f"s{older}.db")
        real = coindex.NamespaceIndex.to_snapshot

        def old_snapshot(self):  # as a version that did not mark the messages of programs wrote it
            meta, arrays = real(self)
            arrays.pop("program")
            return meta, arrays

        if older:
            monkeypatch.setattr(coindex.NamespaceIndex, "to_snapshot", old_snapshot)
        with Memory(path) as mem:
            mem.add_many({"text": t, "role": "user", "speaker": "deploybot", "metadata": {"bot": True}}
                         for t in texts)
            mem.add_many({"text": t, "role": "user", "speaker": "ann"} for t in people)
            with mem.engine.rt.lock.write():
                mem.engine.state().save_derived(force=True)
        monkeypatch.undo()
        with Memory(path) as mem:
            idx = mem.engine.state().index
            assert idx.program.view.tolist() == [True] * 40 + [False] * 10
            assert [len(idx.copies_of(k)) for k in (0, 39, 40, 49)] == [40, 40, 1, 1]


def test_a_name_with_a_number_and_no_vowel_is_no_drawn_id():
    """``lz4hc``, ``p2pkh``, ``4k60fps`` are names people write and ask for; they were read as ids drawn over small
    letters and digits (no vowel), machine fields, so an assistant's texts naming one were machine outputs, and two
    answers that differ in their numbers were one line showing the newer. Written apart, a short run without a vowel
    is masked, as it may be a short id, but makes no machine output."""
    for w in ("lz4hc", "p2pkh", "4k60fps", "p2wpkh", "x264hq"):
        assert not masking._drawn_small(w), w
        # masked as a short id may be, but no machine field: the text is a machine output by its other fields (a
        # duration beside it, where a tool wrote it)
        assert masking.form(f"the encoder used {w} for clip 42 in 3.41s") == \
            ("the encoder used \x00N for clip 42 in \x00D", masking.TIMED), w
        assert masking.form(f"the encoder used {w} for clip 42 at 10:00:07") == \
            ("the encoder used \x00N for clip 42 at \x00T", masking.MACHINE), w
    texts = ["Use lz4hc for the archive: it took 2.41s on 1200 files", "Use lz4hc for the archive: it took 9.87s on "
             "5400 files", "The camera records 4k60fps for 35 minutes on 128 GB", "The camera records 4k60fps for 50 "
             "minutes on 256 GB"]
    with Memory(None) as mem:
        mem.add_many({"text": t, "role": "assistant"} for t in texts)
        idx = mem.engine.state().index
        assert [len(idx.copies_of(k)) for k in range(4)] == [1, 1, 1, 1]


def test_a_short_drawn_id_with_vowels_and_a_pods_end_are_ids():
    """A short id drawn over small letters and digits holds a vowel two times in three (``k2j9ab``): it was read as
    drawn only without one. A run changing between letters and digits four times or more reads as drawn whatever
    its length; a short one without a vowel does where it is written onto a name (a DaemonSet's pod,
    ``fluentd-x2kqp``)."""
    for w in ("k2j9ab", "m3o8ka", "e4u7ix", "q1w2e3r4"):
        assert masking.masked(f"short link {w} created at 10:00:07 for the spring campaign") == \
            "short link \x00N created at \x00T for the spring campaign", w
    rng = random.Random(12)
    pods = [f"fluentd-{_small_id(rng, 5, _K8S)}   1/1   Running   0   3d" for _ in range(100)]
    assert sum(masking.masked(p) == "fluentd-\x00N 1/1 Running 0 \x00D" for p in pods) >= 40
    # links drawn over small letters and digits, six characters: two in three hold a vowel
    links = []
    while len(links) < 60:
        w = _small_id(rng, 6)
        if masking._SMALL_RUN.fullmatch(w) and masking._drawn_small(w) and re.search("[aeiouy]", w):
            links.append(w)
    with Memory(None) as mem:
        mem.add_many({"text": f"short link {w} created for the spring campaign at 10:{k:02d}:07", "role": "tool"}
                     for k, w in enumerate(links))
        idx = mem.engine.state().index
        assert len(idx.copies_of(0)) == 60


def test_an_id_drawn_with_separators_is_one_field_wherever_they_fall():
    """An id drawn over small letters, digits, ``_`` and ``-`` (a nanoid of a lower-case alphabet:
    ``v1stgxr8_z5jdhi6b-myt``) was read part by part between its separators, so two outputs grouped only when their
    separators fell in the same places (11 of 3,409 draws of 21 characters joined the common form). It is one field
    now; names joined by separators and a pod's name are read as before."""
    rng = random.Random(13)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_-"
    ids = [i for i in (_small_id(rng, 21, alphabet) for _ in range(400)) if re.search("[0-9a-z][_-]+[0-9a-z]", i)]
    ids = ids[:200]
    forms = [masking.masked(f"export finished: report {i} written to the reports bucket") for i in ids]
    assert sum(f == "export finished: report \x00N written to the reports bucket" for f in forms) >= 110
    assert masking.masked("export finished: report v1stgxr8_z5jdhi6b-myt written to the reports bucket") == \
        masking.masked("export finished: report v1stg-xr8z5jdh_i6bmyt written to the reports bucket") == \
        "export finished: report \x00N written to the reports bucket"
    for name in ("ubuntu2204-x86_64-gcc12", "utf8mb4_0900_ai_ci", "x86_64-linux-gnu", "node18-alpine3-slim",
                 "py311-django42-postgres15"):
        assert not masking._joined_id(name), name
        assert masking.masked(f"the worker built {name} at 10:00:07 for release 42") != \
            "the worker built \x00N at \x00T for release 42", name
    for pod in ("api2-6b7c9d8fgq-pk2mz", "db-6b7c9d8fgq-pk2mz", "k8s-7x9q2m4zbw-pk2mz"):
        name = pod.split("-")[0]
        assert masking.masked(f"{pod}   0/1   CrashLoopBackOff   4   12m") == \
            f"{name}-\x00N 0/1 CrashLoopBackOff 4 \x00D", pod
    with Memory(None) as mem:
        mem.add_many({"text": f"export finished: report {i} written to the reports bucket", "role": "tool",
                      "timestamp": T0 + 60 * k} for k, i in enumerate(ids))
        rc = mem.recall("which report was exported?", budget_tokens=300)
        assert max(rc.repeats.values()) >= 110
