"""Query analysis: the content words of a query, one per stem, and their token patterns over cl100k ids."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from hippo.text import directives, endings, lexicon, textnorm


@dataclass
class Query:
    text: str
    keywords: list[str]                      # surface words, one per distinct stem, in query order
    stems: list[str]
    patterns: list[lexicon.TermPattern] = field(default_factory=list)
    # the last ``supporting`` keywords are the asker's first-person words: they add to the score of messages the
    # other keywords found, and find none themselves
    supporting: int = 0
    # the question's language when its words are given that language's endings (:func:`hippo.text.endings.language`:
    # Turkish, Finnish, German), else None
    lang: str | None = None


# The asker's words for themselves. In a question they are not filler: "what did I say about my budget?" asks
# about the asker's own messages, and those say "I", "my", "me" far more often than the other side's do. They are
# supporting terms (:attr:`Query.supporting`): BM25 weighs them by their rarity in the namespace and adds them to
# the messages the other keywords found. In a chat where everyone speaks in the first person they count for little;
# next to an assistant that says "you" they lean towards the user's messages. A question in the third person
# ("what did Caroline paint?") contains none, and is analysed as before.
SELF_REFERENCE = ("i", "me", "my", "mine", "myself")

# In a question that asks the assistant for advice (:func:`hippo.text.directives.asks_for_advice`), "suggest",
# "recommend", "advice" say what is asked, not what about: they are left out of its words. In a question that
# recounts ("What book did Melanie recommend?") they are its subject and stay.
ADVICE_STEMS = frozenset(textnorm.stem(w) for w in directives.ADVICE_WORDS)

# A run of letters and digits longer than this (a pasted blob, a sequence of bases) is no word a question looks for:
# matching it checks each place its first token occurs against every token of it, which for a run of 100,000 letters
# is minutes and gigabytes. A SHA-512 digest in hex (128 characters) is still a word.
MAX_WORD_CHARS = 128


def analyze(text: str, keywords: list[str] | None = None, *, self_reference: bool = True) -> Query:
    """Keywords of a query: content words minus stopwords and question scaffolding, one per stem, then (with
    ``self_reference``, for questions) the asker's first-person words it uses (:data:`SELF_REFERENCE`).

    A query made only of stopwords ("hello", "how are you?") keeps all its words rather than matching nothing, and
    its emoji (:func:`hippo.text.textnorm.emoji`): a question of emoji alone ("🎸?", "🐶🏥") looks for them.
    Explicit ``keywords`` (from an LLM) are taken as they are.
    """
    q = _analyze(text, keywords, self_reference and keywords is None)
    if not q.keywords and keywords is None:
        q = _analyze(text, textnorm.words(text) + textnorm.emoji(text), False)
    return q


def _analyze(text: str, keywords: list[str] | None, self_reference: bool = False) -> Query:
    # a question's words in NFC: one written with combining marks ("Zu\u0308rich") is the word it spells, and its
    # pattern looks for both ways of writing it (lexicon.pattern)
    # and without Persian's zero-width non-joiner, which would cut "می‌خواهم" in two (its pattern looks for the word
    # with and without it: text.clitics), and the zero-width joiners inside a word ("ශ්‍රී": textnorm.joiner_forms)
    # and with its half-width katakana in full width, where its bigrams are those of the word (each pattern looks
    # for the word both ways: lexicon.surface_forms)
    # a question in Turkish, Finnish, German or a Romance language (text.endings): its words are also matched in
    # their language's other forms, its little words are dropped, and in French and Italian the word an article is
    # written onto is the word asked ("l'hôpital" is "hôpital")
    lang = endings.language(text) if text else None
    drop = endings.STOPWORDS[lang] if lang is not None and keywords is None else frozenset()
    said = endings.ELISION.sub(" ", text) if lang == "romance" and keywords is None else text
    words = keywords if keywords is not None else \
        textnorm.words(said if said.isascii() else
                       textnorm.full_width_kana(textnorm.without_joiners(unicodedata.normalize("NFC", said))))
    # a request for advice: its advice words are the request's form, like "what" and "when" (:data:`ADVICE_STEMS`)
    form = ADVICE_STEMS if keywords is None and self_reference and directives.asks_for_advice(text) else frozenset()
    seen: set[str] = set()
    kws, stems = [], []
    selfref: list[str] = []
    for w in words:
        if len(w) > MAX_WORD_CHARS:
            continue
        lw = w.lower().replace("’", "'")
        base = lw.split("'", 1)[0]
        if self_reference and lw in SELF_REFERENCE:
            if lw not in selfref:
                selfref.append(lw)
            continue
        if keywords is None and (lw in textnorm.STOPWORDS or base in textnorm.STOPWORDS
                                 or lw in textnorm.QUESTION_WORDS):
            continue
        if form and textnorm.stem(lw) in form or drop and endings.plain(lw) in drop:
            continue
        st = textnorm.stem(base if "'" in lw else lw)
        if not st or st in seen:
            continue
        seen.add(st)
        kws.append(w.split("'", 1)[0].split("’", 1)[0])
        stems.append(st)
    content = len(kws)
    if kws:  # a question of first-person words alone ("how am I?") falls back to all its words
        for lw in selfref:
            st = textnorm.stem(lw)
            if st and st not in seen:
                seen.add(st)
                kws.append(lw)
                stems.append(st)
    q = Query(text=text, keywords=kws, stems=stems, supporting=len(kws) - content, lang=lang)
    q.patterns = [lexicon.pattern(w, lang if k < endings.MAX_WORDS else None) for k, w in enumerate(kws)]
    return q


def respelled(q: Query, words: dict[str, str]) -> Query:
    """``q`` with its content keywords replaced as ``words`` says (a keyword -> the word it is read as: a slip ->
    the word it misspells), in place and with their stems and patterns, and in its text; a replacement whose stem
    the query has already is dropped (one keyword per stem). The first-person supporting words stay as they are."""
    if not words:
        return q
    content = len(q.keywords) - q.supporting
    seen = set(q.stems[content:])
    kws, stems = [], []
    for w, st in zip(q.keywords[:content], q.stems[:content]):
        new = words.get(w, w)
        if new != w:
            st = textnorm.stem(new.lower())
        if st in seen:
            continue
        seen.add(st)
        kws.append(new)
        stems.append(st)
    kws += q.keywords[content:]
    stems += q.stems[content:]
    text = q.text
    for old, new in words.items():
        text = re.sub(r"(?<![\w'’])" + re.escape(old) + r"(?![\w'’])", new, text)
    out = Query(text=text, keywords=kws, stems=stems, supporting=q.supporting, lang=q.lang)
    out.patterns = [lexicon.pattern(w, q.lang if k < endings.MAX_WORDS else None) for k, w in enumerate(kws)]
    return out
