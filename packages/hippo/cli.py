"""The ``hippo`` command line: demo, ingest, search, recall, stats, export, import, bench."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timedelta
from importlib import resources
from typing import Any, Iterator

from hippo.errors import HippoError, InvalidInput

DEMO_QUESTIONS = [
    "When is Maya moving into the Porto flat, and who are the movers?",
    "Who is Maya's team lead now?",
    "When did the billing migration actually go live?",
    "Who can repair the oak table?",
    "What kind of dog does Maya want to adopt, and from where?",
    "How long is Maya's Duolingo streak?",
]


def _store_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--path", default=os.environ.get("HIPPO_PATH", "hippo.db"),
                   help="store file (default: $HIPPO_PATH or ./hippo.db)")
    p.add_argument("--namespace", "-n", default="default", help="namespace inside the store")


def _progress(done: int, total: int, started: float, label: str) -> None:
    if not sys.stderr.isatty() and done != total:
        return
    width = 30
    frac = done / total if total else 1.0
    bar = "#" * int(frac * width)
    rate = done / max(time.perf_counter() - started, 1e-9)
    sys.stderr.write(f"\r{label} [{bar:<{width}}] {done}/{total} ({rate:,.0f}/s)")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _parse_locomo_date(text: str) -> datetime:
    # "1:56 pm on 8 May, 2023"
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def locomo_items(sample: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Messages of one LoCoMo-format conversation, as ``Memory.add_many`` items."""
    conv = sample["conversation"]
    keys = sorted((k for k in conv if k.startswith("session_") and k.split("_")[1].isdigit()
                   and isinstance(conv[k], list)), key=lambda k: int(k.split("_")[1]))
    for key in keys:
        date = conv.get(f"{key}_date_time")
        t0 = _parse_locomo_date(date) if date else None
        for k, turn in enumerate(conv[key]):
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            yield {
                "text": text,
                "speaker": turn.get("speaker"),
                "timestamp": (t0 + timedelta(seconds=k)) if t0 else None,
                "session_id": key,
                "metadata": {"dia_id": turn.get("dia_id")},
            }


def _read_items(path: str) -> list[tuple[str | None, list[dict[str, Any]]]]:
    """(namespace or None, items) groups from a JSONL file of messages or a LoCoMo-format JSON file."""
    with open(path, encoding="utf-8") as f:
        head = f.read(1)
        f.seek(0)
        if head == "[":
            data = json.load(f)
            if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s for s in data):
                raise InvalidInput(f"{path}: a JSON list must hold LoCoMo-format conversations")
            return [(s.get("sample_id"), list(locomo_items(s))) for s in data]
        items = []
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{path}:{lineno}: not JSON ({exc})") from exc
            if not isinstance(rec, dict):
                raise InvalidInput(f"{path}:{lineno}: expected a JSON object per line")
            items.append(rec)
        return [(None, items)]


def cmd_ingest(args) -> int:
    from hippo import Memory

    groups = _read_items(args.file)
    with Memory(args.path, namespace=args.namespace) as mem:
        for ns, items in groups:
            target = mem.using(f"{args.namespace}.{ns}" if ns and args.split else args.namespace)
            started = time.perf_counter()
            for i in range(0, len(items), args.batch):
                target.add_many(items[i : i + args.batch])
                _progress(min(i + args.batch, len(items)), len(items), started, f"ingest {target.namespace}")
            print(f"{target.namespace}: {len(items)} messages in {time.perf_counter() - started:.2f} s")
    return 0


def cmd_search(args) -> int:
    from hippo import Memory

    with Memory(args.path, namespace=args.namespace) as mem:
        hits = mem.search(args.query, k=args.k)
        if args.json:
            print(json.dumps([{"id": h.id, "score": h.score, "speaker": h.speaker, "text": h.text,
                               "timestamp": h.timestamp.isoformat() if h.timestamp else None,
                               "metadata": h.metadata} for h in hits], ensure_ascii=False, indent=2))
        else:
            for h in hits:
                print(f"{h.id:>6}  {h.score:.4f}  {h.speaker or h.role}: {h.text}")
    return 0


def cmd_recall(args) -> int:
    from hippo import Memory

    with Memory(args.path, namespace=args.namespace) as mem:
        r = mem.recall(args.query, budget_tokens=args.budget)
        print(r.text)
        print(f"\n-- {r.tokens} tokens, {len(r.messages)} messages, {r.timings.get('total_ms', 0):.2f} ms",
              file=sys.stderr)
    return 0


def cmd_stats(args) -> int:
    from hippo import Memory

    with Memory(args.path, namespace=args.namespace) as mem:
        print(json.dumps(mem.stats(), indent=2))
    return 0


def cmd_export(args) -> int:
    from hippo import Memory

    with Memory(args.path, namespace=args.namespace) as mem:
        n = mem.export(args.out)
    print(f"exported {n} messages to {args.out}")
    return 0


def cmd_import(args) -> int:
    from hippo import Memory

    with Memory(args.path, namespace=args.namespace) as mem:
        n = mem.import_(args.file)
    print(f"imported {n} messages into {args.namespace}")
    return 0


