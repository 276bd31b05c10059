"""A real ``recallwise serve`` process on a free loopback port, for the service's tests."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

from recallwise.bench.serve import ServeProcess


class Server(ServeProcess):
    """A ``recallwise serve`` process (:class:`recallwise.bench.serve.ServeProcess`) with an HTTP client."""

    def client(self, key: str | None = None, **kwargs: object) -> httpx.Client:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        kwargs.setdefault("timeout", 30.0)
        return httpx.Client(base_url=self.url, headers=headers, **kwargs)  # type: ignore[arg-type]


@contextmanager
def serve(store: str, *args: str, log_dir: Path, timeout_s: float = 90.0) -> Iterator[Server]:
    """Start ``recallwise serve --store STORE ARGS`` and wait until ``/readyz`` answers 200."""
    server = Server(store, args, log_dir)
    try:
        server.wait_ready(timeout_s)
        yield server
    finally:
        server.stop()


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
