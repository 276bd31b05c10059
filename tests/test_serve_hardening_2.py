"""Issue 48: ``recallwise serve`` attacked a second time, around the decision log, the labels, the
refit preview and the store URLs. Each defect (N1-N20) is pinned by a test: the request that found
it against a real server (tests/serve_server.py) where it takes one, and what must hold now.
RELIABILITY.md lists each defect with its test.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bad_values import strict_json
from recallwise.bench.inspector import write_refit_turns
from recallwise.errors import StoreError, UsageError
from recallwise.serve.auth import add_key
from recallwise.stores import open_store
from serve_server import persona_server, serve

pytest.importorskip("fastapi")
pytestmark = pytest.mark.slow

HUGE = 2**63
DINNER = "What should I cook tonight?"


def _keys(path: Path) -> dict[str, str]:
    return {
        "a-admin": add_key(path, tenant="a", scopes=["recall", "write", "admin"], label="a-admin"),
        "a-recall": add_key(path, tenant="a", scopes=["recall"], label="a-recall"),
        "b-admin": add_key(path, tenant="b", scopes=["recall", "write", "admin"], label="b-admin"),
        "ops": add_key(path, tenant="ops", scopes=["operator"], label="ops"),
    }


@pytest.fixture(scope="module")
def keyed(work):
    """Tenants a and b with admin keys, a's recall-only key and an operator key; content logged;
    a small label cap (40) and one refit of a tenant's at a time; a 1 s body timeout. Tenant a's
    ``refit-user`` has 60 labelled turns in the log (over the cap: a's own previews are refused)."""
    keys = work / "keys.yaml"
    made = _keys(keys)
    log = work / "keyed-log.db"
    store = f"sqlite:///{work}/keyed.db"
    write_refit_turns(store, log, "b:refit-user", 30)
    extra = [
        "--keys",
        str(keys),
        "--log",
        str(log),
        "--log-content",
        "--max-refit-labels",
        "40",
        "--max-refits-per-tenant",
        "1",
        "--body-timeout-s",
        "1",
    ]
    with serve(store, *extra, log_dir=work) as server:
        yield server, made, log


@pytest.fixture(scope="module")
def loose(work):
    """A server without keys, logging content."""
    with persona_server(
        work, "loose", extra=["--log", str(work / "loose-log.db"), "--log-content"]
    ) as server:
        yield server


def _recall(c: httpx.Client, actor: str, message: str, session: str = "s") -> dict:
    r = c.post("/v1/recall", json={"actor_id": actor, "message": message, "session_id": session})
    assert r.status_code == 200, r.text
    return r.json()


def _decisions(c: httpx.Client, **params: object) -> list[dict]:
    r = c.get("/v1/decisions", params={"limit": 100, **params})
    assert r.status_code == 200, r.text
    return r.json()["decisions"]


# ---- N1: an id or cursor of 2**63 or more was SQLite's overflow, a 500 ---------------------------------
def test_n1_ids_and_cursors_past_2_63_are_a_422_naming_them(keyed):
    server, keys, _ = keyed
    with server.client(keys["a-admin"]) as c:
        answers = {
            "path": c.get(f"/v1/decisions/{HUGE}"),
            "cursor": c.get("/v1/decisions", params={"cursor": "99999999999999999999"}),
            "labels cursor": c.get("/v1/labels", params={"cursor": HUGE}),
            "records cursor": c.get("/v1/records", params={"actor_id": "x", "cursor": HUGE}),
            "decision_id": c.post("/v1/labels", json={"decision_id": 99999999999999999999999, "gate": True}),
            "negative": c.post("/v1/labels", json={"decision_id": -1, "gate": True}),
        }
        for what, answer in answers.items():
            assert answer.status_code == 422, (what, answer.text)
            assert strict_json(answer.text)["error"]["status"] == 422
        assert answers["decision_id"].json()["error"]["field"] == "decision_id"
        # the largest id the databases hold is simply absent
        assert c.get(f"/v1/decisions/{HUGE - 1}").status_code == 404
    assert "Traceback" not in server.stderr()


# ---- N2: the refit preview is a bounded job -----------------------------------------------------------
def test_n2_a_preview_over_the_label_cap_is_a_413_naming_it(keyed):
    server, keys, _ = keyed
    with server.client(keys["a-admin"]) as c:
        for i in range(41):
            _recall(c, "capped", f"What should I cook tonight? {i}")
        for turn in _decisions(c, actor_id="capped"):
            assert c.post("/v1/labels", json={"decision_id": turn["id"], "gate": True}).status_code == 200
        plan = c.get("/v1/refit-preview/gate").json()
        assert plan["over_limit"] is True and plan["max_labels"] == 40
        refused = c.post("/v1/refit-preview/gate")
        assert refused.status_code == 413
        assert "--max-refit-labels" in refused.json()["error"]["message"]
        assert refused.json()["error"]["field"] == "labels"
        # forgetting the actor takes its labels out of every later fit
        assert c.delete("/v1/actors/capped").json()["deleted_labels"] == 41
        assert c.get("/v1/refit-preview/gate").json()["turns"] == 0


def test_n2_a_preview_whose_client_goes_away_is_stopped(keyed):
    """Tenant b's 30 labelled turns: a preview abandoned after 0.2 s is cancelled (the server says
    so), and frees b's one slot (--max-refits-per-tenant 1) for the next, which runs to the end."""
    server, keys, _ = keyed
    with server.client(keys["b-admin"], timeout=0.2) as c, pytest.raises(httpx.TimeoutException):
        c.post("/v1/refit-preview/gate")
    deadline = time.monotonic() + 60
    while "cancelled: the client went away" not in server.stderr():
        assert time.monotonic() < deadline, server.stderr()[-2000:]
        time.sleep(0.2)
    assert "refit preview (gate) of tenant b: cancelled: the client went away" in server.stderr()
    with server.client(keys["b-admin"], timeout=300) as c:
        done = c.post("/v1/refit-preview/gate")
    assert done.status_code == 200, done.text
    assert done.json()["turns"] == 30


async def test_n2_tenants_take_turns_and_one_tenant_cannot_queue_more_than_its_share():
    import anyio

    from recallwise.serve.access import ServiceError
    from recallwise.serve.inspector import FairQueue

    queue = FairQueue(workers=1, per_tenant=3)
    order: list[str] = []
    # a1 holds the only slot until the refusal below has been checked (a sleep here would let a1
    # finish first on a loaded machine, and a's fourth request would then fit in its share)
    release = anyio.Event()

    async def preview(name: str, tenant: str) -> None:
        async with queue.slot(tenant):
            order.append(name)
            await release.wait()

    async with anyio.create_task_group() as group:
        for name, tenant in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("c1", "c")]:
            group.start_soon(preview, name, tenant)
            await anyio.sleep(0)  # each enters the queue in this order
        await anyio.sleep(0)
        with pytest.raises(ServiceError) as refused:  # a's three wait or run already
            async with queue.slot("a"):
                pass
        assert refused.value.status == 429
        release.set()
    # a1 ran first; then b and c had their turns before a's second and third
    assert order == ["a1", "b1", "c1", "a2", "a3"]
    assert queue.running == 0 and queue.waiting == 0

    # a wait that is cancelled leaves the queue
    queue = FairQueue(workers=1, per_tenant=1)
    async with queue.slot("a"):
        with anyio.move_on_after(0.05):
            async with queue.slot("b"):
                raise AssertionError("b ran while a held the only slot")
        assert queue.waiting == 0
    async with queue.slot("b"):
        assert queue.running == 1


