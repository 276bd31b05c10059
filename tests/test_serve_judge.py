"""``POST /v1/judge``: the policy's judge over records a client's own memory returned.

A real ``recallwise serve`` over the demo persona. The drink turn keeps the drink preferences
and drops the aisle seat, whatever order the client sends them in; bad input is a 4xx naming
the field; tenancy and scopes are those of every other route.
"""

from __future__ import annotations

import pytest

from recallwise.serve.auth import add_key
from serve_server import persona_server

pytest.importorskip("fastapi")
pytestmark = pytest.mark.slow

DRINK = "I'd like a drink, what should I get?"
FLAT_WHITE = "Go-to coffee order is a decaf oat flat white"
AISLE = "Prefers an aisle seat on flights"
TEA = "Drinks green tea in the afternoon"


@pytest.fixture(scope="module")
def keyed(work):
    keys = work / "keys.yaml"
    made = {
        "read": add_key(keys, tenant="a", scopes=["recall"], label="a-ro"),
        "write": add_key(keys, tenant="a", scopes=["write"], label="a-wo"),
    }
    with persona_server(work, "keyed", actors=["a:demo_user"], keys=keys) as server:
        yield server, made


def judge(client, message, candidates, **extra):
    return client.post(
        "/v1/judge", json={"actor_id": "demo_user", "message": message, "candidates": candidates, **extra}
    )


def test_the_drink_turn_keeps_the_coffee_and_drops_the_seat(local):
    candidates = [{"text": AISLE, "id": "seat"}, {"text": FLAT_WHITE, "id": "coffee", "namespace": "/x"}]
    with local.client() as c:
        reply = judge(c, DRINK, candidates)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["gated"] is True and body["errors"] == []
    verdicts = {v["id"]: v for v in body["candidates"]}
    assert verdicts["coffee"]["kept"] and not verdicts["seat"]["kept"]
    assert body["kept"] == [1]
    assert verdicts["coffee"]["judge_p"] is not None and 0 <= verdicts["coffee"]["score"] <= 1
    assert "flat white" in body["context"] and "aisle" not in body["context"]


def test_scores_given_are_echoed_and_no_candidates_keeps_nothing(local):
    with local.client() as c:
        body = judge(c, DRINK, [{"text": TEA, "score": 0.7}]).json()
        empty = judge(c, DRINK, []).json()
    assert body["candidates"][0]["score"] == 0.7 and body["candidates"][0]["id"] is None
    assert empty["kept"] == [] and empty["candidates"] == [] and empty["context"] == ""


def test_stock_keeps_by_the_score_floor(local):
    with local.client() as c:
        body = judge(
            c, DRINK, [{"text": AISLE, "score": 0.9}, {"text": FLAT_WHITE, "score": 0.9}], stock=True
        ).json()
    assert body["gated"] is False
    assert sorted(body["kept"]) == [0, 1]  # the control arm keeps what is above the floor


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"actor_id": "demo_user", "message": DRINK, "candidates": [{"id": "x"}]}, "candidates.0.text"),
        (
            {"actor_id": "demo_user", "message": DRINK, "candidates": [{"text": "a", "score": 2}]},
            "candidates.0.score",
        ),
        ({"actor_id": "demo_user", "message": DRINK, "candidates": "nope"}, "candidates"),
        ({"actor_id": "demo_user", "candidates": []}, "message"),
        ({"actor_id": "demo_user", "message": DRINK, "candidates": [], "extra": 1}, "extra"),
        ({"actor_id": "../x", "message": DRINK, "candidates": []}, "actor_id"),
    ],
)
def test_bad_input_is_422_naming_the_field(local, payload, field):
    with local.client() as c:
        reply = c.post("/v1/judge", json=payload)
    assert reply.status_code == 422, reply.text
    assert reply.json()["error"]["field"] == field


def test_too_many_candidates_is_413(local):
    with local.client() as c:
        reply = judge(c, DRINK, [{"text": f"record {i}"} for i in range(51)])
    assert reply.status_code == 413
    assert reply.json()["error"]["field"] == "candidates"


def test_keys_and_scopes(keyed):
    server, keys = keyed
    candidates = [{"text": FLAT_WHITE}]
    with server.client() as c:
        assert judge(c, DRINK, candidates).status_code == 401
    with server.client(keys["write"]) as c:
        assert judge(c, DRINK, candidates).status_code == 403
    with server.client(keys["read"]) as c:
        body = judge(c, DRINK, candidates).json()
    assert body["kept"] == [0]


def test_in_the_openapi_document(local):
    with local.client() as c:
        paths = c.get("/openapi.json").json()["paths"]
    assert "/v1/judge" in paths and "post" in paths["/v1/judge"]


def test_gate_first_keeps_nothing_for_chit_chat(local):
    candidates = [{"text": FLAT_WHITE}, {"text": "The user lives in Vancouver."}]
    with local.client() as c:
        hello = judge(c, "Hello!", candidates, gate=True).json()
        ungated = judge(c, "Hello!", candidates).json()
        drink = judge(c, DRINK, candidates, gate=True).json()
    assert hello["gate_open"] is False and hello["kept"] == [] and hello["context"] == ""
    assert ungated["gate_open"] is None  # the gate was not asked
    assert drink["gate_open"] is True and drink["kept"] == [0]
