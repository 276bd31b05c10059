"""A real PostgreSQL outage under a running ``recallwise serve``: what a client sees, and for how long.

The service runs with ``--access-log`` over a server from ``tests/pg_server.py`` seeded with the
demo persona. Before, during and after the outage one client recalls (the persona's drink
question) and probes ``/readyz`` every 0.5 s, and writes a record (another actor's, so recall's
answer stays the same) every 3 s. The outage is a fast shutdown of ``outage_s`` seconds, or a
SIGKILL of the postmaster (``kill=True``) and a restart as soon as it can (crash recovery).
After the database accepts connections again the client polls every 0.25 s until recall returns
the baseline records and ``/readyz`` answers 200, and for ``settle_s`` more.

``tests/test_pg_outage.py`` runs one short outage and asserts the behaviour; run this file for the
figures in RELIABILITY.md (several minutes)::

    python tests/pg_outage.py                   # fast stops of 10, 60 and 180 s, and a kill -9
    python tests/pg_outage.py --outage 10 --kill --json
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx

import pg_server
from serve_server import Server, serve

MESSAGE = "I'd like a drink, what should I get?"
ACTOR = "demo_user"
WRITER = "outage_writer"
PROBE_S = 0.5
WRITE_EVERY_S = 3.0


@dataclass
class Call:
    """One request: when it was sent (seconds since the outage began), status (0: no answer),
    how long it took, and for a recall whether it returned the baseline records."""

    at: float
    status: int
    seconds: float
    correct: bool = False
    #: a write's record text; a refused write's error message
    text: str = ""
    message: str = ""

    @property
    def done(self) -> float:
        """When its answer came (what a client goes by)."""
        return self.at + self.seconds


@dataclass
class Outage:
    """What one outage looked like from the client (times in seconds since the outage began)."""

    kind: str  # "fast stop" or "kill -9"
    outage_s: float
    recalls: list[Call] = field(default_factory=list)
    readiness: list[Call] = field(default_factory=list)
    writes: list[Call] = field(default_factory=list)
    #: when the database accepted connections again
    up: float | None = None
    #: when the first /readyz 200, and the first correct recall, after ``up`` were answered
    ready: float | None = None
    recalled: float | None = None
    #: texts of acknowledged and of refused writes found in the store afterwards
    acknowledged_stored: int = 0
    refused_stored: int = 0
    service_output: str = ""

    def during(self, calls: list[Call]) -> list[Call]:
        """The calls sent while the database was down."""
        up = self.up if self.up is not None else float("inf")
        return [c for c in calls if 0 <= c.at < up]

    @property
    def recall_after_up_s(self) -> float | None:
        return None if self.recalled is None or self.up is None else self.recalled - self.up

    @property
    def ready_after_up_s(self) -> float | None:
        return None if self.ready is None or self.up is None else self.ready - self.up

    @property
    def ready_wrong(self) -> list[Call]:
        """Recalls after the first /readyz 200 that did not return the baseline records."""
        if self.ready is None:
            return []
        return [c for c in self.recalls if c.at > self.ready and not c.correct]

    def summary(self) -> dict[str, object]:
        recalls, ready, writes = (self.during(c) for c in (self.recalls, self.readiness, self.writes))
        refused = [w for w in writes if w.status != 200]
        return {
            "kind": self.kind,
            "outage_s": self.outage_s,
            "recalls_during": len(recalls),
            "recalls_during_all_200_empty": all(c.status == 200 and not c.correct for c in recalls),
            "recall_slowest_s": _slowest(recalls),
            "readyz_during_all_503": all(c.status == 503 for c in ready),
            "readyz_slowest_s": _slowest(ready),
            "writes_during": len(writes),
            "writes_refused": len(refused),
            "write_refused_slowest_s": _slowest(refused),
            "write_refusals": sorted({w.message for w in refused}),  # distinct messages
            "correct_recall_after_up_s": self.recall_after_up_s,
            "readyz_200_after_up_s": self.ready_after_up_s,
            "ready_to_recall_gap_s": (
                None if self.ready is None or self.recalled is None else self.recalled - self.ready
            ),
            "recalls_wrong_after_ready": len(self.ready_wrong),
            "acknowledged_writes": sum(w.status == 200 for w in self.writes),
            "acknowledged_stored": self.acknowledged_stored,
            "refused_stored": self.refused_stored,
            "access_log_lines": self.service_output.count('"POST /v1/recall'),
        }


class Client:
    """The client's three requests, each timed and recorded against the outage's clock."""

    def __init__(self, server: Server, outage: Outage, baseline: list[str] | None = None) -> None:
        self.http = httpx.Client(base_url=server.url, timeout=30)
        self.outage = outage
        self.baseline = baseline
        self.began = time.monotonic()
        self.written = 0
        self.run = uuid.uuid4().hex[:8]  # one run's writes are told from another's

    def now(self) -> float:
        return time.monotonic() - self.began

    def recall(self) -> Call:
        at, started = self.now(), time.monotonic()
        try:
            r = self.http.post("/v1/recall", json={"actor_id": ACTOR, "message": MESSAGE})
            texts = sorted(rec["text"] for rec in r.json()["records"]) if r.status_code == 200 else []
            call = Call(at, r.status_code, time.monotonic() - started, texts == self.baseline and bool(texts))
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            call = Call(at, 0, time.monotonic() - started, message=str(exc))
        self.outage.recalls.append(call)
        return call

    def readyz(self) -> Call:
        at, started = self.now(), time.monotonic()
        try:
            r = self.http.get("/readyz", timeout=5)
            call = Call(at, r.status_code, time.monotonic() - started)
        except httpx.HTTPError as exc:
            call = Call(at, 0, time.monotonic() - started, message=str(exc))
        self.outage.readiness.append(call)
        return call

    def write(self) -> Call:
        self.written += 1
        text = f"outage write {self.run}-{self.written}"
        at, started = self.now(), time.monotonic()
        try:
            r = self.http.post("/v1/records", json={"actor_id": WRITER, "records": [{"text": text}]})
            message = "" if r.status_code == 200 else r.json()["error"]["message"]
            call = Call(at, r.status_code, time.monotonic() - started, text=text, message=message)
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            call = Call(at, 0, time.monotonic() - started, text=text, message=str(exc))
        self.outage.writes.append(call)
        return call

    def stored(self) -> set[str]:
        body = self.http.get("/v1/records", params={"actor_id": WRITER, "limit": 100}).json()
        return {r["text"] for r in body["records"]}


def _accepting(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=1) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


@contextmanager
def running_service(server: pg_server.PgServer, work: Path) -> Iterator[Server]:
    """``recallwise serve --access-log`` over ``server`` seeded with the demo persona."""
    from recallwise.demo import seed_persona
    from recallwise.stores import open_store

    with open_store(server.url) as store:
        seed_persona(store)
    with serve(server.url, "--access-log", log_dir=work) as service:
        yield service


def run_outage(
    server: pg_server.PgServer,
    service: Server,
    *,
    outage_s: float,
    kill: bool = False,
    settle_s: float = 5.0,
    give_up_s: float = 120.0,
) -> Outage:
    """One outage of a running service's database (see the module docs)."""
    outage = Outage("kill -9" if kill else "fast stop", 0.0 if kill else outage_s)
    probe = Client(service, outage)
    baseline = probe.http.post("/v1/recall", json={"actor_id": ACTOR, "message": MESSAGE}).json()
    probe.baseline = sorted(r["text"] for r in baseline["records"])
    if not probe.baseline:
        raise RuntimeError("no baseline: recall returned no records before the outage")
    before = probe.stored()
    probe.began = time.monotonic()
    server.halt(kill=kill)
    while kill and _accepting(server.url):  # the postmaster is going
        time.sleep(0.05)

    # Probe through the outage and the restart (a killed server's start waits for its children
    # to exit, then recovers), until the database accepts connections; a watcher notes when.
    def watch() -> None:
        while not _accepting(server.url):
            time.sleep(0.02)
        outage.up = probe.now()

    restarting = threading.Thread(target=server.resume)
    watcher = threading.Thread(target=watch)
    next_write = 0.0
    while outage.up is None:
        tick = time.monotonic()
        if probe.now() >= outage.outage_s and restarting.ident is None:
            watcher.start()  # before pg_ctl returns: it waits for the server to be ready
            restarting.start()
        probe.recall()
        probe.readyz()
        if probe.now() >= next_write:
            probe.write()
            next_write += WRITE_EVERY_S
        time.sleep(max(PROBE_S - (time.monotonic() - tick), 0.0))
    restarting.join()
    watcher.join()
    deadline = outage.up + give_up_s
    settled_at = None
    while probe.now() < deadline and (settled_at is None or probe.now() < settled_at):
        ready, recall = probe.readyz(), probe.recall()
        if outage.ready is None and ready.status == 200:
            outage.ready = ready.done
        if outage.recalled is None and recall.correct:
            outage.recalled = recall.done
        if probe.now() >= next_write:
            probe.write()
            next_write += WRITE_EVERY_S
        if settled_at is None and outage.ready is not None and outage.recalled is not None:
            settled_at = probe.now() + settle_s
        time.sleep(0.25)
    stored = probe.stored() - before
    texts = {w.text: w.status for w in outage.writes}
    outage.acknowledged_stored = sum(texts.get(t) == 200 for t in stored)
    outage.refused_stored = sum(texts.get(t, 200) != 200 for t in stored)
    outage.service_output = service.stderr()
    probe.http.close()
    return outage


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f} s"


