"""One decision log across replicas: two real ``recallwise serve`` processes over one real
PostgreSQL, both ``--log`` naming it. A turn served by one is listed, labelled and refitted on
through the other (each turn naming its replica), tenants stay apart, and forgetting an actor on
one clears it for both. And a log whose own database stops: turns are answered, rows dropped and
counted, and the log writes again once it is back."""

from __future__ import annotations

import time
import uuid
from contextlib import ExitStack

import pytest

from recallwise.demo import seed_persona
from recallwise.serve.auth import add_key
from recallwise.stores import open_store
from serve_server import persona_server, serve

pytest.importorskip("fastapi")
pytest.importorskip("psycopg")
pytestmark = [pytest.mark.slow, pytest.mark.postgres]

DRINK = "I'd like a drink, what should I get?"


def _with_schema(url: str, schema: str) -> str:
    return url + ("&" if "?" in url else "?") + f"schema={schema}"


@pytest.fixture(scope="module")
def replicas(tmp_path_factory, pg_url):
    import psycopg

    work = tmp_path_factory.mktemp("shared-log")
    tag = uuid.uuid4().hex[:8]
    store_url = _with_schema(pg_url, f"store_{tag}")
    log_url = _with_schema(pg_url, f"log_{tag}")
    keys = work / "keys.yaml"
    made = {t: add_key(keys, tenant=t, scopes=["recall", "write", "admin"], label=t) for t in ("a", "b")}
    with open_store(store_url) as store:
        seed_persona(store, "a:demo_user")
        seed_persona(store, "b:demo_user")
    with ExitStack() as stack:
        servers = [
            stack.enter_context(
                serve(
                    store_url,
                    "--keys",
                    str(keys),
                    "--log",
                    log_url,
                    "--log-content",
                    "--replica-name",
                    name,
                    log_dir=work,
                )
            )
            for name in ("replica-a", "replica-b")
        ]
        yield servers, made
    with psycopg.connect(pg_url, autocommit=True) as admin:
        for schema in (f"store_{tag}", f"log_{tag}"):
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _listed(client, actor: str, *, wait_s: float = 10.0) -> list[dict]:
    """The actor's turns as a replica lists them, once the other replica's row is in (its
    thread writes it just after the answer)."""
    deadline = time.monotonic() + wait_s
    while True:
        page = client.get("/v1/decisions", params={"actor_id": actor})
        assert page.status_code == 200, page.text
        if page.json()["decisions"] or time.monotonic() > deadline:
            return page.json()["decisions"]
        time.sleep(0.2)


def test_a_turn_on_one_replica_is_listed_labelled_and_forgotten_through_the_other(replicas):
    (one, two), keys = replicas
    with one.client(keys["a"]) as a1, two.client(keys["a"]) as a2, two.client(keys["b"]) as b2:
        assert a1.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK}).status_code == 200
        (turn,) = _listed(a2, "demo_user")
        assert turn["message"] == DRINK and turn["replica"] == "replica-a"
        assert b2.get("/v1/decisions", params={"actor_id": "demo_user"}).json()["decisions"] == []
        assert b2.get(f"/v1/decisions/{turn['id']}").status_code == 404  # another tenant's

        labelled = a2.post("/v1/labels", json={"decision_id": turn["id"], "gate": True})
        assert labelled.status_code == 200, labelled.text
        assert [t["decision_id"] for t in a1.get("/v1/labels").json()["labels"]] == [turn["id"]]
        plan = a1.get("/v1/refit-preview/gate").json()
        assert plan["turns"] == 1  # A's refit reads the label given on B

        # a turn on B: A lists both, newest first, each naming its replica
        assert a2.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK}).status_code == 200
        time.sleep(1.0)
        listed = a1.get("/v1/decisions", params={"actor_id": "demo_user"}).json()["decisions"]
        assert [t["replica"] for t in listed] == ["replica-b", "replica-a"]

        forgotten = a2.delete("/v1/actors/demo_user")
        assert forgotten.status_code == 200 and forgotten.json()["deleted_decisions"] == 2
        assert a1.get("/v1/decisions", params={"actor_id": "demo_user"}).json()["decisions"] == []
        assert a1.get("/v1/labels").json()["labels"] == []
        assert b2.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK}).json()["records"]

        health = a1.get("/v1/log").json()
        assert health["backend"] == "postgresql" and health["replica"] == "replica-a"
        assert health["writing"] is True and health["dropped"] == 0 and health["written"] >= 1
        metrics = one.client().get("/metrics")
        if metrics.status_code == 200:
            assert 'recallwise_log_rows_total{outcome="dropped"} 0.0' in metrics.text


def test_while_the_logs_database_is_stopped_the_service_answers_and_counts_the_dropped_rows(tmp_path):
    import pg_server

    try:
        log_server = pg_server.start_server()
    except pg_server.ServerUnavailable as exc:
        pytest.skip(f"no PostgreSQL for the tests: {exc}")
    try:
        logged = ("--log", log_server.url, "--log-content")
        with persona_server(tmp_path, "outage", extra=logged) as server, server.client() as c:
            assert c.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK}).status_code == 200
            assert len(c.get("/v1/decisions").json()["decisions"]) == 1  # its row is in
            log_server.halt()
            for _ in range(20):
                r = c.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK})
                assert r.status_code == 200 and any("flat white" in x["text"] for x in r.json()["records"])
            deadline = time.monotonic() + 60
            while c.get("/v1/log").json()["dropped"] < 20 and time.monotonic() < deadline:
                time.sleep(0.5)
            health = c.get("/v1/log").json()
            assert health["dropped"] == 20 and health["writing"] is False
            assert health["last_error"] in ("unavailable", "full")
            assert "127.0.0.1" not in str(health)
            down = c.get("/v1/decisions")
            assert down.status_code == 503 and "recallwise-test" not in down.text
            metrics = c.get("/metrics")
            assert 'recallwise_log_rows_total{outcome="dropped"} 20.0' in metrics.text
            log_server.resume()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                c.post("/v1/recall", json={"actor_id": "demo_user", "message": "And a snack?"})
                time.sleep(0.5)
                if c.get("/v1/log").json()["writing"]:
                    break
            assert c.get("/v1/log").json()["writing"] is True
            messages = [t.get("message") for t in c.get("/v1/decisions").json()["decisions"]]
            assert "And a snack?" in messages
    finally:
        log_server.stop()
