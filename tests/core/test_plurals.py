"""A query word finds its singular and plural whatever the plural's spelling. "-ies" is the plural of words in "-y"
("parties") and of words in "-ie" ("movies"); the light stemmer reads it as the first, so "movie" and "movies" once
missed each other. Reference: the English plurals below, written by hand."""

from __future__ import annotations

import pytest

from hippo import Memory

PAIRS = [
    ("movie", "movies"), ("cookie", "cookies"), ("calorie", "calories"), ("smoothie", "smoothies"),
    ("selfie", "selfies"), ("hoodie", "hoodies"),
    ("party", "parties"), ("city", "cities"), ("study", "studies"),   # "-y" words, found as before
    ("pie", "pies"), ("tie", "ties"), ("game", "games"), ("box", "boxes"),
]
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
