"""Machine outputs that differ only in their changing fields: a health check polled all day
(``{"status":"ok","ts":"2026-03-01T10:00:07Z","uptime_s":3607,"req":"9f1c2ab3"}``), a job's progress line, a log line
with its timestamp and request id. Their texts are never equal, so exact copies do not find them; with the fields
that change masked they are.

:func:`masked` replaces, left to right, each UUID, date-time with seconds (``2026-03-01T10:00:07Z``,
``2026-03-01 10:00:07,123``), clock time with seconds (``10:00:07``), key's epoch seconds or quoted id of digits
(``"ts": 1709287207``, ``ts=1709287207``, ``"req":"07923986"``), date (``2026-03-01``, ``2026/03/01``,
``01.03.2026``, ``1/3/2026``, ``01/Mar/2026``, ``Sun, 01 Mar 2026``, ``Mar  1``), time to the minute (``10:07``,
``2026-03-01T10:07Z``), hex id (8 or more hex digits, ``0x`` allowed; 7 holding a digit and a letter, git's short
hash ``9f1c2ab``), duration (a number with a unit of time:
``33ms``, ``12m``, ``5d4h``, ``3 hours``, ``3.41 s``: a latency, a pod's age) and number of four digits or more, or
with a fraction (``3607``, ``0.53``: an uptime, a byte count, a load) with a placeholder of its kind. A whole number
of one to three digits is kept: it is what tells one state from another (the status ``200`` or ``500``, an exit code,
``3 errors``, ``97%`` full), so health checks that went from ``200`` to ``500`` are two lines, each with its count,
not one line showing the newest. A run of up to seven digits written onto a name (``web-3``, ``db_2``, ``s3``,
``JIRA-4412``, ``iPhone15``) is part of the name, not a changing field (a longer one is an id, ``req-07923986``
masked as ``req-9f1c2ab3`` is): health checks of ``web-3`` and ``web-4`` are not copies. So are three or more
numbers joined by dots (a host's address ``10.0.0.1``, a version ``v2.3.1``), kept as written and counted as fields:
the checks of ``10.0.0.1`` and ``10.0.0.2`` are two lines. A text counts as a machine output, and gets a masked
text, only when it holds

- at least :data:`MIN_FIELDS` fields (masked, or kept as written), or one UUID or id drawn from letters (below),
- at least one of them a machine field: a UUID, a time with seconds, a key's epoch seconds or quoted id of digits, a
  date-time to the minute with ISO's ``T``, a hex id holding a digit and a letter or an id drawn from letters of both
  cases (a chat line does not write those; "I ran 5 km" and "I ran 7 km", "my appointment is on 2024-05-10 at
  10:30", or "my order number: 1709287207" hold none: a date and a time to the minute are masked in a machine output,
  but a person writes them too), or a line framed by rules (below), and
- at least :data:`MIN_CHARS` characters once masked (a short status such as "ok 12:00:01 #4" stays itself).

The masked text writes each run of spaces and tabs as one space: a table (``docker ps``, ``kubectl get pods``) pads
its columns to their widest value, so a cell whose masked value was longer or shorter moves the columns after it.

An id drawn at random from letters of both cases (a base62 or base64 id, a session token: ``xKqPzRtYvWmNbHgF``,
``ch_3MmlLrLkdIwHu7ix0snN0B15``), a run of ten letters, digits, hyphens and underscores or more with a small letter
before a capital that reads as no words joined in camel case (:func:`_drawn`), is a machine field too, masked as a
hex id is, and may hold no digit: so a text holding no digit has a form when it writes one. Such an id, or a UUID,
is drawn from so many values that two draws do not meet, and one is field enough: ``session xKqPzRtYvWmNbHgF issued
for user alice`` is a machine output by itself. A line framed on both sides by rules drawn to the terminal's width
(pytest's ``===== 12 passed in 3.41s =====``) is a program's too, and the length of those rules is padding: a summary
a character longer has rules a character shorter.

An id drawn from small letters and digits (a pod's hash ``6b7c9d8fgq``, a nanoid ``v1stgxr8z5jdhi6bmyt2k``), a run
of five or more holding a letter past ``f`` that :func:`_drawn_small` reads as drawn and no word or name with a
number (``python3``, ``b64encode``, ``1200x800px``, ``lz4hc``), is a machine field too, masked as a hex id is, with
the five-character end Kubernetes writes after a pod's hash (``-pk2mz``); of ten characters or more it is field
enough. So is such an id drawn with ``_`` and ``-`` among its characters (``v1stgxr8_z5jdhi6b-myt``), sixteen
characters or more that :func:`_joined_id` reads as one id rather than names joined (``utf8mb4_0900_ai_ci``), masked
whole wherever its separators fall.

A text whose only masked fields are durations, with words beside them (a test run's summary: pytest's ``12
passed in 3.41s``, go test's ``ok  example.com/api  0.412s``, cargo test's ``... finished in 0.02s``, jest's ``Time:
3.41 s``), is :data:`TIMED`, and needs neither two fields nor :data:`MIN_CHARS` characters: a program reran and
printed the time it took, but a person writes such a text too ("I ran 5 km in 25 minutes"), so it is a machine
output only where a tool wrote it (:attr:`hippo.index.coindex.NamespaceIndex.near_keys`; :func:`masked` gives None).

Otherwise :func:`masked` gives None, and the text is only ever a copy of the same text, but for one case: a text of
two fields or more holding a digit and no machine field (:func:`form`) whose masked text is that of a machine output
written in the same voice is that output's near-duplicate while the output is held
(:attr:`hippo.index.coindex.NamespaceIndex.near_keys`). An id drawn at random holds no letter 1 in 43 times (eight
hex digits) and written unquoted and apart from a name (``req=07923986``, ``req 07923986``) reads as a number a
person may write, so ``GET /health 200 req=07923986 in 33ms`` is no machine output by itself; beside ``GET /health
200 req=9f1c2ab3 in 12ms`` it is one. Likewise one draw of sixteen letters in ten reads as words joined in camel case
(``aGetLoxaBuildMep``): a text holding such runs and nothing else masked has the form with them masked (but for a run
read as words whole, a name such as ``AuthService``), without a machine field, and is the near-duplicate of the
outputs that write a drawn id there while one is held; a person's ``getElementById`` stays as written beside anything
else."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

MIN_FIELDS = 2
MIN_CHARS = 24
#: the version of the rule above: a saved key made by another rule is made again (hippo.index.coindex)
RULE = 12
#: what :func:`form` says of a text: a form without a machine field, a machine output, a form whose only masked
#: fields are durations (a run's summary: a tool's output when a tool wrote it, :mod:`hippo.index.coindex`)
FORM, MACHINE, TIMED = 0, 1, 2

_HEX = "[0-9A-Fa-f]"
_MONTH = ("(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
          "|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_WEEKDAY = "(?:Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:rs(?:day)?)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)"
# the five characters Kubernetes draws a pod's name's end from (no vowel, no 0, 1 or 3), after its hash and a hyphen
_POD = "(?:-[b-df-hj-np-tv-z2-9]{5})"
_GATE = "(?=[0-9]|(?<![0-9A-Za-z])[A-FJMNOSTWa-f])"
_FIELD_KINDS = (
    # every field begins with a digit, a hex letter or a month's or weekday's capital, and one that begins with a
    # letter has no ASCII letter or digit before it: other places (the letters inside words) are passed over
    "(?:" + _GATE + "(?:" + "|".join((
        rf"(?P<U>(?<![0-9A-Za-z]){_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}(?![0-9A-Za-z]))",
        r"(?P<T>(?<![0-9])(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[T ])?[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?"
        r"(?:Z|[+-][0-9]{2}:?[0-9]{2}(?![0-9]))?(?![0-9]))",
        # the value of a key in JSON or key=value form: epoch seconds (2001 to 2033, or in milli-, micro- or
        # nanoseconds: ``"ts": 1709287207``, ``ts=1709287207.25``), or a quoted id of eight or more digits or hex
        # digits (``"req":"07923986"``, an id drawn without a letter); a program stamps them, a person typing does not
        r"(?P<I>(?:(?:(?<=\":)|(?<=\": )|(?<=[A-Za-z_]=))1[0-9]{9}(?:[0-9]{3}){0,3}(?:\.[0-9]+)?(?![0-9A-Za-z])"
        r"|(?:(?<=\":\")|(?<=\": \")|(?<=[A-Za-z_]=\"))(?:0[xX])?(?=[0-9A-Fa-f]*[0-9])[0-9A-Fa-f]{8,}"
        r"(?:\.[0-9]+)?(?=\")))",
        # a date-time to the minute in ISO form (``2026-03-01T10:07Z``): a program's too
        r"(?P<M>(?<![0-9A-Za-z])[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
        r"(?![0-9:]))",
        # a date (``2026-03-01``, ``2026/03/01``, with a time to the minute or not) or a time to the minute
        # (``10:07``): masked in a machine output, but a person writes them too, so they make none
        r"(?P<D>(?<![0-9A-Za-z.:/-])(?:(?:[0-9]{4}(?:-[01][0-9]-[0-3][0-9]|/[01][0-9]/[0-3][0-9])"
        r"|[0-3]?[0-9](?P<sep>[./])[01]?[0-9](?P=sep)[0-9]{4})(?: (?:[01]?[0-9]|2[0-3]):[0-5][0-9])?"
        r"|(?:[01]?[0-9]|2[0-3]):[0-5][0-9])(?![0-9:]|[.,][0-9]))",
        # a date with its month's name, as logs and headers write it (``01/Mar/2026``, ``Sun, 01 Mar 2026``, syslog's
        # ``Mar  1``, ctime's ``Sun Mar  1``): masked in a machine output like the others, the weekday with it
        rf"(?P<W>(?<![0-9A-Za-z])(?:{_WEEKDAY},? +)?(?:[0-3]?[0-9][ /-]{_MONTH}\.?[ /-][0-9]{{4}}"
        rf"|{_MONTH}\.? +[0-3]?[0-9](?:,? [0-9]{{4}})?)(?![0-9A-Za-z]))",
        # (a hex id of seven digits or more holding a digit and a letter, git's short hash ``9f1c2ab`` among them, and
        # the five letters and digits without a vowel Kubernetes writes after a pod's hash: ``7d4b9c8f6-x2kqp``)
        rf"(?P<H>(?<![0-9A-Za-z])(?:0[xX])?(?=[0-9A-Fa-f]*[0-9])(?=[0-9A-Fa-f]*[A-Fa-f]){_HEX}{{7,}}{_POD}?"
        r"(?![0-9A-Za-z]))",
        # an id drawn at random may hold no digit ("dfbaaafa", 1 in 2,500): masked, but no sign of a machine output
        r"(?P<X>(?<![0-9A-Za-z])(?:0[xX])?[A-Fa-f]{8,}(?![0-9A-Za-z]))",
        # three or more numbers joined by dots (``10.0.0.1``, ``2.3.1``, ``v1.4.2``): a host's address or a version,
        # which names what the output is about as ``web-3`` does; kept as written
        r"(?P<V>(?<![0-9.])[0-9]+(?:\.[0-9]+){2,}(?![0-9]|\.[0-9]))",
        # a duration: a number with a unit of time (``33ms``, ``3.41s``, ``12m``, ``3h``, ``5d4h``, ``3 hours``,
        # jest's ``3.41 s``): a measured or elapsed time, as an uptime is; a status, an exit code or a count is not
        # written so
        r"(?P<A>(?<![0-9A-Za-z])(?<![A-Za-z][-_])(?:(?:[0-9]+(?:[.,][0-9]+)?(?:ms|us|[\u00b5\u03bc]s|ns|s|m|h|d))+"
        r"|[0-9]+(?:[.,][0-9]+)?(?: ?(?:milliseconds?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?)| m?s))"
        r"(?![0-9A-Za-z]))",
        # (eight digits or more written onto a name are no ticket's number but an id: ``req-07923986`` is the draw of
        # ``req-9f1c2ab3`` that holds no letter)
        r"(?P<N>(?<![0-9A-Za-z])(?:(?<![A-Za-z][-_])(?:[0-9]{4,}(?:[.,][0-9]+)?|[0-9]+[.,][0-9]+)"
        r"|[0-9]{8,}(?![0-9A-Za-z])))",
        # a whole number of one to three digits: a field of the output, kept as written
        r"(?P<K>(?<![0-9A-Za-z])(?<![A-Za-z][-_])[0-9]{1,3}(?![0-9]))",
    )) + ")")
_FIELDS = re.compile(_FIELD_KINDS + ")")
# a run of five small letters and digits or more holding a digit and a letter past ``f`` (no hex id), with a pod's
# end after it or not: an id drawn from small letters and digits (a pod's hash, a nanoid) if :func:`_drawn_small`
# reads it as one, else the fields the other kinds find in it; tried only on a text writing such a run
_SMALL = (r"(?P<L>(?<![0-9A-Za-z])(?=[0-9a-z]*[g-z])(?=[0-9a-z]*[0-9])(?P<Lrun>[0-9a-z]{5,})" + _POD
          + r"?(?![0-9A-Za-z]))|")
_SMALL_RUN = re.compile(r"(?<![0-9A-Za-z])(?=[0-9a-z]*[g-z])(?=[0-9a-z]*[0-9])[0-9a-z]{5,}(?![0-9A-Za-z])")
# a digit beside a small letter, which such a run writes: looked for first, as it is found faster
_DIGIT_SMALL = re.compile(r"[0-9](?:(?<=[a-z][0-9])|(?=[a-z]))")


def _small_runs(text: str) -> bool:
    """Whether ``text`` writes a run that may be an id drawn from small letters and digits (the kind ``L``)."""
    return _DIGIT_SMALL.search(text) is not None and _SMALL_RUN.search(text) is not None
# the same, and first a run of ten letters, digits, hyphens and underscores or more with a small letter before a
# capital (``xKqPzRtYvWmNbHgF``, ``Kq9-PzRtYv_WmN``, ``3MmlLrLkdIwHu7ix0snN0B15``): a base62 or base64 id, a session
# token, if :func:`_drawn` reads it as one, else the fields the other kinds find in it; tried only on a text that
# writes a small letter before a capital (a sixth of those with a digit in BEAM), as the run costs more time
_R = (r"(?P<R>(?<![0-9A-Za-z_-])(?=[0-9A-Za-z_-]{10})[0-9A-Za-z_-]*[a-z][A-Z][0-9A-Za-z_-]*"
      r"(?![0-9A-Za-z_-]))|")
_FIELDS_DRAWN = re.compile(_R + _FIELD_KINDS + ")")
_FIELDS_SMALL = re.compile(_SMALL + _FIELD_KINDS + ")")
_FIELDS_BOTH = re.compile(_R + _SMALL + _FIELD_KINDS + ")")
_MACHINE = frozenset("UTIMHRLJ")
# a field that is an id drawn at random, long enough that two draws do not meet: a machine output by itself
_DRAWN = frozenset("URJ")
_KEPT = frozenset("KV")
_PADDING = re.compile(r"[ \t]+")
_DIGIT = re.compile("[0-9]")
_LETTER = re.compile("(?<!\x00)[A-Za-z]")  # a letter of the text, not of a placeholder
# a hex id and a number are one kind: an id drawn at random may hold no letter ("07923986") or no digit
_PLACEHOLDER = {"U": "\x00U", "T": "\x00T", "I": "\x00N", "M": "\x00T", "D": "\x00T", "W": "\x00T", "A": "\x00D",
                "H": "\x00N", "X": "\x00N", "N": "\x00N", "R": "\x00N", "L": "\x00N", "S": "\x00N",
                "J": "\x00N"}
# what a text with a form holds (:func:`form`): a digit, or a small letter before a capital (a drawn id's)
_SWITCH = re.compile("[a-z][A-Z]")
# the parts of a run of letters and digits: a word in lower case or capitalised, a run of capitals, a number
_PARTS = re.compile("[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWEL = re.compile("[AEIOUYaeiouy]")
_BETWEEN = re.compile("[a-z][0-9]+[a-z]")
# a duration written in its units (``2h3m4s``, ``1d2h3m``): a duration's field, no drawn id
_DURATION = re.compile("(?:[0-9]+(?:ms|us|ns|s|m|h|d))+")
_CONSONANTS = re.compile("[B-DF-HJ-NP-TV-XZb-df-hj-np-tv-xz]{5}")
# a rule drawn to the terminal's width (``=====``, ``-----``): its length is padding, as a table's spaces are
_RULE_RUN = re.compile(r"([=*_-])\1{3,}")
# a line framed by such rules on both sides (pytest's ``===== 12 passed in 3.41s =====``): a program centred it
_FRAMED = re.compile(r"(?m)^[ \t]*([=*_-])\1{2,}[ \t]+\S(?:[^\n]*\S)?[ \t]+\1{3,}[ \t]*$")


def _drawn(run: str) -> bool:
    """Whether a run of letters and digits with a small letter before a capital reads as drawn at random, not as
    words joined in camel case (``getElementById``, ``PostgreSQL``, ``HtmlWebpackPlugin``): its letters change case
    every two and a half letters or more often over four parts or more (a part: a word in lower case or capitalised,
    or a run of capitals), or at least five of its letters, and three tenths of them, lie in parts that read as no
    word (a word of one or two letters, one of three or more without a vowel or with five consonants in a row, a
    lone capital or a run of five capitals or more). A draw of 16 letters of both cases reads so 9 times in 10, of
    20 letters and digits 19 times in 20; no word joined in camel case of LoCoMo's or BEAM's reads so."""
    letters = sum(c.isalpha() for c in run)
    words = [p for p in _PARTS.findall(run) if not p.isdigit()]
    if len(words) >= 4 and 2 * letters <= 5 * len(words):
        return True
    odd = _odd(words)
    return odd >= 5 and odd * 10 >= 3 * letters


def _odd(words: list[str]) -> int:
    """How many letters of ``words`` (the parts of a run but its numbers) lie in parts that read as no word."""
    odd = 0
    for p in words:
        if p[-1].islower():
            if len(p) >= 3 and _VOWEL.search(p) is not None and _CONSONANTS.search(p) is None:
                continue
            odd += len(p)
        elif len(p) == 1 or len(p) > 4:
            odd += len(p)
    return odd


def masked(text: str) -> str | None:
    """``text`` with its changing fields masked when it reads as a machine output (the module's rule), else None.
    Two texts with the same masked text are near-duplicates."""
    got = form(text)
    return got[0] if got is not None and got[1] == MACHINE else None


def _drawn_small(run: str, onto_name: bool = False) -> bool:
    """Whether a run of small letters and digits holding a digit reads as drawn at random over them, not as a word or a
    name with a number (``python3``, ``b64encode``, ``utf8mb4``, ``1200x800px``, ``320ms``, ``password123``,
    ``lz4hc``, ``p2pkh``, ``4k60fps``) nor a duration in its units (``2h3m4s``): a letter past ``f``, at least as many
    letters as digits, a digit between two letters, and either four changes between letters and digits or more
    (``k2j9ab``, ``z5jdhi6bmyt``), or, at ten characters or more, no vowel (``y`` counted as one: ``v1stgxr8z5``;
    Kubernetes draws its pods' hashes and ends so) or five consonants in a row, or, under ten characters, no vowel
    where the run is written onto a name by a hyphen (``onto_name``: a pod's end, ``fluentd-x2kqp``; written apart, a
    short run without a vowel is as often a name, ``lz4hc``, and is a field of no machine kind: :func:`_small_kind`).
    A draw over ``[a-z0-9]`` holding a digit and a letter past ``f`` reads so 4 times in 100 at 5 characters written
    apart (24 onto a name), 13 (32) at 6, 35 (46) at 8, 40 (47) at 9, 65 at 10, 81 at 12, 94 at 16, 98 at 21 (a
    nanoid's length); Kubernetes's pod hashes of 9 and 10 characters, written onto their deployment's name, 85 and 90
    times in 100, its pod's 5-character end 55 (it is masked with the hash before it, whole); of the runs of five
    characters or more LoCoMo's and BEAM's messages write (``password123``, ``b64encode``, ``psycopg2``,
    ``1200x800px``, ``320ms``, ``es2021``) none under ten characters does."""
    return _small_kind(run, onto_name) == "L"


def _small_kind(run: str, onto_name: bool = False) -> str | None:
    """What a run of small letters and digits holding a digit and a letter past ``f`` is: ``"L"``, an id drawn over
    them (:func:`_drawn_small`), a machine field; ``"S"``, a run under ten characters without a vowel written apart
    (``lz4hc``, ``p2pkh``, ``4k60fps``, or a short draw, ``x2kqp``), masked as an id is but no sign of a machine
    output: a text holding it is a machine output only by another field, or beside one of its form (as a request id
    drawn without a letter is); else None (a word or a name with a number: the fields the other kinds find in it)."""
    letters = sum(c.isalpha() for c in run)
    if 2 * letters < len(run) or _BETWEEN.search(run) is None or _DURATION.fullmatch(run) is not None:
        return None
    if sum(a.isdigit() != b.isdigit() for a, b in zip(run, run[1:])) >= 4:
        return "L"
    if len(run) < 10:
        return None if _VOWEL.search(run) is not None else "L" if onto_name else "S"
    return "L" if _VOWEL.search(run) is None or _CONSONANTS.search(run) is not None else None


def _fields(text: str, undrawn: list[re.Match], small: bool) -> Iterator[re.Match]:
    """The fields of a text writing a small letter before a capital, left to right: a run of ids' characters that
    :func:`_drawn` reads as drawn is one; one it does not is put in ``undrawn``, and the fields within it are given.
    ``small``: whether the text writes a run that may be an id drawn from small letters and digits
    (:func:`_small_runs`)."""
    for m in (_FIELDS_BOTH if small else _FIELDS_DRAWN).finditer(text):
        if m.lastgroup == "L":
            yield from _small(text, m)
        elif m.lastgroup != "R":
            yield m
        elif _drawn(m.group()):
            yield m
        else:
            undrawn.append(m)
            yield from _FIELDS.finditer(text, m.start(), m.end())


def _small(text: str, m: re.Match) -> Iterator[re.Match]:
    """A run of small letters and digits (the kind ``L``) as one field where :func:`_small_kind` reads it as drawn,
    as a field of the kind ``S`` where it reads it so, else the fields the other kinds find in it."""
    at = m.start()
    kind = _small_kind(m.group("Lrun"), at >= 2 and text[at - 1] == "-" and text[at - 2].isalnum())
    if kind == "L":
        yield m
    elif kind == "S":
        yield _Span("S", m.start(), m.end())
    else:
        yield from _FIELDS.finditer(text, m.start(), m.end())


# a run of small letters and digits joined by hyphens and underscores, sixteen characters or more, holding a letter
# past ``f`` and a digit: an id drawn over ``[a-z0-9_-]`` (``v1stgxr8_z5jdhi6b-myt``) if :func:`_joined_id` reads it
# as one; its separators fall anywhere, and each splits what the kind ``L`` reads
_JOINED_RUN = re.compile(r"(?<![0-9A-Za-z_-])(?=[0-9a-z_-]{16})(?=[0-9a-z_-]*[g-z])(?=[0-9a-z_-]*[0-9])"
                         r"[_-]*[0-9a-z]+(?:[_-]+[0-9a-z]+)+[_-]*(?![0-9A-Za-z_-])")
_LONG_RUN = re.compile("[0-9A-Za-z_-]{16,}")
_SEPARATORS = re.compile("[_-]+")
_NAME_NUMBER = re.compile("[a-z]+[0-9]+")
_PLAIN_VOWEL = re.compile("[aeiou]")
# a pod's name: its deployment's name, its hash and its end (``web-6b7c9d8fgq-pk2mz``), read by the kinds ``L`` or ``H``
_POD_NAME = re.compile(r"[_-][0-9a-z]{8,10}" + _POD + "$")


def _joined_id(run: str) -> bool:
    """Whether a run of small letters and digits joined by hyphens and underscores (:data:`_JOINED_RUN`) reads as
    one id drawn over them with the separators among its characters (a nanoid of a lower-case alphabet), not as names
    joined (``ubuntu2204-x86_64-gcc12``, ``utf8mb4_0900_ai_ci``, ``x86_64-linux-gnu``) nor a pod's name: no part
    between separators is a word (two letters or more with a vowel, no digit) or a name with a number (letters then
    digits: ``api2``, ``node18``), it does not end as a pod's name does, and its characters without the separators
    read as drawn (:func:`_small_kind`). A draw of 21 characters over ``[a-z0-9_-]`` holding a separator reads so 68
    times in 100; none of LoCoMo's and BEAM's messages writes such a run."""
    if _POD_NAME.search(run) is not None:
        return False
    parts = [p for p in _SEPARATORS.split(run) if p]
    for p in parts:
        if _DIGIT.search(p) is None:
            if len(p) >= 2 and _PLAIN_VOWEL.search(p) is not None:
                return False
        elif _NAME_NUMBER.fullmatch(p) is not None:
            return False
    return len(parts) >= 2 and _small_kind("".join(parts)) == "L"


def _joined(text: str) -> list[tuple[int, int]]:
    """The spans of the runs of ``text`` that :func:`_joined_id` reads as ids, left to right (found among the whole
    runs of ids' characters, as that is faster)."""
    return [m.span() for m in _LONG_RUN.finditer(text)
            if _JOINED_RUN.fullmatch(m.group()) is not None and _joined_id(m.group())]


def _with_joined(found: Iterator, spans: list[tuple[int, int]]) -> Iterator:
    """The fields ``found`` with the ids of ``spans`` among them (the kind ``J``), the fields within them left out."""
    k = 0
    for m in found:
        while k < len(spans) and spans[k][1] <= m.start():
            yield _Span("J", *spans[k])
            k += 1
        if k < len(spans) and m.end() > spans[k][0]:
            continue  # within an id (or across one's end)
        yield m
    for span in spans[k:]:
        yield _Span("J", *span)


class _Span:
    """A field of ``kind`` from ``start`` to ``end`` where :func:`form` reads a match."""

    def __init__(self, kind: str, start: int, end: int) -> None:
        self.lastgroup, self._start, self._end = kind, start, end

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._end


def form(text: str) -> tuple[str, int] | None:
    """``text`` with its changing fields masked and what it is: :data:`MACHINE`, a machine output by itself (it holds
    a machine field, or a line framed by rules), :data:`TIMED`, a text whose only masked fields are durations (a
    test run's summary, ``12 passed in 3.41s``), else :data:`FORM`; when it holds a digit or a small letter before a
    capital, :data:`MIN_FIELDS` fields (or one id drawn at random: a UUID, a drawn run of letters, or one duration)
    and :data:`MIN_CHARS` characters once masked; else None. A text of such a form without a machine field is the
    near-duplicate of a machine output of the same form where one is held beside it, and a timed text written by a
    tool is a machine output (:attr:`hippo.index.coindex.NamespaceIndex.near_keys`)."""
    switch = _SWITCH.search(text) is not None
    if not switch and _DIGIT.search(text) is None:
        return None
    fields = machine = drawn = timed = hidden = short = 0
    parts: list[str] = []
    at = 0
    undrawn: list[re.Match] = []
    small = _small_runs(text)
    if switch:
        found = _fields(text, undrawn, small)
    elif small:
        found = (f for m in _FIELDS_SMALL.finditer(text) for f in (_small(text, m) if m.lastgroup == "L" else (m,)))
    else:
        found = _FIELDS.finditer(text)
    # (an id drawn over small letters, digits and separators writes such a run between two separators: of 3,409
    # draws of 21 characters, those read with this condition are those read without it)
    joined = _joined(text) if small else []
    if joined:
        found = _with_joined(found, joined)
    for m in found:
        kind = m.lastgroup
        fields += 1
        if kind in _KEPT:
            continue
        machine += kind in _MACHINE
        # (a run of ten small letters and digits or more read as drawn is drawn from 36**10 values: field enough)
        drawn += kind in _DRAWN or kind == "L" and len(m.group("Lrun")) >= 10
        timed += kind == "A"
        short += kind == "S"
        hidden += 1
        parts.append(text[at:m.start()])
        parts.append(_PLACEHOLDER[kind])
        at = m.end()
    framed = _FRAMED.search(text) is not None
    # runs that may be drawn ids read as words, but for a part (one draw in ten or twenty reads so: ``aGetLoxaBuild``);
    # a run read as words whole (``AuthService``) is a name
    undrawn = [m for m in undrawn if _odd([p for p in _PARTS.findall(m.group()) if not p.isdigit()])]
    if not parts and undrawn:
        # nothing masked but such runs: a form of no machine output by itself, the near-duplicate of one that writes a
        # drawn id there
        for m in undrawn:
            parts.append(text[at:m.start()])
            parts.append(_PLACEHOLDER["R"])
            at = m.end()
        framed = False
    elif fields < MIN_FIELDS and not drawn and not timed:
        return None
    parts.append(text[at:])
    out = "".join(parts)
    # every masked field a duration, and words beside it: what a run prints with the time it took (pytest's ``12
    # passed in 3.41s``, go test's ``ok  example.com/api  0.412s``), however short, and also what a person says ("I
    # ran 5 km in 25 minutes"), so a machine output's only where a tool wrote it (hippo.index.coindex)
    # (a short run that may be a name, ``lz4hc``, is masked beside them: ``lz4hc compressed in 3.41s``)
    timed = not machine and not framed and timed == hidden - short > 0
    if len(out) < MIN_CHARS and not (timed and _LETTER.search(out)):
        return None
    # a table pads its columns to the widest value: "Up 3 hours   " and "Up 12 minutes" are one cell; a rule drawn
    # to the terminal's width around a line that grew by a character is a character shorter
    out = _PADDING.sub(" ", out)
    if framed:
        out = _RULE_RUN.sub(_rule, out)
    return out, MACHINE if machine or framed else TIMED if timed else FORM


def _rule(m: re.Match) -> str:
    return m.group()[:3]


def _hash(m: str) -> int:
    return int.from_bytes(hashlib.blake2b(m.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def key(text: str) -> int | None:
    """A 64-bit key of :func:`masked` text (None when ``text`` is no machine output): near-duplicates share it."""
    m = masked(text)
    return None if m is None else _hash(m)


def form_key(text: str) -> tuple[int, int] | None:
    """A 64-bit key of :func:`form`'s masked text and what ``text`` is (:data:`MACHINE`, :data:`TIMED` or
    :data:`FORM`; None when it has no such form): a machine output's key is :func:`key`'s."""
    got = form(text)
    return None if got is None else (_hash(got[0]), got[1])


_ATOMS = re.compile(r"[0-9A-Za-z]*[0-9][0-9A-Za-z]*|(?<![0-9A-Za-z])(?=[0-9A-Za-z]{10})[A-Za-z]*[a-z][A-Z][A-Za-z]*"
                    r"(?![0-9A-Za-z])")
_IDS = re.compile(r"(?<![0-9A-Za-z_-])(?=[0-9A-Za-z_-]*[_-])(?=[0-9A-Za-z_-]{10})[0-9A-Za-z_-]*[a-z][A-Z][0-9A-Za-z_-]*"
                  r"(?![0-9A-Za-z_-])")


def values(text: str) -> set[str]:
    """The runs of letters and digits holding a digit that ``text`` writes (``"2026"``, ``"9f1c2ab3"``), of two
    characters or more, the runs of ten letters or more with a small letter before a capital (an id drawn from
    letters, ``xKqPzRtYvWmNbHgF``) and such runs of ids' characters joined by hyphens and underscores
    (``ch_3MmlLrLkdIwHu7``, whole and in their parts), lowercased: what tells one near-duplicate from another, and what
    a question may name."""
    return {v.lower() for v in _ATOMS.findall(text) if len(v) >= 2} | {v.lower() for v in _IDS.findall(text)}
