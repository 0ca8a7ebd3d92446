"""The context's exact token count from per-line counts (``hippo.engine.pack.count_lines``), against tiktoken's
count of the joined text, and the packer's budget against the same reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.engine import pack
from hippo.text import tokenizer

# Text that stresses the pre-tokenizer at line ends: runs of spaces, newlines and punctuation, digits, contractions,
# scripts without spaces, emoji, carriage returns.
_ALPHABET = st.sampled_from(list("ab Zz09 .,:;!?'\"-_()[]{}\n\r\t") + ["'s", "'ll", "...", "\n\n", "  ", "é", "ß",
                                                                     "東京", "Привет", "🙂", "👍🏽", "\u00a0", "\u3000"])
_TEXT = st.lists(_ALPHABET, max_size=30).map("".join)
_LINE = st.tuples(st.sampled_from(["Ann:", "user:", "[8 May 2023]", "x", "東", "🙂", "(", "'", "9"]), _TEXT).map(
    lambda t: t[0] + t[1])


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=8))
def test_line_counts_add_up_to_the_joined_count(lines):
    assert pack.count_lines(lines) == tokenizer.count_tokens("\n".join(lines))


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=6))
def test_lines_starting_with_space_fall_back_to_the_whole_count(lines):
    # any text, including lines that start with whitespace or are empty: still exact
    assert pack.count_lines(lines) == tokenizer.count_tokens("\n".join(lines))


def test_hand_cases():
    assert pack.count_lines([]) == 0
    cases = [["[8 May 2023]", "Ann: Hello there.", "Bob: hi!!"],
             ["user: ends in spaces   ", "assistant: ok"],
             ["user: ends in a newline\n", "assistant: ok\n\n", "user: last"],
             ["user: end.", "[9 May 2023]", "user: 123"],
             ["a", " starts with a space", "", "b"]]
    for lines in cases:
        assert pack.count_lines(lines) == tokenizer.count_tokens("\n".join(lines)), lines


def test_long_lines_are_counted_without_the_cache():
    long = "user: " + "word " * 3000
    assert len(long) > pack._CACHED_LINE
    before = pack._line_count.kept.cache_info().currsize
    assert pack.count_lines([long, "x: y"]) == tokenizer.count_tokens(long + "\nx: y")
    assert pack._line_count.kept.cache_info().currsize <= before + 1  # only the short line was kept


def test_pack_stays_within_budget_and_counts_its_text():
    pieces = [pack.Piece(key=i, n_tokens=len(tokenizer.encoding().encode_ordinary(t)), speaker=s, role="user",
                         ts=1.7e9 + 86400 * (i // 3), session=f"s{i // 3}", seq=i)
              for i, (s, t) in enumerate([("Ann", "I adopted a greyhound from the rescue."), ("Bob", "Nice!!\n"),
                                          ("Ann", "  Her name is Mochi."), ("Bob", "東京に行きました"),
                                          ("Ann", "🙂 ok..."), ("Bob", "We met at 10:30.")])]
    texts = {p.key: t for p, t in zip(pieces, ["I adopted a greyhound from the rescue.", "Nice!!\n",
                                                 "  Her name is Mochi.", "東京に行きました", "🙂 ok...",
                                                 "We met at 10:30."])}
    for budget in (5, 12, 20, 40, 200):
        chosen, text, tokens = pack.pack(list(pieces), budget, lambda ps: [texts[p.key] for p in ps])
        assert tokens == tokenizer.count_tokens(text)
        assert tokens <= budget
        assert text == pack.render(chosen)


# Message texts for the per-message rule: ASCII words and digits at the edges, next to everything that must fall back
# (non-ASCII letters right after an ASCII run, punctuation, spaces and newlines at either end).
_EDGE = st.sampled_from(["Hello", "hello", "Supercalifragilistic", "x", "I", "Café", "naïve", "Zürich", "42", "7",
                         "2023", "1234567", "(", "'s", " ", "\n", "!", "", "東京", "🙂", "é", "-", ".", "?!",
                         "```", " .", ".)", "  ...", "\t."])
_MESSAGE = st.tuples(_EDGE, _TEXT, _EDGE).map("".join)
_SPEAKER = st.sampled_from(["Ann", "user", "assistant", "Dr. Ng", "東", "a b", "x!"])


def _pieces(texts, speakers, notes):
    enc = tokenizer.encoding()
    return [pack.Piece(key=i, n_tokens=len(enc.encode_ordinary(t)), speaker=s, role="user",
                       ts=1.7e9 + 86400 * (i // 3), session=f"s{i // 3}", seq=i, text=t, note=n)
            for i, (t, s, n) in enumerate(zip(texts, speakers, notes))]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(_MESSAGE, _SPEAKER, st.sampled_from(["", "7 May 2023", "superseded 1 June 2023"])),
                min_size=1, max_size=7))
def test_context_count_from_message_counts_equals_tiktoken(rows):
    pieces = _pieces(*zip(*rows))
    assert pack.count_context(pieces) == tokenizer.count_tokens(pack.render(pieces))


def test_message_rule_hand_cases():
    # (text, applies): the rule covers ASCII word / digit edges and leaves the rest to the line count
    cases = [("Hello world", True), ("Hello, world.", True), ("42 apples", True), ("Café au lait", False),
             ("abc\u00e9", False), ("Hi", True), ("'s fine", False), ("(aside) ok", False), (" lead", False),
             ("tail ", False), ("x1", True), ("Supercalifragilisticexpialidocious is long", True),
             ("Done.", True), ("Really?!", True), ("see `x`", True), ("ok \U0001F642.", False), ("x .", True),
             ("x  ...", True), ("x\t.", True), ("code:\n```", True), ("Hi.\n", False), ("bye\u3002", False),
             ("a.b.c.", True), ("1.", True)]
    enc = tokenizer.encoding()
    for text, applies in cases:
        p = pack.Piece(key=0, n_tokens=len(enc.encode_ordinary(text)), speaker="Ann", role="user", ts=None,
                       session="s", seq=0, text=text)
        got = pack._message_line_count(p, True)
        assert (got is not None) == applies, text
        if got is not None:
            assert got == tokenizer.count_tokens(pack._line(p) + "\n"), text
        last = pack._message_line_count(p, False)
        if last is not None:
            assert last == tokenizer.count_tokens(pack._line(p)), text


def test_long_runs_at_a_message_s_edges_are_counted_without_the_caches():
    """A message opening with a letter run or closing with a punctuation run of any length (a pasted blob, "aaaa...")
    is counted exactly, and the caches of those runs' counts keep only runs of at most ``_CACHED_RUN`` characters."""
    long = _pieces(["a" * 5000 + " then words", "1 word, then " + "!" * 3000, "x" * 70 + " y" + "." * 65],
                   ["Ann", "user", "Ann"], ["", "", ""])
    short = _pieces(["Hello there.", "Fine, thanks!"], ["Bob", "Ann"], ["", ""])
    caches = (pack._space_joins.kept, pack._newline_joins.kept)
    for cache in caches:
        cache.cache_clear()
    assert pack.count_context(long) == tokenizer.count_tokens(pack.render(long))
    assert [c.cache_info().currsize for c in caches] == [0, 0]   # every run there is longer than _CACHED_RUN
    assert pack.count_context(short) == tokenizer.count_tokens(pack.render(short))
    assert all(c.cache_info().currsize > 0 for c in caches)      # short runs are kept


def test_a_line_s_prefix_is_its_voice_and_notes():
    """The prefix of a line without notes or copies is taken without joining them: against the prefix written
    out, for speakers with and without line breaks, roles only, notes and copies."""
    from itertools import product

    def written(p: pack.Piece) -> str:
        note = "; ".join(n for n in (p.note, pack._repeats(p)) if n)
        return f"{pack.voice(p.speaker or p.role)} ({note}):" if note else f"{pack.voice(p.speaker or p.role)}:"

    for speaker, note, copies in product(["Ann", "", "Ann\nSystem", "\t"], ["", "7 May 2023", "superseded"],
                                         [[], [1_700_000_000.0], [None, 1_700_090_000.0]]):
        p = pack.Piece(key=1, n_tokens=3, speaker=speaker, role="user", ts=1_700_000_000.0, session="s", seq=1,
                       note=note, copies=list(copies))
        assert pack._prefix(p) == written(p)
