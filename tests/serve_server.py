"""A real ``recallwise serve`` process on a free loopback port, for the service's tests."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def client(self, key: str | None = None, **kwargs: object) -> httpx.Client:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        kwargs.setdefault("timeout", 30.0)
        return httpx.Client(base_url=self.url, headers=headers, **kwargs)  # type: ignore[arg-type]


@contextmanager
def serve(store: str, *args: str, log_dir: Path, timeout_s: float = 90.0) -> Iterator[Server]:
    """Start ``recallwise serve --store STORE ARGS`` and wait until ``/readyz`` answers 200."""
    port = free_port()
    log = log_dir / f"serve-{port}.log"
    command: Sequence[str] = [
        sys.executable, "-m", "recallwise", "serve", "--store", store, "--port", str(port), *args
    ]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink)
    server = Server(f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"recallwise serve exited {process.returncode}: {server.stderr()[-800:]}")
            try:
                if httpx.get(server.url + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"recallwise serve not ready in {timeout_s} s: {server.stderr()[-800:]}")
            time.sleep(0.2)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=40)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def persona_server(
    work: Path,
    name: str,
    *,
    actors: Sequence[str] = ("demo_user",),
    keys: Path | None = None,
    extra: Sequence[str] = (),
) -> Iterator[Server]:
    """``recallwise serve`` over a fresh SQLite store ``work/NAME.db`` seeded with the demo persona
    for each of ``actors`` (``"a:demo_user"``: tenant a's), behind ``keys`` when given, with the
    ``extra`` arguments (``--log FILE``)."""
    from recallwise.demo import seed_persona
    from recallwise.stores import open_store

    url = f"sqlite:///{work}/{name}.db"
    with open_store(url) as store:
        for actor in actors:
            seed_persona(store, actor)
    args = ("--keys", str(keys)) if keys is not None else ()
    with serve(url, *args, *extra, log_dir=work) as server:
        yield server
