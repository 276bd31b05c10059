"""Write requests holding what no store keeps (NUL, lone surrogates, NaN / Infinity), each with the
field its 422 must name; shared by the service's tests on SQLite and on PostgreSQL (issue 33, D2
and D3: PostgreSQL used to answer 503 naming its URL and statements, after storing part of it)."""

from __future__ import annotations

import json
from typing import Any

import httpx

NAN, INF = float("nan"), float("inf")


def cases(actor: str) -> list[tuple[str, str, str]]:
    """(path, raw JSON body, the field the 422 names) for ``actor``."""

    def events(*texts: str) -> dict[str, Any]:
        return {"actor_id": actor, "messages": [{"text": t} for t in texts]}

    def record(**fields: Any) -> dict[str, Any]:
        return {"actor_id": actor, "records": [{"text": "Likes coffee.", **fields}]}

    bodies = [
        ("/v1/events", events("I live in Rome.", "I like tea\x00."), "messages.1.text"),
        ("/v1/events", events("I like tea \ud83d."), "messages.0.text"),
        ("/v1/records", record(text="likes tea\x00"), "records.0.text"),
        ("/v1/records", record(text="likes tea \udc00"), "records.0.text"),
        ("/v1/records", record(namespace="/facts/{actorId}\x00"), "records.0.namespace"),
        ("/v1/records", record(metadata={"n": NAN}), "records.0.metadata.n"),
        ("/v1/records", record(metadata={"n": INF}), "records.0.metadata.n"),
        ("/v1/records", record(metadata={"n": -INF}), "records.0.metadata.n"),
        ("/v1/records", record(metadata={"s": "half \ud83d"}), "records.0.metadata.s"),
        ("/v1/records", record(metadata={"k\x00": 1}), "records.0.metadata"),
        ("/v1/records", record(metadata={"deep": [[{"x": NAN}]]}), "records.0.metadata.deep.0.0.x"),
    ]
    # json.dumps writes NaN / Infinity tokens and \u escapes for NUL and surrogates, as a careless
    # client (or Python's own json) would
    return [(path, json.dumps(body), field) for path, body, field in bodies]


def strict_json(text: str) -> Any:
    """``text`` parsed as strict JSON (no NaN / Infinity), or an AssertionError."""

    def refuse(token: str) -> None:
        raise AssertionError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=refuse)


def assert_each_refused_naming_its_field(client: httpx.Client, actor: str) -> None:
    """Every case answers 422 naming its field, in strict JSON, without a store's internals."""
    for path, body, field in cases(actor):
        r = client.post(path, content=body, headers={"content-type": "application/json"})
        assert r.status_code == 422, (path, body, r.status_code, r.text)
        error = strict_json(r.text)["error"]
        assert error["field"] == field, (body, error)
        assert field in error["message"]
        for internal in ("postgresql://", "recallwise_staging", "COPY", "Traceback"):
            assert internal not in r.text
