"""``recallwise serve`` end to end: a real uvicorn process on loopback, driven over real HTTP.

One server without keys over the demo persona (the local, single-user mode) and one with a
keys file of two tenants (who may see what). Bad input gets a 4xx naming the field and stores
nothing; a hypothesis fuzz of the JSON bodies never gets a 5xx.
"""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bad_values import strict_json
from recallwise import __version__
from recallwise.serve.auth import add_key
from serve_server import persona_server

pytest.importorskip("fastapi")
pytestmark = pytest.mark.slow

NS = ["/facts/{actorId}", "/preferences/{actorId}"]
DRINK = "I'd like a drink, what should I get?"


@pytest.fixture(scope="module")
def tenants(work):
    """A server with keys: tenants a and b (both seeded with the persona as 'demo_user'), a
    recall-only key of a, an admin key of b, and an operator's key (/metrics only)."""
    keys = work / "keys.yaml"
    made = {
        "a": add_key(keys, tenant="a", scopes=["recall", "write"], label="a-rw"),
        "a-read": add_key(keys, tenant="a", scopes=["recall"], label="a-ro"),
        "b": add_key(keys, tenant="b", scopes=["recall", "write", "admin"], label="b-admin"),
        "ops": add_key(keys, tenant="ops", scopes=["operator"], label="ops"),
    }
    with persona_server(work, "tenants", actors=["a:demo_user", "b:demo_user"], keys=keys) as server:
        yield server, made


def recall(client, actor_id, message, **fields):
    """POST /v1/recall for one message; the response body."""
    return client.post("/v1/recall", json={"actor_id": actor_id, "message": message, **fields}).json()


def texts(body):
    return [r["text"] for r in body["records"]]


# ---- the local server: the demo persona over HTTP --------------------------------------------------
def test_health_ready_and_openapi(local):
    with local.client() as c:
        assert c.get("/healthz").json() == {"status": "ok", "version": __version__}
        ready = c.get("/readyz").json()
        assert ready["status"] == "ready" and ready["embedder"] == "minilm-l6"
        paths = c.get("/openapi.json").json()["paths"]
    for path in (
        "/v1/recall",
        "/v1/events",
        "/v1/records",
        "/v1/records/{record_id}",
        "/v1/actors/{actor_id}",
    ):
        assert path in paths
    assert "/v1/search" in paths and "/v1/systemone" in paths


def test_hello_gets_nothing_and_the_drink_turn_the_flat_white(local):
    with local.client() as c:
        hello = recall(c, "demo_user", "Hello!", namespaces=NS)
        drink = recall(c, "demo_user", DRINK, namespaces=NS)
    assert (
        hello["gated"] and hello["gate_open"] is False and hello["records"] == [] and hello["context"] == ""
    )
    assert any("flat white" in t.lower() for t in texts(drink))
    assert not any("aisle" in t.lower() for t in texts(drink))
    assert drink["context"].startswith("<user_context>") and drink["context_tokens"] > 0
    # no route by default (none was measured): every namespace is searched, the judge keeps the drink
    assert drink["trace"]["namespaces_searched"] == ["/facts/{actorId}", "/preferences/{actorId}"]


def test_the_stock_arm_retrieves_everything(local):
    with local.client() as c:
        stock = recall(c, "demo_user", "Hello!", options={"stock": True})
    assert stock["gated"] is False and stock["retrieved"] and len(stock["records"]) > 5


def test_a_follow_up_in_the_same_session_retrieves(local):
    with local.client() as c:
        first = recall(c, "demo_user", "What should I have for dinner tonight?", session_id="fu")
        again = recall(c, "demo_user", "yes please, do that", session_id="fu")
    assert first["retrieved"]
    assert again["follow_up"] and again["retrieved"] and again["records"]


def test_an_unknown_actor_gets_nothing(local):
    with local.client() as c:
        body = recall(c, "someone-else", DRINK)
    assert body["records"] == []


