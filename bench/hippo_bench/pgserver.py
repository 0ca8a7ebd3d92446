"""A throwaway PostgreSQL server for the tests and ``hippo bench postgres``: ``initdb`` into a temporary folder and
``pg_ctl start`` on a unix socket in that folder (no TCP port), stopped and removed afterwards.

PostgreSQL refuses to run as root, so when this process is root the server's files belong to the ``postgres`` user
and every server binary runs through ``runuser -u postgres``. The server is tuned for throwaway data: ``fsync`` is
off (a crash of the machine loses the server, which is thrown away anyway) unless ``durable=True`` (benchmarks, so that
a commit costs what it costs in production); everything else is PostgreSQL's default.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

SERVER_BINARIES = ("initdb", "pg_ctl", "postgres")


def find_bindir() -> str | None:
    """The folder holding initdb / pg_ctl / postgres (``$PG_BINDIR``, then ``PATH``, then Debian's layout)."""
    candidates = [os.environ.get("PG_BINDIR", "")]
    found = shutil.which("pg_ctl")
    if found:
        candidates.append(os.path.dirname(os.path.realpath(found)))
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if folder and all(os.access(os.path.join(folder, b), os.X_OK) for b in SERVER_BINARIES):
            return folder
    return None


def unavailable_reason() -> str | None:
    """Why no throwaway server can be started here, or None when one can."""
    if find_bindir() is None:
        return ("PostgreSQL server binaries (initdb, pg_ctl, postgres) were not found on PATH, in $PG_BINDIR or in "
                "/usr/lib/postgresql/*/bin; install PostgreSQL (Debian: apt-get install postgresql) to run these tests")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root needs a 'postgres' user to own the throwaway server (PostgreSQL refuses root)"
        if shutil.which("runuser") is None:
            return "running as root needs runuser (util-linux) to start the server as the 'postgres' user"
    return None


class PgServer:
    """One throwaway server. ``url(dbname)`` is a libpq URL on the server's unix socket."""

    def __init__(self, *, max_connections: int = 200, durable: bool = False,
                 extra: dict[str, str] | None = None, env: dict[str, str] | None = None) -> None:
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        self.bindir = find_bindir()
        self.env = {**os.environ, **env} if env else None  # the server's environment (LOCPATH for its locales ...)
        self.root = Path(tempfile.mkdtemp(prefix="hippo-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root
        self.log = self.root / "server.log"
        self.user = "postgres"
        self._as_root = os.geteuid() == 0
        if self._as_root:
            pw = pwd.getpwnam("postgres")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
        else:
            self.user = pwd.getpwuid(os.geteuid()).pw_name
        self.root.chmod(0o700)
        settings = {"listen_addresses": "''", "unix_socket_directories": f"'{self.socket_dir}'",
                    "fsync": "on" if durable else "off",
                    "max_connections": str(max_connections), "shared_buffers": "64MB"}
        settings.update(extra or {})
        self.options = " ".join(f"-c {k}={v}" for k, v in settings.items())
        self._run("initdb", "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8", "--locale=C",
                  "--no-sync", "--no-instructions")
        self.start()

    def _run(self, binary: str, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        cmd = [os.path.join(self.bindir, binary), *args]
        if self._as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.root,
                              stdin=subprocess.DEVNULL, env=self.env)
        if check and proc.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{binary} failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}"
                               f"\n{log}")
        return proc

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", self.options, "-w", "-t", "60", "start")

    def restart(self) -> None:
        """Stop the server (fast: every session is ended) and start it again."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", self.options, "-m", "fast", "-w",
                  "-t", "60", "restart")

    def stop(self, mode: str = "fast", wait: bool = True) -> None:
        """Stop the server (``mode``: smart, fast or immediate); ``wait=False`` returns once the server was told (a
        smart shutdown then waits for the open sessions, refusing new ones)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w" if wait else "-W", "-t", "60", "stop", check=False)

    def url(self, dbname: str = "postgres", **params: str) -> str:
        query = "&".join([f"host={self.socket_dir}", *(f"{k}={v}" for k, v in params.items())])
        return f"postgresql://{self.user}@/{dbname}?{query}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its name."""
        import psycopg

        name = name or "db_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def close(self) -> None:
        self.stop("immediate")
        deadline = time.monotonic() + 10
        while (self.data / "postmaster.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "PgServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def find_pgbouncer() -> str | None:
    """The pgbouncer binary (``$PGBOUNCER``, then ``PATH``, then Debian's /usr/sbin), or None."""
    for candidate in (os.environ.get("PGBOUNCER", ""), shutil.which("pgbouncer") or "", "/usr/sbin/pgbouncer"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class PgBouncer:
    """A pgbouncer in front of a :class:`PgServer`, on a unix socket of its own (port ``port`` names the socket
    file), pooling in ``pool_mode`` (default ``transaction``: a server connection per transaction, so no session
    state survives between transactions); ``settings``: more lines of its ``[pgbouncer]`` section
    (``query_wait_timeout``, ``server_login_retry`` ...). ``url(dbname)`` connects through it."""

    def __init__(self, server: PgServer, dbname: str, *, pool_mode: str = "transaction", port: int = 6544,
                 pool_size: int = 4, settings: dict[str, str] | None = None) -> None:
        binary = find_pgbouncer()
        if binary is None:
            raise RuntimeError("pgbouncer was not found (Debian: apt-get install pgbouncer)")
        self.server, self.port, self.dbname = server, port, dbname
        self.dir = server.root / f"pgbouncer-{port}"
        self.dir.mkdir()
        (self.dir / "users.txt").write_text(f'"{server.user}" ""\n')
        ini = self.dir / "pgbouncer.ini"
        ini.write_text(textwrap.dedent(f"""\
            [databases]
            {dbname} = host={server.socket_dir} dbname={dbname} user={server.user}
            [pgbouncer]
            listen_addr =
            listen_port = {port}
            unix_socket_dir = {self.dir}
            auth_type = trust
            auth_file = {self.dir / "users.txt"}
            pool_mode = {pool_mode}
            default_pool_size = {pool_size}
            max_client_conn = 200
            ignore_startup_parameters = extra_float_digits,options
            logfile = {self.dir / "pgbouncer.log"}
            pidfile = {self.dir / "pgbouncer.pid"}
            """) + "".join(f"{k} = {v}\n" for k, v in (settings or {}).items()))
        self.log = self.dir / "pgbouncer.log"
        if server._as_root:
            pw = pwd.getpwnam("postgres")
            for path in (self.dir, ini, self.dir / "users.txt"):
                os.chown(path, pw.pw_uid, pw.pw_gid)
        cmd = [binary, "-d", str(ini)]
        if server._as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        path = self.dir / f".s.PGSQL.{port}"
        deadline = time.monotonic() + 20
        while not _accepting(path) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not _accepting(path):
            log = (self.dir / "pgbouncer.log").read_text(errors="replace")[-2000:] \
                if (self.dir / "pgbouncer.log").exists() else ""
            raise RuntimeError(f"pgbouncer did not start ({proc.returncode}): {proc.stderr.strip()}\n{log}")

    def url(self, **params: str) -> str:
        query = "&".join([f"host={self.dir}", f"port={self.port}", *(f"{k}={v}" for k, v in params.items())])
        return f"postgresql://{self.server.user}@/{self.dbname}?{query}"

    def close(self) -> None:
        pid_file = self.dir / "pgbouncer.pid"
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text().strip()), 15)
            except (ValueError, ProcessLookupError):
                pass
            deadline = time.monotonic() + 10
            while pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.02)


def _accepting(path: Path) -> bool:
    """Whether a server accepts connections on the unix socket ``path``: the file appears when the server binds it,
    a moment before it listens, and a client connecting in between is refused."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(path))
        except OSError:
            return False
    return True
