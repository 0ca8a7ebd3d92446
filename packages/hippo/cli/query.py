"""Read commands: ``search``, ``recall``, ``stats``."""

from __future__ import annotations

import json
import sys


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
