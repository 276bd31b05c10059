"""Scale-out: two ``recallwise serve`` replicas over one real PostgreSQL are one service.

Both start at once (the migration runs once, under its advisory lock), writes through either
are read through the other, concurrent writes from both are all kept, and no tenant reads
another's records through either replica. Follow-up memory is per replica: a session that
stays on its replica (session affinity) gets its follow-up; one that moves is decided on its
own message, and that is what docs/service.md says.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

import pytest

from bad_values import assert_each_refused_naming_its_field
from recallwise.demo import seed_persona
from recallwise.serve.auth import add_key
from recallwise.stores import open_store
from serve_server import serve

pytest.importorskip("fastapi")
pytestmark = [pytest.mark.slow, pytest.mark.postgres]

DINNER = "What should I have for dinner tonight?"


@pytest.fixture(scope="module")
def replicas(tmp_path_factory, pg_url):
    import psycopg
    from psycopg import sql

    work = tmp_path_factory.mktemp("replicas")
    schema = f"replicas_{uuid.uuid4().hex[:10]}"
    url = pg_url + ("&" if "?" in pg_url else "?") + f"schema={schema}"
    keys = work / "keys.yaml"
    made = {t: add_key(keys, tenant=t, scopes=["recall", "write", "admin"], label=t) for t in ("a", "b")}
    with ExitStack() as stack:
        pool = ThreadPoolExecutor(2)
        # both replicas start together on a schema that does not exist yet
        starting = [
            pool.submit(stack.enter_context, serve(url, "--keys", str(keys), log_dir=work)) for _ in range(2)
        ]
        servers = [f.result() for f in starting]
        with open_store(url) as store:
            seed_persona(store, "a:demo_user")
        yield servers, made, url
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def test_the_schema_was_migrated_once(replicas):
    import psycopg

    _, _, url = replicas
    base, _, query = url.partition("?")
    schema = query.split("schema=")[1]
    with psycopg.connect(base, autocommit=True) as conn:
        versions = conn.execute(
            f'SELECT version, count(*) FROM "{schema}".schema_version GROUP BY version'
        ).fetchall()
    assert versions and all(count == 1 for _, count in versions)


def test_a_write_through_one_is_read_through_the_other(replicas):
    (one, two), keys, _ = replicas
    with one.client(keys["a"]) as c1, two.client(keys["a"]) as c2:
        written = c1.post(
            "/v1/records", json={"actor_id": "reader", "records": [{"text": "Plays the cello."}]}
        )
        rid = written.json()["records"][0]["id"]
        assert rid in {
            r["id"] for r in c2.get("/v1/records", params={"actor_id": "reader"}).json()["records"]
        }
        recalled = c2.post(
            "/v1/recall", json={"actor_id": "demo_user", "message": "I'd like a drink, what should I get?"}
        )
        assert any("flat white" in r["text"] for r in recalled.json()["records"])


def test_concurrent_writes_through_both_are_all_kept(replicas):
    (one, two), keys, _ = replicas

    def write(i: int) -> str:
        server = (one, two)[i % 2]
        with server.client(keys["b"]) as c:
            body = c.post(
                "/v1/records",
                json={"actor_id": "busy", "records": [{"text": f"Busy fact {i}: likes number {i}."}]},
            ).json()
            c.post(
                "/v1/events",
                json={"actor_id": "busy", "messages": [{"text": f"message {i}"}], "extract": False},
            )
            return str(body["records"][0]["id"])

    with ThreadPoolExecutor(16) as pool:
        ids = set(pool.map(write, range(80)))
    with one.client(keys["b"]) as c:
        page = c.get("/v1/records", params={"actor_id": "busy", "limit": 100}).json()
    assert len(ids) == 80 and ids <= {r["id"] for r in page["records"]}


def test_no_tenant_reads_another_through_either_replica(replicas):
    (one, two), keys, _ = replicas
    with one.client(keys["a"]) as a:
        secret = a.post(
            "/v1/records", json={"actor_id": "demo_user", "records": [{"text": "A's vault code is 1234."}]}
        )
        rid = secret.json()["records"][0]["id"]
    for server in (one, two):
        with server.client(keys["b"]) as b:
            found = b.post(
                "/v1/search", json={"actor_id": "demo_user", "query": "vault code", "limit": 50}
            ).json()
            assert rid not in {r["id"] for r in found["results"]}
            assert b.delete(f"/v1/records/{rid}").status_code == 404


def test_follow_ups_need_session_affinity(replicas):
    (one, two), keys, _ = replicas
    with one.client(keys["a"]) as c1, two.client(keys["a"]) as c2:
        assert c1.post(
            "/v1/recall", json={"actor_id": "demo_user", "session_id": "stay", "message": DINNER}
        ).json()["retrieved"]
        stayed = c1.post(
            "/v1/recall", json={"actor_id": "demo_user", "session_id": "stay", "message": "go on"}
        ).json()
        assert stayed["follow_up"] and stayed["records"]
        c1.post("/v1/recall", json={"actor_id": "demo_user", "session_id": "move", "message": DINNER})
        moved = c2.post(
            "/v1/recall", json={"actor_id": "demo_user", "session_id": "move", "message": "go on"}
        ).json()
        assert not moved["follow_up"] and moved["records"] == []  # decided on "go on" alone


def test_values_no_store_keeps_are_a_422_on_postgresql_and_nothing_is_stored(replicas):
    """Issue 33, D3: NUL, lone surrogates and NaN used to be a 503 naming the database URL and its
    statements, after part of the request was stored."""
    (one, _), keys, url = replicas
    with one.client(keys["a"]) as c:
        assert_each_refused_naming_its_field(c, "nul1")
    with open_store(url) as store:
        assert store.list_events("a:nul1") == [] and store.list_records(actor_id="a:nul1") == []


def test_concurrent_identical_events_through_both_make_one_record(replicas):
    """Issue 33, D5: ten concurrent writes of one fact, five through each replica, made 8-10
    records; consolidation now holds the actor's advisory lock."""
    (one, two), keys, _ = replicas

    def post(i: int) -> int:
        with (one, two)[i % 2].client(keys["a"]) as c:
            return c.post(
                "/v1/events", json={"actor_id": "race", "messages": [{"text": "I live in Porto."}]}
            ).status_code

    with ThreadPoolExecutor(10) as pool:
        assert set(pool.map(post, range(10))) == {200}
    with two.client(keys["a"]) as c:
        records = c.get("/v1/records", params={"actor_id": "race"}).json()["records"]
    assert len([r for r in records if "Porto" in r["text"]]) == 1
