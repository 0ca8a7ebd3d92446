"""Where words start and end in the token stream.

Words written after punctuation that cl100k glues onto them ("one-year-old" is " one", "-year", "-old"; "(city",
"/weather", ".error", "_password") are found like any other word, and counted once; inside links, e-mail addresses
and handles also when the joined word is several tokens ("www.airbnb.com"). Digits end a word of letters they are
glued to ("iPhone15", "ｉＰｈｏｎｅ１５"), and a change between a script written without spaces and another ends a word
("我买了iPhone"). Punctuation and symbols beyond ASCII (the curly apostrophe of phone keyboards, curly quotes,
dashes, emoji) end a word as their ASCII counterparts do; letters of other scripts still continue one."""

from __future__ import annotations

import functools
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo import Memory
from hippo.text import lexicon, textnorm, tokenizer


@pytest.mark.parametrize("text, word", [
    ("Our one-year-old is so cute, his name is Kyle!", "year"),
    ("Our one-year-old is so cute, his name is Kyle!", "old"),
    ("I call fetchForecast(city) before rendering", "city"),
    ("see src/weather/api.js for the client", "weather"),
    ("It logs with console.error when the API fails", "error"),
    ("Store user_password hashed with bcrypt", "password"),
    ("A state-of-the-art pipeline", "art"),
    ("Here's a recent self-portrait I made last week", "portrait"),   # "-port" + "rait": a hyphen's phrase
    ("curl localhost:5000/weather?city=Paris", "weather"),
])
def test_a_word_after_glued_punctuation_is_found(text, word):
    enc = tokenizer.encoding()
    pieces = [enc.decode([t]) for t in enc.encode_ordinary(text)]
    assert word not in [p.strip() for p in pieces]  # the case is the glued one: no token is the bare word
    assert _found_alone(text, word)


def _found_alone(text: str, word: str) -> bool:
    """Whether a search for ``word`` finds the message ``text``, and nothing else, between two filler lines."""
    mem = Memory()
    mem.add("Nothing to see in this filler message at all.", speaker="A")
    hit = mem.add(text, speaker="A")
    mem.add("Another unrelated filler line about the garden.", speaker="A")
    return [h.id for h in mem.search(word, k=3)] == [hit.id]


def test_each_occurrence_counts_once():
    mem = Memory()
    mem.add_many([{"text": t, "speaker": "A"} for t in [
        "a one-year-old and a 5-year plan",       # two glued occurrences
        "a year - then another year",             # plain words, the dash a token of its own
        "yearly is another word, so is yearn",    # no whole word "year"
    ]])
    idx = mem.engine.state().index
    rows, tf = idx.term_rows(lexicon.pattern("year"))
    assert rows.tolist() == [0, 1] and tf.tolist() == [2, 2]


def test_a_joiner_that_is_its_own_token_adds_no_form():
    enc = tokenizer.encoding()
    pat = lexicon.pattern("year")
    for ids in [(int(t),) for t in pat.singles.tolist()] + list(pat.phrases):
        assert enc.decode([ids[0]]) not in lexicon.JOINERS  # such a match would be the plain form's, counted twice
    forms = {enc.decode(list(ids)) for ids in [(int(t),) for t in pat.singles.tolist()] + list(pat.phrases)}
    assert {"-year", "(year", "/year", ".year", "_year"} <= forms
    portrait = lexicon.pattern("portrait")
    assert enc.decode([enc.encode_ordinary("(portrait")[0]]) == "(port"       # glued, and more than one token:
    assert tuple(enc.encode_ordinary("(portrait")) not in portrait.phrases     # after code's joiners, one token only
    assert tuple(enc.encode_ordinary("-portrait")) in portrait.phrases         # after a hyphen, a compound's word
    for j in lexicon.LINK_JOINERS:                                              # and after a link's joiners,
        ids = tuple(enc.encode_ordinary(j + "portrait"))                         # unless the joiner stands alone
        assert (ids in portrait.phrases) == (enc.decode([ids[0]]) != j), j
    assert tuple(enc.encode_ordinary(".portrait")) in portrait.phrases          # ".port" + "rait"
    assert np.unique(pat.singles).size == pat.singles.size


