"""``hippo bench temporal``: does memory know what is true now, and in what order things happened?

    hippo bench temporal [--quick] [--seed S] [--conversations N] [--budget 1000] [--k 10]
                         [--out bench_results/temporal.json]

Data: the scripted conversations of :mod:`hippo_bench.temporal_probes` (facts that change over dated sessions,
events told with relative time expressions, distractor chat that names the same values elsewhere). Every
conversation is ingested session by session (``add_many``) into its own namespace of an in-memory store, once
with the default configuration and once with ``temporal.enabled = False`` (the engine without time and truth,
seed 002 §4.1 stages 3-5 and 9, seed 003 §3.3), in the same run.

Update probes ("Where does Maya live now?"):

* **in recall**: the current value occurs (as whole words) in ``recall(question, budget).text``;
* **search**: the best ``search(question, k)`` hit that names any of the probe's values names the current one
  (so the current value is ranked above every superseded value);
* **update accuracy**: both at once;
* **newest statement first**: among the hits that are the probe's own statements, the first one states the
  current value (distractors that merely mention a value do not count here);
* **stale marked**: of the probes whose recalled context includes a statement of a superseded value, the share
  where every such statement's line carries "superseded" and a date; **newest marked** is the error rate the
  other way (the newest statement of the current value marked superseded);
* **superseded_by**: the share of stale statements whose ``Hit.superseded_by`` is set and points to a later
  statement of the same fact; the share of newest statements wrongly given one;
* **until**: ``search(question, until=t)`` with ``t`` between a value's statement and the first change of it:
  the best value-naming hit names the value that held at ``t``. (``as_of`` is not scored: it cuts by ingestion
  time, and these conversations are ingested in one go with past timestamps.)

**Link precision**: the share of all supersedes links (``contradictions(include_updates=True)``) that join two
statements of the same fact, the later after the earlier; a link from chat, from a mention of a value or across
two facts is a mark a reader would be misled by.

Ordering probes ("In what order did these happen to Maya: ...?"): Kendall tau (:func:`kendall_tau`; a missing
event counts as neither concordant nor discordant, so it lowers tau) between the true event order and (a) the
order in which the events' key phrases first occur in ``recall(question, budget).text``, (b) the order of
``timeline(person)`` entries; mean over probes, share with tau = 1, share of events found. The tau of the order
in which events were told (message time) is printed as the reference a time-blind memory would reach. Also
**event time**: the share of event messages whose ``Hit.event_time`` falls in the window of days the time
expression allows.

Ingest time per message (add_many calls) for both configurations and their ratio; p50 search / recall latency.
A metric whose API is missing from the installed engine is reported as null.
"""

from __future__ import annotations

import argparse
import inspect
import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from hippo_bench._common import fmt_num, fmt_ratio, fmt_time, machine_info, markdown_table
from hippo_bench.temporal_probes import (
    DEFAULT_CONVERSATIONS,
    DEFAULT_SEED,
    Conversation,
    OrderProbe,
    ProbeSet,
    UpdateProbe,
    contains,
    generate,
)

QUICK_CONVERSATIONS = 2
DEFAULT_BUDGET = 1000
DEFAULT_K = 10
DEFAULT_TIMELINE_LIMIT = 200

# --------------------------------------------------------------------------------------------- Kendall tau


def kendall_tau(true_order: Sequence[str], predicted: Mapping[str, float]) -> float:
    """Kendall tau between ``true_order`` (distinct items, first to last) and predicted positions.

    ``predicted`` maps an item to its position (any comparable number: rank, character offset); an item absent
    from it was not found. Over all ``n(n-1)/2`` pairs of ``true_order``: a pair whose two items are both found
    counts +1 if the predicted positions agree with the true order, -1 if they disagree, 0 if tied; a pair with
    a missing item counts 0. tau = sum / (n(n-1)/2), in [-1, 1] (tau-a with missing items and ties scored 0):
    1 means every item found, none tied, all in order; a memory that loses events cannot reach 1.
    """
    items = list(true_order)
    n = len(items)
    if n < 2:
        raise ValueError(f"true_order needs at least 2 items, got {n}")
    if len(set(items)) != n:
        raise ValueError("true_order items must be distinct")
    total = 0
    for i in range(n):
        a = predicted.get(items[i])
        if a is None:
            continue
        for j in range(i + 1, n):
            b = predicted.get(items[j])
            if b is None or b == a:
                continue
            total += 1 if b > a else -1
    return total / (n * (n - 1) / 2)


