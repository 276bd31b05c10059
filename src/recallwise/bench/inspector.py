"""``recallwise bench inspector``: how fast the decision inspector's list answers on a big log.

One run, on this machine:

1. **a log of ``turns`` turns**: eight real turns of the default policy over the demo persona
   (the demo's conversation, content logged), written again and again as the turns of 2 tenants x
   200 actors x 5 sessions each, through :meth:`DecisionLog.write` (the path a server takes);
   one turn in a thousand carries an error (its trace says so: the bench wrote it), so the
   ``errors`` filter has to look far;
2. **a real ``recallwise serve --log``** over it, with keys (so every page is one tenant's), and
   ``GET /v1/decisions`` timed over real HTTP for each filter the page offers: the newest page,
   one actor, one session, closed gates, errors, and the last page (a cursor at the far end).

With ``refit_labels`` N, also **the refit preview** (:func:`bench_refit`): N labelled turns of one
actor of the same tenant, each a real turn of the default policy over the demo persona, and
``POST /v1/refit-preview/gate`` and ``/judge`` timed over HTTP (each fits a head on the tenant's
labels). The messages are made from templates (memory requests about the persona's drinks, food,
travel and code; general questions), labelled by construction, and each record a turn's search
returned by whether it is about the message's topic: synthetic labels, for the time a fit takes
on N of them, not for what it scores.
"""

from __future__ import annotations

import contextlib
import copy
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from ..demo import DEMO_NAMESPACES, persona, seed_persona
from ..errors import UsageError
from ..policy import DecisionLog, RecallPolicy
from ..policy.trace import Trace
from ..stores import open_store
from .serve import ServeProcess
from .timing import p50

__all__ = ["TARGET_MS", "bench_inspector", "refit_messages", "time_refit", "write_refit_turns"]

#: the issue's target for one page of the list, with 100,000 logged turns
TARGET_MS = 300.0
TENANTS = ("tenant-a", "tenant-b")
ACTORS = 200
SESSIONS = 5


def _traces(store_url: str) -> list[tuple[str, Trace]]:
    """The demo conversation's eight turns, decided by the default policy (message, trace)."""
    store = open_store(store_url)
    try:
        seed_persona(store)
        policy = RecallPolicy(store, namespaces=DEMO_NAMESPACES)
        try:
            return [
                (m, policy.recall(m, actor_id="demo_user", session_id="bench").trace)
                for m in persona()["demo_turns"]
            ]
        finally:
            policy.close()
    finally:
        store.close()


def fill_log(
    path: Path, turns: int, traces: list[tuple[str, Trace]], progress: Callable[[int], None] | None
) -> None:
    """``turns`` rows cycling over ``traces``, spread over the tenants' actors and sessions."""
    rng = random.Random(7)
    errored = []
    for message, trace in traces:
        broken = copy.deepcopy(trace)
        broken.errors.append("store: StoreUnavailable: written by recallwise bench inspector")
        broken.error_kinds.append("store:bench")
        errored.append((message, broken))
    with DecisionLog(path, content=True) as log:
        for i in range(turns):
            message, trace = (errored if i % 1000 == 999 else traces)[i % len(traces)]
            tenant = TENANTS[rng.randrange(len(TENANTS))]
            actor = rng.randrange(ACTORS)
            log.write(
                trace,
                actor_id=f"{tenant}:user-{actor}",
                session_id=f"user-{actor}-s{rng.randrange(SESSIONS)}",
                decider="embedded",
                message=message,
            )
            if progress is not None and i % 1000 == 999:
                progress(1000)
        log.settle(timeout_s=600.0)