@pytest.mark.parametrize(
    ("payload", "status", "field"),
    [
        (b"{not json", 400, None),
        ({"actor_id": "demo_user", "message": 42}, 422, "message"),
        ({"actor_id": "demo_user"}, 422, "message"),
        ({"actor_id": "demo_user", "message": "hi", "surprise": 1}, 422, "surprise"),
        ({"actor_id": "../etc", "message": "hi"}, 422, "actor_id"),
        ({"actor_id": "demo_user", "message": "hi", "namespaces": ["/facts/bob"]}, 422, "namespaces.0"),
        ({"actor_id": "demo_user", "message": "hi", "options": {"top_k": 0}}, 422, "options.top_k"),
        ({"actor_id": "demo_user", "message": "x" * 20_000}, 413, "message"),
    ],
)
def test_bad_recall_bodies_get_a_4xx_naming_the_field(local, payload, status, field):
    with local.client() as c:
        if isinstance(payload, bytes):
            r = c.post("/v1/recall", content=payload, headers={"content-type": "application/json"})
        else:
            r = c.post("/v1/recall", json=payload)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["status"] == status and error["field"] == field
    if field:
        assert field.split(".")[-1] in error["message"]


def test_an_oversized_body_is_refused_and_nothing_is_stored(local):
    with local.client() as c:
        before = c.get("/v1/records", params={"actor_id": "big"}).json()["total"]
        huge = {"actor_id": "big", "records": [{"text": "y" * 15_000} for _ in range(80)]}
        r = c.post("/v1/records", content=json.dumps(huge), headers={"content-type": "application/json"})
        assert r.status_code == 413 and "limit" in r.json()["error"]["message"]
        assert c.get("/v1/records", params={"actor_id": "big"}).json()["total"] == before == 0
        assert c.get("/healthz").status_code == 200


def test_the_write_path_extracts_consolidates_and_recalls(local):
    with local.client() as c:
        first = c.post(
            "/v1/events",
            json={"actor_id": "writer", "session_id": "s1", "messages": [{"text": "I live in Porto."}]},
        ).json()
        assert first["events"] == 1 and first["added"] == 1
        assert first["records"][0]["namespace"] == "/facts/writer"
        moved = c.post(
            "/v1/events",
            json={
                "actor_id": "writer",
                "session_id": "s2",
                "messages": [{"text": "I moved to Lisbon last month."}],
            },
        ).json()
        assert moved["added"] + moved["updated"] >= 1
        listed = c.get("/v1/records", params={"actor_id": "writer"}).json()
        assert not any("Porto" in r["text"] for r in listed["records"])  # the update replaced the old fact
        found = recall(c, "writer", "Where do I live these days?")
    assert any("Lisbon" in t for t in texts(found))


def test_records_page_and_delete(local):
    with local.client() as c:
        written = c.post(
            "/v1/records",
            json={
                "actor_id": "pager",
                "records": [{"text": f"Fact number {i} about the pager."} for i in range(7)],
            },
        ).json()
        assert written["added"] == 7
        pages, cursor = [], 0
        while cursor is not None:
            page = c.get("/v1/records", params={"actor_id": "pager", "limit": 3, "cursor": cursor}).json()
            pages.append(len(page["records"]))
            cursor = page["next_cursor"]
        assert pages == [3, 3, 1]
        rid = written["records"][0]["id"]
        assert c.delete(f"/v1/records/{rid}").json() == {"deleted": 1, "id": rid}
        assert c.delete(f"/v1/records/{rid}").status_code == 404
        assert c.get("/v1/records", params={"actor_id": "pager"}).json()["total"] == 6


