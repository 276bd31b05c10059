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
"""

from __future__ import annotations

import copy
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from ..demo import DEMO_NAMESPACES, persona, seed_persona
from ..policy import DecisionLog, RecallPolicy
from ..policy.trace import Trace
from ..stores import open_store
from .serve import _Replica
from .timing import p50

__all__ = ["TARGET_MS", "bench_inspector"]

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


def bench_inspector(
    *, turns: int = 100_000, repeats: int = 20, progress: Callable[[int], None] | None = None
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
        keys = folder / "keys.yaml"
        key = add_key(keys, tenant=TENANTS[0], scopes=["admin"], label="bench")
        replica = _Replica(store, keys, folder / "serve.log", ["--log", str(log)])
        try:
            replica.wait_ready()
            with httpx.Client(
                base_url=replica.url, headers={"authorization": f"Bearer {key}"}, timeout=60
            ) as c:
                newest = c.get("/v1/decisions", params={"limit": 1}).json()["decisions"][0]
                last, actor, session = newest["id"], newest["actor_id"], newest["session_id"]
                queries: dict[str, dict[str, Any]] = {
                    "newest": {},
                    "actor": {"actor_id": actor},
                    "session": {"session_id": session},
                    "closed": {"opened": "false"},
                    "errors": {"errors": "true"},
                    "actor_closed": {"actor_id": actor, "opened": "false"},
                    "last_page": {"cursor": last - turns + 101},
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
    }
