"""Load: 50 concurrent sessions x 20 turns against the embedded store, with the embedded decider
in process and with a real decision server on loopback (``sparrow-decider serve``).

Each session is a thread that, per turn, recalls (gate, route, search, judge, pack), stores
the user's message as an event, and every fifth turn writes a new record, so reads and
writes interleave. The run is bounded in count (1,000 turns) and time (a deadline); the test
reports turns/s, p50/p95/max turn latency, errors (must be 0) and records lost (must be 0).

The figures are printed (``pytest -m slow tests/test_reliability_load.py -s``) and, when
``RECALLWISE_LOAD_REPORT`` names a file, appended to it as JSON lines.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from recallwise import Event, MemoryRecord, RecallPolicy
from recallwise.bench.latency import MESSAGES
from recallwise.deciders import EmbeddedDecider, default_threshold
from recallwise.deciders.systemone import SystemOneDecider
from recallwise.stores import SQLiteStore

pytestmark = pytest.mark.slow

SESSIONS = 50
TURNS = 20
ACTORS = 10  # five sessions per actor
WRITE_EVERY = 5
#: the whole run must finish within this (it takes a fraction of it on a 2-core machine)
RUN_DEADLINE_S = 45.0
NAMESPACES = {
    "/facts/{actorId}": "facts about the user: home, family, pets, health, work",
    "/preferences/{actorId}": "the user's preferences: food, drink, travel, tools",
}
FACTS = [
    "The user lives in Lisbon with their partner.",
    "The user has a golden retriever called Biscuit.",
    "The user is allergic to peanuts.",
    "The user works as a backend engineer, mostly in Python.",
    "The user's sister is called Marta.",
    "The user runs 10 km every Saturday morning.",
]
PREFERENCES = [
    json.dumps({"context": context, "preference": preference, "categories": [category]})
    for context, preference, category in [
        ("Ordering drinks", "Prefers green tea, never coffee after noon", "drink"),
        ("Booking flights", "Always books an aisle seat", "travel"),
        ("Choosing restaurants", "Vegetarian, likes Thai food", "food"),
        ("Code reviews", "Wants type hints and small functions", "work"),
    ]
]


def _seed(store: SQLiteStore) -> None:
    records = []
    for a in range(ACTORS):
        actor = f"user{a}"
        records += [MemoryRecord(actor_id=actor, namespace=f"/facts/{actor}", text=t) for t in FACTS]
        records += [
            MemoryRecord(actor_id=actor, namespace=f"/preferences/{actor}", text=t) for t in PREFERENCES
        ]
    store.add_records(records)


def run_load(store: SQLiteStore, policy: RecallPolicy) -> dict[str, Any]:
    """Drive SESSIONS concurrent sessions of TURNS turns; returns the figures."""
    latencies: list[float] = []
    failures: list[str] = []  # exceptions out of a turn: must never happen
    trace_errors: list[str] = []  # faults a turn survived (failed open, injected nothing): counted
    written: list[str] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + RUN_DEADLINE_S

    def session(s: int) -> int:
        actor, session_id = f"user{s % ACTORS}", f"session{s}"
        done = 0
        for t in range(TURNS):
            if time.monotonic() > stop_at:
                break
            message = MESSAGES[(s + t) % len(MESSAGES)]
            started = time.perf_counter()
            try:
                recall = policy.recall(message, actor_id=actor, session_id=session_id)
                if recall.trace.errors:
                    with lock:
                        trace_errors.extend(f"{session_id} turn {t}: {e}" for e in recall.trace.errors)
                assert recall.context == "" or recall.context.startswith("<user_context>")
                store.create_event(Event(actor_id=actor, session_id=session_id, role="user", text=message))
                if t % WRITE_EVERY == WRITE_EVERY - 1:
                    record = MemoryRecord(
                        actor_id=actor,
                        namespace=f"/facts/{actor}",
                        text=f"In {session_id} turn {t} the user mentioned a new plan.",
                        id=f"{session_id}-t{t}",
                    )
                    store.add_records([record])
                    with lock:
                        written.append(record.id)
            except Exception as exc:  # counted and reported, never swallowed
                with lock:
                    failures.append(f"{session_id} turn {t}: {type(exc).__name__}: {exc}")
            with lock:
                latencies.append((time.perf_counter() - started) * 1000.0)
            done += 1
        return done

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=SESSIONS, thread_name_prefix="session") as pool:
        completed = sum(pool.map(session, range(SESSIONS)))
    elapsed = time.perf_counter() - started

    events = sum(len(store.list_events(f"user{a}")) for a in range(ACTORS))
    found = store.get_records(written)
    expected_records = SESSIONS * (TURNS // WRITE_EVERY)
    ordered = sorted(latencies)
    return {
        "sessions": SESSIONS,
        "turns": completed,
        "seconds": round(elapsed, 2),
        "turns_per_s": round(completed / elapsed, 1),
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
        "max_ms": round(ordered[-1], 1),
        "errors": len(failures) + policy.stats.errors,
        "error_examples": failures[:3]
        + ([policy.stats.report().splitlines()[0]] if policy.stats.errors else []),
        "events_lost": SESSIONS * TURNS - events,
        "records_lost": expected_records - len(found),
        "records_written": len(written),
        "gate_opened": policy.stats.gate_opened,
        "gate_closed": policy.stats.gate_closed,
        "records_injected": policy.stats.records_injected,
    }


def _report(arm: str, figures: dict[str, Any]) -> None:
    figures = {"arm": arm, **figures}
    print(
        f"\nload[{arm}]: {figures['turns']} turns ({figures['sessions']} sessions) "
        f"in {figures['seconds']} s: "
        f"{figures['turns_per_s']} turns/s, p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms, "
        f"max {figures['max_ms']} ms; errors {figures['errors']}, events lost {figures['events_lost']}, "
        f"records lost {figures['records_lost']} (of {figures['records_written']} written)"
    )
    target = os.environ.get("RECALLWISE_LOAD_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(figures) + "\n")


def _assert_sound(figures: dict[str, Any]) -> None:
    assert figures["turns"] == SESSIONS * TURNS, f"the run hit its {RUN_DEADLINE_S} s deadline: {figures}"
    assert figures["errors"] == 0, figures["error_examples"]
    assert figures["events_lost"] == 0 and figures["records_lost"] == 0, figures
    assert figures["records_written"] == SESSIONS * (TURNS // WRITE_EVERY)
    assert figures["gate_opened"] > 0 and figures["gate_closed"] > 0  # the gate decided, both ways
    assert figures["records_injected"] > 0


@pytest.fixture
def load_store(tmp_path: Path, minilm: Any) -> Iterator[SQLiteStore]:
    store = SQLiteStore(f"sqlite:///{tmp_path}/load.db", embedder=minilm)
    _seed(store)
    yield store
    store.close()


def test_load_embedded_store_and_decider(load_store: SQLiteStore) -> None:
    decider = EmbeddedDecider(embedder=load_store.embedder)
    decider.warm_up()
    policy = RecallPolicy(load_store, decider=decider, namespaces=NAMESPACES)
    figures = run_load(load_store, policy)
    _report("embedded decider, in process", figures)
    _assert_sound(figures)
    policy.close()


def test_load_decider_on_loopback(load_store: SQLiteStore) -> None:
    pytest.importorskip("sparrow_decider")
    from wire_servers import sparrow_serve

    with sparrow_serve() as url:
        # sparrow-decider's stdlib server listens with a backlog of 5: more simultaneous new
        # connections than that get reset under a burst, so the client pool stays below it.
        decider = SystemOneDecider(url, timeout=10.0, pool_size=4)
        # The server runs sparrow's model: use the thresholds measured for it.
        measured = {
            role: default_threshold("sparrow", role).value for role in ("gate", "judge", "judge_relative")
        }
        policy = RecallPolicy(
            load_store,
            decider=decider,
            namespaces=NAMESPACES,
            decider_timeout_s=5.0,
            gate_threshold=measured["gate"],
            judge_threshold=measured["judge"],
            relative_delta=measured["judge_relative"],
        )
        figures = run_load(load_store, policy)
        _report("sparrow-decider serve on loopback (systemone)", figures)
        _assert_sound(figures)
        policy.close()
        decider.close()