def test_forget_an_actor_leaves_nothing(local):
    with local.client() as c:
        c.post("/v1/events", json={"actor_id": "leaver", "messages": [{"text": "My dog is called Rex."}]})
        c.post("/v1/records", json={"actor_id": "leaver", "records": [{"text": "Likes chess."}]})
        gone = c.delete("/v1/actors/leaver").json()
        assert gone["deleted_records"] >= 2 and gone["deleted_events"] == 1
        assert c.get("/v1/records", params={"actor_id": "leaver"}).json()["total"] == 0
        assert c.delete("/v1/actors/leaver").json()["deleted_records"] == 0


def test_search_is_ungated_and_bounded(local):
    with local.client() as c:
        hello = c.post("/v1/search", json={"actor_id": "demo_user", "query": "Hello!", "limit": 4}).json()
        assert len(hello["results"]) == 4
        assert (
            c.post("/v1/search", json={"actor_id": "demo_user", "query": "x", "limit": 500}).status_code
            == 422
        )


def test_systemone_serves_the_embedded_decider(local):
    question = {"type": "noul", "instructions": "Does the message ask about drinks?"}
    with local.client() as c:
        body = c.post("/v1/systemone", json={"state": DRINK, "questions": {"drinks": question}}).json()
        assert body["model"] == "embedded"
        assert body["answers"]["drinks"]["type"] == "noul" and 0.0 <= body["answers"]["drinks"]["noul"] <= 1.0
        bad = c.post(
            "/v1/systemone", json={"state": "x", "questions": {"q": {"type": "choice", "instructions": "?"}}}
        )
    assert bad.status_code == 422 and "choice" in bad.json()["error"]["message"]


def test_metrics_are_prometheus_text(local):
    with local.client() as c:
        c.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK})
        text = c.get("/metrics").text
    assert 'recallwise_turns_total{arm="gated"}' in text
    assert "recallwise_http_request_duration_seconds_bucket" in text
    assert 'route="/v1/recall"' in text
    assert "recallwise_recall_stage_seconds_bucket" in text


# ---- keys and tenants ------------------------------------------------------------------------------
def test_a_missing_or_wrong_key_is_401(tenants):
    server, _ = tenants
    with server.client() as c:
        r = c.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK})
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    with server.client("rw_not-a-key") as c:
        assert c.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK}).status_code == 401
    with server.client() as c:  # health needs no key
        assert c.get("/healthz").status_code == 200
    assert "rw_" not in server.stderr()  # keys are never logged


def test_each_tenant_sees_only_its_own(tenants):
    server, keys = tenants
    with server.client(keys["a"]) as a, server.client(keys["b"]) as b:
        mine = a.post(
            "/v1/records",
            json={"actor_id": "demo_user", "records": [{"text": "Tenant A's secret: blue door."}]},
        )
        rid = mine.json()["records"][0]["id"]
        assert mine.json()["records"][0]["namespace"] == "/facts/demo_user"  # no tenant in what a caller sees
        # b asks about the same actor id, in every way it can
        for_b = b.post(
            "/v1/search", json={"actor_id": "demo_user", "query": "secret blue door", "limit": 50}
        ).json()
        assert all(r["id"] != rid for r in for_b["results"])
        listed = b.get("/v1/records", params={"actor_id": "demo_user", "limit": 100}).json()
        assert rid not in {r["id"] for r in listed["records"]}
        recalled = recall(b, "demo_user", "What is the secret door?")
        assert rid not in {r["id"] for r in recalled["records"]}
        sneaky = recall(b, "a:demo_user", "What is the secret door?")
        assert sneaky["records"] == []
        assert b.delete(f"/v1/records/{rid}").status_code == 404  # indistinguishable from absent
        assert b.delete("/v1/records/no-such-record").status_code == 404
        # a still has it
        assert rid in {
            r["id"]
            for r in a.get("/v1/records", params={"actor_id": "demo_user", "limit": 100}).json()["records"]
        }


