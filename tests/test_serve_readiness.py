"""``/readyz`` and the store's circuit, and ``--access-log``.

Readiness goes through the breaker recall uses: not ready while the circuit is open (recall would
inject nothing), and after the cool-down the readiness check is the trial call that closes it. The
service is driven in-process with a fake clock on the breaker; ``--access-log`` on a real server.
"""

from __future__ import annotations

from typing import Any

import pytest

from recallwise.demo import seed_persona
from recallwise.errors import StoreError
from recallwise.policy.breaker import CircuitBreaker
from recallwise.stores.sqlite import SQLiteStore

pytest.importorskip("fastapi")

from recallwise.serve.access import LOCAL
from recallwise.serve.models import RecallOut
from recallwise.serve.service import MemoryService
from serve_server import serve

DRINK = "I'd like a drink, what should I get?"


class Switchable:
    """A remote store (``local = False``: behind the policy's deadline and breaker) over a real
    SQLite file, whose database can be switched off."""

    local = False

    def __init__(self, inner: SQLiteStore) -> None:
        self.inner = inner
        self.url = "remote+" + inner.url
        self.down = False
        self.calls = 0

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.down:
            raise StoreError("connection refused", kind="unavailable")
        return getattr(self.inner, name)(*args, **kwargs)

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("search", *args, **kwargs)

    def count_records(self) -> int:
        return int(self._call("count_records"))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def service(tmp_path):
    inner = SQLiteStore(f"sqlite:///{tmp_path}/m.db")
    seed_persona(inner)
    store = Switchable(inner)
    service = MemoryService.open(store, decider=None, batch_embeddings=False)
    clock = Clock()
    breaker = CircuitBreaker(threshold=3, cooldown_s=1.0, clock=clock)
    service.policy.store_breaker = service.policy.searcher.guard.breaker = breaker
    yield service, store, clock
    service.close()


def _recall(service: MemoryService) -> RecallOut:
    return service.recall(LOCAL, "demo_user", DRINK)


def test_not_ready_while_the_circuit_is_open_and_the_check_is_its_trial(service) -> None:
    service, store, clock = service
    assert service.ready().embedder
    store.down = True
    for _ in range(3):
        assert _recall(service).records == []
    breaker = service.policy.store_breaker
    assert breaker.state == "open"
    store.down = False  # the database is back, but the circuit does not know yet
    calls = store.calls
    with pytest.raises(StoreError, match="circuit is open"):
        service.ready()
    assert store.calls == calls  # refused without asking the store
    assert "circuit open" in _recall(service).errors[0]
    clock.now += 1.0  # the cool-down is over: the readiness check is the trial call
    assert service.ready().embedder
    assert breaker.state == "closed" and store.calls == calls + 1
    assert _recall(service).records  # ready means recall works


def test_failing_readiness_checks_open_the_circuit(service) -> None:
    """A replica nobody sends recalls to still finds out its store is down, and back."""
    service, store, clock = service
    store.down = True
    for _ in range(3):
        with pytest.raises(StoreError, match="connection refused"):
            service.ready()
    assert service.policy.store_breaker.state == "open"
    store.down = False
    clock.now += 1.0
    assert service.ready().embedder and service.policy.store_breaker.state == "closed"


def test_a_failed_trial_is_not_ready_and_reopens_the_circuit(service) -> None:
    service, store, clock = service
    store.down = True
    for _ in range(3):
        _recall(service)
    clock.now += 1.0
    with pytest.raises(StoreError, match="connection refused"):
        service.ready()  # the trial, failing
    breaker = service.policy.store_breaker
    assert breaker.state == "open" and breaker.opened == 2


@pytest.mark.slow
@pytest.mark.parametrize("access_log", [True, False], ids=["access-log", "quiet"])
def test_access_log_prints_one_line_per_request(tmp_path, access_log: bool) -> None:
    url = f"sqlite:///{tmp_path}/m.db"
    with SQLiteStore(url) as store:
        seed_persona(store)
    args = ("--access-log",) if access_log else ()
    with serve(url, *args, log_dir=tmp_path) as server, server.client() as c:
        for _ in range(3):
            assert c.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK}).status_code == 200
        assert c.get("/v1/records", params={"actor_id": "nobody", "limit": 1}).status_code == 200
        output = server.stderr()
    recall_lines = [line for line in output.splitlines() if '"POST /v1/recall HTTP/1.1" 200' in line]
    assert len(recall_lines) == (3 if access_log else 0)
    assert ('"GET /v1/records?actor_id=nobody&limit=1 HTTP/1.1" 200' in output) is access_log