@functools.lru_cache(maxsize=1)
def _folding_to() -> dict[str, set[int]]:
    """Every token that spells a word of Latin letters with accents, by its text without them (decoded one by one)."""
    import unicodedata

    out: dict[str, set[int]] = {}
    for tid in range(tokenizer.encoding().n_vocab):
        try:
            text = tokenizer.encoding().decode_single_token_bytes(tid).decode("utf-8")
        except (KeyError, UnicodeDecodeError):
            continue
        word = text.removeprefix(" ")
        plain = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        if word.isalpha() and not word.isascii() and all(ord(c) < 0x250 for c in word) and plain.isascii():
            out.setdefault(plain, set()).add(tid)
    return out


@functools.lru_cache(maxsize=1)
def _mixed_case() -> dict[str, set[int]]:
    """Every token that spells ASCII letters in mixed case (not lower case, capitalised or in capitals), after a
    space or not, by its text in lower case (decoded one by one)."""
    out: dict[str, set[int]] = {}
    for tid in range(tokenizer.encoding().n_vocab):
        try:
            text = tokenizer.encoding().decode_single_token_bytes(tid).decode("ascii")
        except (KeyError, UnicodeDecodeError):
            continue
        word = text.removeprefix(" ")
        if len(word) >= 2 and word.isalpha() and not (word.islower() or word.isupper() or word[1:].islower()):
            out.setdefault(text.lower(), set()).add(tid)
    return out


def _reference_pattern(word):
    """The definition of a term's pattern, every form encoded by tiktoken's own ``encode_ordinary``; a word of four
    letters or more also takes the one-token accented words that fold to its ASCII forms, and a lower-case form the
    tokens that spell it in mixed case (" YouTube" for "youtube"; and the same letters opening a message). A word
    beyond ASCII is taken in NFC, and each of its forms also in NFD (combining marks)."""
    enc = tokenizer.encoding()
    singles, phrases = set(), set()
    folding = _folding_to() if len(word) >= 4 else {}
    word = unicodedata.normalize("NFC", word)
    forms = lexicon.surface_forms(word)
    forms |= {unicodedata.normalize("NFD", f) for f in forms}
    for v in forms:
        if v.isascii() and v.isalpha():
            singles |= folding.get(" " + v, set()) | folding.get(v, set())
        if v.isascii() and v.isalpha() and v.islower():
            singles |= _mixed_case().get(v, set())
            for t in _mixed_case().get(" " + v, set()):
                singles.add(t)
                ids = tuple(enc.encode_ordinary(enc.decode([t]).removeprefix(" ")))
                (singles.add(ids[0]) if len(ids) == 1 else phrases.add(ids))
        for form in (" " + v, v, *(j + v for j in lexicon.JOINERS)):
            ids = tuple(enc.encode_ordinary(form))
            # after a hyphen (compounds) and a link's joiners ("www.airbnb.com") every form counts, unless the
            # joiner is a token of its own; after the others only one-token forms; a link's words are lower-case
            # ASCII letters, a qualified name's identifiers mixed-case ones
            mixed = v not in (v.lower(), v.upper(), v.capitalize())
            every = form[0] == "-" or (form[0] in ".@/" and v.isascii() and v.isalpha() and (v.islower() or mixed))
            if form[0] in lexicon.JOINERS and len(ids) > 1 and (
                    not every or enc.decode_single_token_bytes(ids[0]) == form[0].encode()):
                continue
            if len(ids) == 1:
                singles.add(ids[0])
            elif ids:
                phrases.add(ids)
    return sorted(singles), sorted(phrases)


@pytest.mark.parametrize("word", ["year", "portrait", "running", "Dublin", "greyhound", "I", "a", "LGBTQ",
                                  "caf\u00e9", "Stra\u00dfe", "\u041c\u043e\u0441\u043a\u0432\u0430", "\u6771\u4eac",
                                  "covid19", "2023", "don't", "s", "ll", "ve", "re", "node", "js", "self", "tt",
                                  "Mochi", "stories", "ran", "children", "error", "password", "name", "system",
                                  "id", "weather", "data", "html", "value", "youtube", "javascript", "Lebron",
                                  "iphone", "github", "DuplicateKeyError", "loadUser", "iPhone"])
