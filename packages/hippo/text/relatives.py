"""Derivational relatives: "adopt" and "adoption", "suggest" and "suggestion", "creative" and "creativity".

A question and the message it asks about often use different words of one family: "What did Melanie say about the
adoption?" for "we're finally going to adopt!", "What suggestions did I get?" for "you suggested a budget app".
Inflections are matched as the word itself (:func:`hippo.text.lexicon.surface_forms`); derived words are other words
with a related meaning, and a query word also matches them at half weight, as it does a misspelling
(:data:`hippo.index.channels.SLIP_WEIGHT`): where the word itself occurs, its messages come first. A relative is
matched as the one token that spells it, in lower case or capitalised, after a space or opening a message
(:func:`hippo.text.lexicon.slips`): a family lists its inflected members itself.

A family is the words cl100k writes as one token after a space (lower-case ASCII letters, four or more) that share
their Snowball English stem (Porter2, the stemmer of the bm25s peer, through PyStemmer). The families are a table
shipped with the package (``hippo/data/relatives.txt``, one family per line), so no stemmer is needed at run time:
:func:`build_table` makes it, and a test checks the shipped table against it where PyStemmer is installed (the
``dev`` extra). A word that is not itself one of the table's words finds its family through its inflections
("organized" through "organize" when only that is a token): the caller passes them.

Porter2 sometimes joins words of unrelated meaning ("animal" and "animation", "apart" and "apartment");
counting half an occurrence keeps such a neighbour from outranking the word asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from importlib import resources

from hippo.base.errors import InvalidInput
from hippo.text import tokenizer

MIN_LETTERS = 4  # a word of three letters is mostly a word of its own ("ice", "icy"; "art", "arty")
_TABLE = "data/relatives.txt"


def _words_of_the_encoding() -> list[str]:
    """The lower-case ASCII words of :data:`MIN_LETTERS` letters or more that cl100k writes as one token after a
    space, sorted."""
    ranks = tokenizer.byte_ranks()
    if ranks is not None:
        raw = list(ranks)
    else:  # no byte table: every id's bytes
        raw = tokenizer.token_bytes()
    out = set()
    for b in raw:
        if len(b) > MIN_LETTERS and b[:1] == b" ":
            w = b[1:]
            if w.isalpha() and w.islower() and w.isascii():
                out.add(w.decode("ascii"))
    return sorted(out)


def build_table(stem=None) -> list[tuple[str, ...]]:
    """The families, each sorted, in order of their first word: the words of :func:`_words_of_the_encoding` grouped
    by ``stem`` (a word -> stem function; Snowball English through PyStemmer when None), groups of two or more."""
    if stem is None:
        try:
            import Stemmer  # PyStemmer: only to build the table (the dev extra)
        except ImportError as exc:
            raise InvalidInput("building the relatives table needs PyStemmer: pip install PyStemmer") from exc
        stem = Stemmer.Stemmer("english").stemWord
    groups: dict[str, list[str]] = {}
    for w in _words_of_the_encoding():
        groups.setdefault(stem(w), []).append(w)
    return sorted(tuple(g) for g in groups.values() if len(g) > 1)


def write_table(path, families: Iterable[tuple[str, ...]]) -> None:
    """Write ``families`` in the shipped table's format: a comment header, then one family per line."""
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write("# Derivational families of cl100k's one-token words (hippo.text.relatives.build_table):\n")
        f.write("# lower-case ASCII words of four letters or more after a space, grouped by Snowball English stem.\n")
        for fam in families:
            f.write(" ".join(fam) + "\n")


@lru_cache(maxsize=1)
def table() -> tuple[tuple[tuple[str, ...], ...], dict[str, int]]:
    """The shipped families and, per word, the index of its family; read once per process."""
    text = resources.files("hippo").joinpath(_TABLE).read_text(encoding="ascii")
    families = tuple(tuple(line.split()) for line in text.splitlines() if line and not line.startswith("#"))
    where = {w: k for k, fam in enumerate(families) for w in fam}
    return families, where


def relatives(word: str, inflections: Iterable[str] = ()) -> frozenset[str]:
    """The family of ``word`` without ``word``: the words of the table's family of its lower-case form, or else of the
    first of its ``inflections`` (lower-case forms of it) that the table holds. Empty for a word of fewer than
    :data:`MIN_LETTERS` letters or not of ASCII letters."""
    if not isinstance(word, str):
        raise InvalidInput(f"word must be a str, got {type(word).__name__}")
    low = word.lower()
    if len(low) < MIN_LETTERS or not (low.isascii() and low.isalpha()):
        return frozenset()
    families, where = table()
    k = where.get(low)
    if k is None:
        k = next((where[f] for f in sorted(inflections) if f in where), None)
    if k is None:
        return frozenset()
    return frozenset(families[k]) - {low}
