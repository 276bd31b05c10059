"""``recallwise serve`` when things break: a failing decider, a store that goes down, SIGTERM with
a request in flight, and the start-up mistakes a user makes (each a real server or command)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import uuid

import httpx
import pytest

from recallwise.bench.serve import free_port
from recallwise.demo import seed_persona
from recallwise.serve.auth import Keyring, add_key, digest
from recallwise.stores import open_store
from serve_server import serve
from wire_servers import serve_socket, systemone_fake

pytest.importorskip("fastapi")
pytestmark = pytest.mark.slow

DRINK = "I'd like a drink, what should I get?"


def _seeded(tmp_path, name="m.db") -> str:
    url = f"sqlite:///{tmp_path}/{name}"
    with open_store(url) as store:
        seed_persona(store)
    return url


def test_a_dead_decider_fails_open_to_the_stock_behaviour_counted(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    with (
        serve(_seeded(tmp_path), "--decider", "systemone", "--url", dead, log_dir=tmp_path) as server,
        server.client() as c,
    ):
        body = c.post("/v1/recall", json={"actor_id": "demo_user", "message": "Hello!"})
        assert body.status_code == 200
        recall = body.json()
        assert recall["retrieved"] and recall["records"]  # failed open: the stock behaviour
        assert recall["errors"] and any(k.startswith("decider:") for k in recall["error_kinds"])
        metrics = c.get("/metrics").text
    assert (
        'recallwise_decider_errors_total{arm="gated"} 1.0' in metrics
        or "recallwise_decider_errors_total" in metrics
    )
    assert any(
        line.startswith('recallwise_decider_errors_total{arm="gated"}') and float(line.split()[-1]) >= 1
        for line in metrics.splitlines()
    )


def test_sigterm_drains_a_request_in_flight(tmp_path):
    with serve_socket(systemone_fake()) as fake:
        fake.fail("slow", seconds=1.0)
        url = _seeded(tmp_path)
        with serve(url, "--decider", "systemone", "--url", fake.url, log_dir=tmp_path) as server:
            result: dict[str, object] = {}

            def ask() -> None:
                r = httpx.post(
                    server.url + "/v1/recall", json={"actor_id": "demo_user", "message": DRINK}, timeout=30
                )
                result["status"] = r.status_code
                result["body"] = r.json()

            asker = threading.Thread(target=ask)
            asker.start()
            deadline = time.monotonic() + 10
            while not fake.received and time.monotonic() < deadline:  # the request is in the server
                time.sleep(0.02)
            assert fake.received
            server.process.send_signal(signal.SIGTERM)
            asker.join(timeout=30)
            server.process.wait(timeout=30)
            assert result["status"] == 200 and "context" in result["body"]  # type: ignore[operator]
            with pytest.raises(httpx.HTTPError):  # and it stopped taking new ones
                httpx.get(server.url + "/healthz", timeout=2)


@pytest.mark.postgres
def test_a_store_that_goes_down(tmp_path, pg_url):
    """Writes 503, recall answers 200 with an empty context and the error, /readyz fails."""
    import psycopg
    from psycopg import sql

    role, password = f"rw_down_{uuid.uuid4().hex[:8]}", "down-pass"
    schema = f"down_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("CREATE EXTENSION IF NOT EXISTS vector")
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(password))
        )
        admin.execute(
            sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(sql.Identifier(schema), sql.Identifier(role))
        )
        dbname = admin.execute("SELECT current_database()").fetchone()[0]
        admin.execute(
            sql.SQL("GRANT CREATE ON DATABASE {} TO {}").format(sql.Identifier(dbname), sql.Identifier(role))
        )
    parts = httpx.URL(pg_url)
    url = (
        str(parts.copy_with(username=role, password=password))
        + ("&" if "?" in pg_url else "?")
        + f"schema={schema}"
    )
    try:
        with open_store(url) as store:
            seed_persona(store)
        with serve(url, log_dir=tmp_path) as server, server.client() as c:
            assert c.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK}).json()["records"]
            with psycopg.connect(pg_url, autocommit=True) as admin:
                admin.execute(sql.SQL("ALTER ROLE {} NOLOGIN").format(sql.Identifier(role)))
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
                )
            write = c.post("/v1/records", json={"actor_id": "demo_user", "records": [{"text": "lost?"}]})
            assert write.status_code == 503 and "store" in write.json()["error"]["message"]
            assert "postgresql://" not in write.text and role not in write.text  # details: the log only
            recall = c.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK})
            assert recall.status_code == 200
            body = recall.json()
            assert body["context"] == "" and body["records"] == [] and body["errors"]
            # the store knows its database is unreachable: the probe's answer does not wait for the
            # pool's timeout (15 s), and names the store
            not_ready = c.get("/readyz", timeout=5)
            assert not_ready.status_code == 503 and "unreachable" in not_ready.json()["error"]["message"]
            assert c.get("/healthz").status_code == 200  # alive, not ready
            with psycopg.connect(pg_url, autocommit=True) as admin:
                admin.execute(sql.SQL("ALTER ROLE {} LOGIN").format(sql.Identifier(role)))
            deadline = time.monotonic() + 60  # the pool reconnects (the breaker's cool-down first)
            while c.get("/readyz").status_code != 200 and time.monotonic() < deadline:
                time.sleep(0.5)
            assert c.get("/readyz").status_code == 200
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
            )
            admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            admin.execute(
                sql.SQL("REVOKE ALL ON DATABASE {} FROM {}").format(
                    sql.Identifier(dbname), sql.Identifier(role)
                )
            )
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


# ---- start-up mistakes: one line, exit 2, nothing started ----------------------------------------------
def _recallwise(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recallwise", *args], capture_output=True, text=True, timeout=timeout
    )


def test_a_public_address_without_keys_is_refused(tmp_path):
    done = _recallwise("serve", "--store", f"sqlite:///{tmp_path}/x.db", "--host", "0.0.0.0", "--port", "0")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "without --keys" in lines[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "x.db").exists()


def test_a_bad_keys_file_is_one_line_naming_it(tmp_path):
    keys = tmp_path / "keys.yaml"
    keys.write_text("keys:\n  - id: k\n    sha256: abc\n    tenant: t\n")
    done = _recallwise("serve", "--store", f"sqlite:///{tmp_path}/x.db", "--keys", str(keys))
    assert done.returncode == 2
    assert str(keys) in done.stderr and "keys[0]" in done.stderr and "sha256" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_keys_new_prints_the_key_once_and_stores_only_its_digest(tmp_path):
    keys = tmp_path / "keys.yaml"
    done = _recallwise("keys", "new", "--keys", str(keys), "--tenant", "acme", "--scopes", "recall")
    assert done.returncode == 0
    key = done.stdout.strip()
    assert key.startswith("rw_") and key not in keys.read_text() and digest(key) in keys.read_text()
    principal = Keyring.load(keys).principal(key)
    assert principal is not None and principal.tenant == "acme" and principal.scopes == frozenset({"recall"})
    assert Keyring.load(keys).principal(key + "x") is None
    bad = _recallwise("keys", "new", "--keys", str(keys), "--tenant", "no:colons")
    assert bad.returncode == 2 and "tenant" in bad.stderr


def test_add_key_refuses_a_duplicate_label(tmp_path):
    keys = tmp_path / "k.json"
    add_key(keys, tenant="t", scopes=["recall"], label="same")
    with pytest.raises(Exception, match="exists already"):
        add_key(keys, tenant="t", scopes=["recall"], label="same")
