"""Words next to emoji: "🎉party", "❤️love", "pizza☕" are words as "party", "love" and "pizza" are, whatever pieces
cl100k cuts the emoji into. The reference is a regular expression's word boundary over the text (where digits after
letters also end a word)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hippo import Memory
from hippo.index import channels
from hippo.text import lexicon, tokenizer
from hippo.text.query import analyze

EMOJI = ["🎉", "😂", "❤️", "✨", "☕", "👍", "🇮🇪", "1️⃣", "👩‍👩‍👧", "→", "…", "✅", "⭐", "⚡", "⌛", "🙏🏽"]
WORDS = ["party", "Party", "pizza", "tea", "sunset", "Dublin"]
LETTERS = ["Ж", "é", "Ⰰ"]  # letters of other scripts continue a word: "partyⰀ" is no "party"
JOINS = ["", " ", ", ", "!"]


def _matched(texts: list[str], word: str) -> set[int]:
    mem = Memory(None, namespace="emoji")
    try:
        mem.add_many({"text": t, "speaker": "Ann"} for t in texts)
        got = channels.lexical(mem.engine.state().index, analyze(word), mem.config)
        return set(got.rows.tolist())
    finally:
        mem.close()


def _reference(texts: list[str], word: str) -> set[int]:
    # a word boundary, except that digits after a word of letters end it ("party1️⃣", "iPhone15": lexicon's
    # letters_meet_digits); the words asked here are letters
    pat = re.compile(rf"(?<!\w){re.escape(word)}(?![^\W\d])", re.IGNORECASE)
    return {k for k, t in enumerate(texts) if pat.search(t)}


def test_words_glued_to_emoji_are_words() -> None:
    texts = ["Going to the party🎉", "🎉party tonight", "❤️party time", "party❤️", "✨party✨", "😂Party",
             "Partyparty", "the party, tonight", "1️⃣party", "👍🏽party"]
    assert _matched(texts, "party") == _reference(texts, "party") == {0, 1, 2, 3, 4, 5, 7, 8, 9}


def test_a_word_before_a_character_cut_after_its_first_byte_ends_there() -> None:
    # "⭐", "⚡" and "⌛" are cut after their first byte, a lead byte that alone could begin a letter: the character
    # is completed from the next tokens ("partyЖ" is one word, "party⭐" is "party" and a star)
    enc = tokenizer.encoding()
    assert lexicon.opens_character([enc.encode_ordinary("party⭐")[1]]).tolist() == [True]
    texts = ["party⭐", "party⚡ now", "so party⌛", "partyЖ", "partyⰀ", "party✅"]
    assert _matched(texts, "party") == _reference(texts, "party") == {0, 1, 2, 5}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(JOINS), st.sampled_from(EMOJI + WORDS + LETTERS)),
                         min_size=1, max_size=6), min_size=1, max_size=5))
def test_emoji_and_words_in_any_order_match_as_a_regex_word_boundary_does(messages) -> None:
    texts = ["".join(j + piece for j, piece in m).strip() or "x" for m in messages]
    for word in ("party", "pizza", "sunset", "dublin"):
        assert _matched(texts, word) == _reference(texts, word), (word, texts)


def test_the_last_piece_of_a_cut_character_is_told_by_the_character() -> None:
    enc = tokenizer.encoding()
    ids = enc.encode("🎉party")
    assert len(ids) > 2 and lexicon.inside_character([ids[-2]]).tolist() == [True]
    assert not lexicon.last_character_is_word("🎉".encode())
    assert lexicon.last_character_is_word("café".encode())
    assert lexicon.last_character_is_word("Ελλάδα".encode())


# -- a question of emoji alone --------------------------------------------------------------------------------------
ASKED = ["🎉", "😂", "❤️", "❤", "✨", "☕", "👍", "👍🏽", "🇮🇪", "👩‍👩‍👧", "✅", "⭐", "⚡", "⌛", "🙏"]


def _asked_reference(texts: list[str], question: str) -> set[int]:
    # the messages holding the emoji as typed, or without its skin tone and presentation selector ("👍🏽" asked finds
    # "👍"; "❤️" asked finds "❤")
    base = re.sub("[\U0001F3FB-\U0001F3FF]", "", question)
    forms = {base, base.replace("\ufe0f", "")}
    return {k for k, t in enumerate(texts) if any(f in t for f in forms)}


def test_a_question_of_emoji_alone_finds_the_messages_holding_them() -> None:
    texts = ["my 🐶 went to the vet 🏥 today", "I love my new 🎸, it's a Fender", "going to the beach🏖️ with Sam",
             "pizza night!🍕🍕 at Tom's", "great job 👍🏽", "I ❤️ Paris", "the meeting is at 3pm"]
    with Memory(None) as mem:
        for t in texts:
            mem.add(t, speaker="Ann")
        for question, k in (("🎸?", 1), ("🐶🏥", 0), ("🏥", 0), ("🏖", 2), ("🍕", 3), ("👍", 4), ("❤", 5)):
            hits = mem.search(question, k=3)
            assert [h.text for h in hits] == [texts[k]], question
            context = mem.recall(question, budget_tokens=300)
            assert texts[k] in context.text and context.tokens <= 300, question
        assert mem.search("🎻", k=3) == []  # an emoji no message holds


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(JOINS), st.sampled_from(EMOJI + WORDS + LETTERS)),
                         min_size=1, max_size=6), min_size=1, max_size=5))
def test_an_emoji_asked_matches_as_a_substring_test_does(messages) -> None:
    texts = ["".join(j + piece for j, piece in m).strip() or "x" for m in messages]
    for question in ASKED:
        assert _matched(texts, question) == _asked_reference(texts, question), (question, texts)
