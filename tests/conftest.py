"""Shared fixtures: real SQLite files in a temp dir, the real offline embedder, a hashing double."""

from __future__ import annotations

import os
import uuid

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from recallwise.embeddings import HashingEmbedder, default_embedder
from recallwise.stores import SQLiteStore, open_store


@pytest.fixture
def hashing() -> HashingEmbedder:
    return HashingEmbedder(64)


@pytest.fixture
def store(tmp_path, hashing):
    """A real SQLite file with the instant hashing embedder (for plumbing tests)."""
    s = SQLiteStore(f"sqlite:///{tmp_path}/t.db", embedder=hashing)
    yield s
    s.close()


@pytest.fixture(scope="session")
def minilm():
    return default_embedder()


@pytest.fixture
def real_store(tmp_path, minilm):
    """A real SQLite file with the real offline embedder."""
    s = SQLiteStore(f"sqlite:///{tmp_path}/real.db", embedder=minilm)
    yield s
    s.close()


# ---- a real PostgreSQL with pgvector (tests/pg_server.py) ---------------------------------


#: Which PostgreSQL the session's tests ran against, for the closing summary.
_postgres_used: list[str] = []


def pytest_terminal_summary(terminalreporter) -> None:
    for description in _postgres_used:
        terminalreporter.write_line(f"PostgreSQL for the tests: {description}")


@pytest.fixture(scope="session")
def postgres_server():
    """A running PostgreSQL + pgvector: RECALLWISE_TEST_PG_URL's, or one started for the session.

    Where no server can start, the tests that need one are skipped with the reason, except in
    CI (RECALLWISE_CI=1), where that is a failure: CI must run them.
    """
    import pg_server

    external = pg_server.server_from_env()
    if external is not None:
        _postgres_used.append(external.description)
        yield external
        return
    try:
        import psycopg  # noqa: F401

        server = pg_server.start_server()
    except (ImportError, pg_server.ServerUnavailable) as exc:
        reason = f"no PostgreSQL for the tests: {exc} (tests/pg_server.py says what it tries)"
        if os.environ.get("RECALLWISE_CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    _postgres_used.append(server.description)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_url(postgres_server):
    """URL of the session's PostgreSQL (superuser)."""
    return postgres_server.url


# ---- where conformance tests put their stores (shared by the adapters' suites) -------------


class Location:
    """Where a test's stores live; ``open()`` returns one more store on the same data."""

    def __init__(self, kind: str, url: str, options: dict) -> None:
        self.kind, self.url, self.options = kind, url, options
        self.opened: list = []

    def open(self, embedder=None):
        store = open_store(self.url, embedder=embedder or HashingEmbedder(64), **self.options)
        self.opened.append(store)
        return store


@pytest.fixture(params=["sqlite", "postgres"])
def location(request, tmp_path):
    if request.param == "sqlite":
        loc = Location("sqlite", f"sqlite:///{tmp_path}/conformance.db", {})
        yield loc
    else:
        url = request.getfixturevalue("pg_url")
        loc = Location("postgres", url, {"schema": f"conformance_{uuid.uuid4().hex[:12]}"})
        yield loc
        for store in loc.opened:
            store.close()
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{loc.options["schema"]}" CASCADE')
        return
    for store in loc.opened:
        store.close()


@pytest.fixture(scope="module")
def work(request, tmp_path_factory):
    """A folder for one test module's servers, keys and logs."""
    return tmp_path_factory.mktemp(request.module.__name__.removeprefix("test_"))


@pytest.fixture(scope="module")
def local(work):
    """A real ``recallwise serve`` without keys over a store seeded with the demo persona (actor
    demo_user), one per test module (a module may define its own ``local``)."""
    from serve_server import persona_server

    with persona_server(work, "local") as server:
        yield server
