"""Moving messages in and out: ``ingest`` (JSONL, LoCoMo), ``import`` and ``export`` (hippo export files)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from typing import Any, Iterator

from hippo.cli._common import _progress
from hippo.errors import InvalidInput


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