def test_n2_a_fit_past_its_time_is_stopped():
    from recallwise.serve.refit import RefitStopped, Stop

    stop = Stop(timeout_s=60.0)
    stop(64)  # within its time: nothing
    stop.cancelled.set()
    with pytest.raises(RefitStopped, match="the client went away"):
        stop(64)
    late = Stop(timeout_s=0.0, started=time.monotonic() - 1.0)
    with pytest.raises(RefitStopped, match="stopped after 0 s"):
        late(1)


# ---- N3: forgetting a user forgets their decisions and labels -------------------------------------------
def test_n3_forgetting_an_actor_deletes_their_decision_log_and_labels_and_says_so(keyed):
    server, keys, log = keyed
    with server.client(keys["a-admin"]) as c:
        assert (
            c.post(
                "/v1/records", json={"actor_id": "alice", "records": [{"text": "Alice is vegetarian."}]}
            ).status_code
            == 200
        )
        _recall(c, "alice", DINNER)
        _recall(c, "alice", "Plan my dinner")
        _recall(c, "bob", "Plan my dinner")
        mine = _decisions(c, actor_id="alice")
        assert [d["message"] for d in mine] == ["Plan my dinner", DINNER]
        records = {x["id"]: True for x in mine[-1]["candidates"]}
        labelled = {"decision_id": mine[-1]["id"], "gate": True, "records": records or None}
        assert c.post("/v1/labels", json=labelled).status_code == 200
        forgot = c.delete("/v1/actors/alice")
        assert forgot.status_code == 200
        assert forgot.json() == {
            "actor_id": "alice",
            "deleted_records": 1,
            "deleted_events": 0,
            "deleted_decisions": 2,
            "deleted_labels": 1 + len(records),
        }
        after = c.get("/v1/decisions", params={"actor_id": "alice"})
        assert after.json()["decisions"] == []
        assert "vegetarian" not in c.get("/v1/labels").text and DINNER not in c.get("/v1/labels").text
        assert c.get(f"/v1/decisions/{mine[0]['id']}").status_code == 404
        assert len(_decisions(c, actor_id="bob")) == 1  # another actor's turns stay
    # gone from the file itself, not only from its queries (secure_delete, the WAL checkpointed)
    on_disk = b"".join(p.read_bytes() for p in log.parent.glob(log.name + "*"))
    assert b"Alice is vegetarian" not in on_disk and DINNER.encode() not in on_disk