#: topic -> (templates of a message asking about it, words of a persona record about it); the
#: general questions have no topic (their label: no memory needed)
_TOPICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "drink": (
        (
            "What should I drink {when} in {city}?",
            "Order me a coffee {when}",
            "Pick drinks for {a} of us {when}",
        ),
        ("caffeine", "flat white", "sparkling", "beverage"),
    ),
    "food": (
        ("What should I cook for dinner {when}?", "Find me a restaurant in {city} for {a} people {when}"),
        ("vegetarian", "peanut", "vietnamese", "pho", "food"),
    ),
    "travel": (
        ("Book me a flight to {city} {when}", "Plan my {a}-day trip to {city}"),
        ("aisle", "climbing over", "vancouver", "yvr", "flight"),
    ),
    "code": (
        ("Review my {language} code in my usual style", "Write a {language} script of {a} lines my way"),
        ("python", "four spaces", "backend", "code"),
    ),
}
_GENERAL = (
    "What is {a} times {b}?",
    "Convert {a} miles into kilometres",
    "Who won the World Cup in {year}?",
    "What's the capital of {country}?",
    "Explain how {concept} works",
)
_WHEN = ("tonight", "this morning", "tomorrow", "on Friday", "next week", "after the gym", "at noon")
_CITIES = ("Lisbon", "Toronto", "Osaka", "Nairobi", "Lima", "Oslo", "Hanoi", "Denver", "Tunis", "Perth")
_COUNTRIES = ("Portugal", "Canada", "Japan", "Kenya", "Peru", "Norway", "Vietnam", "Chile", "Tunisia", "Fiji")
_LANGUAGES = ("Python", "Go", "Rust", "SQL", "TypeScript", "shell")
_CONCEPTS = ("a bloom filter", "TCP", "a hash map", "DNS", "garbage collection", "a B-tree", "TLS", "RAID")


def refit_messages(n: int, seed: int = 11) -> list[tuple[str, str | None]]:
    """``n`` distinct messages, half asking about one of the persona's topics (``(message, topic)``)
    and half general questions (``(message, None)``), in a fixed order for ``seed``."""
    rng = random.Random(seed)
    out: dict[str, str | None] = {}
    topics = list(_TOPICS)
    while len(out) < n:
        if len(out) % 2 == 0:
            topic = topics[rng.randrange(len(topics))]
            template = rng.choice(_TOPICS[topic][0])
        else:
            topic, template = None, rng.choice(_GENERAL)
        message = template.format(
            when=rng.choice(_WHEN),
            city=rng.choice(_CITIES),
            country=rng.choice(_COUNTRIES),
            language=rng.choice(_LANGUAGES),
            concept=rng.choice(_CONCEPTS),
            a=rng.randrange(2, 999),
            b=rng.randrange(2, 999),
            year=rng.randrange(1930, 2023),
        )
        out.setdefault(message, topic)
    return list(out.items())


def _about(topic: str | None, record: str) -> bool:
    return topic is not None and any(word in record.lower() for word in _TOPICS[topic][1])


def write_refit_turns(store_url: str, log_path: Path, actor: str, labels: int, progress: Any = None) -> None:
    """``labels`` real turns of ``actor`` (the default policy over the demo persona, content
    logged) appended to the log at ``log_path``, each labelled: the gate true for a message about
    a topic, each record the search returned true when it is about that topic."""
    messages = refit_messages(labels)
    topics = dict(messages)
    store = open_store(store_url)
    try:
        seed_persona(store, actor)
        with DecisionLog(log_path, content=True) as log:
            policy = RecallPolicy(store, namespaces=DEMO_NAMESPACES, log=log)
            try:
                for message, _ in messages:
                    policy.recall(message, actor_id=actor, session_id="refit")
                    if progress is not None:
                        progress(1)
            finally:
                policy.close()
            for turn in log.turns(last=labels, actor_id=actor):
                topic = topics[turn.message or ""]
                records = {c["id"]: _about(topic, str(c.get("text"))) for c in turn.candidates}
                log.add_labels(turn.id, gate=topic is not None, records=records or None)
    finally:
        store.close()