def positions_in_text(text: str, keys: Sequence[str]) -> dict[str, int]:
    """Character offset of each key's first occurrence in ``text`` (case-insensitive); absent keys omitted."""
    low = text.lower()
    out = {}
    for key in keys:
        at = low.find(key.lower())
        if at >= 0:
            out[key] = at
    return out


def positions_in_list(texts: Sequence[str], keys: Sequence[str]) -> dict[str, int]:
    """Index of the first entry of ``texts`` containing each key (case-insensitive); absent keys omitted."""
    out: dict[str, int] = {}
    for i, text in enumerate(texts):
        low = text.lower()
        for key in keys:
            if key not in out and key.lower() in low:
                out[key] = i
    return out


# ---------------------------------------------------------------------------------------- context marks

_DATE_RE = re.compile(
    r"\b(1[89]\d\d|2[01]\d\d)\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\d{4}-\d{2}-\d{2}",
    re.IGNORECASE,
)


def marked_superseded(context: str, message: str) -> bool | None:
    """Whether the line of ``context`` holding ``message`` verbatim marks it "superseded" with a date outside
    the message text itself; None when the message is not in the context verbatim."""
    at = context.find(message)
    if at < 0:
        return None
    start = context.rfind("\n", 0, at) + 1
    end = context.find("\n", at + len(message))
    end = len(context) if end < 0 else end
    around = context[start:at] + " " + context[at + len(message):end]
    return "superseded" in around.lower() and _DATE_RE.search(around) is not None


# ------------------------------------------------------------------------------------------- evaluation


def _accepts(fn: Callable[..., Any] | None, param: str) -> bool:
    if fn is None:
        return False
    try:
        return param in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _share(flags: Sequence[bool | None]) -> float | None:
    known = [f for f in flags if f is not None]
    return sum(known) / len(known) if known else None


def _mean(xs: Sequence[float | None]) -> float | None:
    known = [x for x in xs if x is not None]
    return statistics.fmean(known) if known else None


def _median(xs: Sequence[float]) -> float | None:
    return statistics.median(xs) if xs else None


