"""The ``hippo`` command line.

One module per group of commands: :mod:`~hippo.cli.ingest` (ingest, import, export), :mod:`~hippo.cli.query`
(search, recall, list, read, timeline, topics, namespaces, stats), :mod:`~hippo.cli.manage` (forget,
delete-namespace, consolidate), :mod:`~hippo.cli.demo`; ``hippo mcp`` runs :mod:`hippo.mcp_server` and ``hippo
bench`` the benchmarks, both imported only when asked for.

Every failure exits non-zero with one line on stderr (``hippo: error: ...``) and no traceback: 2 for bad input,
a missing file or a store error, 1 when the user declines a confirmation, 130 on Ctrl-C. ``HIPPO_DEBUG=1`` shows
the traceback of an unexpected error instead. The console script, ``python -m hippo`` and ``python -m hippo.cli`` enter
through :mod:`_hippo_cli`, which answers a Ctrl-C the same way while this package is still being imported.
"""

from __future__ import annotations

import argparse
import os
import sys

import hippo
from hippo import HippoError, NotFound, ReadOnlyError, StoreError
from hippo.cli import demo, ingest, manage, query
from hippo.cli._common import Aborted, add_store_args, in_cli_terms, may_write, tolerate_narrow_encodings
from hippo.cli.sources import locomo_items
from hippo.store.opening import is_postgres_url

__all__ = ["build_parser", "locomo_items", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2) rather than the usage block plus the error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see `{self.prog} --help`)\n")


def cmd_bench(argv: list[str]) -> int:
    try:
        import hippo_bench as bench
    except ImportError:
        print("hippo: error: the benchmarks are not part of the installed package; run `make bench` or "
              "`pip install -e bench` from a source checkout", file=sys.stderr)
        return 2
    return bench.main(argv)


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from hippo import mcp_server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "mcp":
            raise
        raise HippoError("`hippo mcp` needs the MCP SDK: pip install 'hippo-memory[mcp]'") from None
    if args.read_only and not is_postgres_url(args.path) and not os.path.lexists(args.path):
        raise NotFound(f"no store at --path {args.path!r} (--read-only serves an existing store; `hippo mcp` without "
                       f"it creates one)")
    try:
        return mcp_server.serve(path=args.path, user=args.user, transport=args.transport, host=args.host,
                                port=args.port, mount=args.mount, log_level=args.log_level, timezone=args.timezone,
                                read_only=args.read_only)
    except StoreError as exc:
        # a store on read-only media, or one this user may read but not write: the store's own advice names the
        # library's read_only=True, which is this command's --read-only
        if (args.read_only or isinstance(exc, ReadOnlyError) or is_postgres_url(args.path)
                or not os.path.isfile(args.path) or may_write(args.path)):
            raise
        raise StoreError(f"--path {args.path!r}: this user cannot write the store (read-only media, or no write "
                         f"permission on the file or its folder); pass --read-only to serve it read-only: search, "
                         f"recall, read, topics and timeline answer, add and forget answer an error") from None


def _mcp_parser(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser("mcp", help="serve one user's memory to MCP clients (stdio or streamable HTTP)",
                       description="A Model Context Protocol server with the tools add, search, recall, read, "
                                   "forget, topics and timeline over one namespace of the store: the user's. "
                                   "See docs/mcp.md for registering it with a client.")
    add_store_args(m, namespace=False)
    m.add_argument("--user", default=os.environ.get("HIPPO_USER", "default"),
                   help="whose memory: the namespace every tool works in (default: $HIPPO_USER or 'default')")
    m.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio",
                   help="stdio (a client starts the server; default) or streamable-http (a long-running server)")
    m.add_argument("--host", default="127.0.0.1", help="streamable-http: address to listen on (default 127.0.0.1)")
    m.add_argument("--port", type=int, default=8000, help="streamable-http: port (default 8000)")
    m.add_argument("--mount", default="/mcp", help="streamable-http: endpoint path (default /mcp)")
    m.add_argument("--timezone", default=None,
                   help="the user's time zone, an IANA name (America/New_York) or an offset from UTC (+05:30): a "
                        "question asked without asked_at is asked now on its calendar (default: the machine's)")
    m.add_argument("--read-only", action="store_true",
                   help="serve an existing store without writing to it (also one on read-only media or that this "
                        "user may not write): the read tools answer, add and forget answer an error")
    m.add_argument("--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
                   help="server log level on stderr (default WARNING)")
    m.set_defaults(func=cmd_mcp)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hippo", description="Succinct, offline-first memory for AI agents.")
    p.add_argument("--version", action="version", version=f"hippo {hippo.__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo.add_parsers(sub)
    ingest.add_parsers(sub)
    query.add_parsers(sub)
    manage.add_parsers(sub)
    _mcp_parser(sub)
    sub.add_parser("bench", help="benchmarks: kernels, locomo, scale (see `hippo bench --help`)", add_help=False)
    return p


def _command_parser(parser: argparse.ArgumentParser | None,
                    args: argparse.Namespace | None) -> argparse.ArgumentParser | None:
    """The parser of the command ``args`` ran (``hippo search``'s for a search), or None."""
    if parser is None or args is None:
        return None
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(getattr(args, "command", None))
    return None


def _fail(message: str, code: int = 2) -> int:
    print(f"hippo: error: {' '.join(str(message).split())}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (also for usage errors, which argparse would exit on)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    tolerate_narrow_encodings()
    parser = args = None
    try:
        if argv and argv[0] == "bench":  # its own parser; its usage errors and failures end as every command's
            return cmd_bench(argv[1:])
        parser = build_parser()
        args = parser.parse_args(argv)
        return args.func(args)
    except SystemExit as exc:  # --help, or a usage error already printed
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else _fail(exc.code))
    except Aborted as exc:
        print(f"hippo: {' '.join(str(exc).split())}", file=sys.stderr)
        return 130 if str(exc).startswith("interrupted") else 1
    except KeyboardInterrupt:
        print("hippo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of stdout went away (`hippo list | head`): not an error of ours; silence the flush at exit.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
    except HippoError as exc:
        command = _command_parser(parser, args)
        return _fail(exc if command is None else in_cli_terms(str(exc), command, args))
    except OSError as exc:
        return _fail(f"{exc.filename + ': ' if getattr(exc, 'filename', None) else ''}{exc.strerror or exc}")
    except RecursionError:
        return _fail("input nested too deeply")
    except Exception as exc:  # noqa: BLE001 - the contract is one line and no traceback, even for our own bugs
        if os.environ.get("HIPPO_DEBUG"):
            raise
        return _fail(f"unexpected {type(exc).__name__}: {exc} (set HIPPO_DEBUG=1 for the traceback)", 1)


if __name__ == "__main__":
    sys.exit(main())