def test_a_pattern_is_its_forms_encoded_one_by_one(word):
    # the pattern skips encoding what cannot count and applies BPE to single pre-tokenizer pieces directly
    pat = lexicon.pattern(word)
    singles, phrases = _reference_pattern(word)
    assert pat.singles.tolist() == singles and list(pat.phrases) == phrases


def _utf8_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    return 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF8 else 0


def test_the_cut_character_tables_are_every_token_they_name():
    # read from the byte table's edges; the definitions are per token's bytes
    table = tokenizer.token_bytes()
    ids = np.arange(len(table))
    opens, inside = lexicon.opens_character(ids), lexicon.inside_character(ids)
    for t, b in enumerate(table):
        assert bool(opens[t]) == (bool(b) and len(b) < _utf8_length(b[0])), (t, b)     # "⭐"'s lone first byte
        assert bool(inside[t]) == (bool(b) and all(0x80 <= x < 0xC0 for x in b)), (t, b)  # "🎉"'s last piece
    assert opens.any() and inside.any()


def test_the_code_joiners_table_is_every_token_that_starts_with_one():
    # the table is built from the tokens' first bytes; the definition is a scan of the whole byte table
    ranks = tokenizer.byte_ranks()
    if ranks is None:
        pytest.skip("tiktoken exposes no byte table here")
    want: dict[bytes, list[str]] = {}
    code_joiners = [j for j in lexicon.JOINERS if j != "-"]  # after a hyphen every form counts: no table
    for b in ranks:
        for j in code_joiners:
            jb = j.encode()
            if len(b) > len(jb) and b.startswith(jb):
                want.setdefault(b[len(jb):], []).append(j)
    got = lexicon._code_joined()
    assert set(got) == set(want)
    assert all(sorted(got[v]) == sorted(js) for v, js in want.items())
    assert "/" in got[b"weather"] and "." in got[b"error"] and "(" in got[b"city"]  # one cl100k token each


# Hand-labelled chat lines: a word inside a link, an e-mail address or a handle, written in several tokens after
# the joiner, a name with a number glued to it, and a name in another case.
@pytest.mark.parametrize("text, word", [
    ("finally booked it https://www.airbnb.com/rooms/48213", "airbnb"),        # "www", ".air", "bnb", ".com"
    ("the listing is on zillow.com/homedetails/123", "zillow"),
    ("email me at mark.tanaka@gmail.com", "tanaka"),                        # ".t", "an", "aka", "@gmail"
    ("her profile: linkedin.com/in/priya-raman", "raman"),
    ("ugh the iPhone15 screen cracked", "iPhone"),                           # " iPhone", "15"
    ("ugh the iPhone15 screen cracked", "15"),
    ("got my covid19 booster today", "covid"),
    ("still on win11 at work", "win"),
    ("we're in room302 of the hotel", "room"),
    # and names typed in another case than the message's ("YouTube" / "youtube"), in one token or several
    ("watching YouTube all day", "youtube"),
    ("learning JavaScript now", "javascript"),
    ("I think LeBron is the man", "Lebron"),
    ("LeBron again, what a game", "lebron"),                                 # opening a message: "Le", "Bron"
    ("I love my PlayStation", "Playstation"),
    ("pushed it all to GitHub", "Github"),
    ("we met DeShawn at the gym", "Deshawn"),                               # several tokens: the namespace's words
    ("grabbed food at McDonalds", "MCDONALDS"),
])
def test_a_word_as_chats_write_it_is_found(text, word):
    assert _found_alone(text, word)


# Qualified names of code (a stack trace's exception, a method call): an identifier in mixed case written after a
# dot or a slash, which cl100k glues onto its first letters (".D", "uplicate", "Key", "Error").
@pytest.mark.parametrize("text, word", [
    ("pymongo.errors.DuplicateKeyError: E11000 duplicate key error", "DuplicateKeyError"),
    ("Exception in thread main java.lang.NullPointerException", "NullPointerException"),
    ("requests.exceptions.ConnectionError: HTTPSConnectionPool", "ConnectionError"),
    ("builtins.ValueError was raised", "ValueError"),
    ("at com.example.UserService.loadUser(UserService.java:88)", "loadUser"),
    ("see src/UserService.java for it", "UserService"),
])
def test_a_qualified_name_in_code_is_found(text, word):
    enc = tokenizer.encoding()
    pieces = [enc.decode([t]) for t in enc.encode_ordinary(text)]
    assert not any(p.strip(" .(/") == word for p in pieces)  # the case is the glued one: no token is the name
    assert _found_alone(text, word)


