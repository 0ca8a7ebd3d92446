"""``hippo bench truth-sample``: a random sample of supersede marks and resolved event times, for review by hand.

    hippo bench truth-sample --data locomo_dev.json --data beam100k/ [--marks 100] [--times 100] [--seed 1]
                             [--verdicts verdicts.json] [--out bench_results/truth-sample.json]

Time and truth annotate recalled context in two ways that a reader trusts without checking: a statement is marked
``(superseded <date>)`` when a later message gives a different value of the same attribute of the same subject,
and a message that dates its event relatively ("yesterday", "in October", "next week") shows the resolved date.
No automatic oracle can say whether those are right: a person has to read the two messages, or the message and
its timestamp. This benchmark makes that reading repeatable:

1. every conversation of the given data (LoCoMo JSON files and BEAM directories, any number of each) is ingested
   into its own namespace as the evidence-recall measures do (BEAM messages with their role);
2. the population of **marks** is every supersedes link (``Memory.contradictions(include_updates=True)``: each can
   be shown, updates always and contradictions when a question asks for the current value); the population of
   **times** is every message whose context line shows a resolved date (``Memory.timeline(speaker)`` entries with
   an ``event`` label other than the day the message was said);
3. ``--marks`` and ``--times`` items are drawn uniformly at random from each population (``random.Random(seed)``,
   so the same data, seed and engine give the same sample; a fresh seed gives a fresh sample);
4. a review sheet (``<out>.md``) lists each item with the text a reviewer needs, and a key;
5. with ``--verdicts FILE`` (a JSON object mapping keys to ``"ok"`` or ``"wrong"``, or to ``{"verdict": ...,
   "note": ...}``), the precision of each kind is computed with a 95% Wilson interval.

The verdicts are the reviewer's judgment; the criteria are in ``docs/time_and_truth.md`` ("Precision, checked by
hand"). The data is read from the paths given and never copied; the sheet quotes only what a review needs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hippo_bench._common import markdown_table

_ROLES = ("user", "assistant", "system", "tool")
DEFAULT_MARKS = 100
DEFAULT_TIMES = 100
DEFAULT_SEED = 1
EXCERPT = 220  # characters of context on each side of the quoted phrase


# ------------------------------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class Message:
    text: str
    speaker: str
    timestamp: datetime | None
    session: str
    ref: str  # the dataset's own id of the message ("D3:12", "chat 118")
    role: str = "user"


@dataclass(frozen=True)
class Dialogue:
    name: str
    messages: list[Message]


def locomo_dialogues(path: str | Path) -> list[Dialogue]:
    """LoCoMo conversations, ingested like the evidence-recall measure (text plus image caption)."""
    from hippo_bench.locomo import load_locomo

    out = []
    for conv in load_locomo(path):
        msgs = [Message(t.text, t.speaker, t.timestamp, f"session_{t.session}", t.dia_id) for t in conv.turns]
        out.append(Dialogue(f"locomo:{conv.sample_id}", msgs))
    return out


def _beam_when(raw: Any) -> datetime | None:
    for fmt in ("%B-%d-%Y", "%b-%d-%Y"):
        try:
            return datetime.strptime(str(raw), fmt)
        except ValueError:
            continue
    return None


def beam_dialogues(root: str | Path) -> list[Dialogue]:
    """BEAM conversations (``<root>/<n>/chat.json``), each message timestamped with the latest time anchor."""
    root = Path(root)
    base = root / "chats" / "100K" if (root / "chats" / "100K").is_dir() else root
    out = []
    for n in sorted((d for d in os.listdir(base) if d.isdigit()), key=int):
        path = base / n / "chat.json"
        if not path.exists():
            continue
        with open(path, encoding="utf-8") as fh:
            batches = json.load(fh)
        msgs, t = [], None
        for batch in batches:
            t = _beam_when(batch.get("time_anchor") or "") or t
            for pair in batch.get("turns", []):
                for m in pair:
                    t = _beam_when(m.get("time_anchor") or "") or t
                    role = str(m["role"])
                    msgs.append(Message(str(m["content"]), role, t, f"batch-{batch.get('batch_number')}",
                                        f"chat {m.get('id')}", role if role in _ROLES else "user"))
        out.append(Dialogue(f"beam:{n}", msgs))
    return out


def dialogues(paths: Iterable[str | Path]) -> list[Dialogue]:
    """Every conversation under ``paths``: a JSON file is LoCoMo, a directory is BEAM."""
    out: list[Dialogue] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out += beam_dialogues(p)
        elif p.is_file():
            out += locomo_dialogues(p)
        else:
            raise FileNotFoundError(f"no such data file or directory: {p}")
    return out


# ---------------------------------------------------------------------------------------------- populations


@dataclass(frozen=True)
class MarkItem:
    key: str
    conversation: str
    kind: str            # "update" or "contradiction"
    entity: str
    attribute: str
    old_value: str
    new_value: str
    old_ref: str
    new_ref: str
    old_speaker: str
    new_speaker: str
    old_said: str
    new_said: str
    old_excerpt: str
    new_excerpt: str


@dataclass(frozen=True)
class TimeItem:
    key: str
    conversation: str
    ref: str
    speaker: str
    said: str            # the message timestamp, with its weekday
    phrase: str          # the time expression the date was read from
    resolved: str        # the date shown in context
    excerpt: str


def _day(dt: datetime | None) -> str:
    if dt is None:
        return "-"
    return f"{dt.strftime('%a')} {dt.day} {dt.strftime('%B %Y')}"


def excerpt(text: str, needle: str, width: int = EXCERPT) -> str:
    """``text`` around the first occurrence of ``needle`` (whole text when short), on one line."""
    flat = re.sub(r"\s+", " ", text).strip()
    if len(flat) <= 2 * width:
        return flat
    m = re.search(re.escape(needle), flat, re.I) if needle else None
    if m is None:
        words = [w for w in re.findall(r"\w+", needle) if len(w) > 2]
        m = next((x for w in words if (x := re.search(r"\b" + re.escape(w), flat, re.I))), None)
    at = m.start() if m else 0
    a, b = max(0, at - width), min(len(flat), at + width)
    return ("..." if a else "") + flat[a:b] + ("..." if b < len(flat) else "")


def populations(dialogue: Dialogue, memory_factory: Any = None) -> tuple[list[MarkItem], list[TimeItem]]:
    """Every supersede mark and every shown resolved date of one conversation."""
    import hippo
    from hippo.text import timeexpr

    # The annotations are followers of their own (time expressions, attribute statements) and do not depend on the
    # hierarchy; leaving it out keeps the sampler fast.
    mem = (memory_factory or (lambda: hippo.Memory(None, config={"hierarchy": {"enabled": False}})))()
    try:
        items = mem.add_many([{"text": m.text, "speaker": m.speaker, "role": m.role, "timestamp": m.timestamp,
                               "session_id": m.session} for m in dialogue.messages])
        by_id = {it.id: dialogue.messages[k] for k, it in enumerate(items)}
        marks = []
        for c in mem.contradictions(include_updates=True):
            old, new = by_id[c["old_id"]], by_id[c["new_id"]]
            marks.append(MarkItem(
                key=f"mark:{dialogue.name}:{old.ref}->{new.ref}:{c['attribute']}", conversation=dialogue.name,
                kind=c["kind"], entity=c["entity"], attribute=c["attribute"], old_value=c["old_value"],
                new_value=c["new_value"], old_ref=old.ref, new_ref=new.ref, old_speaker=old.speaker,
                new_speaker=new.speaker, old_said=_day(old.timestamp), new_said=_day(new.timestamp),
                old_excerpt=excerpt(old.text, c["old_value"]), new_excerpt=excerpt(new.text, c["new_value"])))
        times = []
        speakers = list(dict.fromkeys(m.speaker for m in dialogue.messages))
        seen: set[int] = set()
        for sp in speakers:
            for e in mem.timeline(sp, limit=max(50, len(items))):
                if e["id"] in seen or e["event"] is None or e["id"] not in by_id:
                    continue
                seen.add(e["id"])
                msg = by_id[e["id"]]
                said = msg.timestamp
                if said is not None and e["event"] == f"{said.day} {said.strftime('%B %Y')}":
                    continue  # "today": the context header already says it, no date is added
                stamp = said.replace(tzinfo=timezone.utc).timestamp() if said is not None else None
                ref = timeexpr.event_time(msg.text, stamp)
                phrase = ref.phrase if ref is not None else ""
                times.append(TimeItem(
                    key=f"time:{dialogue.name}:{msg.ref}", conversation=dialogue.name, ref=msg.ref,
                    speaker=msg.speaker, said=_day(said), phrase=phrase, resolved=e["event"],
                    excerpt=excerpt(msg.text, phrase)))
        times.sort(key=lambda t: t.key)
        return marks, times
    finally:
        mem.close()


def draw(population: Sequence[Any], n: int, rng: random.Random) -> list[Any]:
    """``n`` items drawn uniformly without replacement (all of them when fewer), in population order."""
    if n >= len(population):
        return list(population)
    picked = sorted(rng.sample(range(len(population)), n))
    return [population[k] for k in picked]


# ---------------------------------------------------------------------------------------------- verdicts


def wilson(ok: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion ``ok / n``."""
    if n == 0:
        return (math.nan, math.nan)
    p = ok / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def score(keys: Sequence[str], verdicts: Mapping[str, Any]) -> dict[str, Any]:
    """Precision over ``keys`` given ``verdicts`` (``"ok"`` / ``"wrong"`` or ``{"verdict": ...}``); keys without
    a verdict are counted as unreviewed, never as correct."""
    ok = wrong = 0
    missing = []
    for k in keys:
        v = verdicts.get(k)
        if isinstance(v, Mapping):
            v = v.get("verdict")
        if v == "ok":
            ok += 1
        elif v == "wrong":
            wrong += 1
        else:
            missing.append(k)
    n = ok + wrong
    lo, hi = wilson(ok, n)
    return {"reviewed": n, "ok": ok, "wrong": wrong, "unreviewed": len(missing),
            "precision": ok / n if n else None, "wilson95": [lo, hi] if n else None}