def test_scopes(tenants):
    server, keys = tenants
    with server.client(keys["a-read"]) as reader, server.client(keys["a"]) as writer:
        assert reader.post("/v1/recall", json={"actor_id": "demo_user", "message": DRINK}).status_code == 200
        denied = reader.post("/v1/records", json={"actor_id": "demo_user", "records": [{"text": "x"}]})
        assert denied.status_code == 403 and "write" in denied.json()["error"]["message"]
        assert writer.delete("/v1/actors/demo_user").status_code == 403  # forgetting needs admin
        assert writer.get("/metrics").status_code == 403
    with server.client(keys["b"]) as admin, server.client(keys["ops"]) as operator:
        # /metrics counts every tenant's traffic: an operator's, not a tenant admin's
        assert admin.get("/metrics").status_code == 403
        assert operator.get("/metrics").status_code == 200
        assert operator.post("/v1/recall", json={"actor_id": "u", "message": DRINK}).status_code == 403


# ---- fuzz: whatever the body, a strict-JSON answer and never a 5xx ------------------------------------
# any text, NUL and lone surrogates included (hypothesis' default alphabet leaves surrogates out)
any_text = st.text(st.characters(exclude_categories=()), max_size=40)
# floats include NaN and +-Infinity, which Python's json writes as bare tokens
scalars = st.none() | st.booleans() | st.integers() | st.floats() | any_text
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)
fields = st.sampled_from(
    ["actor_id", "message", "session_id", "namespaces", "options", "records", "query", "limit"]
)
actors = st.sampled_from(["fuzz", "fuzz.2"]) | any_text
# bodies shaped like the writes, so hostile values reach the store's side of the service
record_writes = st.fixed_dictionaries(
    {
        "actor_id": actors,
        "records": st.lists(
            st.fixed_dictionaries(
                {"text": any_text},
                optional={
                    "namespace": st.sampled_from(["/facts/{actorId}", "/x/{sessionId}"]) | any_text,
                    "strategy": any_text,
                    "metadata": st.dictionaries(any_text, json_values, max_size=3),
                },
            ),
            max_size=3,
        ),
    }
)
event_writes = st.fixed_dictionaries(
    {"actor_id": actors, "messages": st.lists(st.fixed_dictionaries({"text": any_text}), max_size=3)},
    optional={"extract": st.booleans(), "session_id": any_text},
)
bodies = record_writes | event_writes | st.dictionaries(fields, json_values, max_size=5) | json_values


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(["/v1/recall", "/v1/records", "/v1/search", "/v1/events", "/v1/judge"]),
    body=bodies,
    chunked=st.booleans(),
    raw_surrogates=st.booleans(),
    host=st.sampled_from([None, "localhost", "127.0.0.1", "evil.example.com", "rebind.attacker.test:80"]),
)
def test_fuzzed_bodies_never_get_a_5xx(local, path, body, chunked, raw_surrogates, host):
    """NaN / Infinity, NUL, lone surrogates (escaped, or as raw bytes that are not UTF-8), chunked
    bodies and foreign Host headers: a JSON answer every strict reader accepts, never a 5xx; a
    foreign Host is refused before anything else (421); a write that was accepted lists back as
    strict JSON."""
    text = json.dumps(body, ensure_ascii=not raw_surrogates)
    data = text.encode("utf-8", "surrogatepass")
    headers = {"content-type": "application/json"}
    if host is not None:
        headers["host"] = host
    content = (data[i : i + 7] for i in range(0, len(data), 7)) if chunked else data
    with httpx.Client(base_url=local.url, timeout=30) as c:
        r = c.post(path, content=content, headers=headers)
        payload = strict_json(r.text)
        if host is not None and host.split(":")[0] not in ("localhost", "127.0.0.1"):
            assert r.status_code == 421 and payload["error"]["field"] == "host"
            return
        assert r.status_code < 500, r.text
        assert ("error" in payload) == (r.status_code >= 400)
        if r.status_code == 200 and path in ("/v1/records", "/v1/events"):
            listed = c.get("/v1/records", params={"actor_id": body["actor_id"]})
            assert listed.status_code == 200 and strict_json(listed.text)["total"] >= 0