def cmd_check(args) -> int:
    """Verify every structure of the store; with --repair rebuild what is derived (and accept the loss of a damaged
    write-ahead log after keeping a copy of it). Exit status 0: nothing left damaged, 1: damage remains."""
    from hippo import Memory, NotFound
    from hippo.store import wal

    if not os.path.isfile(args.path):
        raise NotFound(f"path {args.path!r}: no store file there")
    set_aside = None
    try:
        mem = Memory(args.path, read_only=not args.repair)
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
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    else:
        for ns, sections in report["namespaces"].items():
            for name, sec in sections.items():
                state = "damaged" if sec["damaged"] and not sec["rebuilt"] else "rebuilt" if sec["rebuilt"] else "ok"
                print(f"{ns:<24} {name:<14} {state:<8} {len(sec['damaged'])} problem(s)")
                for d in sec["damaged"][:5]:
                    print(f"{'':<24}   - {d.get('problem', d)}")
        for name in ("file", "wal"):
            if report[name]["damaged"] or report[name]["rebuilt"]:
                print(f"{'(store)':<24} {name:<14} {report[name]['damaged']} {report[name]['rebuilt']}")
        print("ok" if report["ok"] else "damaged: " + ", ".join(report["damaged"]))
    return 0 if report["ok"] else 1


def cmd_demo(args) -> int:
    from hippo import Memory, tokenizer

    with resources.files("hippo").joinpath("data/demo_conversation.jsonl").open(encoding="utf-8") as f:
        items = [json.loads(line) for line in f if line.strip()]
    print("hippo demo: a four-session conversation, stored offline with zero LLM calls\n")
    with Memory(None, namespace="demo") as mem:
        t = time.perf_counter()
        mem.add_many(items)
        ingest_ms = (time.perf_counter() - t) * 1e3
        st = mem.stats()
        print(f"ingested {st['messages']} messages / {st['tokens']} tokens in {ingest_ms:.1f} ms "
              f"(content DWM {st['content_dwm_bytes']} B, signature DWM {st['signature_dwm_bytes']} B)\n")
        for q in DEMO_QUESTIONS:
            r = mem.recall(q, budget_tokens=args.budget)
            print(f"Q: {q}")
            print("   " + r.text.replace("\n", "\n   "))
            print(f"   -- {r.tokens} tokens (budget {args.budget}), {len(r.messages)} messages, "
                  f"{r.timings['total_ms']:.2f} ms\n")
        hits = mem.search("greyhound rescue", k=3)
        print("search('greyhound rescue'):")
        for h in hits:
            print(f"   {h.score:.4f}  {h.speaker}: {h.text}")
        assert tokenizer.count_tokens(r.text) <= args.budget
    return 0


def cmd_bench(argv: list[str]) -> int:
    try:
        from hippo import bench
    except ImportError:
        print("hippo: error: the benchmarks are not part of the installed package; run `make bench` or "
              "`hippo bench` from a source checkout", file=sys.stderr)
        return 2
    return bench.main(argv)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hippo", description="Succinct, offline-first memory for AI agents.")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="ingest a sample conversation and answer questions from memory")
    d.add_argument("--budget", type=int, default=160)
    d.set_defaults(func=cmd_demo)

    i = sub.add_parser("ingest", help="add messages from a JSONL file or a LoCoMo-format JSON file")
    i.add_argument("file")
    _store_args(i)
    i.add_argument("--batch", type=int, default=500)
    i.add_argument("--split", action="store_true", help="LoCoMo: one namespace per conversation")
    i.set_defaults(func=cmd_ingest)

    s = sub.add_parser("search", help="ranked messages for a query")
    s.add_argument("query")
    _store_args(s)
    s.add_argument("-k", type=int, default=10)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_search)

    r = sub.add_parser("recall", help="a prompt-ready context for a query under a token budget")
    r.add_argument("query")
    _store_args(r)
    r.add_argument("--budget", type=int, default=2000)
    r.set_defaults(func=cmd_recall)

    st = sub.add_parser("stats", help="sizes and bytes per token")
    _store_args(st)
    st.set_defaults(func=cmd_stats)

    e = sub.add_parser("export", help="write a namespace to a JSONL export file")
    e.add_argument("out")
    _store_args(e)
    e.set_defaults(func=cmd_export)

    im = sub.add_parser("import", help="add the messages of a JSONL export file")
    im.add_argument("file")
    _store_args(im)
    im.set_defaults(func=cmd_import)

    ck = sub.add_parser("check", help="verify every chunk, row, snapshot and namespace; --repair rebuilds what is "
                                      "derived")
    ck.add_argument("--path", default=os.environ.get("HIPPO_PATH", "hippo.db"),
                    help="store file (default: $HIPPO_PATH or ./hippo.db)")
    ck.add_argument("--repair", action="store_true", help="rebuild derived structures (the store is opened writable)")
    ck.add_argument("--json", action="store_true", help="print the full report as JSON")
    ck.set_defaults(func=cmd_check)

    sub.add_parser("bench", help="benchmarks: kernels, locomo, scale (see `hippo bench --help`)", add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        return cmd_bench(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except HippoError as exc:
        print(f"hippo: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"hippo: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
