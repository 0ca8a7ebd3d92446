"""What a PostgreSQL server answers a new connection right now, read in its wire protocol: the account of a failed
connection attempt that does not depend on the language of any message.

libpq reports a failed connection as text only: no SQLSTATE comes with it, and the text is in the language of the
server's ``lc_messages`` (what the server sent: "the database system is starting up", 57P03) or of the client's locale
(what libpq and the operating system say: "Connection refused"). :func:`answer` asks again the way libpq asked: it
connects a socket to the same host and port (the errno of a refused or missing socket) and sends a startup message for
the same user and database, reading the server's first answer: an error carries its SQLSTATE, whatever the language of
its text. It never authenticates: an answer asking for a password ends the probe, and a server that lets the user in
without one (``trust``) is told goodbye as soon as it says it is ready.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import struct
from dataclasses import dataclass

# What a connection attempt meets while a server is down, restarting or cannot be reached yet
_UNREACHABLE_ERRNOS = frozenset({errno.ENOENT, errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.EPIPE,
                                 errno.ETIMEDOUT, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EHOSTDOWN,
                                 errno.ENETDOWN, errno.EAGAIN})
_PROTOCOL_3 = 196608
_MAX_MESSAGE = 1 << 16  # longer than any answer to a startup message (an error's text, a parameter's value)


@dataclass(frozen=True)
class Answer:
    """What the server answered: ``reachable`` False when no server took the connection (``errno`` says why, None
    for a name that does not resolve, a timeout or a connection closed before any answer); otherwise ``sqlstate`` and
    ``message`` of the error it sent (None when it sent none: it asked for a password or let the user in)."""

    reachable: bool
    sqlstate: str | None = None
    message: str | None = None
    errno: int | None = None

    @property
    def unreachable_for_now(self) -> bool:
        """No server took the connection for a reason that passes (refused, no socket, reset, unreachable), or the
        server is starting up, shutting down or recovering (57P03) or ended the connection as it does when it stops
        (57P01, 57P02)."""
        if not self.reachable:
            return self.errno is None or self.errno in _UNREACHABLE_ERRNOS
        return self.sqlstate in ("57P01", "57P02", "57P03")


def _socket(host: str, hostaddr: str, port: int, timeout: float) -> socket.socket:
    if not hostaddr and (host.startswith("/") or host.startswith("@")):  # a unix socket's folder (@: abstract)
        path = f"{host}/.s.PGSQL.{port}"
        if path.startswith("@"):
            path = "\x00" + path[1:]
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except BaseException:
            sock.close()
            raise
        return sock
    return socket.create_connection((hostaddr or host or "localhost", port), timeout=timeout)


def _read_exactly(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        part = sock.recv(n - len(data))
        if not part:
            return None
        data += part
    return data


def _fields(body: bytes) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in body.split(b"\x00"):
        if item:
            out[chr(item[0])] = item[1:].decode("utf-8", "replace")
    return out


def answer(host: str, hostaddr: str, port: int, user: str, dbname: str, timeout: float = 5.0) -> Answer:
    """What the server at ``host`` (a name, an address or a unix socket's folder; ``hostaddr`` when libpq had one)
    and ``port`` answers a startup message for ``user`` and ``dbname`` now (see :class:`Answer`)."""
    try:
        sock = _socket(host, hostaddr, port, timeout)
    except socket.gaierror:
        return Answer(reachable=False)
    except (socket.timeout, TimeoutError):
        return Answer(reachable=False)
    except OSError as exc:
        return Answer(reachable=False, errno=exc.errno if exc.errno is not None else -1)
    with sock:
        try:
            params = b"user\x00" + user.encode() + b"\x00database\x00" + dbname.encode() + b"\x00" \
                + b"application_name\x00hippo connection check\x00\x00"
            sock.sendall(struct.pack("!ii", 8 + len(params), _PROTOCOL_3) + params)
            while True:
                head = _read_exactly(sock, 5)
                if head is None:  # closed without an answer: the server went away under the probe
                    return Answer(reachable=False)
                kind, length = head[:1], struct.unpack("!i", head[1:])[0]
                if not 4 <= length <= _MAX_MESSAGE:
                    return Answer(reachable=True)  # not a PostgreSQL server's answer: nothing to read from it
                body = _read_exactly(sock, length - 4)
                if body is None:
                    return Answer(reachable=False)
                if kind == b"E":
                    fields = _fields(body)
                    return Answer(reachable=True, sqlstate=fields.get("C"), message=fields.get("M"))
                if kind == b"R" and body[:4] != b"\x00\x00\x00\x00":
                    return Answer(reachable=True)  # it asks for a password (or another exchange): it is up
                if kind == b"Z":  # let in and ready for a query
                    with contextlib.suppress(OSError):
                        sock.sendall(b"X\x00\x00\x00\x04")
                    return Answer(reachable=True)
                # AuthenticationOk, ParameterStatus, BackendKeyData, a notice, a protocol negotiation: read on
        except (socket.timeout, TimeoutError):
            return Answer(reachable=False)
        except OSError as exc:
            return Answer(reachable=False, errno=exc.errno if exc.errno is not None else -1)

