"""A real PostgreSQL going away under a running ``recallwise serve``, and the store's pool reconnecting.

The outage is driven by ``tests/pg_outage.py`` (which also prints RELIABILITY.md's figures); here
one short fast stop, and the behaviour is asserted, never its timings: during the outage recall
answers 200 with nothing in it, ``/readyz`` fails and a write is refused whole with a 503 naming
the store; afterwards recall comes back, and once ``/readyz`` says ready, recall is right.
"""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

import pg_server

psycopg_pool = pytest.importorskip("psycopg_pool")
pytest.importorskip("fastapi")

from recallwise.stores.postgres.connection import ReconnectingPool  # noqa: E402


def _durable_server() -> pg_server.PgServer:
    try:
        return pg_server.start_server(durable=True)
    except pg_server.ServerUnavailable as exc:
        reason = f"no PostgreSQL for the tests: {exc} (pip install -e '.[dev]')"
        if os.environ.get("RECALLWISE_CI"):
            pytest.fail(reason)  # as the pg_url fixture: CI must run it
        pytest.skip(reason)


def test_the_pool_caps_its_reconnection_back_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """psycopg_pool doubles the wait between attempts to reconnect (1, 2, 4, ... s); the store's
    pool waits at most ``reconnect_max_delay_s``. Against a closed port, every attempt it
    schedules is within the cap, and each is made (the next one is scheduled)."""
    scheduled: list[tuple[str, float]] = []
    lock = threading.Lock()
    original = psycopg_pool.ConnectionPool.schedule_task

    def spy(self: object, task: object, delay: float) -> None:
        with lock:
            scheduled.append((type(task).__name__, delay))
        original(self, task, delay)  # type: ignore[arg-type]

    monkeypatch.setattr(psycopg_pool.ConnectionPool, "schedule_task", spy)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pool = ReconnectingPool(
        f"postgresql://nobody@127.0.0.1:{port}/none?connect_timeout=1",
        min_size=1,
        open=False,
        reconnect_max_delay_s=0.05,
    )
    pool.open(wait=False)
    try:
        give_up = time.monotonic() + 60  # uncapped, five attempts would take 15 s
        while time.monotonic() < give_up:
            with lock:
                reconnects = [delay for name, delay in scheduled if name == "AddConnection"]
            if len(reconnects) >= 5:
                break
            time.sleep(0.05)
    finally:
        pool.close()
    assert len(reconnects) >= 5
    assert max(reconnects) <= 0.05  # uncapped, the fourth would be 8 s
    others = [delay for name, delay in scheduled if name != "AddConnection"]
    assert all(delay > 0.05 for delay in others)  # the periodic shrink keeps its own interval


@pytest.mark.slow
@pytest.mark.postgres
def test_a_service_through_a_database_outage(tmp_path) -> None:
    import pg_outage

    with _durable_server() as server, pg_outage.running_service(server, tmp_path) as service:
        outage = pg_outage.run_outage(server, service, outage_s=4.0, settle_s=2.0)
    recalls = outage.during(outage.recalls)
    assert recalls and all(c.status == 200 and not c.correct for c in recalls)
    assert all(c.status == 503 for c in outage.during(outage.readiness))
    writes = outage.during(outage.writes)
    assert writes and all(w.status == 503 for w in writes)
    for write in writes:  # refused without waiting for the pool's timeout; the answer names the store,
        # never its URL or SQL (those go to the server's log)
        assert write.message == "the store is unavailable (unavailable); nothing was written"
        assert "postgresql://" not in write.message
    # Afterwards: recall is back, /readyz says ready, and never before recall is right.
    assert outage.recalled is not None and outage.ready is not None
    assert outage.ready_wrong == []
    assert not [c for c in outage.recalls if outage.recalled <= c.at and not c.correct]
    # Every acknowledged write is stored and no refused one (a write lands whole or not at all).
    assert outage.acknowledged_stored == sum(w.status == 200 for w in outage.writes) > 0
    assert outage.refused_stored == 0
    assert outage.service_output.count('"POST /v1/recall HTTP/1.1" 200') == len(outage.recalls) + 1
