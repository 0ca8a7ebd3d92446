"""Index entries (seed 004 §5-9): lossless storage, key data, decay on the turn clock, policies, pattern completion,
stale sources, persistence and deep consolidation."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_server import llm_server  # noqa: F401 - pytest fixture

from hippo import InvalidInput, Memory, NotFound
from hippo.engine.entries import split_parts
from hippo.engine.hierarchy.decay import closed_form
from hippo.engine.llm import LLM
from hippo.text.extract import detect_format, extract, looks_like_error
from hippo.text.tokenizer import count_tokens


def orders_json(n: int = 120) -> str:
    data = {"status": "ok", "request_id": "req-8f2a91", "page": 1,
            "orders": [{"id": f"ORD-{i:05d}", "customer": f"customer {i}", "total": round(i * 3.25, 2),
                        "status": "paid" if i % 3 else "refunded"} for i in range(n)]}
    return json.dumps(data, indent=2)


@pytest.fixture
def mem():
    m = Memory(None)
    yield m
    m.close()


# -- storage ----------------------------------------------------------------------------------------------------
def _random_text(rng: random.Random) -> str:
    pieces = []
    for _ in range(rng.randint(1, 400)):
        kind = rng.random()
        if kind < 0.1:
            pieces.append("\n" * rng.randint(1, 3))
        elif kind < 0.15:
            pieces.append("x" * rng.randint(1, 9000))  # one line longer than a part
        elif kind < 0.2:
            pieces.append("   \t  ")
        else:
            pieces.append(" ".join(rng.choice(["naïve", "日本語", "ok", "ERROR", "{", "}", "e12", "42"])
                                   for _ in range(rng.randint(1, 30))))
        pieces.append(rng.choice(["\n", "\r\n", "", " "]))
    text = "".join(pieces)
    return text if text.strip() else "x" + text


def test_split_parts_is_lossless_and_never_blank():
    rng = random.Random(7)
    for _ in range(60):
        text = _random_text(rng)
        parts = split_parts(text, part_tokens=rng.choice([8, 64, 512]))
        assert "".join(parts) == text
        assert all(p.strip() for p in parts)


def test_a_long_line_is_cut_between_words_so_each_id_is_found(mem):
    # minified JSON is one line of many parts: a part is a message searched on its own, so an id cut in two
    # ("ORD-00|243") was found in neither, by search nor by completion on a direct reference
    data = {"orders": [{"id": f"ORD-{i:05d}", "customer": f"customer {i}", "total": round(i * 3.25, 2)}
                       for i in range(600)]}
    content = json.dumps(data, separators=(",", ":"))
    parts = split_parts(content)
    assert "".join(parts) == content and len(parts) > 10
    ends = [sum(map(len, parts[:k])) for k in range(1, len(parts))]
    assert not any(content[b - 1].isalnum() and content[b].isalnum() for b in ends)  # no word cut in two
    e = mem.index_entry(content)
    for i in range(600):
        oid = f"ORD-{i:05d}"
        assert any(oid in h.text for h in mem.search(oid, k=3)), oid
    assert list(mem.complete_on_cue("What was the total of order ORD-00243?")) == [e.id]
    blob = "x" * 5001 + "\U0001F1EB\U0001F1F7" * 3000  # no separator: cut between grapheme clusters (flags)
    parts = split_parts(blob)
    ends = [sum(map(len, parts[:k])) for k in range(1, len(parts))]
    assert "".join(parts) == blob and len(parts) > 4
    assert all(b <= 5001 or (b - 5001) % 2 == 0 for b in ends)  # never half a flag


def test_a_long_line_is_split_reading_each_character_about_once(monkeypatch):
    # each cut looked at the whole rest of the line, which was then copied: a line of megabytes was read
    # (parts / 2) times over
    from hippo.engine import entries

    line = "ab," * 100_000
    seen = []
    real = entries._cut
    monkeypatch.setattr(entries, "_cut", lambda text, cap: seen.append(len(text)) or real(text, cap))
    parts = split_parts(line)
    assert "".join(parts) == line and len(seen) == len(parts) - 1 > 100
    assert sum(seen) <= len(line) + len(seen)  # a window of a part and one character more, each once


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_complete_returns_the_content_byte_for_byte(mem, seed):
    text = _random_text(random.Random(seed))
    e = mem.index_entry(text, source={"type": "file.read", "ref": f"f{seed}"})
    got = mem.complete(e.id)
    assert got.text == text and got.complete and not got.stale
    assert e.n_tokens == count_tokens(text)
    assert e.message_ids[0] == int(e.id[4:])
    assert "".join(mem.get(i).text for i in e.message_ids[1:]) == text


def test_content_is_searchable_as_ordinary_messages(mem):
    e = mem.index_entry(orders_json(), source={"type": "tool", "ref": "call_1"})
    hits = mem.search("ORD-00077", k=3)
    assert hits and hits[0].id in e.message_ids[1:]
    assert '"ORD-00077"' in hits[0].text
    assert hits[0].metadata["type"] == "tool_result"


# -- extraction -------------------------------------------------------------------------------------------------
def test_json_key_data_and_summary():
    summary, key, fmt = extract(orders_json(120))
    assert fmt == "json"
    assert key["status"] == "ok" and key["request_id"] == "req-8f2a91" and key["page"] == 1
    assert key["orders.count"] == 120
    assert key["orders.ids"] == "ORD-00000 … ORD-00119"
    assert "'orders': 120 records (id, customer, total, status)" in summary


def test_json_escapes_and_constants_that_no_stored_text_holds_are_indexed(mem):
    # the content is plain ASCII and stored as it is; parsed, its JSON names NaN and Infinity (no JSON metadata holds
    # them), a NUL, an escape character and lone surrogates (no stored text holds them): the key data shows the
    # constants as written and those characters as spaces, as hippo.storable does
    content = ('{"id": "ORD-1", "ratio": NaN, "limit": -Infinity, "color": "\\u001b[31mred\\u0000", '
               '"name": "caf\\udcff", "\\u0000raw": 1}')
    summary, key, fmt = extract(content)
    assert fmt == "json"
    assert key == {"id": "ORD-1", "name": "caf", "ratio": "NaN", "limit": "-Infinity", "color": "[31mred", "raw": 1}
    assert summary == "JSON object with 6 keys (id, ratio, limit, color, name, raw)"
    before = len(mem)
    e = mem.index_entry(content)
    assert len(mem) == before + 2 and e.key_data == key
    assert mem.complete(e.id).text == content
    assert mem.entry(e.id).render() == e.render()


def test_a_summary_and_key_data_stay_short_whatever_one_line_holds(mem):
    # a blob on one line is one "word": the entry's block (its header message too) was as long as the content
    family = "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466"  # one grapheme cluster, 7 code points
    blob = "x" * 70 + family * 3000
    e = mem.index_entry(blob)
    assert e.summary == "text of 1 lines. Begins: " + "x" * 70 + family + "…"  # 77 characters, not inside the emoji
    assert count_tokens(e.render()) < 100 < e.n_tokens
    assert mem.complete(e.id).text == blob
    page = "<html><head><title>" + "T" * 100_000 + "</title></head><body><h1>" + "H" * 5000 + "</h1></body></html>"
    summary, key, fmt = extract(page)
    assert fmt == "html" and key["title"] == "T" * 79 + "…"
    assert summary == (f"page '{'T' * 78}… markup with 5 elements (html 1, head 1, title 1, body 1, h1 1); "
                       f"headings: {'H' * 79}…")
    _, key, _ = extract('{"n": ' + "9" * 1000 + ', "id": "x"}')
    assert key == {"id": "x", "n": "9" * 79 + "…"}


def test_html_element_refs_and_title():
    html = ("<html><head><title>Crabot dashboard</title></head><body><h1>Users</h1>"
            + "".join(f'<div ref="e{i}">row {i}</div>' for i in range(100))
            + '<nav ref="e3" role="navigation">Main</nav><button ref="e12">Submit</button>'
            + '<input ref="e45" name="search"></body></html>')
    summary, key, fmt = extract(html)
    assert fmt == "html"
    assert key["title"] == "Crabot dashboard"
    refs = dict(pair.split("=") for pair in key["refs"].split(", "))
    assert refs == {"Main": "e3", "Submit": "e12", "search": "e45"}
    assert "page 'Crabot dashboard'" in summary and "headings: Users" in summary


def test_log_levels_and_first_error():
    lines = [f"2024-05-0{1 + i // 50} 10:{i % 60:02d}:00 INFO request {i} served" for i in range(100)]
    lines[40] = "2024-05-01 10:40:00 ERROR payment gateway timeout code=PG-504"
    lines[70] = "2024-05-02 10:10:00 WARN slow query"
    summary, key, fmt = extract("\n".join(lines))
    assert fmt == "log"
    assert key["errors"] == 1 and key["warns"] == 1
    assert key["first_error"] == lines[40]
    assert key["first"] == "2024-05-01 10:00:00" and key["last"] == "2024-05-02 10:39:00"
    assert summary.startswith("log of 100 lines (INFO 98, ERROR 1, WARN 1)")


def test_text_key_values_ids_and_urls():
    text = ("Deployment report\nservice: billing-api\nversion = 2.14.1\nsee https://ci.example.com/runs/991 "
            "for JIRA-4412 and contact ops@example.com\n")
    _, key, fmt = extract(text)
    assert fmt == "text"
    assert key["service"] == "billing-api" and key["version"] == "2.14.1"
    assert key["ids"] == "JIRA-4412" and key["urls"] == "https://ci.example.com/runs/991"
    assert key["emails"] == "ops@example.com"


def test_the_address_pattern_reads_a_long_run_once():
    # a run of dotted or hyphenated words with no "@" ("a.b.c.d...", 80,000 characters) was read again from each of
    # its words: an unbounded repeat before a literal that then fails is quadratic in the run's length (29 s in
    # index_entry, and in complete_on_cue on every model call). Each repeat of the pattern is bounded, as RFC 5321
    # bounds an address's parts, so each start reads at most a few hundred characters.
    try:
        from re import _constants as sre_constants, _parser as sre_parse
    except ImportError:  # Python before 3.11
        import sre_constants
        import sre_parse
    from hippo.text.extract import _EMAIL

    def repeats(tree):
        for op, arg in tree:
            if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
                yield arg[1]
                yield from repeats(arg[2])
            elif op == sre_constants.SUBPATTERN:
                yield from repeats(arg[-1])
            elif op == sre_constants.BRANCH:
                for branch in arg[1]:
                    yield from repeats(branch)

    bounds = list(repeats(sre_parse.parse(_EMAIL.pattern)))
    assert bounds and sre_constants.MAXREPEAT not in bounds
    text = "mail mark.tanaka@gmail.com or ops+x@sub.example.co.uk, not a@b or @c.d; first.last-1@x-y.io."
    assert _EMAIL.findall(text) == ["mark.tanaka@gmail.com", "ops+x@sub.example.co.uk", "first.last-1@x-y.io"]
    mem = Memory(None)
    e = mem.index_entry("contact: " + "a." * 5000 + "\nwrite to ops@example.com\n")
    assert e.key_data["emails"] == "ops@example.com"
    assert list(mem.complete_on_cue("a." * 5000 + " ops@example.com")) == [e.id]


def test_error_dump_keeps_its_last_line_whole():
    exc = "IntegrityError: duplicate key value violates unique constraint \"users_email_key\" on table users_v2"
    text = "Traceback (most recent call last):\n" + "".join(
        f'  File "/srv/m{i}.py", line {i}, in f{i}\n    result = call_{i}(x=1)\n' for i in range(40)) + exc + "\n"
    _, key, fmt = extract(text)
    assert fmt == "text" and list(key)[0] == "error" and key["error"] == exc
    assert "result" not in key  # indented code lines are not settings


def test_format_and_error_detection():
    assert detect_format('{"a": 1}') == "json" and detect_format("{not json") == "text"
    assert looks_like_error("Traceback (most recent call last):\n  File x\nValueError: bad")
    assert not looks_like_error("all good\nnothing to see")


# -- decay on the turn clock ------------------------------------------------------------------------------------
def test_strength_follows_the_seed_table(mem):
    e = mem.index_entry(orders_json(), turn=0)
    assert e.decay["rate"] == pytest.approx(0.1)  # config.decay.rates["tool_result"], seed 004 §8.1
    for turns, table in ((5, 0.82), (10, 0.71), (20, 0.58), (50, 0.41), (100, 0.30)):
        s = mem.entry(e.id, turn=turns).strength
        assert s == pytest.approx(closed_form(0.1, turns), abs=1e-4)
        assert round(s, 2) == table


def test_priorities_encoding_and_reinforcement(mem):
    crit = mem.index_entry("critical\n" * 400, priority="critical", turn=0)
    high = mem.index_entry("high\n" * 400, priority="high", encoding="manual", turn=0)
    assert mem.entry(crit.id, turn=500).strength == 1.0
    assert mem.entry(high.id, turn=40).strength == pytest.approx(closed_form(0.1 * 0.3 * 0.5, 40), abs=1e-4)
    low = mem.index_entry("low\n" * 400, priority="low", turn=10)
    assert mem.entry(low.id, turn=30).strength == pytest.approx(closed_form(0.2, 20), abs=1e-4)
    mem.complete(low.id, "low", turn=30)  # access: back to 1, clock restarted at turn 30
    after = mem.entry(low.id, turn=36)
    assert after.strength == pytest.approx(closed_form(0.2, 6), abs=1e-4)
    assert after.accesses == 1 and after.decay["last_access"] == 30


def test_association_with_a_strong_entry_slows_decay(mem):
    a = mem.index_entry("alpha\n" * 400, turn=0)
    b = mem.index_entry("beta\n" * 400, associations=[a.id], turn=0)
    assert b.associations == (a.id,)
    assert mem.entry(b.id, turn=20).strength == pytest.approx(closed_form(0.1 * 0.7, 20), abs=1e-4)


def test_expiry_and_dormancy(mem):
    err = "Traceback (most recent call last):\n" + "  File 'x.py', line 1, in f\n" * 150 + "ValueError: boom\n"
    e = mem.index_entry(err, turn=2)
    assert e.source["type"] == "error"
    assert e.lifecycle["expires"] == 52  # default error policy: expires after 50 turns
    assert not mem.entry(e.id, turn=51).dormant
    late = mem.entry(e.id, turn=52)
    assert late.dormant and late.strength == 0.0
    assert "dormant" in late.render() and "memory_expand" in late.render()
    assert mem.entries(turn=52, include_dormant=False) == []
    assert mem.complete(e.id, "ValueError", turn=53).text.endswith("ValueError: boom")


# -- what to index ----------------------------------------------------------------------------------------------
def test_default_index_policies(mem):
    big = "word " * 1200
    small = "word " * 500
    assert mem.wants_index(big, type="tool_result")
    assert not mem.wants_index(small, type="tool_result")
    err = "Error: connection refused\n" + "  at frame\n" * 120
    assert count_tokens(err) > 200 and mem.wants_index(err, type="tool_result")
    assert not mem.wants_index("Error: short", type="tool_result")
    assert mem.wants_index("Please always answer in French.", type="message", role="user")
    assert not mem.wants_index("What is the weather today?", type="message", role="user")
    assert not mem.wants_index("I will always answer in French.", type="message", role="assistant")
    e = mem.index_entry("Remember: the deploy window is Friday 18:00.", type="message", role="user")
    assert e.priority == "high" and e.lifecycle["persist"]


def test_custom_policies_override_the_defaults(mem):
    rules = [{"match": {"source.type": "config.schema"}, "action": {"index": False, "decay_rate": 0.3}}]
    big = "field: value\n" * 800
    assert mem.wants_index(big, source="browser.snapshot")
    assert not mem.wants_index(big, source="config.schema", policies=rules)
    e = mem.index_entry(big, source="config.schema", policies=rules, turn=0)
    assert e.decay["base_rate"] == 0.3
    configured = Memory(None, config={"decay": {"policies": rules}})
    try:
        assert not configured.wants_index(big, source="config.schema")
    finally:
        configured.close()


# -- pattern completion -----------------------------------------------------------------------------------------
def test_query_completion_returns_numbered_lines_around_matches(mem):
    text = orders_json(200)
    e = mem.index_entry(text)
    got = mem.complete(e.id, "ORD-00137", context_lines=2)
    lines = text.splitlines()
    target = next(i for i, ln in enumerate(lines) if "ORD-00137" in ln)
    expected = [f"L{j + 1}: {lines[j]}" for j in range(target - 2, target + 3)]
    assert got.text.splitlines() == expected
    assert got.matched_lines == 1 and not got.complete and not got.stale


@pytest.mark.parametrize("cue, spaced", [("ORD-0042的订单", "ORD-0042 的订单"),
                                          ("iPhone的价格是多少", "iPhone 的价格是多少")])
def test_a_cue_in_a_script_without_spaces_finds_its_line(mem, cue, spaced):
    """A cue written against Chinese text ("the order ORD-0042") was one term no line holds, and found nothing; the
    same cue with a space where the script changes found the line. The reference: that cue, and the line by hand."""
    lines = [f"第{i}行：普通的记录，没有什么特别。" for i in range(1, 61)]
    lines[30] = "订单ORD-0042：iPhone的价格是999美元。"
    e = mem.index_entry("\n".join(lines))
    want = mem.complete(e.id, spaced, context_lines=0)
    got = mem.complete(e.id, cue, context_lines=0)
    assert want.text == f"L31: {lines[30]}" and got.matched_lines >= 1
    assert got.text.splitlines()[0] == want.text


def test_query_without_match_says_so_and_shows_the_head(mem):
    e = mem.index_entry(orders_json(50))
    got = mem.complete(e.id, "zebra", max_tokens=50)
    assert got.text.startswith("[no line of ") and got.matched_lines == 0
    assert count_tokens(got.text) <= 50


def test_minified_json_is_completed_through_a_line_view(mem):
    data = json.loads(orders_json(80))
    e = mem.index_entry(json.dumps(data, separators=(",", ":")))
    got = mem.complete(e.id, "ORD-00042", context_lines=3)
    assert '"ORD-00042"' in got.text and '"total": 136.5' in got.text


def test_a_line_view_never_writes_out_a_lone_surrogate_the_json_escapes(mem):
    # minified JSON (one long line) is completed through its pretty-printed view; a lone surrogate it escapes must
    # stay escaped, or the completion is no text a caller can encode (a tool result sent to a model, a file)
    data = json.loads(orders_json(20))
    data["note"] = "caf\udcff"
    content = json.dumps(data, separators=(",", ":"))
    assert content.isascii() and '"caf\\udcff"' in content
    e = mem.index_entry(content)
    got = mem.complete(e.id, "note", context_lines=0)
    assert got.matched_lines == 1 and got.text.encode("utf-8")
    line = got.text.split(": ", 1)[1]
    assert json.loads("{" + line.rstrip(",") + "}") == {"note": "caf\udcff"}  # a line of the view, escaped again


@pytest.mark.parametrize("cluster", ["e\u0301",                                   # "é" as a letter and its mark
                                     "\U0001F468\u200d\U0001F469\u200d\U0001F467",   # a family: three emoji joined
                                     "\U0001F1EB\U0001F1F7"])                         # a flag: two regional letters
def test_a_cut_line_ends_between_the_characters_a_reader_sees(mem, cluster):
    # a line longer than the budget is cut; the cut falls between grapheme clusters, never inside one (the accent
    # dropped from its letter, a family without its child, half a flag)
    body = cluster * 400
    e = mem.index_entry(body)
    q = mem.index_entry("needle " + body)
    for budget in range(12, 60):
        head = mem.complete(e.id, max_tokens=budget).text.split("\n[...", 1)[0]
        assert body.startswith(head) and len(head) % len(cluster) == 0, budget
        line = mem.complete(q.id, "needle", max_tokens=budget).text
        if line:
            assert line.startswith("L1: needle ") and line.endswith(" …"), budget
            cut = line[len("L1: needle "):-len(" …")]
            assert body.startswith(cut) and len(cut) % len(cluster) == 0, budget


def test_the_head_of_a_huge_line_counts_only_what_may_fit(mem, monkeypatch):
    # the head of a tool output of a megabyte on one line: cl100k's longest token is 128 bytes, so no more than
    # 128 characters a token can fit, and the rest of the line need not be counted (it was, some fifty times)
    from hippo.text import tokenizer

    line = "".join(f"{i:x}," for i in range(200_000))
    e = mem.index_entry(line)
    counted = []
    real = tokenizer.count_tokens
    monkeypatch.setattr(tokenizer, "count_tokens", lambda text: counted.append(len(text)) or real(text))
    got = mem.complete(e.id, max_tokens=300)
    assert not got.complete and line.startswith(got.text.split("\n[...", 1)[0])
    assert 0 < real(got.text) <= 300 and got.tokens == real(got.text)
    assert sum(counted) < len(line)  # less than one pass over the line


@pytest.mark.parametrize("content", [
    "".join(f"row {i},value {i}\r\n" for i in range(300)),                         # a CSV with Windows line ends
    "Downloading 10%\rDownloading 20%\rDownloading 30%\rdone\n" * 200,               # a progress line redrawn
    "".join(f"entry {i}\u2028continued\x85more\n" for i in range(300)),               # other line separators
])
def test_the_head_of_a_cut_content_is_its_own_text(mem, content):
    # "its leading lines": the content's own characters, line breaks as written, not its lines joined with "\n"
    e = mem.index_entry(content)
    for budget in (20, 40, 60, 150):
        got = mem.complete(e.id, max_tokens=budget)
        head = got.text.split("\n[...", 1)[0]
        assert not got.complete and head.strip() and content.startswith(head), budget
        assert count_tokens(got.text) <= budget


def test_max_tokens_cuts_full_content(mem):
    text = orders_json(300)
    e = mem.index_entry(text)
    got = mem.complete(e.id, max_tokens=100)
    assert not got.complete and "cut at 100 tokens" in got.text
    head = got.text.rsplit("\n[...", 1)[0]
    assert text.startswith(head) and count_tokens(head) <= 100


def test_stale_source_degrades_to_summary_then_refetch_restores(mem):
    text = orders_json(100)
    e = mem.index_entry(text, source={"type": "api.orders", "ref": "GET /orders?page=1"})
    mem.delete(list(e.message_ids[1:]))
    got = mem.complete(e.id, "ORD-00010")
    assert got.stale and got.text.startswith("[stale: the content of " + e.id)
    assert e.summary in got.text and "request_id=req-8f2a91" in got.text
    assert mem.entry(e.id).stale and "STALE" in mem.entry(e.id).render()
    seen = []
    again = mem.complete(e.id, "ORD-00010", refetch=lambda src: seen.append(src) or text)
    assert seen[0]["ref"] == "GET /orders?page=1"
    assert again.refetched and not again.stale and '"ORD-00010"' in again.text
    assert not mem.entry(e.id).stale and mem.complete(e.id).text == text


def test_refetch_failure_keeps_the_summary(mem):
    e = mem.index_entry(orders_json(60), source={"type": "api.orders", "ref": "x"})
    mem.delete(list(e.message_ids[1:]))

    def broken(source):
        raise ConnectionError("gone")

    got = mem.complete(e.id, refetch=broken)
    assert got.stale and e.summary in got.text


def test_deleting_the_header_removes_the_entry(mem):
    e = mem.index_entry(orders_json(40))
    mem.delete([e.message_ids[0]])
    assert mem.entries() == []
    with pytest.raises(NotFound):
        mem.complete(e.id)


# -- persistence, consolidation, LLM --------------------------------------------------------------------------
def test_entries_survive_reopening(tmp_path):
    path = tmp_path / "e.db"
    with Memory(path) as m:
        a = m.index_entry(orders_json(), source={"type": "tool", "ref": "c1"}, turn=3)
        b = m.index_entry("note: keep\n" * 300, priority="high", turn=4)
        m.complete(a.id, "ORD-00001", turn=6)
        before = [x.to_dict() for x in m.entries(turn=9)]
    with Memory(path) as m:
        after = [x.to_dict() for x in m.entries(turn=9)]
        assert after == before
        assert [x["id"] for x in after] == [a.id, b.id]
        assert after[0]["accesses"] == 1 and after[0]["decay"]["last_access"] == 6
        assert m.complete(a.id).text == orders_json()


def test_deep_consolidation_promotes_persist_worthy_entries_once(mem):
    keep = mem.index_entry("Remember: always deploy from the release branch.\n" * 3, type="message", role="user",
                           turn=1)
    used = mem.index_entry(orders_json(), turn=1)
    idle = mem.index_entry("scratch\n" * 500, turn=1)
    for t in (2, 3, 4):  # used config.decay.persist_accesses (3) times
        mem.complete(used.id, "ORD-00002", turn=t)
    rep = mem.consolidate_entries("deep", into="longterm", turn=5)
    assert rep["promoted"] == [keep.id, used.id] and idle.id in rep["kept"]
    lt = mem.using("longterm").list()
    assert [x.metadata["from_entry"] for x in lt] == [keep.id, used.id]
    assert all(x.metadata["type"] == "memory" for x in lt)
    assert "request_id=req-8f2a91" in lt[1].text
    assert lt[0].metadata.get("priority") == "high"
    assert mem.consolidate_entries("deep", into="longterm", turn=6)["promoted"] == []
    assert len(mem.using("longterm").list()) == 2


def test_llm_summary_when_configured_and_offline_fallback(llm_server):
    llm = LLM(base_url=llm_server.base_url, model="test-model", backoff_s=0.001, max_backoff_s=0.005, max_retries=0)
    with Memory(None, llm=llm) as m:
        e = m.index_entry(orders_json())
        assert e.summary_by == "llm" and e.summary.startswith("Summary: {")
        llm_server.push(status=400)
        f = m.index_entry(orders_json())
        assert f.summary_by == "extractive" and f.summary.startswith("JSON object with 4 keys")


# -- validation, async ------------------------------------------------------------------------------------------
def test_invalid_arguments_name_the_argument(mem):
    cases = [
        (lambda: mem.index_entry("  "), "content"),
        (lambda: mem.index_entry("x", type="blob"), "type"),
        (lambda: mem.index_entry("x", priority="urgent"), "priority"),
        (lambda: mem.index_entry("x", turn=-1), "turn"),
        (lambda: mem.index_entry("x", source=3), "source"),
        (lambda: mem.index_entry("x", associations="ctx_1"), "associations"),
        (lambda: mem.index_entry("x", expires_after_turns=-2), "expires_after_turns"),
        (lambda: mem.complete("nope"), "entry_id"),
        (lambda: mem.complete("ctx_1", max_tokens=0), "max_tokens"),
        (lambda: mem.consolidate_entries("sleep"), "level"),
        (lambda: mem.wants_index("x", type="file"), "type"),
    ]
    for call, name in cases:
        with pytest.raises(InvalidInput, match=name):
            call()
    with pytest.raises(NotFound, match="entry_id"):
        mem.entry("ctx_999")
    assert len(mem) == 0  # nothing was written by the failed calls


def test_async_twins(mem):
    async def go():
        e = await mem.aindex_entry(orders_json(), turn=1)
        got = await mem.acomplete(e.id, "ORD-00003")
        listed = await mem.aentries()
        one = await mem.aentry(e.id)
        wants = await mem.awants_index("tiny")
        rep = await mem.aconsolidate_entries("light")
        return e, got, listed, one, wants, rep

    e, got, listed, one, wants, rep = asyncio.run(go())
    assert '"ORD-00003"' in got.text and [x.id for x in listed] == [e.id] and one.id == e.id
    assert wants is False and rep["kept"] == [e.id]


def test_direct_reference_completes_the_entries_that_hold_the_identifier():
    import json as _json

    from hippo import Memory

    mem = Memory(None)
    orders = {"orders": [{"id": f"ORD-{i:05d}", "customer": f"c{i}", "total": 1000 + i} for i in range(150)]}
    a = mem.index_entry(_json.dumps(orders, indent=2), type="tool_result", source={"type": "api", "ref": "a"})
    b = mem.index_entry(_json.dumps({"orders": orders["orders"][100:]}, indent=2), type="tool_result",
                        source={"type": "api", "ref": "b"})
    got = mem.complete_on_cue("What was the total of order ORD-00042?")
    assert list(got) == [a.id]                                    # only the entry that holds it
    assert '"id": "ORD-00042"' in got[a.id].text and '"total": 1042' in got[a.id].text
    both = mem.complete_on_cue("And ORD-00120?")
    assert set(both) == {a.id, b.id} and all('"total": 1120' in c.text for c in both.values())
    assert mem.complete_on_cue("What was the total of order ORD-99999?") == {}
    assert mem.complete_on_cue("no identifier here") == {}
    assert mem.complete_on_cue("ORD-00120", entry_ids=[b.id]).keys() == {b.id}
    blocks = mem.entry_blocks([a.id, b.id])
    extended = mem.blocks_on_cue("total of ORD-00042?", blocks)
    assert list(extended) == [a.id] and extended[a.id].startswith(blocks[a.id])
    with pytest.raises(InvalidInput, match="max_entries"):
        mem.complete_on_cue("ORD-00001", max_entries=0)


# -- budgets ------------------------------------------------------------------------------------------------------
_lines = st.lists(st.sampled_from(["the cat sat", "ORD-00042 total 12.5", "🐱🐱🐱", "猫が好き", "  indented cat",
                                   "", "x" * 700, "{\"id\": \"ORD-00042\"}", "naïve café", "..."]),
                  min_size=1, max_size=40).map("\n".join).filter(lambda s: s.strip())


@settings(max_examples=60, deadline=None)
@given(_lines, st.integers(min_value=1, max_value=80), st.sampled_from([None, "cat", "ORD-00042", "zebra", "🐱"]),
       st.integers(min_value=0, max_value=3))
def test_completion_never_exceeds_max_tokens(content, budget, query, context_lines):
    """Every completion, its notes included, is at most ``max_tokens`` cl100k tokens; a note that leaves no room
    for content is left out, and what is returned is the content's own text (or its numbered lines)."""
    with Memory(None) as m:
        e = m.index_entry(content)
        got = m.complete(e.id, query, max_tokens=budget, context_lines=context_lines)
        assert count_tokens(got.text) == got.tokens <= budget
        lines = content.splitlines()
        if query is None and not got.text.startswith("["):
            head = got.text.split("\n[... cut at", 1)[0]
            assert content.startswith(head)
        elif got.matched_lines:
            for ln in got.text.splitlines():
                if ln != "...":
                    n, _, text = ln.partition(": ")
                    whole = lines[int(n[1:]) - 1]
                    assert whole == text or (text.endswith(" …") and whole.startswith(text[:-2]))


