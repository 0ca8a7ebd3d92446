"""Commands that change what is stored: ``forget``, ``delete-namespace``, ``consolidate``, ``check [--repair]``,
``backup`` and ``restore``.

The destructive ones (``forget``, ``delete-namespace``, and ``restore`` over an existing store) ask first: ``--yes``
answers for scripts; without it they prompt on a terminal and refuse when standard input is not one.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from hippo import InvalidInput, NotFound
from hippo.base.checks import check_ids
from hippo.store.opening import is_postgres_url
from hippo.cli._common import (
    add_filter_args,
    add_json_arg,
    add_store_args,
    confirm,
    filter_from,
    messages,
    open_store,
    output,
)

__all__ = ["add_parsers"]

LEVELS = ("light", "deep", "archival")


def _forget_filter(args: argparse.Namespace) -> dict[str, Any]:
    spec = filter_from(args) or {}
    if args.ids:
        if "id" in spec:
            raise InvalidInput("--id and a filter on 'id' both select ids; give them once")
        # message ids, checked as Memory.delete checks them: a negative or oversized one names no message and would
        # only make the filter match nothing
        spec["id"] = {"$in": list(dict.fromkeys(check_ids(args.ids, "--id")))}
    if not spec:
        raise InvalidInput("forget needs --id, --filter, --speaker, --session or --role (to empty a namespace use "
                           "`hippo delete-namespace`)")
    return spec


def cmd_forget(args: argparse.Namespace) -> int:
    spec = _forget_filter(args)
    with open_store(args) as mem:
        matches = mem.list(filter=spec)
        ids = [m.id for m in matches]
        if args.dry_run:
            return output(args, {"namespace": mem.namespace, "would_forget": len(ids), "ids": ids},
                          lambda r: print(f"{mem.namespace}: would forget {messages(len(ids))}"
                                          + (f" (ids {', '.join(map(str, ids[:20]))}"
                                             f"{', ...' if len(ids) > 20 else ''})" if ids else "")))
        if not ids:
            return output(args, {"namespace": mem.namespace, "forgotten": 0},
                          lambda r: print(f"{mem.namespace}: no message matches; nothing forgotten"))
        confirm(f"forget {messages(len(ids))} of namespace {mem.namespace!r} in {mem.path}", args.yes)
        # only the messages the user agreed to: another process (an MCP server, an ingest) may write messages the
        # filter matches while the prompt waits, and those were never shown; one no longer matching when the
        # deletion commits (its metadata updated meanwhile) is kept too, judged in the deleting transaction
        n = mem.delete(ids, filter=spec)
        return output(args, {"namespace": mem.namespace, "forgotten": n},
                      lambda r: print(f"{mem.namespace}: forgot {messages(n)}"))


def cmd_delete_namespace(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        if args.name not in mem.namespaces():
            raise NotFound(f"namespace {args.name!r} holds no messages in {mem.path}")
        count = mem.using(args.name).count()
        confirm(f"delete namespace {args.name!r} ({messages(count)}) from {mem.path}", args.yes)
        n = mem.delete_namespace(args.name)
        return output(args, {"namespace": args.name, "deleted": n},
                      lambda r: print(f"deleted namespace {args.name!r}: {messages(n)}"))


def cmd_consolidate(args: argparse.Namespace) -> int:
    with open_store(args) as mem:
        report = mem.consolidate(args.level)
        return output(args, report, lambda r: [print(f"{k}: {round(v, 4) if isinstance(v, float) else v}")
                                               for k, v in r.items()])


def cmd_check(args: argparse.Namespace) -> int:
    """Verify every structure of the store; with --repair rebuild what is derived (and accept the loss of a damaged
    write-ahead log after keeping a copy of it). Exit status 0: nothing left damaged, 1: damage remains."""
    from hippo import Memory
    from hippo.store import wal

    if not args.path or not isinstance(args.path, str):
        raise InvalidInput("--path must name a store file")
    if not is_postgres_url(args.path) and not os.path.isfile(args.path):  # a URL: the read-only open checks
        raise NotFound(f"no store at --path {args.path!r}")
    set_aside = None
    try:
        mem = Memory(args.path, read_only=not args.repair)  # a check without --repair writes nothing
    except wal.WalDamaged:
        if not args.repair:
            raise
        set_aside = wal.accept_loss(args.path)
        mem = Memory(args.path)
    with mem:
        report = mem.check(repair=args.repair)
    if set_aside is not None:
        report["wal"]["rebuilt"].append(f"damaged log kept at {set_aside}; store opened as of its last intact "
                                        "transaction")
        report["wal"]["damaged"] = [{"problem": "committed transactions after the damage were dropped",
                                     "copy": set_aside}]

    def human(r: dict[str, Any]) -> None:
        for ns, sections in r["namespaces"].items():
            for name, sec in sections.items():
                state = "damaged" if sec["damaged"] and not sec["rebuilt"] else "rebuilt" if sec["rebuilt"] else "ok"
                print(f"{ns:<24} {name:<14} {state:<8} {len(sec['damaged'])} problem(s)")
                for d in sec["damaged"][:5]:
                    print(f"{'':<24}   - {d.get('problem', d)}")
        for name in ("file", "wal"):
            if r[name]["damaged"] or r[name]["rebuilt"]:
                print(f"{'(store)':<24} {name:<14} {r[name]['damaged']} {r[name]['rebuilt']}")
        print("ok" if r["ok"] else "damaged: " + ", ".join(r["damaged"]))

    output(args, report, human)
    return 0 if report["ok"] else 1


def cmd_backup(args: argparse.Namespace) -> int:
    """A consistent copy of a SQLite store (every namespace) while it is in use."""
    if is_postgres_url(args.path):
        raise InvalidInput("--path is a PostgreSQL URL: back the database up with pg_dump (docs/deploy.md, "
                           "\"Backups\"), or copy namespaces with `hippo export`")
    if not os.path.isfile(args.path):
        raise NotFound(f"no store at --path {args.path!r}")
    from hippo import Memory

    with Memory(args.path, read_only=True) as mem:
        size = mem.backup(args.dest)
    return output(args, {"path": args.path, "backup": args.dest, "bytes": size},
                  lambda r: print(f"backed up {args.path} to {args.dest} ({size:,} bytes)"))


def cmd_restore(args: argparse.Namespace) -> int:
    """Put a backup back at a store's path (asks first when a store is there)."""
    from hippo.store import backup

    if is_postgres_url(args.path):
        raise InvalidInput("--path is a PostgreSQL URL: restore the database with pg_restore (docs/deploy.md)")
    if not os.path.isfile(args.backup):
        raise NotFound(f"no backup at {args.backup!r}")
    if os.path.exists(args.path):
        confirm(f"replace every namespace of {args.path} with the content of {args.backup}", args.yes)
    report = backup.restore(args.backup, args.path)
    return output(args, {"path": args.path, "backup": args.backup, **report},
                  lambda r: print(f"restored {args.path} from {args.backup}: {report['namespaces']} namespace(s), "
                                  f"{messages(report['messages'])}"))


