"""Offline summaries and key data of large content (seed 004 §6.2 steps 1-2: "extract summary", "extract key data").

Content is read as one of four shapes: JSON, HTML / XML markup, a log, or plain text. Each shape has its own
extractor; generic patterns (URLs, UUIDs, e-mail addresses, ``key: value`` lines) fill the key data up to a cap.
Everything here is deterministic, pure Python, and costs one pass over the text; nothing calls a model.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from hippo.text.textnorm import grapheme_head
from hippo.text.tokenizer import storable

MAX_KEYS = 16          # key-data items kept per entry
MAX_VALUE_CHARS = 80   # longest value kept verbatim in key data
SUMMARY_WORDS = 40

_URL = re.compile(r"https?://[^\s\"'<>)\]]+")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
# an address's parts as long as RFC 5321 lets them be (a local part of 64 characters, a label of 63, a domain of 255):
# unbounded, a run of dotted or hyphenated words with no "@" ("a.b.c.d...") was read again from each of its words,
# in time quadratic in its length (80,000 characters: 29 s, in index_entry and in every complete_on_cue)
_EMAIL = re.compile(r"\b[\w.+-]{1,64}@[\w-]{1,63}\.[\w.-]{1,252}\b")
_CODE_ID = re.compile(r"\b[A-Z][A-Z0-9]{1,9}(?:-\d{2,})+\b")   # JIRA-123, ORD-00042, INV-2024-01042 (whole)
_KV_LINE = re.compile(r"^\s*([A-Za-z][\w .-]{0,40}?)\s*[:=]\s*(\S.{0,200})$")
_LOG_LEVEL = re.compile(r"\b(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|PANIC)\b")
_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_TAG = re.compile(r"<([A-Za-z][\w:-]*)([^<>]*)>")
# An attribute's name starts where a run of name characters starts: tried from inside the run too, a long run with no
# "=" after it (a minified tag, a blob in a tag) was read again from each of its characters, quadratic in its length.
_ATTR = re.compile(r"(?<![\w:-])([\w:-]+)\s*=\s*(\"[^\"]*\"|'[^']*')")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_HEADING = re.compile(r"<h([1-3])[^>]*>(.*?)</h\1>", re.I | re.S)
_STRIP_TAGS = re.compile(r"<[^>]+>")
_ERROR_HINT = re.compile(r"(Traceback \(most recent call last\)|\bException\b|\bError\b|\bERROR\b|\bFATAL\b|"
                         r"\bpanic:|\bexit (?:code|status) [1-9]|\bfailed\b)")

# JSON keys whose scalar values are the ones an agent typically needs again (seed 004 §5: "key_data").
_INTERESTING_KEY = re.compile(
    r"(^|_)(id|ids|uuid|key|ref|url|uri|href|link|status|state|error|errors|code|message|name|title|email|user|"
    r"owner|total|count|version|sha|commit|hash|token|path|file|host|port|region|price|amount|balance|date|"
    r"time|created|updated|deadline|result|score|type)s?$", re.I)
_ACTIONABLE_TAGS = ("button", "a", "input", "select", "textarea", "form", "option")


def _loads(text: str) -> Any:
    """``text`` parsed as JSON, the constants Python's parser admits (``NaN``, ``Infinity``, ``-Infinity``) kept as
    the strings written: key data is stored as JSON metadata, which holds no such number."""
    return json.loads(text, parse_constant=str)


def detect_format(text: str) -> str:
    """``"json"``, ``"html"``, ``"log"`` or ``"text"``."""
    head = text.lstrip()[:1]
    if head in "[{":
        try:
            _loads(text)
            return "json"
        except (ValueError, RecursionError):
            pass
    sample = text[:20000]
    if head == "<" and len(_TAG.findall(sample)) >= 3:
        return "html"
    lines = [ln for ln in sample.splitlines() if ln.strip()][:200]
    if lines:
        leveled = sum(1 for ln in lines if _LOG_LEVEL.search(ln) or _TIMESTAMP.match(ln.strip()))
        if leveled >= max(3, 0.5 * len(lines)):
            return "log"
    return "text"


def looks_like_error(text: str) -> bool:
    """Whether ``text`` reads as an error dump (a traceback, an error report, a failing command's output)."""
    head = text[:4000]
    if head.lstrip().startswith(("Traceback", "Error", "ERROR", "error:", "Exception", "FATAL", "panic:")):
        return True
    return len(_ERROR_HINT.findall(head)) >= 3


def _short(value: Any, limit: int = MAX_VALUE_CHARS) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and len(str(value)) > limit:
        value = str(value)  # JSON writes integers of up to 4,300 digits
    if isinstance(value, str):
        # a JSON string may escape what no stored text holds ("\\u0000", a lone "\\udcff"): the entry's header
        # message shows its key data, so those characters become spaces as hippo.storable makes them
        value = " ".join(storable(value).split())
        return value if len(value) <= limit else grapheme_head(value, limit - 1) + "…"
    return value


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


class _Keys:
    """An ordered, capped key-data dict; the first writer of a key wins."""

    def __init__(self, cap: int = MAX_KEYS) -> None:
        self.cap = cap
        self.data: dict[str, Any] = {}

    def full(self) -> bool:
        return len(self.data) >= self.cap

    def put(self, key: str, value: Any, limit: int = MAX_VALUE_CHARS) -> None:
        key = grapheme_head(" ".join(storable(str(key)).split()), 60)
        if key and key not in self.data and not self.full():
            self.data[key] = _short(value, limit)


# -- JSON -----------------------------------------------------------------------------------------------------
def _record_fields(items: list) -> list[str]:
    fields: Counter = Counter()
    for it in items[:50]:
        if isinstance(it, dict):
            fields.update(it.keys())
    return [k for k, _ in fields.most_common(8)]


def _record_id(item: Any) -> Any:
    if isinstance(item, dict):
        for k in item:
            if re.search(r"(^|_)(id|uuid|key|ref|name)$", str(k), re.I) and _scalar(item[k]):
                return item[k]
    return None


def _json(data: Any, keys: _Keys) -> str:
    parts: list[str] = []
    if isinstance(data, dict):
        parts.append(f"JSON object with {len(data)} keys ({', '.join(list(map(str, data))[:8])})")
        # top-level scalars first, interesting ones ahead of the rest
        scalars = [(k, v) for k, v in data.items() if _scalar(v)]
        scalars.sort(key=lambda kv: 0 if _INTERESTING_KEY.search(str(kv[0])) else 1)
        for k, v in scalars:
            keys.put(str(k), v)
        containers = [(str(k), v) for k, v in data.items() if not _scalar(v)]
    else:
        parts.append(f"JSON array of {len(data)} items")
        containers = [("[]", data)]
    for path, v in containers:
        if isinstance(v, list):
            fields = _record_fields(v)
            desc = f"'{path}': {len(v)} " + (f"records ({', '.join(fields)})" if fields else "items")
            parts.append(desc)
            keys.put(f"{path}.count", len(v))
            ids = [i for i in (_record_id(it) for it in v) if i is not None]
            if ids:
                keys.put(f"{path}.ids", f"{ids[0]} … {ids[-1]}" if len(ids) > 2 else ", ".join(map(str, ids)))
        elif isinstance(v, dict):
            parts.append(f"'{path}': object ({', '.join(list(map(str, v))[:6])})")
            for k2, v2 in v.items():
                if _scalar(v2) and _INTERESTING_KEY.search(str(k2)):
                    keys.put(f"{path}.{k2}", v2)
    for path, v in containers:
        if isinstance(v, dict):
            for k2, v2 in v.items():
                if _scalar(v2):
                    keys.put(f"{path}.{k2}", v2)
    return "; ".join(parts)


# -- HTML -----------------------------------------------------------------------------------------------------
def _label(attrs: dict[str, str], inner: str) -> str:
    for name in ("aria-label", "name", "title", "placeholder", "value", "alt"):
        if attrs.get(name):
            return attrs[name]
    return grapheme_head(" ".join(_STRIP_TAGS.sub(" ", inner).split()), 40)


def _html(text: str, keys: _Keys) -> str:
    title = _TITLE.search(text)
    tags = Counter()
    refs: dict[str, str] = {}
    for m in _TAG.finditer(text):
        tag = m.group(1).lower()
        tags[tag] += 1
        attrs = {a.lower(): v[1:-1] for a, v in _ATTR.findall(m.group(2))}
        ref = attrs.get("ref") or attrs.get("data-ref") or attrs.get("id")
        role = (attrs.get("role") or "").lower()
        if ref and (tag in _ACTIONABLE_TAGS or role in ("button", "link", "textbox", "navigation", "search")):
            close = text.find("<", m.end())
            label = _label(attrs, text[m.end(): close if close >= 0 else m.end() + 80])
            if label and label not in refs and len(refs) < 8:
                refs[label] = ref
    heads = [" ".join(_STRIP_TAGS.sub(" ", h).split()) for _, h in _HEADING.findall(text)[:4]]
    parts = []
    if title:
        t = " ".join(_STRIP_TAGS.sub(" ", title.group(1)).split())
        parts.append(f"page '{t}'")
        keys.put("title", t)
    parts.append(f"markup with {sum(tags.values())} elements ({', '.join(f'{k} {v}' for k, v in tags.most_common(5))})")
    if heads:
        parts.append("headings: " + " / ".join(heads))
    if refs:
        keys.put("refs", ", ".join(f"{k}={v}" for k, v in refs.items()))
    return "; ".join(parts)


# -- logs -----------------------------------------------------------------------------------------------------
def _log(text: str, keys: _Keys) -> str:
    lines = text.splitlines()
    levels: Counter = Counter()
    first_bad: list[str] = []
    stamps = []
    for ln in lines:
        m = _LOG_LEVEL.search(ln)
        if m:
            lvl = {"WARNING": "WARN", "ERR": "ERROR", "CRITICAL": "FATAL", "PANIC": "FATAL"}.get(m.group(1), m.group(1))
            levels[lvl] += 1
            if lvl in ("ERROR", "FATAL") and len(first_bad) < 2:
                first_bad.append(ln.strip())
        t = _TIMESTAMP.search(ln)
        if t:
            stamps.append(t.group(0))
    parts = [f"log of {len(lines)} lines (" + ", ".join(f"{k} {v}" for k, v in levels.most_common()) + ")"]
    if stamps:
        parts.append(f"{stamps[0]} – {stamps[-1]}")
        keys.put("first", stamps[0])
        keys.put("last", stamps[-1])
    for k in ("ERROR", "FATAL", "WARN"):
        if levels.get(k):
            keys.put(k.lower() + "s", levels[k])
    for i, ln in enumerate(first_bad):
        keys.put("first_error" if i == 0 else f"error_{i + 1}", ln)
    return "; ".join(parts)


# -- plain text -----------------------------------------------------------------------------------------------
def _lead(text: str, words: int) -> str:
    out: list[str] = []
    for ln in text.splitlines():
        w = ln.split()
        if len(w) >= 3:
            out.extend(w)
        if len(out) >= words:
            break
    if not out:
        out = text.split()
    return " ".join(out[:words]) + (" …" if len(out) > words else "")


def _generic(text: str, keys: _Keys) -> None:
    """Patterns that matter whatever the shape: key/value lines, ids, URLs, UUIDs, e-mails."""
    sample = text[:200_000]
    for ln in sample.splitlines()[:400]:
        if keys.full():
            break
        if ln.startswith(("    ", "\t")):
            continue  # indented code or continuation lines, not settings
        m = _KV_LINE.match(ln)
        if m and not m.group(2).startswith(("//", "{", "[")):
            keys.put(m.group(1).strip(), m.group(2).strip())
    for name, pattern in (("ids", _CODE_ID), ("uuids", _UUID), ("urls", _URL), ("emails", _EMAIL)):
        if keys.full():
            break
        found = list(dict.fromkeys(pattern.findall(sample)))
        if found:
            keys.put(name, ", ".join(found[:4]) + (f" (+{len(found) - 4} more)" if len(found) > 4 else ""))


def extract(text: str, *, max_keys: int = MAX_KEYS) -> tuple[str, dict[str, Any], str]:
    """``(summary, key_data, format)`` of ``text``, offline and deterministic."""
    fmt = detect_format(text)
    keys = _Keys(max_keys)
    if fmt == "json":
        shape = _json(_loads(text), keys)
    elif fmt == "html":
        shape = _html(text, keys)
    elif fmt == "log":
        shape = _log(text, keys)
    else:
        n_lines = text.count("\n") + 1
        shape = f"text of {n_lines} lines"
    if fmt in ("text", "log") and looks_like_error(text):
        # an error dump ends with what went wrong (a traceback's exception line); keep it whole
        last = next((ln.strip() for ln in reversed(text[-4000:].splitlines()) if ln.strip()), "")
        if last:
            keys.put("error", last, limit=3 * MAX_VALUE_CHARS)
    if fmt != "json":
        _generic(text, keys)
    lead = _lead(_STRIP_TAGS.sub(" ", text) if fmt == "html" else text, 18) if fmt in ("text", "log", "html") else ""
    # JSON keys may hold line breaks, and escape characters no stored text holds (:func:`_short`): one line of words,
    # each at most as long as a key-data value (a blob on one line, a page title of a megabyte is one "word")
    words = [_short(w) for w in storable(shape + (f". Begins: {lead}" if lead and fmt == "text" else "")).split()]
    summary = " ".join(words[: SUMMARY_WORDS + 20]) + (" …" if len(words) > SUMMARY_WORDS + 20 else "")
    return summary, keys.data, fmt