def test_n3_forgetting_in_python_and_over_mcp(tmp_path):
    import anyio
    from mcp import Client

    from recallwise import DecisionLog, MemoryRecord, RecallPolicy
    from recallwise.serve.mcp import FORGET_EVERYTHING, build_mcp_server
    from recallwise.serve.service import MemoryService

    store = open_store(f"sqlite:///{tmp_path}/m.db")
    store.add_records([MemoryRecord(actor_id="u", namespace="/facts/u", text="U is vegetarian.")])
    log = DecisionLog(tmp_path / "log.db")
    policy = RecallPolicy(store, namespaces=["/facts/{actorId}"], log=log)
    turn = policy.recall(DINNER, actor_id="u", session_id="s")
    assert turn.retrieved
    (logged,) = log.turns()
    log.add_labels(logged.id, gate=True)
    assert policy.forget_actor("u") == {"records": 1, "events": 0, "decisions": 1, "labels": 1}
    assert log.turns() == [] and log.labelled_turns() == [] and store.list_records(actor_id="u") == []
    policy.close()
    log.close()

    service = MemoryService.open(
        open_store(f"sqlite:///{tmp_path}/mcp.db"),
        batch_embeddings=False,
        log=DecisionLog(tmp_path / "mcp-log.db"),
    )

    async def run() -> None:
        async with Client(build_mcp_server(service, actor_id="me")) as client:
            assert not (await client.call_tool("remember", {"text": "I am vegetarian."})).is_error
            assert not (await client.call_tool("recall", {"message": DINNER})).is_error
            refused = await client.call_tool("forget_everything", {"confirm": "yes"})
            assert refused.is_error and service.store.count_records() > 0
            done = await client.call_tool("forget_everything", {"confirm": FORGET_EVERYTHING})
            assert not done.is_error, done
            counts = done.structured_content
            assert counts["deleted_records"] >= 1 and counts["deleted_decisions"] == 1
            assert service.store.count_records() == 0 and service.policy.log.turns() == []

    try:
        anyio.run(run)
    finally:
        service.close()


