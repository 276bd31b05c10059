"""Every body ``recallwise serve`` answers with is its response model's, route by route.

A real server over the demo persona (with a decision log, so the inspector's routes answer); every
JSON route its ``/openapi.json`` lists is called once, and each answer is parsed by the model the
route declares (``recallwise.serve.models``, or the inspector's). The models refuse a field they do
not declare, so a key the service adds outside its model fails here as a missing one does; a route
without a call below fails too, so a new route gets one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")

from pydantic import BaseModel

from recallwise.serve import inspector, models
from serve_server import Server, persona_server

pytestmark = pytest.mark.slow

ACTOR = "demo_user"
DRINK = "I'd like a drink, what should I get?"
Call = Callable[[httpx.Client, dict[str, Any]], httpx.Response]


def _record_id(c: httpx.Client, seen: dict[str, Any]) -> str:
    return str(seen["POST /v1/records"]["records"][0]["id"])


# one call per route, in this order (a later call may read an earlier answer: ``seen``)
CALLS: dict[str, Call] = {
    "GET /healthz": lambda c, seen: c.get("/healthz"),
    "GET /readyz": lambda c, seen: c.get("/readyz"),
    "POST /v1/recall": lambda c, seen: c.post("/v1/recall", json={"actor_id": ACTOR, "message": DRINK}),
    "POST /v1/search": lambda c, seen: c.post("/v1/search", json={"actor_id": ACTOR, "query": "coffee"}),
    "POST /v1/judge": lambda c, seen: c.post(
        "/v1/judge",
        json={"actor_id": ACTOR, "message": DRINK, "candidates": [{"text": "Likes flat whites", "id": "x"}]},
    ),
    "GET /v1/records": lambda c, seen: c.get("/v1/records", params={"actor_id": ACTOR, "limit": 3}),
    "POST /v1/events": lambda c, seen: c.post(
        "/v1/events", json={"actor_id": ACTOR, "messages": [{"text": "I moved to Porto last week."}]}
    ),
    "POST /v1/records": lambda c, seen: c.post(
        "/v1/records", json={"actor_id": ACTOR, "records": [{"text": "Has a cat called Miso."}]}
    ),
    "POST /v1/systemone": lambda c, seen: c.post(
        "/v1/systemone",
        json={"state": DRINK, "questions": {"memory": {"instructions": "Does answering need memory?"}}},
    ),
    "GET /v1/decisions": lambda c, seen: c.get("/v1/decisions"),
    "GET /v1/decisions/{decision_id}": lambda c, seen: c.get(
        f"/v1/decisions/{seen['GET /v1/decisions']['decisions'][0]['id']}"
    ),
    "POST /v1/labels": lambda c, seen: c.post(
        "/v1/labels", json={"decision_id": seen["GET /v1/decisions"]["decisions"][0]["id"], "gate": True}
    ),
    "GET /v1/labels": lambda c, seen: c.get("/v1/labels"),
    "GET /v1/log": lambda c, seen: c.get("/v1/log"),
    # too few labels to fit (and a log without text): the error shape (test_inspector.py parses a
    # fitted preview with its model)
    "GET /v1/refit-preview/gate": lambda c, seen: c.get("/v1/refit-preview/gate"),
    "GET /v1/refit-preview/judge": lambda c, seen: c.get("/v1/refit-preview/judge"),
    "POST /v1/refit-preview/gate": lambda c, seen: c.post("/v1/refit-preview/gate"),
    "POST /v1/refit-preview/judge": lambda c, seen: c.post("/v1/refit-preview/judge"),
    "DELETE /v1/records/{record_id}": lambda c, seen: c.delete(f"/v1/records/{_record_id(c, seen)}"),
    "DELETE /v1/actors/{actor_id}": lambda c, seen: c.delete(f"/v1/actors/{ACTOR}"),
}


#: routes this server refuses (its answer is the error shape): the status
REFUSED = {"POST /v1/refit-preview/gate": 422, "POST /v1/refit-preview/judge": 422}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    work: Path = tmp_path_factory.mktemp("models")
    with persona_server(work, "models", extra=["--log", str(work / "log.db")]) as server:
        yield server


def _json_routes(document: dict[str, Any]) -> dict[str, str]:
    """``METHOD /path`` -> the name of its 200 answer's schema, for every route answering JSON."""
    routes = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            schema = (
                operation["responses"]["200"].get("content", {}).get("application/json", {}).get("schema")
            )
            if schema and "$ref" in schema:
                routes[f"{method.upper()} {path}"] = schema["$ref"].rsplit("/", 1)[-1]
    return routes


def _model(name: str) -> type[BaseModel]:
    found = getattr(models, name, None) or getattr(inspector, name, None)
    assert isinstance(found, type) and issubclass(found, BaseModel), f"no response model {name}"
    return found


def test_every_route_answers_with_its_response_model(server: Server) -> None:
    with server.client() as c:
        routes = _json_routes(c.get("/openapi.json").json())
        assert sorted(routes) == sorted(CALLS), "each JSON route of /openapi.json needs one call in CALLS"
        seen: dict[str, Any] = {}
        for route, call in CALLS.items():
            answer = call(c, seen)
            if route in REFUSED:
                assert answer.status_code == REFUSED[route], (route, answer.text)
                models.ErrorOut.model_validate_json(answer.content)
                continue
            assert answer.status_code == 200, (route, answer.text)
            _model(routes[route]).model_validate_json(answer.content)
            seen[route] = answer.json()
    # a field the service leaves unset is absent, not null (the TypeScript types say so)
    assert seen["POST /v1/recall"]["records"] and "metadata" not in seen["POST /v1/recall"]["records"][0]
    assert "score" not in seen["GET /v1/records"]["records"][0]
    assert "score" in seen["POST /v1/search"]["results"][0]
    assert set(seen["POST /v1/events"]["records"][0]) == {"id", "text", "namespace", "strategy"}
    assert "message" not in seen["GET /v1/decisions"]["decisions"][0]  # the log keeps no content


def test_a_model_refuses_a_field_it_does_not_declare() -> None:
    """What makes the test above catch a key the service adds outside its model."""
    body = {"deleted": 1, "id": "r1"}
    assert models.DeletedRecord.model_validate(body).id == "r1"
    with pytest.raises(ValueError, match="extra"):
        models.DeletedRecord.model_validate({**body, "surprise": True})