@pytest.mark.parametrize("budget", [1, 2, 5, 22, 40])
def test_completion_notes_count_against_the_budget(mem, budget):
    e = mem.index_entry("line one\n" + "the cat sat on the mat, order ORD-00012\n" * 200 + "x" * 5000)
    for query in (None, "cat", "zebra", "zebra " * 5000):
        got = mem.complete(e.id, query, max_tokens=budget)
        assert count_tokens(got.text) <= budget, (query, got.text)
    full = mem.complete(e.id, max_tokens=40)
    assert full.text.endswith("; ask with a query for a part]") and "cut at 40 tokens" in full.text
    assert mem.complete(e.id, max_tokens=1).text == "line"  # the content's head, without a note that cannot fit
    assert mem.complete(e.id, "zebra", max_tokens=40).text.startswith("[no line of ")
    mem.delete(list(e.message_ids[1:]))
    stale = mem.complete(e.id, "cat", max_tokens=10)
    assert stale.stale and count_tokens(stale.text) <= 10 and stale.text.startswith("[stale")


@pytest.mark.parametrize("bad", [object(), float("nan"), -1, 2**70, "3", True])
def test_every_argument_of_the_completion_calls_is_checked_before_anything_happens(mem, bad):
    """Checked whether or not there is anything to complete: a call that names no identifier, or an entry id
    that does not exist, still refuses a bad argument by its name."""
    e = mem.index_entry("order ORD-00042 total 12\n" * 50, persist=True)
    cases = [
        (lambda: mem.complete(e.id, turn=bad), "turn"),
        (lambda: mem.complete("ctx_999", turn=bad), "turn"),
        (lambda: mem.complete_on_cue("no identifier here", turn=bad), "turn"),
        (lambda: mem.complete_on_cue("no identifier here", context_lines=bad), "context_lines"),
        (lambda: mem.blocks_on_cue("no identifier here", {}, turn=bad), "turn"),
        (lambda: mem.blocks_on_cue("no identifier here", {}, max_tokens=bad), "max_tokens"),
        (lambda: mem.blocks_on_cue("no identifier here", {}, context_lines=bad), "context_lines"),
        (lambda: mem.blocks_on_cue(bad, {e.id: "block"}), "text"),
    ]
    for call, name in cases:
        if name == "text" and isinstance(bad, str):
            continue  # "3" is a text
        with pytest.raises(InvalidInput, match=name):
            call()


