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
    before = pack._cached_line.cache_info().currsize
    assert pack.count_lines([long, "x: y"]) == tokenizer.count_tokens(long + "\nx: y")
    assert pack._cached_line.cache_info().currsize <= before + 1  # only the short line was kept


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