class _Run:
    """One configuration: a private in-memory store, one namespace per conversation."""

    def __init__(self, probes: ProbeSet, config: Any, *, budget: int, k: int, timeline_limit: int) -> None:
        from hippo import Memory

        self.probes = probes
        self.memory = Memory(None, config=config)
        self.budget = budget
        self.k = k
        self.timeline_limit = timeline_limit
        self.ids: dict[tuple[str, int], int] = {}   # (conversation, turn) -> message id
        self.ingest_seconds = 0.0
        self.messages = 0
        self.search_seconds: list[float] = []
        self.recall_seconds: list[float] = []

    def ns(self, conversation: str):
        return self.memory.using(conversation)

    def ingest(self) -> None:
        for conv in self.probes.conversations:
            m = self.ns(conv.id)
            for session in conv.sessions():
                batch = [Conversation.message(t) for t in session]
                t0 = time.perf_counter()
                items = m.add_many(batch)
                self.ingest_seconds += time.perf_counter() - t0
                self.messages += len(batch)
                for t, item in zip(session, items):
                    self.ids[(conv.id, t.index)] = item.id

    def search(self, m, query: str, k: int, **kw: Any) -> list:
        t0 = time.perf_counter()
        hits = m.search(query, k=k, **kw)
        self.search_seconds.append(time.perf_counter() - t0)
        return hits

    def recall(self, m, query: str):
        t0 = time.perf_counter()
        rec = m.recall(query, budget_tokens=self.budget)
        self.recall_seconds.append(time.perf_counter() - t0)
        return rec

    def hit_of(self, m, conv: Conversation, turn: int):
        """The ``Hit`` of one message, found by quoting its text; None when the quote does not return it."""
        mid = self.ids[(conv.id, turn)]
        for h in m.search(conv.turns[turn].text, k=20):
            if h.id == mid:
                return h
        return None

    # -- update probes -------------------------------------------------------------------------------------
    def update(self, p: UpdateProbe) -> dict[str, Any]:
        conv = self.probes.conversation(p.conversation)
        m = self.ns(p.conversation)
        rec = self.recall(m, p.question)
        hits = self.search(m, p.question, self.k)
        in_recall = contains(rec.text, p.current)
        best = next((h for h in hits if any(contains(h.text, v) for v in p.values)), None)
        search_ok = best is not None and contains(best.text, p.current)

        sid = {self.ids[(conv.id, s.turn)]: s for s in p.statements}
        current_ids = {i for i, s in sid.items() if s.value == p.current}
        newest = self.ids[(conv.id, p.statements[-1].turn)]
        first_stmt = next((h for h in hits if h.id in sid), None)

        included = {item.id for item in rec.messages}
        stale_marks = [marked_superseded(rec.text, conv.turns[s.turn].text)
                       for i, s in sid.items() if i not in current_ids and i in included]
        stale_marks = [x for x in stale_marks if x is not None]
        newest_mark = marked_superseded(rec.text, conv.turns[p.statements[-1].turn].text) if newest in included \
            else None

        flags: dict[str, Any] = {"stale_flagged": [], "stale_flag_correct": [], "newest_flagged": None}
        supports_flag = None
        for i, s in sid.items():
            if i in current_ids and i != newest:
                continue
            h = self.hit_of(m, conv, s.turn)
            if h is None or not hasattr(h, "superseded_by"):
                continue
            supports_flag = True
            if i == newest:
                flags["newest_flagged"] = h.superseded_by is not None
            else:
                later = {j for j, t in sid.items() if t.turn > s.turn}
                flags["stale_flagged"].append(h.superseded_by is not None)
                flags["stale_flag_correct"].append(h.superseded_by in later)

        until_ok = None
        if _accepts(m.search, "until"):
            # The world between a value's statement and its first change: only messages whose event time is
            # before ``at`` count, and the value that held then must win among them.
            first_change = next(j for j, s in enumerate(p.statements) if s.value != p.statements[0].value)
            before, after = p.statements[first_change - 1], p.statements[first_change]
            t_before, t_after = conv.turns[before.turn].timestamp, conv.turns[after.turn].timestamp
            at = t_before + (t_after - t_before) / 2
            past = self.search(m, p.question, self.k, until=at)
            best_then = next((h for h in past if any(contains(h.text, v) for v in p.values)), None)
            until_ok = best_then is not None and contains(best_then.text, before.value)

        return {
            "id": p.id, "attribute": p.attribute, "question": p.question, "current": p.current,
            "superseded": list(p.superseded), "changes": len(p.superseded),
            "last_style": p.statements[-1].style,
            "in_recall": in_recall, "search": search_ok, "accurate": in_recall and search_ok,
            "newest_statement_first": None if first_stmt is None else first_stmt.id in current_ids,
            "best_hit": None if best is None else best.text,
            "stale_in_recall": len(stale_marks), "stale_all_marked": all(stale_marks) if stale_marks else None,
            "newest_marked": newest_mark,
            "stale_flagged": flags["stale_flagged"] if supports_flag else None,
            "stale_flag_correct": flags["stale_flag_correct"] if supports_flag else None,
            "newest_flagged": flags["newest_flagged"] if supports_flag else None,
            "until": until_ok,
        }

    # -- ordering probes -----------------------------------------------------------------------------------
    def order(self, o: OrderProbe) -> dict[str, Any]:
        conv = self.probes.conversation(o.conversation)
        m = self.ns(o.conversation)
        keys = list(o.true_order)
        rec = self.recall(m, o.question)
        in_recall = positions_in_text(rec.text, keys)
        timeline_tau = timeline_found = None
        timeline_fn = getattr(m, "timeline", None)
        if timeline_fn is not None:
            entries = timeline_fn(o.entity, limit=self.timeline_limit)
            in_timeline = positions_in_list([str(e.get("text", "")) for e in entries], keys)
            timeline_tau = kendall_tau(keys, in_timeline)
            timeline_found = len(in_timeline) / len(keys)
        resolved: list[bool | None] = []
        for e in o.events:
            h = self.hit_of(m, conv, e.turn)
            et = getattr(h, "event_time", None) if h is not None else None
            if h is None or not hasattr(h, "event_time"):
                resolved.append(None)
            else:
                resolved.append(isinstance(et, datetime) and e.earliest <= et.date() <= e.latest)
        return {
            "id": o.id, "question": o.question, "true_order": keys, "told_order": list(o.told_order),
            "recall_tau": kendall_tau(keys, in_recall), "recall_found": len(in_recall) / len(keys),
            "timeline_tau": timeline_tau, "timeline_found": timeline_found,
            "event_time_in_window": resolved,
        }

    def link_precision(self) -> tuple[int, int] | None:
        """(links joining two statements of one fact, all links): every supersedes link the engine recorded
        (``contradictions(include_updates=True)``) is checked against the script, which knows which turns state a
        value of which fact. A link from a chat turn or a mention, or across two facts, is a false mark."""
        ok = total = 0
        for conv in self.probes.conversations:
            fn = getattr(self.ns(conv.id), "contradictions", None)
            if fn is None:
                return None
            turn_of = {mid: t for (cid, t), mid in self.ids.items() if cid == conv.id}
            for link in fn(include_updates=True):
                total += 1
                old, new = conv.turns[turn_of[link["old_id"]]], conv.turns[turn_of[link["new_id"]]]
                ok += (old.kind == new.kind == "statement" and old.ref == new.ref and old.index < new.index)
        return ok, total

    def contradictions(self) -> int | None:
        total = 0
        for conv in self.probes.conversations:
            fn = getattr(self.ns(conv.id), "contradictions", None)
            if fn is None:
                return None
            total += len(fn())
        return total


