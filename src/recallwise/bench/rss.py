"""Memory of the latency bench: this process's RSS, and that of a fresh process that only serves.

``python -m recallwise.bench.rss SPEC`` is the serving process :func:`serving_rss_mb` starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from ..demo import DEMO_NAMESPACES, persona
from ..policy import RecallPolicy
from ..stores.base import SearchRequest

__all__ = ["rss_mb", "serving_rss_mb"]


def rss_mb() -> float:
    """Resident set size of this process now, in MB (Linux /proc; else peak RSS)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        pass
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def serving_rss_mb(
    store_url: str, decider: str | None = None, decider_options: dict[str, Any] | None = None
) -> float | None:
    """RSS in MB of a fresh process serving the store: it opens ``store_url``, searches every
    namespace once (so every vector is in the cache) and runs the demo's turns through a gated
    policy with ``decider`` (a backend name; None = stock). ``None`` for an in-memory store.

    Measured in its own process because the bench process also built the store: the freed
    Python objects of a 100k-record ingest stay in the allocator's heap (fragmented, not returned
    to the system) and would be counted against a process that only serves.
    """
    if store_url == "sqlite://" or (store_url.startswith("sqlite://") and ":memory:" in store_url):
        return None
    spec = json.dumps({"store": store_url, "decider": decider, "options": decider_options or {}})
    done = subprocess.run(
        [sys.executable, "-m", "recallwise.bench.rss", spec],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"serving-process RSS probe failed: {tail}")
    return float(done.stdout.strip().splitlines()[-1])


def _serving_probe(spec: dict[str, Any]) -> float:
    from ..deciders import make_decider
    from ..stores import open_store

    store = open_store(spec["store"])
    try:
        decider = make_decider(spec["decider"], **spec["options"]) if spec["decider"] else None
        vector = store.embedder.embed(["warm-up"])[0]
        for namespace in store.namespaces() if hasattr(store, "namespaces") else []:
            store.search(SearchRequest(namespace, vector, 1))
        policy = RecallPolicy(store, decider=decider, namespaces=DEMO_NAMESPACES)
        for turn in persona()["demo_turns"]:
            policy.recall(turn, actor_id=persona()["actor_id"], session_id="bench")
        policy.close()
        return rss_mb()
    finally:
        store.close()


if __name__ == "__main__":  # the serving-process probe of ``serving_rss_mb``
    print(_serving_probe(json.loads(sys.argv[1])))
