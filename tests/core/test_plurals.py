"""A query word finds its regular inflections whatever their spelling, and no other word. The light stemmer folds
"parties" to "party" but "movies" to "movy" against "movi" for "movie", "tried" to "tri", "added" to "ad", and leaves
words of three letters alone: such pairs once missed each other (hippo.text.lexicon._unfolded). Reference: the
English forms below, written by hand, and words that merely look like forms ("seed" is no form of "see")."""

from __future__ import annotations

import pytest

from hippo import Memory

PAIRS = [
    ("movie", "movies"), ("cookie", "cookies"), ("calorie", "calories"), ("smoothie", "smoothies"),
    ("selfie", "selfies"), ("hoodie", "hoodies"),
    ("party", "parties"), ("city", "cities"), ("study", "studies"),   # "-y" words, found as before
    ("pie", "pies"), ("tie", "ties"), ("game", "games"), ("box", "boxes"),
    ("try", "tried"), ("try", "tries"), ("apply", "applied"), ("worry", "worried"), ("identify", "identified"),
    ("agree", "agreed"), ("agree", "agreeing"), ("guarantee", "guaranteed"), ("use", "used"), ("use", "uses"),
    ("add", "added"), ("add", "adding"), ("age", "aged"), ("tie", "tied"),
]
# irregular forms, both ways, among them the verbs whose stem drops an "e" ("make" is "mak" as "making" is): "made"
# once stemmed to "make" and missed "make"
PAIRS += [("make", "made"), ("take", "took"), ("take", "taken"), ("write", "wrote"), ("forget", "forgot"),
          ("drive", "drove"), ("drive", "driven"), ("ride", "rode"), ("choose", "chose"), ("fly", "flew"),
          ("swim", "swam"), ("pay", "paid"), ("sell", "sold"), ("spend", "spent"), ("grow", "grew"),
          ("knife", "knives"), ("wolf", "wolves"), ("go", "went"), ("buy", "bought")]
ONE_WAY = [("use", "using"), ("tie", "tying")]  # "-ing" back to a word of three letters is not guessed
NOT_FORMS = [("see", "seed"), ("fee", "feed"), ("car", "card"), ("fun", "fund"), ("bee", "beed"), ("she", "shed"),
             ("rise", "rose"), ("grind", "ground")]  # forms that are also other common words are left out
FILLER = ["We talked about the weather.", "The train was late again.", "I painted the fence on Sunday."]


@pytest.mark.parametrize("singular,plural", PAIRS)
@pytest.mark.parametrize("written_plural", [True, False])
def test_the_singular_finds_the_plural_and_the_plural_the_singular(singular, plural, written_plural):
    written, asked = (plural, singular) if written_plural else (singular, plural)
    mem = Memory(None)
    for text in FILLER:
        mem.add(text, role="user")
    target = mem.add(f"Last night we argued about the {written} for the weekend.", role="user")
    for text in FILLER:
        mem.add(text, role="assistant")
    hits = mem.search(f"What did we say about the {asked}?", k=3)
    assert hits and hits[0].id == target.id, (written, asked)
    mem.close()


def _found(written: str, asked: str) -> bool:
    mem = Memory(None)
    for text in FILLER:
        mem.add(text, role="user")
    target = mem.add(f"Last night we argued about the {written} for the weekend.", role="user")
    hits = mem.search(f"What did we say about the {asked}?", k=3)
    mem.close()
    return bool(hits) and hits[0].id == target.id


@pytest.mark.parametrize("word,form", ONE_WAY)
def test_a_word_of_three_letters_finds_its_ing_form(word, form):
    assert _found(form, word)


@pytest.mark.parametrize("word,other", NOT_FORMS)
def test_a_word_does_not_find_a_word_that_only_looks_like_its_form(word, other):
    assert not _found(other, word) and not _found(word, other)