def test_n3_deleting_one_record_takes_its_text_and_labels_out_of_the_log(tmp_path):
    from recallwise import DecisionLog, MemoryRecord
    from recallwise.serve.access import LOCAL
    from recallwise.serve.service import MemoryService
    from recallwise.testing import ScriptedDecider

    store = open_store(f"sqlite:///{tmp_path}/m.db")
    kept, gone = store.add_records(
        [
            MemoryRecord(actor_id="u", namespace="/facts/u", text="U keeps bees."),
            MemoryRecord(actor_id="u", namespace="/facts/u", text="U is vegetarian."),
        ]
    )
    service = MemoryService.open(
        store,
        decider=ScriptedDecider(gate=0.95, judge=0.9, local=True),
        batch_embeddings=False,
        namespaces=["/facts/{actorId}"],
        log=DecisionLog(tmp_path / "log.db"),
    )
    try:
        service.recall(LOCAL, "u", DINNER)
        log = service.policy.log
        (turn,) = log.turns()
        log.add_labels(turn.id, gate=True, records={kept.id: True, gone.id: True})
        service.delete_record(LOCAL, gone.id)
        (after,) = log.turns()
        texts = {c["id"]: c.get("text") for c in after.candidates}
        assert texts == {kept.id: "U keeps bees.", gone.id: None}  # its id and verdict stay
        assert after.record_labels == {kept.id: True} and after.gate_label is True
    finally:
        service.close()
    on_disk = b"".join(p.read_bytes() for p in tmp_path.glob("log.db*"))
    assert b"U is vegetarian" not in on_disk


# ---- N4: repeated judge ids made one verdict stand for two records -----------------------------------
def test_n4_repeated_candidate_ids_are_refused_naming_the_second(keyed):
    server, keys, _ = keyed
    body = {
        "actor_id": "bob",
        "message": "what coffee do I like?",
        "candidates": [
            {"text": "Has a cat named Tom", "id": "a"},
            {"text": "Likes oat flat whites", "id": "a"},
        ],
    }
    with server.client(keys["a-recall"]) as c:
        refused = c.post("/v1/judge", json=body)
        assert refused.status_code == 422 and refused.json()["error"]["field"] == "candidates.1.id"
        body["candidates"][1]["id"] = "b"
        kept = c.post("/v1/judge", json=body).json()
        assert [v["id"] for v in kept["candidates"]] == ["a", "b"]
        assert all((v["judge_p"] is None) != v["kept"] for v in kept["candidates"])