def time_refit(client: httpx.Client, repeats: int = 2) -> dict[str, Any]:
    """``POST /v1/refit-preview/gate`` and ``/judge`` over HTTP, ``repeats`` times each: the wall
    time of each request (the first also loads what the fit needs), and the fit's own ``seconds``."""
    out: dict[str, Any] = {}
    for head in ("gate", "judge"):
        wall, fit = [], []
        answer: dict[str, Any] = {}
        for _ in range(repeats):
            began = time.perf_counter()
            response = client.post(f"/v1/refit-preview/{head}", timeout=3600)
            wall.append(round(time.perf_counter() - began, 3))
            if response.status_code != 200:
                raise UsageError(
                    f"POST /v1/refit-preview/{head}: HTTP {response.status_code}: {response.text[:300]}"
                )
            answer = response.json()
            fit.append(answer["seconds"])
        out[head] = {
            "turns": answer["turns"],
            "records": answer["before"]["n"] if head == "judge" else None,
            "request_s": wall,
            "fit_s": fit,
        }
    return out


def _far_cursor(log: Path, tenant: str) -> int:
    """The id of the tenant's 101st oldest turn: a cursor whose page is near the log's far end (ids
    are opaque: the log's order is its own)."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(log)) as conn:
        row = conn.execute(
            "SELECT id FROM turns WHERE actor_id >= ? AND actor_id < ? ORDER BY seq LIMIT 1 OFFSET 100",
            (tenant, tenant + "\U0010ffff"),
        ).fetchone()
    return int(row[0])


def bench_inspector(
    *,
    turns: int = 100_000,
    repeats: int = 20,
    refit_labels: int = 0,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Fill a log of ``turns`` turns, serve it, and time each filter's page ``repeats`` times."""
    from ..serve.auth import add_key

    with tempfile.TemporaryDirectory(prefix="recallwise-bench-inspector-") as tmp:
        folder = Path(tmp)
        store = f"sqlite:///{folder}/memory.db"
        traces = _traces(store)
        log = folder / "decisions.db"
        started = time.perf_counter()
        fill_log(log, turns, traces, progress)
        fill_s = time.perf_counter() - started
        if refit_labels:
            write_refit_turns(store, log, f"{TENANTS[0]}:refit-user", refit_labels)
        keys = folder / "keys.yaml"
        key = add_key(keys, tenant=TENANTS[0], scopes=["admin"], label="bench")
        replica = ServeProcess(store, ["--keys", str(keys), "--log", str(log)], folder)
        try:
            replica.wait_ready()
            with httpx.Client(
                base_url=replica.url, headers={"authorization": f"Bearer {key}"}, timeout=60
            ) as c:
                newest = c.get("/v1/decisions", params={"limit": 1}).json()["decisions"][0]
                actor, session = newest["actor_id"], newest["session_id"]
                queries: dict[str, dict[str, Any]] = {
                    "newest": {},
                    "actor": {"actor_id": actor},
                    "session": {"session_id": session},
                    "closed": {"opened": "false"},
                    "errors": {"errors": "true"},
                    "actor_closed": {"actor_id": actor, "opened": "false"},
                    "last_page": {"cursor": _far_cursor(log, f"{TENANTS[0]}:")},
                }
                figures: dict[str, dict[str, Any]] = {}
                for name, params in queries.items():
                    samples: list[float] = []
                    returned = 0
                    for _ in range(repeats):
                        began = time.perf_counter()
                        answer = c.get("/v1/decisions", params={"limit": 50, **params})
                        samples.append((time.perf_counter() - began) * 1000.0)
                        answer.raise_for_status()
                        returned = len(answer.json()["decisions"])
                    figures[name] = {
                        "p50_ms": p50(samples),
                        "max_ms": round(max(samples), 2),
                        "returned": returned,
                    }
                refit = time_refit(c) if refit_labels else None
        finally:
            replica.stop()
        log_mb = sum(f.stat().st_size for f in folder.glob("decisions.db*")) / 1e6
    worst = max(f["p50_ms"] for f in figures.values())
    return {
        "turns": turns,
        "repeats": repeats,
        "log_mb": round(log_mb, 1),
        "fill_s": round(fill_s, 1),
        "fill_turns_per_s": round(turns / fill_s, 1) if fill_s else 0.0,
        "queries": figures,
        "worst_p50_ms": worst,
        "worst_max_ms": max(f["max_ms"] for f in figures.values()),
        "target_ms": TARGET_MS,
        "met": worst <= TARGET_MS,
        "refit_labels": refit_labels,
        "refit": refit,
    }