# --------------------------------------------------------------------------------------------------- output


def render_sheet(marks: Sequence[MarkItem], times: Sequence[TimeItem], meta: Mapping[str, Any]) -> str:
    lines = [f"# Time-and-truth review sheet (seed {meta['seed']})", "",
             f"Populations: {meta['population']['marks']} supersede marks, {meta['population']['times']} shown "
             f"resolved dates over {meta['conversations']} conversations. Sampled: {len(marks)} marks, "
             f"{len(times)} dates.", "",
             "A mark is right when the later message states the same attribute of the same subject as the earlier "
             "one, with a value that replaces it. A date is right when it is the day / week / month / year the "
             "phrase means, said at the message time (forward for plans, backward for reports).", ""]
    if "scores" in meta:
        rows = [[kind, s["reviewed"], s["ok"], s["wrong"], s["unreviewed"],
                 "-" if s["precision"] is None else f"{s['precision']:.2f}",
                 "-" if s["wilson95"] is None else f"{s['wilson95'][0]:.2f}-{s['wilson95'][1]:.2f}"]
                for kind, s in meta["scores"].items()]
        lines += [markdown_table(["kind", "reviewed", "ok", "wrong", "unreviewed", "precision", "95% CI"], rows), ""]
    lines += ["## Supersede marks", ""]
    for k, m in enumerate(marks, 1):
        lines += [f"### M{k} `{m.key}`",
                  f"{m.kind}: {m.entity} / {m.attribute}: {m.old_value!r} -> {m.new_value!r}",
                  f"- old ({m.old_ref}, {m.old_speaker}, {m.old_said}): {m.old_excerpt}",
                  f"- new ({m.new_ref}, {m.new_speaker}, {m.new_said}): {m.new_excerpt}",
                  "- verdict: ", ""]
    lines += ["## Resolved dates", ""]
    for k, t in enumerate(times, 1):
        lines += [f"### T{k} `{t.key}`",
                  f"said {t.said} by {t.speaker}; phrase {t.phrase!r} -> **{t.resolved}**",
                  f"- text: {t.excerpt}", "- verdict: ", ""]
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", action="append", default=[], required=True,
                   help="a LoCoMo JSON file or a BEAM directory; repeat for several")
    p.add_argument("--marks", type=int, default=DEFAULT_MARKS, help="supersede marks to sample (default 100)")
    p.add_argument("--times", type=int, default=DEFAULT_TIMES, help="resolved dates to sample (default 100)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed of the sample (default 1)")
    p.add_argument("--verdicts", default=None, help="JSON file mapping item keys to 'ok' / 'wrong'")


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    if args.marks < 0 or args.times < 0:
        raise ValueError("--marks and --times must be >= 0")
    convs = dialogues(args.data)
    all_marks: list[MarkItem] = []
    all_times: list[TimeItem] = []
    per_conv = {}
    for d in convs:
        marks, times = populations(d)
        per_conv[d.name] = {"messages": len(d.messages), "marks": len(marks), "times": len(times),
                            "updates": sum(m.kind == "update" for m in marks)}
        all_marks += marks
        all_times += times
    rng = random.Random(args.seed)
    marks = draw(all_marks, args.marks, rng)
    times = draw(all_times, args.times, rng)
    meta: dict[str, Any] = {"seed": args.seed, "conversations": len(convs),
                            "population": {"marks": len(all_marks), "times": len(all_times),
                                           "updates": sum(m.kind == "update" for m in all_marks)}}
    if args.verdicts:
        with open(args.verdicts, encoding="utf-8") as fh:
            verdicts = json.load(fh)
        meta["scores"] = {"marks": score([m.key for m in marks], verdicts),
                          "times": score([t.key for t in times], verdicts)}
    result = {**meta, "per_conversation": per_conv, "marks": [asdict(m) for m in marks],
              "times": [asdict(t) for t in times]}
    return result, render_sheet(marks, times, meta)


__all__ = ["MarkItem", "TimeItem", "dialogues", "draw", "excerpt", "populations", "score", "wilson",
           "add_arguments", "run"]