def evaluate(probes: ProbeSet, config: Any = None, *, budget: int = DEFAULT_BUDGET, k: int = DEFAULT_K,
             timeline_limit: int = DEFAULT_TIMELINE_LIMIT) -> dict[str, Any]:
    """Ingest ``probes`` under ``config`` (a ``hippo.Config``, dict or None) and score every probe.

    Returns ``{"metrics": {...}, "updates": [per-probe rows], "orders": [per-probe rows]}``; a metric whose
    API the engine lacks is None."""
    run = _Run(probes, config, budget=budget, k=k, timeline_limit=timeline_limit)
    run.ingest()
    ups = [run.update(p) for p in probes.updates]
    ords = [run.order(o) for o in probes.orders]

    def col(rows: list[dict], key: str) -> list:
        return [r[key] for r in rows]

    links = run.link_precision()
    stale_flagged = [x for r in ups if r["stale_flagged"] is not None for x in r["stale_flagged"]]
    stale_correct = [x for r in ups if r["stale_flag_correct"] is not None for x in r["stale_flag_correct"]]
    flag_supported = any(r["stale_flagged"] is not None for r in ups)
    recall_taus = col(ords, "recall_tau")
    timeline_taus = [t for t in col(ords, "timeline_tau") if t is not None]
    resolved = [x for r in ords for x in r["event_time_in_window"]]
    per_attribute = {}
    for attr in sorted({r["attribute"] for r in ups}):
        rows = [r for r in ups if r["attribute"] == attr]
        per_attribute[attr] = {"n": len(rows), "accuracy": _share(col(rows, "accurate"))}
    by_changes = {}
    for n in sorted({r["changes"] for r in ups}):
        rows = [r for r in ups if r["changes"] == n]
        by_changes[str(n)] = {"n": len(rows), "accuracy": _share(col(rows, "accurate"))}

    metrics = {
        "update_accuracy": _share(col(ups, "accurate")),
        "current_in_recall": _share(col(ups, "in_recall")),
        "search_current_first": _share(col(ups, "search")),
        "newest_statement_first": _share(col(ups, "newest_statement_first")),
        "stale_in_recall_probes": sum(1 for r in ups if r["stale_in_recall"]),
        "stale_marked": _share(col(ups, "stale_all_marked")),
        "newest_marked": _share(col(ups, "newest_marked")),
        "stale_superseded_by": _share(stale_flagged) if flag_supported else None,
        "stale_superseded_by_correct": _share(stale_correct) if flag_supported else None,
        "newest_superseded_by": _share(col(ups, "newest_flagged")) if flag_supported else None,
        "until_accuracy": _share(col(ups, "until")),
        "order_recall_tau": _mean(recall_taus),
        "order_recall_exact": _share([t == 1.0 for t in recall_taus]),
        "order_recall_found": _mean(col(ords, "recall_found")),
        "order_timeline_tau": _mean(timeline_taus),
        "order_timeline_exact": _share([t == 1.0 for t in timeline_taus]),
        "order_timeline_found": _mean([f for f in col(ords, "timeline_found") if f is not None]),
        "event_time_in_window": _share(resolved),
        "ingest_s_per_message": run.ingest_seconds / run.messages if run.messages else None,
        "search_p50_s": _median(run.search_seconds),
        "recall_p50_s": _median(run.recall_seconds),
        "open_contradictions": run.contradictions(),
        "links": None if links is None else links[1],
        "link_precision": None if links is None or not links[1] else links[0] / links[1],
        "per_attribute": per_attribute,
        "by_changes": by_changes,
    }
    run.memory.close()
    return {"metrics": metrics, "updates": ups, "orders": ords}