def add_parsers(sub: argparse._SubParsersAction) -> None:
    f = sub.add_parser("forget", help="delete the messages selected by ids or a filter (asks first)")
    add_store_args(f)
    f.add_argument("--id", dest="ids", type=int, action="append", metavar="ID", help="a message id (repeatable)")
    add_filter_args(f)
    f.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    f.add_argument("--dry-run", action="store_true", help="only report how many messages would be forgotten")
    add_json_arg(f)
    f.set_defaults(func=cmd_forget)

    d = sub.add_parser("delete-namespace", help="delete a whole namespace (asks first)")
    d.add_argument("name", metavar="NAME")
    add_store_args(d, namespace=False)
    d.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add_json_arg(d)
    d.set_defaults(func=cmd_delete_namespace, api_names={"namespace": "name"})

    c = sub.add_parser("consolidate", help="run a consolidation cycle: light, deep or archival")
    add_store_args(c)
    c.add_argument("--level", choices=LEVELS, default="light",
                   help="light: strengths and dormancy; deep: re-cluster themes, refresh summaries; archival: prune "
                        "dormant units past retention (default light)")
    add_json_arg(c)
    c.set_defaults(func=cmd_consolidate)

    k = sub.add_parser("check", help="verify every chunk, row, snapshot and namespace; --repair rebuilds what is "
                                     "derived")
    add_store_args(k, namespace=False)
    k.add_argument("--repair", action="store_true", help="rebuild derived structures (the store is opened writable)")
    add_json_arg(k)
    k.set_defaults(func=cmd_check)

    b = sub.add_parser("backup", help="write a consistent copy of a SQLite store (every namespace) while it is in use")
    b.add_argument("dest", metavar="OUT", help="the backup file to write (replaced whole once the copy is complete)")
    add_store_args(b, namespace=False)
    add_json_arg(b)
    b.set_defaults(func=cmd_backup, api_names={"path": "dest"})  # Memory.backup(path): the file OUT

    r = sub.add_parser("restore", help="put a backup back at a store's path (asks first when a store is there)")
    r.add_argument("backup", metavar="BACKUP", help="a backup file written by `hippo backup` (or any copy of a closed store)")
    add_store_args(r, namespace=False)
    r.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add_json_arg(r)
    r.set_defaults(func=cmd_restore)