# ---- N5: a PostgreSQL password or host was printed -----------------------------------------------------
def test_n5_no_password_in_help_or_errors(tmp_path):
    env = {**os.environ, "RECALLWISE_STORE": "postgresql://postgres:S3cretPW@db.internal:1/postgres"}
    exe = [sys.executable, "-m", "recallwise"]
    for command in ("serve", "search", "ingest"):
        shown = subprocess.run(
            [*exe, command, "--help"], capture_output=True, text=True, env=env, timeout=120
        )
        assert shown.returncode == 0 and "S3cretPW" not in shown.stdout + shown.stderr
        assert "$RECALLWISE_STORE" in shown.stdout
    dsn = "host=127.0.0.1 port=1 user=postgres password=DsnPw55"
    refused = subprocess.run(
        [*exe, "search", "tea", "--store", dsn], capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2 and "DsnPw55" not in refused.stdout + refused.stderr
    assert "password=***" in refused.stderr and "Traceback" not in refused.stderr


def test_n5_redact_url_hides_a_dsn_password():
    from recallwise.stores.urls import redact_url

    assert redact_url("host=h user=u password=PW port=5") == "host=h user=u password=*** port=5"
    assert redact_url("host=h password='a b\\' c' user=u") == "host=h password=*** user=u"
    assert redact_url("postgresql://u:PW@h/db?sslpassword=X") == "postgresql://u:***@h/db?sslpassword=***"


def _failing_app(keyring_path: Path | None, store_url: str):
    """An in-process app whose store fails like a PostgreSQL server that went away, naming its host."""
    from fastapi.testclient import TestClient

    from recallwise.serve.app import create_app
    from recallwise.serve.auth import Keyring
    from recallwise.serve.service import MemoryService

    store = open_store(store_url)
    service = MemoryService.open(store, batch_embeddings=False)
    why = "cannot connect to PostgreSQL at postgresql://u:***@db.internal:5432/prod: server unreachable"

    def down(*args: object, **kwargs: object) -> object:
        raise StoreError(why, kind="unavailable")

    store.count_records = down  # type: ignore[method-assign]
    store.search = down  # type: ignore[method-assign]
    store.list_records = down  # type: ignore[method-assign]
    store.add_records = down  # type: ignore[method-assign]
    keyring = Keyring.load(keyring_path) if keyring_path else None
    return TestClient(create_app(service, keyring), base_url="http://127.0.0.1"), service


def test_n5_readyz_and_recall_errors_name_no_host_to_a_tenant(tmp_path):
    keys = tmp_path / "keys.yaml"
    made = _keys(keys)
    client, _service = _failing_app(keys, f"sqlite:///{tmp_path}/m.db")
    with client:
        anonymous = client.get("/readyz")
        assert anonymous.status_code == 503 and anonymous.json()["error"]["message"] == "not ready"
        tenant = client.get("/readyz", headers={"authorization": f"Bearer {made['a-admin']}"})
        assert tenant.json()["error"]["message"] == "not ready"
        operator = client.get("/readyz", headers={"authorization": f"Bearer {made['ops']}"})
        assert "db.internal" in operator.json()["error"]["message"]
        recall = client.post(
            "/v1/recall",
            json={"actor_id": "u", "message": DINNER},
            headers={"authorization": f"Bearer {made['a-recall']}"},
        ).json()
        assert recall["errors"] and "store:unavailable" in recall["error_kinds"]
        assert not any("db.internal" in e or "5432" in e or "prod" in e for e in recall["errors"])


# ---- N6: a libpq URI with its parameters in the query string was a traceback ---------------------------
def test_n6_libpq_uris_are_read_as_libpq_reads_them():
    pytest.importorskip("psycopg")
    from recallwise.stores.postgres.connection import split_url

    conninfo, own, shown = split_url("postgresql:///db?host=127.0.0.1&port=5432&user=u&schema=s")
    assert conninfo == "postgresql:///db?host=127.0.0.1&port=5432&user=u" and own == {"schema": "s"}
    assert shown == "postgresql:///db?host=127.0.0.1&port=5432&user=u&schema=s"
    with pytest.raises(UsageError, match=r"not a valid PostgreSQL URL: .*password=\*\*\*.*bogus"):
        split_url("postgresql:///db?host=h&password=PW&bogus=1")


def test_n6_a_libpq_uri_is_one_line_not_a_traceback():
    uri = "postgresql:///postgres?host=127.0.0.1&port=1&user=postgres"
    done = subprocess.run(
        [sys.executable, "-m", "recallwise", "search", "tea", "--store", uri],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "port 1" in done.stderr


# ---- N7: the refit preview was a GET another site's <img> could fire -----------------------------------
def test_n7_cross_site_requests_cannot_compute_or_write(loose, keyed):
    cross = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors"}
    with loose.client() as c:
        assert c.get("/v1/refit-preview/gate", headers=cross).status_code == 403
        assert c.post("/v1/refit-preview/gate", headers=cross).status_code == 403
        assert (
            c.post("/v1/recall", json={"actor_id": "demo_user", "message": DINNER}, headers=cross).status_code
            == 403
        )
        assert c.get("/v1/refit-preview/gate", headers={"sec-fetch-site": "same-origin"}).status_code != 403
        assert c.get("/ui", headers=cross).status_code == 200  # a link to the page still opens it
        assert c.get("/healthz", headers=cross).status_code == 200
    server, keys, _ = keyed
    with server.client(keys["a-admin"]) as c:
        body = {"actor_id": "x", "records": [{"text": "x"}]}
        foreign = c.post("/v1/records", json=body, headers={"origin": "https://evil.example.com"})
        assert foreign.status_code == 403 and foreign.json()["error"]["field"] == "origin"
        assert c.post("/v1/records", json=body, headers={"origin": server.url}).status_code == 200
        assert c.delete("/v1/actors/x", headers=cross).status_code == 403
        # behind a proxy that rewrites Host: the browser's own word (same-origin), or the proxy's
        # X-Forwarded-Host, says the page is this site's
        proxied = "https://memory.example.com"
        same = {"origin": proxied, "sec-fetch-site": "same-origin"}
        assert c.post("/v1/records", json=body, headers=same).status_code == 200
        forwarded = {"origin": proxied, "x-forwarded-host": "memory.example.com"}
        assert c.post("/v1/records", json=body, headers=forwarded).status_code == 200


# ---- N8: numbers and booleans were converted from strings ----------------------------------------------
COERCED = [
    ("/v1/recall", {"actor_id": "x", "message": "hi", "options": {"top_k": "5"}}, "options.top_k"),
    ("/v1/recall", {"actor_id": "x", "message": "hi", "options": {"stock": "yes"}}, "options.stock"),
    (
        "/v1/recall",
        {"actor_id": "x", "message": "hi", "options": {"max_records": 2.0}},
        "options.max_records",
    ),
    ("/v1/recall", {"actor_id": 5, "message": "hi"}, "actor_id"),
    (
        "/v1/judge",
        {"actor_id": "x", "message": "tea", "candidates": [{"text": "t", "score": "0.5"}]},
        "candidates.0.score",
    ),
    ("/v1/judge", {"actor_id": "x", "message": "tea", "candidates": [], "gate": 1}, "gate"),
    ("/v1/events", {"actor_id": "x", "messages": [{"text": "I like tea"}], "extract": 1}, "extract"),
    ("/v1/search", {"actor_id": "x", "query": "hi", "limit": True}, "limit"),
    ("/v1/search", {"actor_id": "x", "query": "hi", "limit": "3"}, "limit"),
    ("/v1/labels", {"decision_id": "1", "gate": True}, "decision_id"),
    ("/v1/labels", {"decision_id": 1, "gate": "yes"}, "gate"),
    ("/v1/labels", {"decision_id": 1, "records": {"r": 1}}, "records.r"),
]


@pytest.mark.parametrize(("path", "body", "field"), COERCED, ids=[f"{p} {f}" for p, _, f in COERCED])
def test_n8_no_value_is_converted_from_another_json_type(keyed, path, body, field):
    server, keys, _ = keyed
    with server.client(keys["a-admin"]) as c:
        answer = c.post(path, json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field


def test_n8_a_float_field_still_takes_an_integer(keyed):
    server, keys, _ = keyed
    body = {"actor_id": "x", "message": "tea", "candidates": [{"text": "likes tea", "score": 1}]}
    with server.client(keys["a-recall"]) as c:
        assert c.post("/v1/judge", json=body).status_code == 200


# ---- N9: the log row was written after the answer; --log-durable writes it first ------------------------
def test_n9_with_log_durable_every_acknowledged_turn_survives_sigkill(work):
    log = work / "durable-log.db"
    with persona_server(work, "durable", extra=["--log", str(log), "--log-durable"]) as server:
        with server.client() as c:
            for i in range(25):
                _recall(c, "demo_user", f"{DINNER} {i}")
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=30)
    with sqlite3.connect(log) as conn:
        assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == 25
    conn.close()


def test_n9_a_durable_write_is_committed_when_it_returns(tmp_path):
    from recallwise import DecisionLog
    from recallwise.policy.trace import Trace

    log = DecisionLog(tmp_path / "d.db", durable=True)
    trace = Trace(gated=True, gate_open=False, gate_p=0.1, gate_threshold=0.5)
    log.write(trace, actor_id="u", session_id=None, decider="x", message="hello")
    with sqlite3.connect(tmp_path / "d.db") as other:  # no settle(): the row is there already
        assert other.execute("SELECT count(*) FROM turns").fetchone()[0] == 1
    other.close()
    log.close()


# ---- N10: the refit preview showed the server's log path and built commands from Host --------------------
def test_n10_the_refit_commands_name_no_server_path_and_nothing_of_the_request(keyed):
    server, keys, log = keyed
    with server.client(keys["b-admin"], timeout=300) as c:
        evil = {"host": "evil.example.com"}
        plan = c.get("/v1/refit-preview/judge", headers=evil)
        assert plan.status_code == 200
        for answer in (plan.text, json.dumps(plan.json()["commands"])):
            assert str(log.parent) not in answer and "evil.example.com" not in answer
        assert plan.json()["commands"]["export"].startswith(
            'curl -s -H "Authorization: Bearer $RECALLWISE_KEY" "$RECALLWISE_URL/'
        )


# ---- N11: /docs and /redoc loaded Swagger UI and ReDoc from a CDN ----------------------------------------
def test_n11_no_cdn_pages_on_the_inspectors_origin(loose):
    with loose.client() as c:
        assert c.get("/docs").status_code == 404 and c.get("/redoc").status_code == 404
        assert c.get("/openapi.json").status_code == 200


# ---- N12: JSON with message content could be cached and sniffed --------------------------------------
def test_n12_every_answer_is_no_store_and_nosniff(keyed, loose):
    server, keys, _ = keyed
    with server.client(keys["a-admin"]) as c:
        answers = [
            c.get("/v1/decisions"),
            c.post("/v1/recall", json={"actor_id": "x", "message": DINNER}),
            c.get("/v1/decisions/1"),  # an error
            c.get("/healthz"),
        ]
    with loose.client() as c:
        answers.append(c.get("/v1/labels", headers={"host": "evil.example.com"}))  # the 421 of HostCheck
    for answer in answers:
        assert answer.headers["cache-control"] == "no-store", answer.request.url
        assert answer.headers["x-content-type-options"] == "nosniff"


# ---- N13: decision ids counted every tenant's turns -----------------------------------------------------
def test_n13_decision_ids_say_nothing_of_the_logs_traffic(keyed):
    server, keys, _ = keyed
    with server.client(keys["a-admin"]) as a, server.client(keys["b-admin"]) as b:
        mine = [_recall(a, "counted", f"hello {i}") for i in range(3)]
        assert len(mine) == 3
        _recall(b, "other", "hello")
        ids = [d["id"] for d in _decisions(a, actor_id="counted")]
    assert len(ids) == 3 and all(2**52 <= i < 2**53 for i in ids)
    gaps = {abs(x - y) for x, y in itertools.pairwise(ids)}
    assert 1 not in gaps and len(gaps) == 2  # not consecutive, not evenly spaced


def test_n13_public_ids_are_one_to_one_and_keyed():
    from recallwise.policy.log import ID_BASE, public_id

    ids = {public_id(b"k" * 32, seq) for seq in range(1, 20_001)}
    assert len(ids) == 20_000 and min(ids) >= ID_BASE and max(ids) < 2**53
    assert public_id(b"k" * 32, 7) != public_id(b"j" * 32, 7)


# ---- N14: /v1/systemone took example labels of the wrong type -------------------------------------------
@pytest.mark.parametrize(
    ("question", "field"),
    [
        (
            {"type": "noul", "instructions": "x", "examples": [{"state": "s", "label": "yes"}]},
            "questions.q.examples.0.label",
        ),
        (
            {
                "type": "choice",
                "instructions": "x",
                "criteria": {"tea": "t", "coffee": "c"},
                "examples": [{"state": "s", "label": True}],
            },
            "questions.q.examples.0.label",
        ),
        (
            {
                "type": "choice",
                "instructions": "x",
                "criteria": {"tea": "t"},
                "examples": [{"state": "s", "label": "juice"}],
            },
            "questions.q.examples.0.label",
        ),
    ],
)
def test_n14_example_labels_are_of_their_questions_type(keyed, question, field):
    server, keys, _ = keyed
    with server.client(keys["a-recall"]) as c:
        refused = c.post("/v1/systemone", json={"state": "hi", "questions": {"q": question}})
        assert refused.status_code == 422 and refused.json()["error"]["field"] == field
        good = {"type": "noul", "instructions": "x", "examples": [{"state": "s", "label": True}]}
        assert c.post("/v1/systemone", json={"state": "hi", "questions": {"q": good}}).status_code == 200


# ---- N16: a half-sent body held its connection open ------------------------------------------------------
def test_n16_a_body_not_sent_in_time_is_a_408_and_its_connection_closed(keyed):
    server, keys, _ = keyed
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
        sock.sendall(
            b"POST /v1/recall HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {keys['a-recall']}\r\n".encode()
            + b'Content-Length: 200\r\n\r\n{"actor_id": '
        )
        began = time.monotonic()
        answer = b""
        while chunk := sock.recv(65536):  # until the server closes the connection
            answer += chunk
        waited = time.monotonic() - began
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"--body-timeout-s" in answer and waited < 15


# ---- N18: the log had no retention and GET /v1/labels no paging -------------------------------------------
def test_n18_retention_deletes_old_turns_and_their_labels(tmp_path):
    from recallwise import DecisionLog
    from recallwise.policy.trace import Trace

    path = tmp_path / "d.db"
    with DecisionLog(path) as log:
        for message in ("old", "new"):
            log.write(
                Trace(gated=True, gate_open=True), actor_id="u", session_id=None, decider="x", message=message
            )
        old = next(t for t in log.turns() if t.message == "old")
        log.add_labels(old.id, gate=True)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE turns SET at = '2020-01-01T00:00:00.000+00:00' WHERE message = 'old'")
    conn.close()
    with DecisionLog(path, retention_days=30) as log:
        assert [t.message for t in log.turns()] == ["new"] and log.pruned == 1
        assert log.labelled_turns() == []
    with pytest.raises(UsageError, match="above 0"):
        DecisionLog(path, retention_days=0)


def test_n18_labels_are_paged(keyed):
    server, keys, _ = keyed
    with server.client(keys["b-admin"]) as c:
        every = c.get("/v1/labels", params={"limit": 10_000}).json()
        assert every["next_cursor"] is None and len(every["labels"]) == 30
        pages, cursor = [], None
        while True:
            page = c.get("/v1/labels", params={"limit": 7, **({"cursor": cursor} if cursor else {})}).json()
            pages.append(page["labels"])
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert [len(p) for p in pages] == [7, 7, 7, 7, 2]
        assert [t["decision_id"] for p in pages for t in p] == [t["decision_id"] for t in every["labels"]]
        assert c.get("/v1/labels", params={"limit": 10_001}).status_code == 422
    with server.client(keys["a-admin"]) as c:  # another tenant's turn is no cursor of a's
        assert (
            c.get("/v1/labels", params={"cursor": cursor or every["labels"][0]["decision_id"]}).status_code
            == 422
        )


def test_n18_serve_takes_log_retention_days(tmp_path, capsys):
    from recallwise.cli import main

    assert main(["serve", "--store", f"sqlite:///{tmp_path}/m.db", "--log-retention-days", "7"]) == 2
    assert "--log-retention-days: give --log FILE too" in capsys.readouterr().err


# ---- N19: a 503 on a read said "nothing was written" ---------------------------------------------------
def test_n19_a_read_on_a_store_that_is_down_says_only_that(tmp_path):
    client, _ = _failing_app(None, f"sqlite:///{tmp_path}/m.db")
    with client:
        read = client.get("/v1/records", params={"actor_id": "u"})
        assert (
            read.status_code == 503
            and read.json()["error"]["message"] == "the store is unavailable (unavailable)"
        )
        write = client.post("/v1/records", json={"actor_id": "u", "records": [{"text": "x"}]})
        assert write.status_code == 503 and write.json()["error"]["message"].endswith("; nothing was written")


# ---- N20: /ui/ redirected to the Host header -------------------------------------------------------------
def test_n20_ui_with_a_slash_redirects_to_this_servers_own_path(keyed):
    server, _, _ = keyed
    with server.client(follow_redirects=False) as c:
        moved = c.get("/ui/", headers={"host": "evil.example.com"})
        assert moved.status_code == 308 and moved.headers["location"] == "/ui"
        assert c.get("/v1/records/", headers={"host": "evil.example.com"}).status_code == 404