def configurations() -> list[tuple[str, Any, str | None]]:
    """``[(name, config, note)]``: the default, and ``temporal.enabled = False`` when the engine has that switch
    (otherwise its config is None and the note says why)."""
    from hippo import Config

    out: list[tuple[str, Any, str | None]] = [("default", Config(), None)]
    try:
        out.append(("temporal_off", Config.from_value({"temporal": {"enabled": False}}), None))
    except Exception as exc:  # the switch is part of the temporal engine; older engines reject the key
        out.append(("temporal_off", None, f"unavailable: {exc}"))
    return out


# ------------------------------------------------------------------------------------------------- report

_ROWS: tuple[tuple[str, str, str], ...] = (
    ("update accuracy (recall and search)", "update_accuracy", "num"),
    ("current value in recall", "current_in_recall", "num"),
    ("best value hit names current value", "search_current_first", "num"),
    ("first own statement hit is current", "newest_statement_first", "num"),
    ("stale statements in recall marked superseded", "stale_marked", "num"),
    ("newest statement marked superseded (error)", "newest_marked", "num"),
    ("stale statements with superseded_by", "stale_superseded_by", "num"),
    ("... pointing to a later statement", "stale_superseded_by_correct", "num"),
    ("newest statements with superseded_by (error)", "newest_superseded_by", "num"),
    ("search until t names the value held at t", "until_accuracy", "num"),
    ("order in recall: mean Kendall tau", "order_recall_tau", "num"),
    ("order in recall: share tau = 1", "order_recall_exact", "num"),
    ("order in recall: events found", "order_recall_found", "num"),
    ("timeline(person): mean Kendall tau", "order_timeline_tau", "num"),
    ("timeline(person): share tau = 1", "order_timeline_exact", "num"),
    ("timeline(person): events found", "order_timeline_found", "num"),
    ("event_time within the expression's window", "event_time_in_window", "num"),
    ("ingest per message", "ingest_s_per_message", "time"),
    ("search p50", "search_p50_s", "time"),
    ("recall p50", "recall_p50_s", "time"),
    ("open contradictions", "open_contradictions", "int"),
    ("supersedes links", "links", "int"),
    ("... joining two statements of one fact", "link_precision", "num"),
)


