"""Plumbing shared by the commands: store and output arguments, opening a store, JSON output, confirmation."""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys
from datetime import datetime
from typing import Any, Callable

from hippo import InvalidInput, NotFound, StoreError
from hippo.index.coindex import ROLES
from hippo.store.opening import is_postgres_url

__all__ = ["API_NAMES", "Aborted", "add_filter_args", "in_cli_terms", "messages", "add_json_arg", "add_store_args",
           "add_time_args", "confirm", "filter_from", "may_write", "note_if_empty", "open_store", "output", "time_kwargs"]


class Aborted(Exception):
    """The user declined a confirmation or interrupted a command; nothing was changed."""


def messages(n: int) -> str:
    """``"1 message"``, ``"3 messages"``."""
    return f"{n} message" if n == 1 else f"{n} messages"


def positive_int(text: str) -> int:
    """An ``argparse`` type: a whole number >= 1. The option's own name is in the error ("argument --budget: ..."),
    not the name of the API argument it becomes (``budget_tokens``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


# The API's name of an argument -> the dest of the option or argument of the command line it comes from, where the
# two differ (``recall --budget`` is ``budget_tokens``). A command whose argument is another one's (``export OUT``
# is the ``path`` of Memory.export, not --path) says so with ``set_defaults(api_names={...})``.
API_NAMES = {"budget_tokens": "budget", "message_id": "id", "query_or_entity": "query", "topic_id": "topic"}


# How the API's messages about a bad argument open: the argument's name, then what is wrong with it ("since must
# be ...", "asked_at 'x' is not an ISO-8601 date/time", "path 'x' is the store file itself"); the second name of a
# comparison ("since (...) must be earlier than until (...)") or the file a write failed at ("cannot write the
# export file at path 'x'"); a place inside it ("filter['speaker']['$in'] must be
# a list", "filter: unknown operator '$bad'"). Not a message that merely starts with a noun that is also an
# argument's name ("id 7 is not a message of namespace 'a'", "topic 9 does not exist"), nor one that starts with a
# file the user named (``hippo ingest session`` of a file called session: "session: no such file").
_FAULT = re.compile(r"^()([a-z_]+)(?= must | contains | is nested | \(|\[|: | \S.*? is (?:not an ISO-8601|no offset|"
                    r"out of range|the store file itself|not a regular file|not a readable)|[^:]*: (?:its|the) time "
                    r"zone|[^:]*: its folder does not exist)")
_OTHER = re.compile(r"(\bthan |\bfile at )([a-z_]+)(?= \(| ')")


def in_cli_terms(message: str, parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """``message`` of an error the API raised, naming the option or argument the user typed instead of the API's
    argument it became: ``asked_at 'x' is not ...`` -> ``--asked-at 'x' is not ...``, ``message_id must be >= 0``
    -> ``ID must be >= 0``. The API's messages open with the argument's name (and a comparison of two names them
    both: ``since (...) must be earlier than until (...)``); a name that is none of the command's is left as it
    is."""
    shown: dict[str, str] = {}
    for action in parser._actions:
        if action.dest in (argparse.SUPPRESS, "help") or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            shown[action.dest] = max(action.option_strings, key=len)
        else:
            shown[action.dest] = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    aliases = {**API_NAMES, **getattr(args, "api_names", {})}
    typed = {v for a in parser._actions if not a.option_strings and isinstance(v := getattr(args, a.dest, None), str)}

    def spelled(name: str) -> str | None:
        return None if name in typed else shown.get(aliases.get(name, name))

    def swap(match: re.Match) -> str:
        cli = spelled(match.group(2))
        return match.group(0) if cli is None else match.group(1) + cli

    message = _FAULT.sub(swap, message, count=1)
    return _OTHER.sub(swap, message, count=1)


def add_store_args(p: argparse.ArgumentParser, *, namespace: bool = True) -> None:
    p.add_argument("--path", default=os.environ.get("HIPPO_PATH", "hippo.db"),
                   help="store file or postgresql:// URL (default: $HIPPO_PATH or ./hippo.db)")
    if namespace:
        p.add_argument("--namespace", "-n", default=os.environ.get("HIPPO_NAMESPACE", "default"),
                       help="namespace inside the store (default: $HIPPO_NAMESPACE or 'default')")


def add_json_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true",
                   help="machine-readable output: one JSON document on stdout (shape: docs/api.md, 'Command line')")


def add_filter_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--filter", metavar="JSON", help='metadata filter, e.g. \'{"speaker": "Ann"}\' (docs/api.md)')
    p.add_argument("--speaker", help="only messages of this speaker")
    p.add_argument("--session", help="only messages of this session_id")
    # the roles a message can have: a typo ("assitant") would match nothing, an empty answer like "none stored"
    p.add_argument("--role", choices=ROLES, help="only messages with this role (user, assistant, system, tool)")


def add_time_args(p: argparse.ArgumentParser, *, as_of: bool = True, asked_at: bool = False) -> None:
    p.add_argument("--since", help="event time at or after this (ISO-8601 date or time)")
    p.add_argument("--until", help="event time before this (ISO-8601)")
    if as_of:
        p.add_argument("--as-of", dest="as_of", help="answer as the memory stood at this ingestion time (ISO-8601)")
    if asked_at:
        p.add_argument("--asked-at", dest="asked_at",
                       help="when the question is asked: its 'yesterday' or 'last week' count from this time "
                            "(ISO-8601; default: when the latest message was said); --asked-at now for the clock")


def filter_from(args: argparse.Namespace) -> dict[str, Any] | None:
    """The filter dict of ``--filter`` plus ``--speaker`` / ``--session`` / ``--role``, or None."""
    spec: dict[str, Any] = {}
    raw = getattr(args, "filter", None)
    if raw is not None:
        try:
            spec = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise InvalidInput(f"--filter must be a JSON object: {exc}") from None
        if not isinstance(spec, dict):
            raise InvalidInput(f"--filter must be a JSON object, got {type(spec).__name__}")
    for flag, key in (("speaker", "speaker"), ("session", "session_id"), ("role", "role")):
        value = getattr(args, flag, None)
        if value is not None:
            if key in spec:
                raise InvalidInput(f"--{flag} and --filter both constrain {key!r}; give it once")
            spec[key] = value
    return spec or None


def time_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    out = {k: getattr(args, k) for k in ("since", "until", "as_of", "asked_at") if getattr(args, k, None) is not None}
    if out.get("asked_at") == "now":
        out["asked_at"] = datetime.now().astimezone()  # the machine's clock and offset: the asker's calendar
    return out


def open_store(args: argparse.Namespace, *, create: bool = False):
    """``hippo.Memory`` on ``--path`` / ``--namespace``. Commands that only read or delete refuse a missing file
    instead of creating an empty store under a mistyped name."""
    from hippo import Memory

    path = args.path
    if not path or not isinstance(path, str):
        raise InvalidInput("--path must name a store file or a postgresql:// URL")
    if is_postgres_url(path):
        if not create:  # a read-only open finds the store without creating its schema (NotFound otherwise)
            Memory(path, read_only=True).close()
    elif not create and not os.path.lexists(path):
        raise NotFound(f"no store at --path {path!r} (`hippo ingest` or `hippo import` creates one)")
    namespace = args.namespace if hasattr(args, "namespace") else "default"
    try:
        return Memory(path, namespace=namespace)
    except StoreError:
        if create or is_postgres_url(path) or may_write(path):
            raise
    # a store on read-only media, or one this user may read but not write: read commands answer from it as
    # Memory(read_only=True) does; a command that writes raises ReadOnlyError naming what it would write
    return Memory(path, namespace=namespace, read_only=True)


def may_write(path: str) -> bool:
    """Whether this process may write the store file and create its -wal / -shm beside it."""
    folder = os.path.dirname(os.path.abspath(path))
    return os.access(path, os.W_OK) and os.access(folder, os.W_OK | os.X_OK)


def note_if_empty(mem: Any) -> None:
    """After an empty answer: when the namespace itself holds no messages (``-n`` left out or mistyped, so the
    question went to another namespace than the one ingested), say so on stderr, naming the store's namespaces.
    The answer on stdout stays what it is."""
    if mem.count():
        return
    names = mem.namespaces()
    shown = ", ".join(repr(n) for n in names[:10]) + (", ..." if len(names) > 10 else "")
    print(f"hippo: namespace {mem.namespace!r} holds no messages in {mem.path} "
          f"({'its namespaces: ' + shown + '; choose one with -n' if names else 'the store holds none'})",
          file=sys.stderr)


def _unicode(stream: Any) -> bool:
    """Whether ``stream`` encodes every character (a UTF codec); unknown counts as yes."""
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return True


def tolerate_narrow_encodings() -> None:
    """Let standard output and error print text their encoding cannot hold (a Chinese chat on a Windows code page,
    or redirected under PYTHONIOENCODING=latin-1) as backslash escapes instead of failing the whole command on the
    first such character."""
    for stream in (sys.stdout, sys.stderr):
        if not _unicode(stream) and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a detached or closed stream: left as it is
                pass


def output(args: argparse.Namespace, value: Any, human: Callable[[Any], None]) -> int:
    """Print ``value`` as JSON with ``--json`` (see :mod:`hippo.records`), else through ``human``."""
    if getattr(args, "json", False):
        from hippo.records import jsonable

        # JSON's \\u escapes keep every character when standard output cannot encode it (a Windows code page,
        # PYTHONIOENCODING=latin-1): the same value, still valid JSON
        ascii_only = not _unicode(sys.stdout)
        sys.stdout.write(json.dumps(jsonable(value), ensure_ascii=ascii_only, indent=2) + "\n")
    else:
        human(value)
    return 0


def confirm(action: str, yes: bool) -> None:
    """Go ahead if ``--yes`` was given or the user answers yes on a terminal; else raise. ``action`` describes the
    change, e.g. "forget 3 messages of namespace 'a' in x.db"."""
    if yes:
        return
    try:
        interactive = sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if not interactive:
        raise InvalidInput(f"refusing to {action} without confirmation: pass --yes (standard input is not a terminal)")
    sys.stderr.write(f"{action[0].upper()}{action[1:]}? [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if answer.strip().lower() not in ("y", "yes"):
        raise Aborted("nothing was changed")