def table(outages: list[Outage]) -> str:
    """The RELIABILITY.md table: one row per outage."""
    rows = [
        "| outage | recalls during it | `/readyz` during it | writes during it | correct recall after "
        "the database is back | `/readyz` 200 after it is back | wrong recalls after `/readyz` 200 "
        "| writes stored |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for outage in outages:
        recalls, ready, writes = (outage.during(c) for c in (outage.recalls, outage.readiness, outage.writes))
        refused = [w for w in writes if w.status != 200]
        acknowledged = sum(w.status == 200 for w in outage.writes)
        name = f"fast stop, {outage.outage_s:.0f} s"
        if outage.kind == "kill -9":
            name = "kill -9 of the postmaster"
        all_200 = "all" if all(c.status == 200 and not c.correct for c in recalls) else "NOT all"
        all_503 = "all" if all(c.status == 503 for c in ready) else "NOT all"
        cells = [
            name,
            f"{len(recalls)}, {all_200} 200 with an empty context; slowest {_slowest(recalls):.2f} s",
            f"{all_503} 503; slowest {_slowest(ready):.2f} s",
            f"{len(refused)} of {len(writes)} refused with a 503; slowest {_slowest(refused):.2f} s",
            _seconds(outage.recall_after_up_s),
            _seconds(outage.ready_after_up_s),
            str(len(outage.ready_wrong)),
            f"{outage.acknowledged_stored} of {acknowledged} acknowledged, {outage.refused_stored} refused",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _slowest(calls: list[Call]) -> float:
    return max((c.seconds for c in calls), default=0.0)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--outage", type=float, action="append", help="a fast stop this long (repeat; default 10, 60, 180)"
    )
    parser.add_argument("--kill", action="store_true", help="also a kill -9 of the postmaster")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    lengths = args.outage or [10.0, 60.0, 180.0]
    kill = args.kill or not args.outage
    outages: list[Outage] = []
    with (
        TemporaryDirectory() as work,
        pg_server.start_server(durable=True) as server,
        running_service(server, Path(work)) as service,
    ):
        print(f"using {server.description}", file=sys.stderr)
        for outage_s in lengths:
            outages.append(run_outage(server, service, outage_s=outage_s))
            print(json.dumps(outages[-1].summary()), file=sys.stderr)
        if kill:
            outages.append(run_outage(server, service, outage_s=0.0, kill=True))
            print(json.dumps(outages[-1].summary()), file=sys.stderr)
        leaked = pg_server.PASSWORD in service.stderr()
    if args.json:
        print(json.dumps({"outages": [o.summary() for o in outages], "password_in_output": leaked}))
    else:
        print(table(outages))
        print(f"\npassword in the service's output: {leaked}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
