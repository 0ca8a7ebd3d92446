"""Read commands: ``search``, ``recall``, ``list``, ``read``, ``timeline``, ``topics``, ``namespaces``, ``stats``.

Each takes ``--json`` for one JSON document on stdout in the shape of :mod:`hippo.records`; without it, a
listing meant for people.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hippo.base.timeutil import iso_date, iso_minute

from hippo.cli._common import (
    add_filter_args,
    add_json_arg,
    add_store_args,
    add_time_args,
    filter_from,
    note_if_empty,
    open_store,
    output,
    positive_int,
    time_kwargs,
)

__all__ = ["add_parsers"]


def _when(dt) -> str:
    return iso_minute(dt) if dt is not None else "undated"


def _line(m, prefix: str = "") -> str:
    return f"{prefix}{m.id:>6}  {_when(m.timestamp)}  {m.speaker or m.role}: {m.text}"


def cmd_search(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        hits = mem.search(args.query, k=args.k, filter=filter_from(args), **time_kwargs(args))
        if not hits:
            note_if_empty(mem)

        def human(hits: list) -> None:
            for h in hits:
                print(f"{h.id:>6}  {h.score:.4f}  {h.speaker or h.role}: {h.text}")

        return output(args, hits, human)


def cmd_recall(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        r = mem.recall(args.query, budget_tokens=args.budget, filter=filter_from(args),
                       include_dormant=args.include_dormant, **time_kwargs(args))
        if not r.messages:
            note_if_empty(mem)

        def human(r) -> None:
            print(r.text)
            print(f"\n-- {r.tokens} tokens, {len(r.messages)} messages, {r.timings.get('total_ms', 0):.2f} ms",
                  file=sys.stderr)

        return output(args, r, human)


def cmd_list(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        items = mem.list(filter=filter_from(args), limit=args.limit, offset=args.offset)
        if not items:
            note_if_empty(mem)
        return output(args, items, lambda items: [print(_line(m)) for m in items])


def cmd_read(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        items = mem.read(args.id, before=args.before, after=args.after)
        return output(args, items, lambda items: [print(_line(m, "> " if m.id == args.id else "  ")) for m in items])


def cmd_timeline(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        entries = mem.timeline(args.query, limit=args.limit, **time_kwargs(args))
        if not entries:
            note_if_empty(mem)

        def human(entries: list[dict[str, Any]]) -> None:
            for e in entries:
                when = e["event"] or (iso_date(e["event_time"]) if e["event_time"] else "undated")
                note = f"  (superseded by {e['superseded_by']})" if e["superseded_by"] is not None else ""
                print(f"{when:<22} {e['id']:>6}  {e['speaker'] or '-'}: {e['text']}{note}")

        return output(args, entries, human)


def cmd_topics(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        if args.topic is not None:
            # the rule Memory.topic applies to an id given as text (int() reads decimal digits only, not '²')
            topic_id: int | str = int(args.topic) if args.topic.isdecimal() else args.topic
            text = mem.topic(topic_id)
            return output(args, {"id": topic_id, "markdown": text}, lambda t: print(t["markdown"]))
        topics = mem.topics()
        if not topics:
            note_if_empty(mem)

        def human(topics: list[dict[str, Any]]) -> None:
            for t in topics:
                span = f"{t.get('first_time') or '?'} .. {t.get('last_time') or '?'}"
                print(f"{str(t['id']):>8}  {t.get('title', '')}  ({t.get('n_messages', 0)} messages, {span})")
                if t.get("summary"):
                    print(f"{'':>10}{t['summary']}")

        return output(args, topics, human)


def cmd_namespaces(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        return output(args, mem.namespaces(), lambda names: [print(n) for n in names])


def _print_tree(value: Any, indent: int = 0) -> None:
    for key, v in value.items():
        if isinstance(v, dict):
            print(f"{'  ' * indent}{key}:")
            _print_tree(v, indent + 1)
        else:
            print(f"{'  ' * indent}{key}: {round(v, 4) if isinstance(v, float) else v}")


def cmd_stats(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        return output(args, mem.stats(), _print_tree)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("search", help="ranked messages for a query")
    s.add_argument("query", metavar="QUERY")
    add_store_args(s)
    s.add_argument("-k", type=positive_int, default=10, help="number of results (default 10)")
    add_filter_args(s)
    add_time_args(s, asked_at=True)
    add_json_arg(s)
    s.set_defaults(func=cmd_search)

    r = sub.add_parser("recall", help="a prompt-ready context for a query under a token budget")
    r.add_argument("query", metavar="QUERY")
    add_store_args(r)
    r.add_argument("--budget", type=positive_int, default=2000, help="cl100k tokens (default 2000)")
    r.add_argument("--include-dormant", action="store_true", help="also recall faded (dormant) memories")
    add_filter_args(r)
    add_time_args(r, asked_at=True)
    add_json_arg(r)
    r.set_defaults(func=cmd_recall)

    li = sub.add_parser("list", help="messages in insertion order, optionally filtered")
    add_store_args(li)
    li.add_argument("--limit", type=int, default=None)
    li.add_argument("--offset", type=int, default=0)
    add_filter_args(li)
    add_json_arg(li)
    li.set_defaults(func=cmd_list)

    rd = sub.add_parser("read", help="a message with its neighbours from the same session")
    rd.add_argument("id", type=int, metavar="ID")
    add_store_args(rd)
    rd.add_argument("--before", type=int, default=2)
    rd.add_argument("--after", type=int, default=2)
    add_json_arg(rd)
    rd.set_defaults(func=cmd_read)

    t = sub.add_parser("timeline", help="time-ordered statements about a person (a speaker's name) or a topic")
    t.add_argument("query", metavar="QUERY", help="a speaker's name or any query")
    add_store_args(t)
    t.add_argument("--limit", type=int, default=50)
    add_time_args(t)
    add_json_arg(t)
    t.set_defaults(func=cmd_timeline)

    tp = sub.add_parser("topics", help="the topic catalog, or one topic's entries with its id")
    tp.add_argument("topic", nargs="?", metavar="TOPIC_ID", help="a topic id from the catalog (or 'current'): print that topic")
    add_store_args(tp)
    add_json_arg(tp)
    tp.set_defaults(func=cmd_topics)

    ns = sub.add_parser("namespaces", help="the namespaces of a store that hold messages")
    add_store_args(ns, namespace=False)
    add_json_arg(ns)
    ns.set_defaults(func=cmd_namespaces)

    st = sub.add_parser("stats", help="sizes and bytes per token")
    add_store_args(st)
    add_json_arg(st)
    st.set_defaults(func=cmd_stats)