def test_names_and_sources_are_checked_as_what_they_are(mem):
    e = mem.index_entry("order ORD-00042 total 12\n" * 50, persist=True)
    for _ in range(4):
        mem.complete(e.id, "ORD-00042")  # used often enough to be promoted by a deep consolidation
    stored = (len(mem), mem.namespaces())
    cases = [
        (lambda: mem.consolidate_entries("deep", into="mem\x00ories"), "into"),
        (lambda: mem.consolidate_entries("deep", into="mem\ud800"), "into"),
        (lambda: mem.consolidate_entries("deep", into="m" * 600), "into"),
        (lambda: mem.index_entry("x y", source="api\x00orders"), "source"),
        (lambda: mem.index_entry("x y", source={"type": "api", "ref": "GET /\ud800"}), "source"),
        (lambda: mem.index_entry("x y", associations=[1]), "associations"),
        (lambda: mem.entries(ids=["ctx_x"]), "ids"),
        (lambda: mem.entry_blocks(["7"] + ["nope"]), "ids"),
    ]
    for call, name in cases:
        with pytest.raises(InvalidInput, match=name):
            call()
    assert (len(mem), mem.namespaces()) == stored  # no namespace named by a refused argument, no message


def test_docs_context_example_prints_what_it_shows(tmp_path, monkeypatch, capsys):
    """docs/context.md's opening example runs as written and its entry renders as the comment shows; the strength
    at turn 20 is the closed form (1 + 0.1 * 8) ** -0.5, and the content comes back byte for byte."""
    from tests.readme_examples import examples, run

    monkeypatch.chdir(tmp_path)  # the example creates agent.db in the working directory
    (where, code), = examples("context-entries")
    head, tail = code.split('mem.entry("ctx_1", turn=20).strength', 1)  # the strength before complete() reinforces
    ns = run(head, where)
    shown = [line[2:] for line in head.split("print(e.render())\n", 1)[1].splitlines() if line.startswith("# ")]
    assert capsys.readouterr().out.splitlines() == shown
    mem = ns["mem"]
    assert mem.entry("ctx_1", turn=20).strength == pytest.approx((1 + 0.1 * 8) ** -0.5, abs=1e-4)
    exec(compile(tail, where, "exec"), ns)  # noqa: S102 - the rest of our own example
    assert mem.complete("ctx_1").text == ns["snapshot_html"]
    mem.close()


