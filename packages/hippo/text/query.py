"""Query analysis: the content words of a query, one per stem, and their token patterns over cl100k ids."""

from __future__ import annotations

from dataclasses import dataclass, field

from hippo.text import lexicon, textnorm


@dataclass
class Query:
    text: str
    keywords: list[str]                      # surface words, one per distinct stem, in query order
    stems: list[str]
    patterns: list[lexicon.TermPattern] = field(default_factory=list)


def analyze(text: str, keywords: list[str] | None = None) -> Query:
    """Keywords of a query: content words minus stopwords and question scaffolding, one per stem.

    A query made only of stopwords ("hello", "how are you?") keeps all its words rather than matching nothing.
    """
    q = _analyze(text, keywords)
    if not q.keywords and keywords is None:
        q = _analyze(text, textnorm.words(text))
    return q


def _analyze(text: str, keywords: list[str] | None) -> Query:
    words = keywords if keywords is not None else textnorm.words(text)
    seen: set[str] = set()
    kws, stems = [], []
    for w in words:
        lw = w.lower().replace("’", "'")
        base = lw.split("'", 1)[0]
        if keywords is None and (lw in textnorm.STOPWORDS or base in textnorm.STOPWORDS
                                 or lw in textnorm.QUESTION_WORDS):
            continue
        st = textnorm.stem(base if "'" in lw else lw)
        if not st or st in seen:
            continue
        seen.add(st)
        kws.append(w.split("'", 1)[0].split("’", 1)[0])
        stems.append(st)
    q = Query(text=text, keywords=kws, stems=stems)
    q.patterns = [lexicon.pattern(w) for w in kws]
    return q