def _fmt(value: Any, kind: str) -> str:
    if value is None:
        return "-"
    if kind == "time":
        return fmt_time(value)
    if kind == "int":
        return str(value)
    return fmt_num(value)


def render(result: dict[str, Any]) -> str:
    data = result["data"]
    configs = result["configs"]
    names = list(configs)
    rows = [[label] + [_fmt((configs[n] or {}).get(key), kind) for n in names] for label, key, kind in _ROWS]
    ratio = result.get("ingest_ratio")
    rows.append(["ingest time ratio default / temporal off", fmt_ratio(ratio)] + [""] * (len(names) - 1))
    lines = [
        f"## hippo bench temporal (seed {data['seed']})",
        "",
        f"{data['conversations']} scripted conversations, {data['messages']} messages; {data['update_probes']} "
        f"update probes (1-3 changes), {data['order_probes']} ordering probes ({data['told_out_of_order']} told "
        f"out of order; the order of telling has mean tau {fmt_num(data['told_order_tau'])}). "
        f"recall budget {data['budget']} tokens, search k={data['k']}.",
        "",
        markdown_table(["metric"] + names, rows),
    ]
    for n in names:
        note = result.get("notes", {}).get(n)
        if note:
            lines += ["", f"{n}: {note}"]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"probe generator seed (default {DEFAULT_SEED})")
    parser.add_argument("--conversations", type=int, default=DEFAULT_CONVERSATIONS,
                        help=f"scripted conversations (default {DEFAULT_CONVERSATIONS}; --quick uses "
                             f"{QUICK_CONVERSATIONS})")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="recall budget in cl100k tokens")
    parser.add_argument("--k", type=int, default=DEFAULT_K, help="search depth for the update probes")
    parser.add_argument("--timeline-limit", type=int, default=DEFAULT_TIMELINE_LIMIT,
                        help="entries asked of timeline(person); large enough for a whole conversation")


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    n_conv = QUICK_CONVERSATIONS if getattr(args, "quick", False) else args.conversations
    probes = generate(seed=args.seed, conversations=n_conv)
    told_taus = [kendall_tau(o.true_order, {key: i for i, key in enumerate(o.told_order)}) for o in probes.orders]
    result: dict[str, Any] = {
        "benchmark": "temporal",
        "data": {
            "seed": probes.seed, "conversations": len(probes.conversations),
            "messages": sum(len(c.turns) for c in probes.conversations),
            "update_probes": len(probes.updates), "order_probes": len(probes.orders),
            "told_out_of_order": sum(1 for o in probes.orders if o.told_order != o.true_order),
            "told_order_tau": _mean(told_taus), "budget": args.budget, "k": args.k,
            "timeline_limit": args.timeline_limit,
        },
        "configs": {}, "notes": {}, "probes": {}, "machine": machine_info(),
    }
    for name, config, note in configurations():
        if config is None:
            result["configs"][name] = None
            result["notes"][name] = note
            continue
        scored = evaluate(probes, config, budget=args.budget, k=args.k, timeline_limit=args.timeline_limit)
        result["configs"][name] = scored["metrics"]
        result["probes"][name] = {"updates": scored["updates"], "orders": scored["orders"]}
    on, off = result["configs"].get("default"), result["configs"].get("temporal_off")
    ratio = None
    if on and off and on.get("ingest_s_per_message") and off.get("ingest_s_per_message"):
        ratio = on["ingest_s_per_message"] / off["ingest_s_per_message"]
    result["ingest_ratio"] = ratio
    return result, render(result)


__all__ = ["add_arguments", "configurations", "evaluate", "kendall_tau", "marked_superseded", "positions_in_list",
           "positions_in_text", "run"]