def test_an_attribute_name_is_tried_only_where_a_name_starts():
    # A tag holding a long run of name characters with no "=" (40,000 characters: 20 s in index_entry) was read again
    # from each character of the run. A name now starts only where a run of name characters does (a lookbehind);
    # the attributes found are those the pattern without it finds (the reference), since a match from inside a run
    # could only end where the one from its start does.
    import random
    import re

    try:
        from re import _constants as sre_constants, _parser as sre_parse
    except ImportError:  # Python before 3.11
        import sre_constants
        import sre_parse
    from hippo.text.extract import _ATTR

    first = sre_parse.parse(_ATTR.pattern)[0]
    assert first[0] == sre_constants.ASSERT_NOT and first[1][0] == -1  # a lookbehind guards every start
    reference = re.compile(r"([\w:-]+)\s*=\s*(\"[^\"]*\"|'[^']*')")
    rng = random.Random(3)
    alphabet = ["a", "b", "-", ":", "_", "1", " ", "=", '"', "'", "x=", ' y="v"', " z='w'", "é", "<", ">", "\t"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        assert _ATTR.findall(text) == reference.findall(text), text
    page = '<html><head><title>Orders</title></head><body><div class="list" data-id=\'7\'>' \
           '<a href="/o/1">first</a></div><div ' + "a" * 40_000 + "></div></body></html>"
    assert _ATTR.findall('<div class="list" data-id=\'7\'>') == [("class", '"list"'), ("data-id", "'7'")]
    assert Memory(None).index_entry(page).key_data["title"] == "Orders"