@pytest.mark.parametrize("text, word", [
    ("bought 4kg of rice", "kg"),         # digits before letters still glue: "4kg", "5k", "2nd" are one word
    ("a 5km run", "km"),
    ("the x86 build", "86"),              # " x" + "86": the letters end their word, the digits start one
])
def test_only_letters_then_digits_split(text, word):
    mem = Memory()
    hit = mem.add(text, speaker="A")
    found = [h.id for h in mem.search(word, k=3)]
    assert found == ([hit.id] if word == "86" else [])


def test_letters_meet_digits_is_every_pair_it_names():
    # from the byte table's first and last bytes; the definition reads each pair of tokens' bytes
    enc = tokenizer.encoding()
    text = "iPhone15 covid19 x86 5k 3D 2nd room 302 win11 abc123def A1 h2o \u00e92 \u0444\u0443\u04403"
    ids = np.asarray(enc.encode_ordinary(text), dtype=np.int64)
    table = tokenizer.token_bytes()
    want = [bool(table[a]) and bool(table[b]) and chr(table[a][-1]).isascii() and chr(table[a][-1]).isalpha()
            and table[b][:1].isdigit() for a, b in zip(ids[:-1].tolist(), ids[1:].tolist())]
    assert lexicon.letters_meet_digits(ids).tolist() == want and any(want)
    assert lexicon.letters_meet_digits(ids[:1]).size == 0


# Characters of every kind a joint between tokens can hold: ASCII and full-width letters and digits, Han (common
# ones, one token or two, and rarer ones cl100k cuts in three), kana, half-width katakana, Hangul, Thai with its
# marks, Cyrillic, accented Latin, a combining accent, the iteration mark, a Han character of four bytes, emoji
# with their marks, spaces and punctuation.
_KINDS_ALPHABET = list("aZk09 .,-'" "ｉＰｅ１５" "我买了喝咖啡東京鬱龘" "のをにカメラ" "ｶﾒﾗ" "넷플릭스를봤" "ข้าวผัด"
                       "машину" "éñü" "\u0301々" "\U0002000b" "🎉❤\ufe0f")


def _reference_splits(text: str) -> list[bool]:
    """Per joint between the tokens of ``text``: whether a word ends there although no space or punctuation does,
    from the text itself: both characters at the joint are word characters (letters, digits, marks; not the emoji
    marks), and exactly one of them is of a script written without spaces, or a Latin letter (ASCII or full width)
    is followed by a digit (ASCII or full width). A joint inside a character splits nothing."""
    full = {c: chr(ord(c) + 0xFEE0) for c in "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"}
    digits = set("0123456789") | {full[c] for c in "0123456789"}
    latin = {c for c in full if c.isalpha()} | {full[c] for c in full if c.isalpha()}

    def kind(ch: str) -> str | None:
        if unicodedata.category(ch)[0] not in "LNM" or ch in "\ufe0e\ufe0f\u20e3":
            return None
        return "S" if textnorm.is_cjk(ch) else "D" if ch in digits else "A" if ch in latin else "O"

    enc = tokenizer.encoding()
    pieces = [enc.decode_single_token_bytes(t) for t in enc.encode_ordinary(text)]
    raw = b"".join(pieces)
    out, at = [], 0
    for piece in pieces[:-1]:
        at += len(piece)
        if 0x80 <= raw[at] < 0xC0:
            out.append(False)
            continue
        before, after = kind(raw[:at].decode()[-1]), kind(raw[at:].decode()[0])
        out.append(None not in (before, after) and ((before == "S") != (after == "S") or (before, after) == ("A", "D")))
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_KINDS_ALPHABET), max_size=40).map("".join))
def test_word_splits_are_every_joint_where_kinds_change(text):
    ids = np.asarray(tokenizer.encoding().encode_ordinary(text), dtype=np.int64)
    assert lexicon.word_splits(ids).tolist() == _reference_splits(text)


