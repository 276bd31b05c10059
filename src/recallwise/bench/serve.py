"""``recallwise bench serve``: real ``recallwise serve`` processes, driven over real HTTP.

One run measures, on this machine:

1. **the service under load**: ``replicas`` servers (each of ``workers`` processes) over one store,
   ``sessions`` concurrent sessions of ``turns`` turns each, spread over two tenants. A turn is what an
   agent does per user message: ``POST /v1/recall``, then ``POST /v1/events`` (the message,
   stored without extraction), and every ``write_every`` turns ``POST /v1/records`` (a new
   record), so reads and writes interleave as in the in-process load test. Every message is
   distinct (no decision cache hit flatters the figure). Turn latency is the recall's, the wait
   an agent has before its model call; the writes' latencies are reported on their own.
2. **nothing lost, nothing leaked**: afterwards every acknowledged event and record is looked for
   in the store (``lost``), and every record a recall returned is checked to be its own actor's
   (``cross_tenant_reads`` for another tenant's, ``cross_actor_reads`` for any other actor's).
3. **the same workload in process** (threads calling the service, no HTTP), and
4. **the embedder's ceiling**: texts/s one at a time and in batches of ``max_batch``, and the CPU
   seconds a text costs in those batches, measured in the same run;
5. **where the CPU went**: the CPU seconds (user + system, from ``/proc``) the server processes
   and the load driver spent per turn during the load. ``ceiling_ratio`` is read from CPU, not from
   the wall clock: the embedder's CPU for the texts a turn embeds (``embeddings_per_turn`` x
   ``embed_cpu_s_per_text``) over the server's CPU per turn, i.e. the share of the server's work
   that is the embedder's. On two cores shared with the driver (and with whatever else runs), turns/s
   moves with the load, CPU seconds much less; the wall-clock ratio (turns/s over the batched
   ceiling's turns/s) is ``wall_ceiling_ratio``.
6. **idle latency**: sequential recalls on an idle server, against the embedding of one text.

The bench's own embedder (the ceiling's, the in-process run's) runs with onnxruntime's spinning off,
as ``recallwise serve`` runs it, so both are measured with the same settings.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from ..demo import persona_records
from ..errors import UsageError
from .latency import MESSAGES

__all__ = ["bench_serve", "messages_for"]

TENANTS = ("tenant-a", "tenant-b")
NAMESPACES = ["/facts/{actorId}", "/preferences/{actorId}"]
_PREFIXES = ["", "Quick question: ", "Hey, ", "So, ", "Hi again. ", "OK, ", "Right, ", "One more thing: "]
_SUFFIXES = [
    "",
    " Thanks!",
    " No rush.",
    " Be brief.",
    " It's for today.",
    " I'm at home.",
    " Keep it simple.",
    " Any ideas?",
    " I'm a bit tired.",
    " Go.",
    " Please.",
    " It's raining here.",
    " I have ten minutes.",
]


def messages_for(count: int, seed: int) -> list[str]:
    """``count`` distinct, realistic user messages (the bench's ten, reworded), shuffled by ``seed``."""
    pool = [f"{p}{m}{s}" for m in MESSAGES for p in _PREFIXES for s in _SUFFIXES]
    rng = random.Random(seed)
    rng.shuffle(pool)
    if count > len(pool):
        pool = pool + [f"{m} (#{i})" for i, m in enumerate(pool * (count // len(pool) + 1))]
    return pool[:count]


def _percentiles(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0}
    a = np.asarray(samples) * 1000.0
    return {
        "p50_ms": round(float(np.percentile(a, 50)), 2),
        "p95_ms": round(float(np.percentile(a, 95)), 2),
        "p99_ms": round(float(np.percentile(a, 99)), 2),
        "max_ms": round(float(a.max()), 2),
    }


def free_port() -> int:
    """A loopback TCP port free right now (nothing listens on it once this returns)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServeProcess:
    """A real ``recallwise serve --store STORE --port PORT ARGS`` process on a free loopback port,
    its stderr in ``log_dir/NAME-PORT.log`` (the bench's replicas, and the service's tests)."""

    def __init__(self, store: str, args: Sequence[str], log_dir: Path, name: str = "serve") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log_dir / f"{name}-{self.port}.log"
        command = [sys.executable, "-m", "recallwise", "serve", "--store", store, "--port", str(self.port)]
        command += args
        with self.log.open("wb") as sink:
            self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink)

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        """Wait until ``/readyz`` answers 200; a server that exits or is not ready in time is a
        :class:`UsageError` quoting the end of its stderr."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise UsageError(f"recallwise serve exited {self.process.returncode}: {self.stderr()[-800:]}")
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise UsageError(
            f"recallwise serve on {self.url} not ready in {timeout_s:.0f} s: {self.stderr()[-800:]}"
        )

    def stop(self) -> int:
        """SIGTERM (a graceful drain), a kill after 40 s; the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return int(self.process.returncode or 0)


@dataclass
class _Ledger:
    """What the clients were told was written, and what the recalls returned."""

    owned: dict[str, set[str]] = field(default_factory=dict)  # internal actor -> record ids
    events: dict[str, int] = field(default_factory=dict)
    records: dict[str, set[str]] = field(default_factory=dict)
    cross_tenant: int = 0
    cross_actor: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, internal_actor: str, ids: list[str]) -> None:
        own = self.owned.get(internal_actor, set()) | self.records.get(internal_actor, set())
        tenant = internal_actor.split(":", 1)[0]
        for rid in ids:
            if rid in own:
                continue
            owner = next((a for a, s in self.owned.items() if rid in s), None)
            with self.lock:
                if owner is not None and owner.split(":", 1)[0] != tenant:
                    self.cross_tenant += 1
                else:
                    self.cross_actor += 1


@dataclass
class _Load:
    turn_s: list[float] = field(default_factory=list)
    write_s: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    stages_ms: dict[str, list[float]] = field(default_factory=dict)
    turns: int = 0
    wall_s: float = 0.0

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def summary(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "wall_s": round(self.wall_s, 2),
            "turns_per_s": round(self.turns / self.wall_s, 1) if self.wall_s else 0.0,
            **_percentiles(self.turn_s),
            "writes": len(self.write_s),
            "write_p95_ms": _percentiles(self.write_s)["p95_ms"],
            "errors": sum(self.errors.values()),
            "errors_by_kind": dict(self.errors),
            # the servers' own stage timings (median per recall): where a turn's time went
            "server_stage_p50_ms": {
                stage: round(statistics.median(values), 2) for stage, values in sorted(self.stages_ms.items())
            },
        }


_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _own_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system, all threads) process ``pid`` has used, from ``/proc/PID/stat``;
    None when it cannot be read (not Linux, or the process is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # the name (field 2) may hold spaces and parentheses
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_S  # utime, stime: fields 14 and 15


def _children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (``/proc/PID/task/*/children``)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(c) for c in task.read_text().split()]
        except OSError:
            continue
    return found


def process_tree_cpu_s(pid: int) -> float | None:
    """CPU seconds used by process ``pid`` and its live descendants (``recallwise serve
    --workers N`` is a supervisor and N worker processes); None when ``/proc`` cannot be read."""
    own = _own_cpu_s(pid)
    if own is None:
        return None
    total, pending = own, _children(pid)
    while pending:
        child = pending.pop()
        used = _own_cpu_s(child)
        if used is not None:
            total += used
            pending += _children(child)
    return total


def _servers_cpu_s(replicas: Sequence[ServeProcess]) -> float | None:
    used = [process_tree_cpu_s(r.process.pid) for r in replicas]
    return None if any(u is None for u in used) else sum(u for u in used if u is not None)


def _embed_texts_counted(base: str, key: str) -> float:
    text = httpx.get(base + "/metrics", headers={"authorization": f"Bearer {key}"}, timeout=10).text
    for line in text.splitlines():
        if line.startswith("recallwise_embed_texts_total "):
            return float(line.split()[1])
    return 0.0


def _ceiling(embedder: Any, texts: list[str], batch: int, seconds: float = 3.0) -> dict[str, float]:
    """Texts/s of ``embedder`` one at a time and in batches of ``batch`` (each for ~``seconds``),
    and the CPU seconds (this process's, every thread: the ONNX session's too) a text cost."""
    embedder.embed(texts[:batch])  # warm
    out: dict[str, float] = {}
    for name, size in (("single", 1), ("batched", batch)):
        done, i, started, cpu_started = 0, 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - started < seconds:
            chunk = texts[i : i + size] or texts[:size]
            embedder.embed(chunk)
            done += len(chunk)
            i = (i + size) % max(1, len(texts) - size)
        out[f"{name}_texts_per_s"] = round(done / (time.perf_counter() - started), 1)
        out[f"{name}_cpu_s_per_text"] = round((time.process_time() - cpu_started) / done, 6)
    samples = []
    for text in texts[:60]:
        t0 = time.perf_counter()
        embedder.embed([text])
        samples.append(time.perf_counter() - t0)
    out["embed_p50_ms"] = round(statistics.median(samples) * 1000, 2)
    return out


def bench_serve(
    *,
    sessions: int = 50,
    turns: int = 20,
    replicas: int = 1,
    workers: int = 1,
    store: str | None = None,
    write_every: int = 5,
    actors_per_tenant: int = 5,
    max_batch: int = 16,
    log: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Run the benchmark (see the module docs); returns what ``bench serve --json`` prints.

    ``log``: the replicas' decision log (``--log --log-content``): ``"sqlite"`` a new file, a
    PostgreSQL URL a schema of its own there (dropped afterwards); None: no log."""
    if sessions < 1 or turns < 1 or replicas < 1 or workers < 1:
        raise UsageError("--sessions, --turns, --replicas and --workers must be at least 1")
    from ..serve.auth import add_key
    from ..stores import open_store

    # the bench's own embedder as the servers run theirs (serve/runner.py): the ceiling's CPU a text
    # is then the same work a server's embedder does, without idle threads spinning on the cores
    os.environ.setdefault("RECALLWISE_ONNX_SPIN", "0")
    work = Path(tempfile.mkdtemp(prefix="recallwise-bench-serve-"))
    schema = None
    if store is None:
        url = f"sqlite:///{work}/bench.db"
    elif store.startswith("sqlite"):
        raise UsageError("--store: give a PostgreSQL URL (SQLite runs in a new file of its own by default)")
    else:
        schema = f"rw_bench_serve_{os.getpid()}"
        url = store + ("&" if "?" in store else "?") + f"schema={schema}"
    replicas_started: list[ServeProcess] = []
    try:
        keys_file = work / "keys.yaml"
        keys = {
            t: add_key(keys_file, tenant=t, scopes=["recall", "write", "admin", "operator"], label=t)
            for t in TENANTS
        }
        ledger = _Ledger()
        actors = [f"user-{i}" for i in range(actors_per_tenant)]
        seeding = open_store(url)
        try:
            for tenant in TENANTS:
                for actor in actors:
                    internal = f"{tenant}:{actor}"
                    added = seeding.add_records(persona_records(internal))
                    ledger.owned[internal] = {r.id for r in added}
            seeded = seeding.count_records()
        finally:
            seeding.close()

        extra = ["--max-batch", str(max_batch), "--workers", str(workers)]
        if log is not None:
            extra += ["--log", _log_location(log, work), "--log-content"]
        for i in range(replicas):
            replicas_started.append(
                ServeProcess(url, ["--keys", str(keys_file), *extra], work, f"replica{i}")
            )
        for replica in replicas_started:
            replica.wait_ready()
        plan = _plan(sessions, turns, actors)
        before = sum(_embed_texts_counted(r.url, keys[TENANTS[0]]) for r in replicas_started)
        server_cpu_before, driver_cpu_before = _servers_cpu_s(replicas_started), time.process_time()
        load = asyncio.run(_drive(replicas_started, keys, plan, write_every, ledger, progress))
        server_cpu_after, driver_cpu_after = _servers_cpu_s(replicas_started), time.process_time()
        after = sum(_embed_texts_counted(r.url, keys[TENANTS[0]]) for r in replicas_started)
        idle = asyncio.run(_idle(replicas_started[0], keys[TENANTS[0]], actors[0]))
        log_rows = _log_rows(replicas_started, keys[TENANTS[0]]) if log is not None else None
        exits = [r.stop() for r in replicas_started]
        lost = _lost(url, ledger)
        in_process = _in_process(url, plan, write_every, max_batch)
        from ..embeddings import default_embedder

        ceiling = _ceiling(default_embedder(), messages_for(400, seed=99), max_batch)
        summary = load.summary()
        per_turn = (after - before) / load.turns if load.turns else 0.0
        counted_by = "the servers' batchers"
        if workers > 1:  # /metrics answers for whichever worker takes the request: count the plan's
            per_turn, counted_by = 1.0 + 1.0 / write_every, "the plan: a recall's message, a record written"
        needed = ceiling["batched_texts_per_s"] / per_turn if per_turn else 0.0
        cpu = _cpu_figures(
            turns=load.turns,
            embeddings_per_turn=per_turn,
            embed_cpu_s_per_text=ceiling["batched_cpu_s_per_text"],
            server_cpu_s=None
            if server_cpu_before is None or server_cpu_after is None
            else server_cpu_after - server_cpu_before,
            driver_cpu_s=driver_cpu_after - driver_cpu_before,
            wall_s=load.wall_s,
        )
        return {
            "store": "sqlite (a new file)" if store is None else f"postgresql (schema {schema})",
            "log": None if log is None else ("sqlite (a new file)" if log == "sqlite" else "postgresql"),
            "log_rows": log_rows,
            "replicas": replicas,
            "workers_per_replica": workers,
            "sessions": sessions,
            "turns_per_session": turns,
            "write_every": write_every,
            "tenants": len(TENANTS),
            "actors": len(TENANTS) * len(actors),
            "seeded_records": seeded,
            "http": summary,
            "turns_per_s": summary["turns_per_s"],
            "p95_ms": summary["p95_ms"],
            "errors": summary["errors"],
            "lost": lost["events"] + lost["records"],
            "lost_by_kind": lost,
            "cross_tenant_reads": ledger.cross_tenant,
            "cross_actor_reads": ledger.cross_actor,
            "embeddings_per_turn": round(per_turn, 3),
            "embeddings_counted_by": counted_by,
            "ceiling": ceiling,
            "ceiling_turns_per_s": round(needed, 1),
            **cpu,
            "wall_ceiling_ratio": round(summary["turns_per_s"] / needed, 3) if needed else None,
            "in_process": in_process,
            "idle": {**idle, "embed_p50_ms": ceiling["embed_p50_ms"]},
            "idle_overhead_ms": round(idle["p50_ms"] - ceiling["embed_p50_ms"], 2),
            "replica_exit_codes": exits,
        }
    finally:
        for replica in replicas_started:
            replica.stop()
        if schema is not None and store is not None:
            _drop_schema(store, schema)
        if log is not None and log != "sqlite":
            _drop_schema(log, _LOG_SCHEMA)
        shutil.rmtree(work, ignore_errors=True)


_LOG_SCHEMA = f"rw_bench_serve_log_{os.getpid()}"


def _log_rows(replicas: Sequence[ServeProcess], key: str) -> dict[str, int]:
    """The decision log rows the replicas wrote and dropped (``GET /v1/log``, once they settled)."""
    totals = {"written": 0, "dropped": 0}
    for replica in replicas:
        deadline = time.monotonic() + 30.0
        while True:
            health = httpx.get(
                f"{replica.url}/v1/log", headers={"authorization": f"Bearer {key}"}, timeout=10
            ).json()
            if health["queued"] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        totals["written"] += int(health["written"])
        totals["dropped"] += int(health["dropped"])
    return totals


def _log_location(log: str, work: Path) -> str:
    """``--log`` for the replicas: a new SQLite file, or a schema of the bench's own in PostgreSQL."""
    if log == "sqlite":
        return str(work / "decisions.db")
    if not log.startswith(("postgresql://", "postgres://")):
        raise UsageError("--log: 'sqlite' (a new file) or a PostgreSQL URL")
    return log + ("&" if "?" in log else "?") + f"schema={_LOG_SCHEMA}"


def _cpu_figures(
    *,
    turns: int,
    embeddings_per_turn: float,
    embed_cpu_s_per_text: float,
    server_cpu_s: float | None,
    driver_cpu_s: float,
    wall_s: float,
) -> dict[str, Any]:
    """The load's CPU per turn, the server's and the driver's, and ``ceiling_ratio``: the embedder's
    CPU for a turn's texts over the server's CPU per turn (None when ``/proc`` was unreadable)."""
    server = server_cpu_s / turns if server_cpu_s is not None and turns else None
    embed_per_turn = embeddings_per_turn * embed_cpu_s_per_text
    return {
        "server_cpu_s_per_turn": None if server is None else round(server, 6),
        "driver_cpu_s_per_turn": round(driver_cpu_s / turns, 6) if turns else None,
        "embed_cpu_s_per_text": embed_cpu_s_per_text,
        "embed_cpu_s_per_turn": round(embed_per_turn, 6),
        # the "server CPU per turn over the embedder's CPU per text", as it is (a turn embeds
        # embeddings_per_turn texts, so this is larger than 1 / ceiling_ratio)
        "server_cpu_over_embed_text": round(server / embed_cpu_s_per_text, 3)
        if server is not None and embed_cpu_s_per_text
        else None,
        # the cores the server kept busy during the load (2.0: both of two)
        "server_cores_busy": round(server_cpu_s / wall_s, 2) if server_cpu_s is not None and wall_s else None,
        "ceiling_ratio": round(embed_per_turn / server, 3) if server else None,
    }


def _plan(sessions: int, turns: int, actors: list[str]) -> list[tuple[str, str, str, list[str]]]:
    """(tenant, actor, session id, messages) per session: tenants alternate, actors rotate."""
    messages = messages_for(sessions * turns, seed=7)
    return [
        (
            TENANTS[s % len(TENANTS)],
            actors[(s // len(TENANTS)) % len(actors)],
            f"s{s}",
            messages[s * turns : (s + 1) * turns],
        )
        for s in range(sessions)
    ]


async def _drive(
    replicas: list[ServeProcess],
    keys: dict[str, str],
    plan: list[tuple[str, str, str, list[str]]],
    write_every: int,
    ledger: _Ledger,
    progress: Callable[[int], None] | None,
) -> _Load:
    import aiohttp  # the load driver: it shares the cores with the servers, so it must be light

    load = _Load()
    connector = aiohttp.TCPConnector(limit=len(plan) + 8)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as client:

        async def post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
            async with client.post(url, json=body, headers=headers) as r:
                return r.status, (await r.json() if r.status == 200 else await r.text())

        async def session(i: int, tenant: str, actor: str, sid: str, messages: list[str]) -> None:
            base = replicas[i % len(replicas)].url  # a session sticks to one replica
            headers = {"authorization": f"Bearer {keys[tenant]}"}
            internal = f"{tenant}:{actor}"
            for n, message in enumerate(messages):
                try:
                    t0 = time.perf_counter()
                    status, body = await post(
                        base + "/v1/recall",
                        {"actor_id": actor, "session_id": sid, "message": message, "namespaces": NAMESPACES},
                        headers,
                    )
                    load.turn_s.append(time.perf_counter() - t0)
                    if status != 200:
                        load.error(f"recall:{status}")
                        continue
                    if body["errors"]:
                        load.error("recall:failed-open")
                    ledger.check(internal, [rec["id"] for rec in body["records"]])
                    for stage, ms in body["trace"]["timings_ms"].items():
                        load.stages_ms.setdefault(stage, []).append(ms)
                    t1 = time.perf_counter()
                    event = {
                        "actor_id": actor,
                        "session_id": sid,
                        "messages": [{"text": message}],
                        "extract": False,
                    }
                    status, _ = await post(base + "/v1/events", event, headers)
                    if status != 200:
                        load.error(f"events:{status}")
                    else:
                        with ledger.lock:
                            ledger.events[internal] = ledger.events.get(internal, 0) + 1
                    if (n + 1) % write_every == 0:
                        note = (
                            f"In session {sid} the user said (note {n}): they keep a plant called Fern {n}."
                        )
                        status, written = await post(
                            base + "/v1/records",
                            {"actor_id": actor, "records": [{"text": note, "namespace": NAMESPACES[0]}]},
                            headers,
                        )
                        if status != 200:
                            load.error(f"records:{status}")
                        else:
                            with ledger.lock:
                                ledger.records.setdefault(internal, set()).update(
                                    rec["id"] for rec in written["records"]
                                )
                    load.write_s.append(time.perf_counter() - t1)
                    load.turns += 1
                    if progress is not None:
                        progress(1)
                except (aiohttp.ClientError, TimeoutError) as exc:
                    load.error(f"http:{type(exc).__name__}")

        started = time.perf_counter()
        await asyncio.gather(*(session(i, *p) for i, p in enumerate(plan)))
        load.wall_s = time.perf_counter() - started
    return load


async def _idle(replica: ServeProcess, key: str, actor: str, count: int = 40) -> dict[str, float]:
    """Sequential recalls, one at a time, on an otherwise idle server."""
    samples = []
    async with httpx.AsyncClient(timeout=30.0) as client:
        for message in messages_for(count + 5, seed=123)[:count]:
            t0 = time.perf_counter()
            await client.post(
                replica.url + "/v1/recall",
                json={"actor_id": actor, "message": message, "namespaces": NAMESPACES},
                headers={"authorization": f"Bearer {key}"},
            )
            samples.append(time.perf_counter() - t0)
    return {"recalls": count, "p50_ms": round(statistics.median(samples[5:]) * 1000, 2)}


def _lost(url: str, ledger: _Ledger) -> dict[str, int]:
    from ..stores import open_store

    store = open_store(url)
    try:
        events = sum(max(0, n - len(store.list_events(actor))) for actor, n in ledger.events.items())
        records = 0
        for ids in ledger.records.values():
            found = store.get_records(sorted(ids))
            records += len(ids) - len(found)
    finally:
        store.close()
    return {"events": events, "records": records}


def _in_process(
    url: str, plan: list[tuple[str, str, str, list[str]]], write_every: int, max_batch: int
) -> dict[str, Any]:
    """The same sessions as threads calling the service directly (no HTTP), on the same store."""
    from ..records import MemoryRecord, resolve_namespace
    from ..serve.access import Principal
    from ..serve.service import MemoryService
    from ..stores import open_store

    service = MemoryService.open(open_store(url), max_batch=max_batch)
    service.policy.warm_up()
    load = _Load()
    lock = threading.Lock()

    def session(tenant: str, actor: str, sid: str, messages: list[str]) -> None:
        who = Principal(tenant)
        for n, message in enumerate(messages):
            t0 = time.perf_counter()
            try:
                service.recall(who, actor, message, session_id=sid, namespaces=NAMESPACES)
                elapsed = time.perf_counter() - t0
                service.add_events(who, actor, sid, [{"text": message}], extract=False)
                if (n + 1) % write_every == 0:
                    internal = f"{tenant}:{actor}"
                    service.store.add_records(
                        [
                            MemoryRecord(
                                actor_id=internal,
                                namespace=resolve_namespace(NAMESPACES[0], actor_id=internal),
                                text=f"In-process session {sid} note {n}: a plant called Fern {n}.",
                            )
                        ]
                    )
            except Exception as exc:  # counted, as the HTTP run counts its errors
                with lock:
                    load.error(type(exc).__name__)
                continue
            with lock:
                load.turn_s.append(elapsed)
                load.turns += 1

    started = time.perf_counter()
    with ThreadPoolExecutor(len(plan)) as pool:
        list(pool.map(lambda p: session(*p), plan))
    load.wall_s = time.perf_counter() - started
    service.close()
    s = load.summary()
    return {k: s[k] for k in ("turns", "turns_per_s", "p50_ms", "p95_ms", "p99_ms", "errors")}


def _drop_schema(store: str, schema: str) -> None:
    try:
        import psycopg
        from psycopg import sql

        from ..stores.postgres.connection import split_url

        conninfo, _, _ = split_url(store)
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    except Exception as exc:  # the figures stand; say what was left behind
        sys.stderr.write(f"recallwise: warning: could not drop schema {schema!r}: {exc}\n")