@pytest.mark.parametrize("text", ["我昨天买了iPhone", "iPhone15を買った", "Tokyoに行く", "用GPT写的", "2024年に結婚した",
                                  "Netflix를 봤어", "ไปดูNetflixกัน", "ｉＰｈｏｎｅ１５を買った", "我在Starbucks喝咖啡",
                                  "ｶﾒﾗはCanon", "東京Tower", "𠀋iPhone", "🎉Tokyo🎉に"])
def test_word_splits_by_hand_examples(text):
    want = _reference_splits(text)
    assert any(want) == (text not in ("𠀋iPhone", "🎉Tokyo🎉に"))  # four-byte Han is no script without spaces here
    assert lexicon.word_splits(np.asarray(tokenizer.encoding().encode_ordinary(text))).tolist() == want


@pytest.mark.parametrize("text, word", [
    ("I love Sara\u2019s cooking", "Sara"),                 # a phone keyboard's apostrophe
    ("Mochi\u2019s bowl is blue", "Mochi"),
    ("the \u201cboutique\u201d opened today", "boutique"),   # curly quotes
    ("Love you Mochi\U0001F60D so much", "Mochi"),         # an emoji right after the word
    ("the tram\u2014and then the cello", "tram"),           # an em dash between words
    ("un caf\u00e9 d\u00e9licieux", "caf\u00e9"),
])
def test_punctuation_and_symbols_beyond_ascii_end_a_word(text, word):
    mem = Memory()
    mem.add("Nothing to see in this filler message at all.", speaker="A")
    hit = mem.add(text, speaker="A")
    assert [h.id for h in mem.search(word, k=3)] == [hit.id]


def test_letters_beyond_ascii_still_continue_a_word():
    mem = Memory()
    mem.add("un caf\u00e9 d\u00e9licieux", speaker="A")   # "caf" + "\u00e9": no word "caf"
    mem.add("\u043c\u0430\u0448\u0438\u043d\u0443", speaker="A")  # Cyrillic, no word "\u043c\u0430\u0448"
    assert mem.search("caf", k=3) == []
    assert mem.search("\u043c\u0430\u0448", k=3) == []


@pytest.mark.parametrize("raw, first, last", [
    (b"abc", True, True), (b" abc", False, True), (b"\xe2\x80\x99s", False, True),   # "\u2019s"
    (b" \xe2\x80\x9c", False, False), (b"\xc3\xa9", True, True),                   # " \u201c", "\u00e9"
    (b"\x99s", True, True),                      # starts inside a character: continues it
    (b"\xf0\x9f\x98", False, False),            # an emoji's first bytes, cut
    (b"ab\xe3\x81", True, True),               # a CJK character cut: a word piece
    (b"\xe2\x80\x94", False, False),            # an em dash
])
def test_edges_by_hand(raw, first, last):
    assert lexicon._edge_is_word(raw, False) is first
    assert lexicon._edge_is_word(raw, True) is last


def test_a_speaker_is_named_by_each_word_of_their_name():
    # contact names are often first and last names: "Jonathan" names "Jonathan Smith", as a
    # "<speaker>: <text>" line shows it to a text-only BM25
    mem = Memory()
    jon = mem.add("I booked the flights to Porto for March.", speaker="Jonathan Smith")
    ana = mem.add("Great, I will pack the camera.", speaker="Ana Smith")
    bot = mem.add("The weather looks fine.", speaker="Bot")
    assert [h.id for h in mem.search("What did Jonathan say?", k=3)] == [jon.id]
    assert [h.id for h in mem.search("What did Ana say?", k=3)] == [ana.id]
    assert {h.id for h in mem.search("Smith", k=3)} == {jon.id, ana.id}
    assert [h.id for h in mem.search("Jonathan Smith", k=1)] == [jon.id]
    assert [h.id for h in mem.search("Bot", k=3)] == [bot.id]
    st = mem.engine.state()
    from hippo.index import channels
    names = channels.speaker_names(st.index)
    codes = {st.index.speakers[c] for c in names["smith"]}
    assert codes == {"Jonathan Smith", "Ana Smith"}
